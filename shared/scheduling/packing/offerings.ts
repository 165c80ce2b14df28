// Which offering a claim launches at equal price, and whether its instance types meet minValues.

import type { InstanceType, Offering } from '../../instancetypes/types';
import { allows, type Requirements } from '../requirements';

// Karpenter launches reserved, then spot, then on-demand when the NodeClaim allows them; at equal
// price (offline, spot is priced as on-demand) the same order decides, then the zone name for stable plans.
export const CAPACITY_TYPE_RANK: Record<string, number> = { reserved: 0, spot: 1, 'on-demand': 2 };

export function preferredOffering(a: Offering, b: Offering): boolean {
  const rank = (CAPACITY_TYPE_RANK[a.capacityType] ?? 3) - (CAPACITY_TYPE_RANK[b.capacityType] ?? 3);
  return rank < 0 || (rank === 0 && a.zone < b.zone);
}

export function satisfiesMinValues(reqs: Requirements, types: readonly InstanceType[]): boolean {
  return unmetMinValues(reqs, types, true).length === 0;
}

/** The keys whose minValues the types do not meet (with `first`, at most the first such key). */
export function unmetMinValues(reqs: Requirements, types: readonly InstanceType[], first = false): string[] {
  const unmet: string[] = [];
  for (const r of reqs.byKey.values()) {
    if (r.minValues === undefined) continue;
    const values = new Set<string>();
    for (const t of types) {
      const value = t.labels[r.key];
      if (value !== undefined && allows(r, value)) values.add(value);
    }
    if (values.size < r.minValues) {
      unmet.push(r.key);
      if (first) break;
    }
  }
  return unmet;
}
