// The tail re-pack: the greedy caps each new claim at the most price-efficient type, so the last claims
// of a run hold what was left over, on whatever type fits it. Claims of one NodePool with identical
// requirements whose pods carry no topology terms are interchangeable: the last few of each such run
// are pooled and re-packed onto one or two claims when that is strictly cheaper.

import type { Pod } from '../../apis/core/v1';
import { LABEL_HOSTNAME } from '../requirements';
import { finalTypes } from './finalize';
import type { PostPassContext } from './post-passes';
import { fitInto, swap } from './split-fit';
import type { ClaimState, PodClass, PoolState, PricedType } from './state';
import { dominates, exceeds, firstAtLeast, fitsUsed } from './vectors';

/** The tail re-pack pools at most this many of the last claims of a run … */
const REPACK_TAIL = 3;
/** … and verifies at most this many candidate type pairs, cheapest first, by placing the pods. */
const REPACK_TRIES = 32;

export class TailRepack {
  constructor(private readonly ctx: PostPassContext) {}

  /**
   * The greedy caps each new claim at the most price-efficient type, so the last claims of a run hold
   * what was left over, on whatever type fits it. Claims of one NodePool with identical requirements
   * whose pods carry no topology terms are interchangeable: the last few of each such run are pooled
   * and re-packed onto one or two claims when that is strictly cheaper, verified by placing every pod.
   */
  repackTails(): void {
    const runs = new Map<string, ClaimState[]>();
    for (const node of this.ctx.claims) {
      const pool = node.pool;
      // A claim holding reservations keeps its pods: moved, they could launch where nothing is reserved.
      if (node.pods.length === 0 || pool.hasMinValues || node.reserved || !this.movable(node)) continue;
      const key = `${pool.index}:${node.reqsId}`;
      const run = runs.get(key);
      if (run) run.push(node);
      else runs.set(key, [node]);
    }
    for (const run of runs.values()) {
      // Never onto more claims than it pools: the greedy's node count stays an upper bound.
      let done = false;
      for (let k = Math.min(REPACK_TAIL, run.length); k >= 2 && !done; k--)
        done = this.repack(run.slice(run.length - k));
      // Else the last claim alone, onto two cheaper ones when a cheaper pair of types holds it.
      if (!done) this.repack(run.slice(run.length - 1));
    }
  }

  /**
   * Moving a pod between claims of identical requirements keeps its zone and every label; only its
   * hostname changes, which matters to no pod here: none has terms of its own, and the pods whose
   * terms count these pods live on other claims, whose contents do not change.
   */
  private movable(node: ClaimState): boolean {
    if (node.reqs.get(LABEL_HOSTNAME)) return false;
    for (const { cls } of node.batches) {
      if (cls.movable === undefined) {
        const a = cls.spec.affinity;
        const terms = (
          t:
            | {
                requiredDuringSchedulingIgnoredDuringExecution?: unknown[];
                preferredDuringSchedulingIgnoredDuringExecution?: unknown[];
              }
            | undefined,
        ) =>
          (t?.requiredDuringSchedulingIgnoredDuringExecution?.length ?? 0) +
          (t?.preferredDuringSchedulingIgnoredDuringExecution?.length ?? 0);
        cls.movable =
          (cls.spec.topologySpreadConstraints?.length ?? 0) === 0 &&
          terms(a?.podAffinity) === 0 &&
          terms(a?.podAntiAffinity) === 0;
      }
      if (!cls.movable) return false;
    }
    return true;
  }

  private readonly repackTypesMemo = new Map<string, PricedType[]>();

  /** Compatible types no cheaper type beats on every allocatable resource (and, under limits, capacity). */
  private repackTypes(pool: PoolState, reqsId: number): PricedType[] {
    const key = `${pool.index}:${reqsId}`;
    let out = this.repackTypesMemo.get(key);
    if (out) return out;
    // Sorted by price, so only an earlier type (or one of equal price) can beat a later one.
    const beats = (q: PricedType, p: PricedType) =>
      q.price <= p.price && dominates(q.t.alloc, p.t.alloc) && (!pool.limited || dominates(p.t.capacity, q.t.capacity));
    out = [];
    for (const p of this.ctx.catalog.compatible(pool, reqsId)) {
      let beaten = false;
      for (let i = 0; i < out.length && !beaten; i++) beaten = beats(out[i]!, p);
      if (beaten) continue;
      while (out.length > 0 && out[out.length - 1]!.price === p.price && beats(p, out[out.length - 1]!)) out.pop();
      out.push(p);
    }
    this.repackTypesMemo.set(key, out);
    return out;
  }

