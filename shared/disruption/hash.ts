// Static drift hashes (Karpenter's EC2NodeClass.Hash and NodePool.Hash): digests of the fields whose
// change means a node no longer is what its configuration would launch today. They are tagged on
// every instance at launch (launchHashTags) and compared with today's by the drift check.
//
// Karpenter's approach to hash changes is kept: each hash has a version, tagged beside it, and a
// node is only compared when its version equals today's. Changing what is hashed bumps the version
// and so never drifts every node at once on an upgrade. The digests are ours (sha256 of canonical
// JSON, not Go's hashstructure), so the versions are ours too and never match Karpenter's.

import { createHash } from 'node:crypto';
import { resolveAMIFamily } from '../apis/v1/amifamily';
import { defaultEC2NodeClass, defaultNodePool } from '../apis/v1/defaults';
import type { EC2NodeClass, NodePool } from '../apis/v1/types';
import { canonicalJson } from '../launch/launchtemplate';

export const NODECLASS_HASH_TAG = 'karpenter.k8s.aws/ec2nodeclass-hash';
export const NODECLASS_HASH_VERSION_TAG = 'karpenter.k8s.aws/ec2nodeclass-hash-version';
export const NODEPOOL_HASH_TAG = 'karpenter.sh/nodepool-hash';
export const NODEPOOL_HASH_VERSION_TAG = 'karpenter.sh/nodepool-hash-version';

/** Bump when the set of hashed fields or the digest changes (see the file comment). */
export const NODECLASS_HASH_VERSION = 'karpless-2';
export const NODEPOOL_HASH_VERSION = 'karpless-1';

/** The tag keys launchHashTags writes: the drift check reads these back from EC2. */
export const HASH_TAG_KEYS = [
  NODECLASS_HASH_TAG,
  NODECLASS_HASH_VERSION_TAG,
  NODEPOOL_HASH_TAG,
  NODEPOOL_HASH_VERSION_TAG,
] as const;

/**
 * Drops what hashstructure's IgnoreZeroValue drops for the API's pointer fields (absent values, and
 * empty lists and maps; an explicit `false` or `0` is a value and stays) and sorts every list, since
 * Karpenter hashes slices as sets: reordering tags or block devices is no change.
 */
function normalise(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(normalise).filter((v) => v !== undefined);
    if (items.length === 0) return undefined;
    return items
      .map((v) => [canonicalJson(v), v] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, v]) => v);
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => [k, normalise(v)] as const)
      .filter(([, v]) => v !== undefined);
    return entries.length === 0 ? undefined : Object.fromEntries(entries);
  }
  return value === null ? undefined : value;
}

function digest(value: unknown): string {
  const bytes = createHash('sha256')
    .update(canonicalJson(normalise(value) ?? null))
    .digest();
  return bytes.readBigUInt64BE(0).toString();
}

/**
 * The node class's static hash: its spec without what drifts by resolved value instead (subnet,
 * security-group, capacity-reservation and AMI selector terms) or never drifts (ipPrefixCount), with
 * the resolved AMI family in place of spec.amiFamily. placementGroupSelector is hashed, as upstream
 * (EC2NodeClassHashVersion v6): changing it drifts nodes even before the new group resolves.
 * Version karpless-2 added it, so nodes launched under karpless-1 are not compared.
 */
export function nodeClassHash(nodeClass: EC2NodeClass): string {
  // Hashed as the API server stores it, defaults applied: spelling a default out is no change.
  const {
    subnetSelectorTerms: _subnets,
    securityGroupSelectorTerms: _groups,
    capacityReservationSelectorTerms: _reservations,
    amiSelectorTerms: _amis,
    amiFamily: _family,
    ipPrefixCount: _prefixes,
    ...hashed
  } = defaultEC2NodeClass(nodeClass).spec;
  return digest({ spec: hashed, family: resolveAMIFamily(nodeClass) });
}

/**
 * The NodePool's static hash: spec.template without its requirements (those drift by whether the
 * node's labels still satisfy them). Weight, limits and disruption sit outside the template, so
 * they never drift a node.
 */
export function nodePoolHash(nodePool: NodePool): string {
  const { template } = defaultNodePool(nodePool).spec;
  const { requirements: _requirements, ...spec } = template.spec;
  return digest({ metadata: template.metadata, spec });
}

/** The four hash tags an instance is launched with. */
export function launchHashTags(nodePool: NodePool, nodeClass: EC2NodeClass): Record<string, string> {
  return {
    [NODECLASS_HASH_TAG]: nodeClassHash(nodeClass),
    [NODECLASS_HASH_VERSION_TAG]: NODECLASS_HASH_VERSION,
    [NODEPOOL_HASH_TAG]: nodePoolHash(nodePool),
    [NODEPOOL_HASH_VERSION_TAG]: NODEPOOL_HASH_VERSION,
  };
}
