// The launch request of a planned NodeClaim, shaped as Karpenter shapes a NodeClaim (shared/nodeclaim:
// labels with the NodePool and EC2NodeClass, userData labels, taints and startup taints, requirements
// narrowed to the capacity types offered). The provision function's launcher sends it and
// `karpless plan --requests` writes it: one function, so the dry run cannot drift from the launch.

import type { EC2NodeClass, NodePool } from '../apis/v1/types';
import { nodeClaimFromPlan } from '../nodeclaim';
import type { PlannedNodeClaim } from '../scheduling';
import type { LaunchClaim } from './request';

export function launchClaimFromPlan(args: {
  nodeClaimName: string;
  claim: PlannedNodeClaim;
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
}): LaunchClaim {
  const { nodeClaimName, claim, nodePool, nodeClass } = args;
  const shaped = nodeClaimFromPlan({ claim, nodePool, nodeClass, seed: nodeClaimName });
  return {
    nodeClaimName,
    nodePool,
    nodeClass,
    instanceTypes: shaped.instanceTypes,
    // No capacityType pin: the requirements allow what the plan offered, and the launch picks
    // reserved > spot > on-demand among what is still available, so a full reservation or a
    // spot shortage falls back as the NodePool allows.
    requirements: shaped.requirements,
    labels: shaped.userDataLabels,
    taints: [...shaped.taints, ...shaped.startupTaints],
    efa: (claim.requests['vpc.amazonaws.com/efa'] ?? 0) > 0,
    enclave: (claim.requests['eks.amazonaws.com/nip-slots'] ?? 0) > 0,
  };
}