  private repack(tail: ClaimState[]): boolean {
    const pool = tail[0]!.pool;
    const reqsId = tail[0]!.reqsId;
    const n = this.ctx.dims.names.length;
    // Overhead as the packer counted it on these claims (never less than the DaemonSets need).
    const ds = new Float64Array(n);
    for (const node of tail) for (let r = 0; r < n; r++) ds[r] = Math.max(ds[r]!, node.ds[r]!);
    // What the tail costs and, under limits, what the result charges it: the largest capacity each
    // claim lists. The new claims stay within that as well as within the pool's own accounting, so
    // the re-pack never adds to what the result charges against a limit.
    let oldCost = 0;
    const listed = new Float64Array(n);
    for (const node of tail) {
      const list = finalTypes(this.ctx.catalog, node);
      oldCost += list[0]!.price;
      if (!pool.limited) continue;
      for (let r = 0; r < n; r++) {
        let largest = 0;
        for (const p of list) largest = Math.max(largest, p.t.capacity[r]!);
        listed[r]! += largest;
      }
    }
    // The pooled pods by class, largest first by the share of the pooled demand one pod takes.
    const countOf = new Map<PodClass, number>();
    const total = new Float64Array(n);
    for (const node of tail)
      for (const { cls, n: count } of node.batches) {
        countOf.set(cls, (countOf.get(cls) ?? 0) + count);
        for (let r = 0; r < n; r++) total[r]! += count * cls.req[r]!;
      }
    const share = (cls: PodClass) => {
      let s = 0;
      for (let r = 0; r < n; r++) if (total[r]! > 0) s += cls.req[r]! / total[r]!;
      return s;
    };
    const classes = [...countOf.keys()]
      .map((cls) => ({ cls, size: share(cls) }))
      .sort((x, y) => y.size - x.size || x.cls.id - y.cls.id)
      .map((x) => x.cls);
    const reqs = classes.map((cls) => cls.req);
    const counts = Int32Array.from(classes, (cls) => countOf.get(cls)!);

    const released = Float64Array.from(pool.remaining);
    if (pool.limited)
      for (const node of tail) if (node.charged) for (let r = 0; r < n; r++) released[r]! += node.charged[r]!;
    const remaining = pool.limited ? released.map((x, r) => Math.min(x, listed[r]!)) : released;
    const types = this.repackTypes(pool, reqsId).filter((p) => fitsUsed(p.t.alloc, ds));
    // No set of claims costing less than `floor` covers the demand: on some resource, even the type
    // cheapest per unit of it would need to spend that much. Cheaper candidates are skipped unseen.
    let floor = 0;
    for (let r = 0; r < n; r++) {
      if (total[r]! <= 0) continue;
      let perUnit = Number.POSITIVE_INFINITY;
      for (const p of types)
        if (p.t.alloc[r]! > ds[r]!) perUnit = Math.min(perUnit, p.price / (p.t.alloc[r]! - ds[r]!));
      floor = Math.max(floor, perUnit * total[r]!);
    }
    const prices = types.map((p) => p.price);

    let bound = oldCost * (1 - 1e-9);
    let chosen: PricedType[] | undefined;
    let split: Int32Array | undefined;
    for (let i = firstAtLeast(prices, floor); i < types.length; i++) {
      const p = types[i]!;
      if (p.price >= bound) break;
      if (pool.limited && exceeds(p.t.capacity, remaining) >= 0) continue;
      split = fitInto([p.t.alloc], ds, reqs, counts, 'first');
      if (split) {
        chosen = [p];
        bound = p.price;
        break;
      }
    }
    // Pairs that could hold the pooled demand, cheapest first; the first that really holds it wins.
    const pairs: { a: PricedType; b: PricedType; price: number }[] = [];
    for (let i = 0; i < types.length; i++) {
      const a = types[i]!;
      if (2 * a.price >= bound) break;
      for (let j = Math.max(i, firstAtLeast(prices, floor - a.price)); j < types.length; j++) {
        const b = types[j]!;
        const price = a.price + b.price;
        if (price >= bound) break;
        let ok = true;
        for (let r = 0; r < n && ok; r++) {
          if (a.t.alloc[r]! + b.t.alloc[r]! - 2 * ds[r]! < total[r]!) ok = false;
          else if (pool.limited && a.t.capacity[r]! + b.t.capacity[r]! > remaining[r]!) ok = false;
        }
        if (ok) pairs.push({ a, b, price });
      }
    }
    pairs.sort((x, y) => x.price - y.price);
    for (let i = 0; i < pairs.length && i < REPACK_TRIES; i++) {
      const { a, b } = pairs[i]!;
      const allocs = [a.t.alloc, b.t.alloc];
      const found =
        fitInto(allocs, ds, reqs, counts, 'balance') ??
        fitInto(allocs, ds, reqs, counts, 'align') ??
        fitInto(allocs, ds, reqs, counts, 'first') ??
        swap(fitInto([b.t.alloc, a.t.alloc], ds, reqs, counts, 'first'));
      if (found) {
        chosen = [a, b];
        split = found;
        break;
      }
    }
    if (!chosen || !split) return false;

    // Hand the pods out as the split says, each claim keeping the order the pods had.
    const bins = chosen.length;
    const index = new Map(classes.map((cls, i) => [cls, i]));
    const contents = chosen.map(() => ({
      pods: [] as Pod[],
      batches: [] as { cls: PodClass; n: number }[],
      used: Float64Array.from(ds),
    }));
    for (const node of tail) {
      let i = 0;
      for (const { cls, n: count } of node.batches) {
        const c = index.get(cls)!;
        for (let k = 0; k < count; k++) {
          let b = 0;
          while (split[c * bins + b] === 0) b++;
          split[c * bins + b]!--;
          const into = contents[b]!;
          into.pods.push(node.pods[i++]!);
          const last = into.batches[into.batches.length - 1];
          if (last && last.cls === cls) last.n++;
          else into.batches.push({ cls, n: 1 });
          for (let r = 0; r < n; r++) into.used[r]! += cls.req[r]!;
        }
      }
    }
    // Each new claim lists every compatible type that fits what it holds and is charged as the packer
    // charges, the largest capacity it may launch, leaving room for the claims after it.
    const planned: { c: (typeof contents)[number]; type: PricedType; charged: Float64Array | undefined }[] = [];
    let newCost = 0;
    for (let b = 0; b < bins; b++) {
      const c = contents[b]!;
      if (c.pods.length === 0) continue;
      const avail = Float64Array.from(remaining);
      for (let later = b + 1; later < bins; later++)
        if (contents[later]!.pods.length > 0) for (let r = 0; r < n; r++) avail[r]! -= chosen[later]!.t.capacity[r]!;
      const list = this.ctx.catalog
        .compatible(pool, reqsId)
        .filter((p) => fitsUsed(p.t.alloc, c.used) && (!pool.limited || exceeds(p.t.capacity, avail) < 0));
      if (list.length === 0) return false;
      let charged: Float64Array | undefined;
      if (pool.limited) {
        charged = new Float64Array(n);
        for (const p of list) for (let r = 0; r < n; r++) charged[r] = Math.max(charged[r]!, p.t.capacity[r]!);
        for (let r = 0; r < n; r++) {
          remaining[r]! -= charged[r]!;
          released[r]! -= charged[r]!;
        }
      }
      newCost += list[0]!.price;
      planned.push({ c, type: list[0]!, charged });
    }
    if (!(newCost < oldCost * (1 - 1e-9))) return false;

    if (planned.length - tail.length > pool.nodesRemaining) return false;
    if (pool.limited) pool.remaining.set(released);
    pool.nodesRemaining += tail.length - planned.length;
    const nodes = [...tail];
    while (nodes.length < planned.length) nodes.push(this.splitClaim(tail[0]!));
    planned.forEach(({ c, type, charged }, b) => {
      const node = nodes[b]!;
      node.pods = c.pods;
      node.batches = c.batches;
      node.used = c.used;
      node.ds = ds;
      node.capPrice = type.price;
      node.frontier = [type.t];
      if (charged) node.charged = charged;
    });
    for (let b = planned.length; b < tail.length; b++) {
      const node = tail[b]!;
      node.pods = [];
      node.batches = [];
      delete node.charged;
    }
    return true;
  }

  /** One more claim like `like` (same NodePool and requirements), empty, for a split. */
  private splitClaim(like: ClaimState): ClaimState {
    const node: ClaimState = {
      ...like,
      index: this.ctx.claims.length,
      name: `${like.pool.name}-${this.ctx.claims.length}`,
      pods: [],
      batches: [],
      used: Float64Array.from(like.ds),
      counts: new Int32Array(this.ctx.groups.length),
      owners: new Int32Array(this.ctx.groups.length),
    };
    delete node.charged;
    this.ctx.claims.push(node);
    return node;
  }
}
