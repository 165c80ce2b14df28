// How the tail re-pack splits pooled pods over one or two candidate nodes: which node each pod goes to.

import { fitsOne, roomIn } from './vectors';

/** Which node a pod goes to, among those with room for it: first fit, or the one it balances best. */
export type FitRule = 'first' | 'balance' | 'align';

/**
 * Pods of each class (largest class first, `counts[c]` pods of `reqs[c]`) into nodes of these
 * allocatables, each already running the DaemonSet overhead: how many of class c node b takes, at
 * c × nodes + b, or undefined when a pod does not fit. `balance` sends each pod where the fullest
 * resource ends the least full; `align` where the room left is most like the pod's shape.
 */
export function fitInto(
  allocs: Float64Array[],
  ds: Float64Array,
  reqs: Float64Array[],
  counts: Int32Array,
  rule: FitRule,
): Int32Array | undefined {
  const bins = allocs.length;
  const used = allocs.map(() => Float64Array.from(ds));
  const out = new Int32Array(reqs.length * bins);
  for (let c = 0; c < reqs.length; c++) {
    const req = reqs[c]!;
    let left = counts[c]!;
    if (rule === 'first') {
      for (let b = 0; b < bins && left > 0; b++) {
        const k = Math.min(left, roomIn(allocs[b]!, used[b]!, req));
        if (k <= 0) continue;
        const u = used[b]!;
        for (let r = 0; r < req.length; r++) u[r]! += k * req[r]!;
        out[c * bins + b]! += k;
        left -= k;
      }
      if (left > 0) return undefined;
      continue;
    }
    for (; left > 0; left--) {
      let best = -1;
      let bestScore = Number.POSITIVE_INFINITY;
      for (let b = 0; b < bins; b++) {
        const alloc = allocs[b]!;
        const u = used[b]!;
        if (!fitsOne(alloc, u, req)) continue;
        let score = 0;
        for (let r = 0; r < req.length; r++) {
          if (alloc[r]! <= 0) continue;
          if (rule === 'balance') score = Math.max(score, (u[r]! + req[r]!) / alloc[r]!);
          else score -= (req[r]! * (alloc[r]! - u[r]! - req[r]!)) / (alloc[r]! * alloc[r]!);
        }
        if (score < bestScore) {
          best = b;
          bestScore = score;
        }
      }
      if (best < 0) return undefined;
      const u = used[best]!;
      for (let r = 0; r < req.length; r++) u[r]! += req[r]!;
      out[c * bins + best]!++;
    }
  }
  return out;
}

/** A two-node split found with the nodes in the other order, in this order. */
export function swap(split: Int32Array | undefined): Int32Array | undefined {
  if (!split) return undefined;
  const out = new Int32Array(split.length);
  for (let i = 0; i < split.length; i += 2) {
    out[i] = split[i + 1]!;
    out[i + 1] = split[i]!;
  }
  return out;
}
