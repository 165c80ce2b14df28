// What a node's topology admits: how many more pods of a class its hostname terms let in, and which
// domain of a key it sits in (an existing node by its labels, a claim once its requirements pin one).

import type { NodeState, Variant } from './state';

/** How many pods of the class a host can take by its hostname topology (spread, (anti-)affinity). */
export function hostRoom(v: Variant, node: NodeState, want: number): number {
  let room = want;
  for (const o of v.own) {
    if (!o.group.host) continue;
    const c = node.counts[o.group.id]!;
    if (o.kind === 'antiAffinity') {
      if (c > 0) return 0;
      if (o.self) room = Math.min(room, 1);
    } else if (o.kind === 'spread') {
      if (o.self) room = Math.min(room, o.maxSkew - c);
      else if (c > o.maxSkew) return 0;
    } else if (c === 0 && !(o.group.total === 0 && o.self)) return 0;
  }
  for (const g of v.cls.inverse) if (g.host && node.owners[g.id]! > 0) return 0;
  return Math.max(room, 0);
}

/** The node's value of a topology key: its label, or the one value a claim's requirements allow. */
export function domainOf(node: NodeState, key: string): string | undefined {
  if (node.kind === 'existing') return node.labels[key];
  const r = node.reqs.get(key);
  if (r && !r.complement && r.values.size === 1) for (const value of r.values) return value;
  return undefined;
}
