// Tags Karpenter puts on everything it launches (utils.GetTags), plus the per-claim instance tags.
// CONTRACT: launchTags, instanceTags.

import type { EC2NodeClass } from '../apis/v1/types';

export interface LaunchTagArgs {
  clusterName: string;
  nodePool: string;
  nodeClass: EC2NodeClass;
}

// The keys karpless finds its instances and templates by, and IAM policies condition on: a node
// class tag must never change them.
function staticTags(args: LaunchTagArgs): Record<string, string> {
  return {
    [`kubernetes.io/cluster/${args.clusterName}`]: 'owned',
    'eks:eks-cluster-name': args.clusterName,
    'karpenter.sh/nodepool': args.nodePool,
    'karpenter.k8s.aws/ec2nodeclass': args.nodeClass.metadata.name,
  };
}

function overlay(fixed: Record<string, string>, user: Record<string, string> | undefined): Record<string, string> {
  const out = { ...fixed };
  for (const [key, value] of Object.entries(user ?? {})) {
    if (!(key in fixed)) out[key] = value;
  }
  return out;
}

/** The static launch tags, then spec.tags for every other key. Never karpenter.sh/managed-by. */
export function launchTags(args: LaunchTagArgs): Record<string, string> {
  return overlay(staticTags(args), args.nodeClass.spec.tags);
}

/**
 * launchTags + karpenter.sh/nodeclaim (which spec.tags cannot override) + Name. Name defaults to the
 * NodeClaim name, but a Name in spec.tags wins: Karpenter's tagging controller only adds a missing
 * Name, so a user's value is what their instances carry upstream too.
 */
export function instanceTags(args: LaunchTagArgs & { nodeClaimName: string }): Record<string, string> {
  const userName = args.nodeClass.spec.tags?.Name;
  return overlay(
    { ...staticTags(args), 'karpenter.sh/nodeclaim': args.nodeClaimName, Name: userName ?? args.nodeClaimName },
    args.nodeClass.spec.tags,
  );
}
