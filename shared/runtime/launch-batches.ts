// Which claims of a decision launch together. Karpenter's CreateFleet batcher merges requests that
// are identical once the claim's name is left out (same templates, overrides, capacity type) and
// that arrive within a short window; karpless has the whole decision at once, so it groups the
// claims whose launch requests would be identical directly, and cuts each group into batches of at
// most LAUNCH_BATCH_MAX. The batch id comes from the sorted names of its members and is written on
// each member's record before anything launches, so an invocation cut short, or a redelivery, finds
// every claim's batch again even when some members have launched since. Pure.

import { createHash } from 'node:crypto';
import { canonicalJson } from '../launch/canonical';
import type { LaunchClaim } from '../launch/request';

/** Instances one CreateFleet asks for at most (Karpenter's batcher stops at 1,000; half keeps two batches in EC2's 1,000-instance bucket). */
export const LAUNCH_BATCH_MAX = 500;

/** The record annotation naming a claim's launch batch. */
export const LAUNCH_BATCH_ANNOTATION = 'karpless.sh/launch-batch';

/** Everything a claim's launch request is built from except its name. */
export function launchKey(claim: LaunchClaim): string {
  return createHash('sha256')
    .update(
      canonicalJson({
        nodePool: claim.nodePool.metadata.name,
        nodeClass: claim.nodeClass.metadata.name,
        instanceTypes: claim.instanceTypes.map((t) => t.name).sort(),
        requirements: claim.requirements,
        capacityType: claim.capacityType,
        labels: claim.labels,
        taints: claim.taints ?? [],
        efa: claim.efa ?? false,
        enclave: claim.enclave ?? false,
      }),
    )
    .digest('hex');
}

/** `b-` and 20 hex digits of the members' sorted names: the same members always name the same batch. */
export function launchBatchId(members: readonly string[]): string {
  const hash = createHash('sha256');
  for (const name of [...members].sort()) hash.update(name).update('\u0000');
  return `b-${hash.digest('hex').slice(0, 20)}`;
}

/** The claims grouped by identical request, in batches of at most `max`, each with its id. */
export function planLaunchBatches<T extends { claim: LaunchClaim }>(
  items: readonly T[],
  max = LAUNCH_BATCH_MAX,
): { id: string; members: T[] }[] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = launchKey(item.claim);
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  const batches: { id: string; members: T[] }[] = [];
  for (const group of groups.values()) {
    group.sort((a, b) => (a.claim.nodeClaimName < b.claim.nodeClaimName ? -1 : 1));
    for (let i = 0; i < group.length; i += max) {
      const members = group.slice(i, i + max);
      batches.push({ id: launchBatchId(members.map((m) => m.claim.nodeClaimName)), members });
    }
  }
  return batches;
}
