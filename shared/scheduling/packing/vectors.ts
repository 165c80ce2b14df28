// Resources as dense vectors over the few resource names that matter in one solve, and the fit tests
// on them: all the packer's arithmetic on requests, allocatable, capacity and limits.

import type { Resources } from '../../instancetypes/types';
import { CPU, MEMORY, PODS } from '../resources';

export class Dims {
  readonly names: string[] = [CPU, MEMORY, PODS];
  readonly index = new Map<string, number>(this.names.map((n, i) => [n, i]));
  add(name: string): void {
    if (!this.index.has(name)) {
      this.index.set(name, this.names.length);
      this.names.push(name);
    }
  }
  vector(resources: Resources | undefined): Float64Array {
    const v = new Float64Array(this.names.length);
    if (resources)
      for (const [name, value] of Object.entries(resources)) {
        const i = this.index.get(name);
        if (i !== undefined) v[i] = value;
      }
    return v;
  }
  toResources(v: Float64Array): Resources {
    const out: Resources = {};
    for (let i = 0; i < v.length; i++) if (v[i]! > 0) out[this.names[i]!] = v[i]!;
    return out;
  }
}

export function dominates(a: Float64Array, b: Float64Array): boolean {
  for (let r = 0; r < a.length; r++) if (a[r]! < b[r]!) return false;
  return true;
}

/** How many mean pods (`demand`) fit in a node of this allocatable beside the DaemonSet overhead. */
export function unitsOf(alloc: Float64Array, ds: Float64Array, demand: Float64Array): number {
  let units = Number.POSITIVE_INFINITY;
  for (let r = 0; r < demand.length; r++)
    if (demand[r]! > 0) units = Math.min(units, (alloc[r]! - ds[r]!) / demand[r]!);
  return units === Number.POSITIVE_INFINITY ? 0 : Math.max(units, 0);
}

export function fitsOne(alloc: Float64Array, ds: Float64Array, req: Float64Array): boolean {
  for (let r = 0; r < alloc.length; r++) if (ds[r]! + req[r]! > alloc[r]!) return false;
  return true;
}

export function fitsUsed(alloc: Float64Array, used: Float64Array): boolean {
  for (let r = 0; r < alloc.length; r++) if (used[r]! > alloc[r]!) return false;
  return true;
}

/** How many more pods with `req` fit in `alloc` beside `used`. */
export function roomIn(alloc: Float64Array, used: Float64Array, req: Float64Array): number {
  let n = Number.POSITIVE_INFINITY;
  for (let r = 0; r < alloc.length; r++) {
    const q = req[r]!;
    if (q > 0) {
      const k = Math.floor((alloc[r]! - used[r]!) / q + 1e-9);
      if (k < n) n = k;
    } else if (used[r]! > alloc[r]!) return 0;
  }
  return n === Number.POSITIVE_INFINITY ? Number.MAX_SAFE_INTEGER : Math.max(n, 0);
}

/** The first dim where capacity exceeds the remaining limit, or -1. */
export function exceeds(capacity: Float64Array, remaining: Float64Array): number {
  for (let r = 0; r < capacity.length; r++) if (capacity[r]! > remaining[r]!) return r;
  return -1;
}

export function exceedsCharged(capacity: Float64Array, charged: Float64Array, limit: Float64Array): number {
  for (let r = 0; r < capacity.length; r++) {
    if (limit[r] !== Number.POSITIVE_INFINITY && capacity[r]! > charged[r]!) return r;
  }
  return -1;
}

/** The first index of an ascending list whose value is ≥ x (binary search). */
export function firstAtLeast(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
