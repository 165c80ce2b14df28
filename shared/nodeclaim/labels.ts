// Which labels Karpenter injects on a node by itself (core pkg/apis/v1/labels.go IsRestrictedNodeLabel,
// extended by the AWS provider) and the value a requirement resolves to (Requirement.Any).

import {
  AWS_WELL_KNOWN_LABELS,
  LABEL_ARCH,
  LABEL_CAPACITY_TYPE,
  LABEL_HOSTNAME,
  LABEL_INSTANCE_TYPE,
  LABEL_NODEPOOL,
  LABEL_OS,
  LABEL_REGION,
  LABEL_WINDOWS_BUILD,
  LABEL_ZONE,
  LABEL_ZONE_ID,
  labelDomain,
} from '../apis/v1/labels';
import type { Requirement } from '../scheduling/requirements';

/**
 * Keys whose value comes from the instance type, the offering or Karpenter itself: a requirement on
 * them never becomes a label at claim creation (the launched type supplies them at registration).
 */
const WELL_KNOWN_NODE_LABELS: ReadonlySet<string> = new Set([
  LABEL_NODEPOOL,
  LABEL_ZONE,
  LABEL_REGION,
  LABEL_INSTANCE_TYPE,
  LABEL_ARCH,
  LABEL_CAPACITY_TYPE,
  LABEL_OS,
  LABEL_WINDOWS_BUILD,
  LABEL_ZONE_ID,
  LABEL_HOSTNAME,
  ...AWS_WELL_KNOWN_LABELS,
]);

/** Domains other software owns (kOps) or the kubelet may set itself, carved out of the restricted ones. */
const LABEL_DOMAIN_EXCEPTIONS = ['kops.k8s.io', 'node.kubernetes.io', 'node-restriction.kubernetes.io'];
const RESTRICTED_LABEL_DOMAINS = ['kubernetes.io', 'k8s.io', 'karpenter.sh', 'karpenter.k8s.aws'];

/**
 * Karpenter's IsRestrictedNodeLabel: true when Karpenter must not inject the label from a requirement,
 * because it is well known (zone, arch, capacity type, instance type, os, every
 * `karpenter.k8s.aws/instance-*` key …) or its domain belongs to Kubernetes or Karpenter.
 */
export function isRestrictedNodeLabel(key: string): boolean {
  if (WELL_KNOWN_NODE_LABELS.has(key)) return true;
  const domain = labelDomain(key);
  if (LABEL_DOMAIN_EXCEPTIONS.some((d) => domain.endsWith(d))) return false;
  return RESTRICTED_LABEL_DOMAINS.some((d) => domain.endsWith(d));
}

/**
 * The value a node gets for a requirement (Karpenter's Requirement.Any), or undefined when the
 * requirement calls for the label to be absent. Upstream picks an arbitrary member or a random
 * integer; here the choice is deterministic so a redelivered decision renders the same userData:
 * the smallest listed value for In, the smallest non-negative integer the requirement allows for
 * NotIn, Exists, Gt and Lt.
 */
export function requirementValue(r: Requirement): string | undefined {
  if (!r.complement) return r.values.size === 0 ? undefined : [...r.values].sort()[0];
  let candidate = Math.max(0, Number.isFinite(r.gte) ? r.gte : 0);
  while (candidate <= r.lte && r.values.has(String(candidate))) candidate++;
  return candidate <= r.lte ? String(candidate) : undefined;
}
