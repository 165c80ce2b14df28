// Claim opening and sizing: a new claim from the first NodePool (by weight) that can take the pod, capped
// at the most price-efficient type for the pods that may share it (or, for a pod that needs a node of
// its own, at its share of the others), charged against NodePool limits as Karpenter's subtractMax
// does; the cap again when pods narrow a claim; minValues.

import type { Requirements } from '../requirements';
import type { TypeCatalog } from './catalog';
import { Memo3, VectorIds } from './memo';
import { satisfiesMinValues, unmetMinValues } from './offerings';
import { staticFit } from './pool-fit';
import { formatLimit } from './reason-text';
import type { ReservationLedger, ReservedOption } from './reservations';
import type { ClaimState, Group, PackingOrder, PodClass, PoolState, PricedType, Variant } from './state';
import { type Dims, exceeds, fitsOne, fitsUsed, unitsOf } from './vectors';

/** Relative price-per-pod slack within which the larger instance type is preferred. */
const EFFICIENCY_TOLERANCE = 0.005;

/** What claim opening reads of the packer's state; it adds to the claims and charges the pools. */
export interface OpeningContext {
  readonly catalog: TypeCatalog;
  readonly dims: Dims;
  readonly pools: readonly PoolState[];
  readonly claims: ClaimState[];
  readonly groups: readonly Group[];
  readonly order: PackingOrder;
  readonly shareForcedNodes: boolean;
  readonly ledger: ReservationLedger;
  classes(): readonly PodClass[];
  variant(cls: PodClass, level: number): Variant | undefined;
}

export class ClaimOpening {
  private readonly demandMemo = new Map<string, Float64Array>();

  constructor(private readonly ctx: OpeningContext) {}

  /** Per class, its self-repelling hostname group (null when none); per group, the pods it forces apart. */
  private forcedGroup: Map<PodClass, Group | null> | undefined;
  /** Whether this solve placed pods that need a node each first (a plan without it may be cheaper). */
  sharedForcedNodes = false;
  private readonly forcedCount = new Map<Group, number>();
  private readonly shareMemo = new Map<string, Float64Array | null>();

  /** The self-repelling hostname group of the class and how many pods it forces onto nodes of their own. */
  forcedNodes(cls: PodClass): { group: Group; count: number } | undefined {
    if (!this.forcedGroup) {
      this.forcedGroup = new Map();
      for (const c of this.ctx.classes()) {
        const g = this.ctx.variant(c, 0)!.own.find((o) => o.kind === 'antiAffinity' && o.group.host && o.self)?.group;
        this.forcedGroup.set(c, g ?? null);
        if (g) this.forcedCount.set(g, (this.forcedCount.get(g) ?? 0) + c.pods.length);
      }
    }
    const group = this.forcedGroup.get(cls);
    return group ? { group, count: this.forcedCount.get(group) ?? 0 } : undefined;
  }

  /**
   * The cap of a claim opened for a pod that needs a node of its own: the cheapest type that holds it
   * beside an equal share of every other pod that may join such claims. Capped at the most
   * price-efficient type instead, the first of these claims would take all the other pods and the rest
   * would each run one small pod on a mostly empty node (956 of 1,002 claims at 5,000 diverse pods).
   */
  forcedShareCap(v: Variant, pool: PoolState, reqsId: number, ds: Float64Array): number | undefined {
    // A function of the class, the requirements (of the pool's types) and the overhead alone.
    let byPool = this.shareCapMemo.get(pool);
    if (!byPool) {
      byPool = new Memo3();
      this.shareCapMemo.set(pool, byPool);
    }
    const dsId = this.vectorIds.of(ds);
    if (byPool.has(reqsId, dsId, v.cls)) return byPool.get(reqsId, dsId, v.cls);
    return byPool.set(reqsId, dsId, v.cls, this.computeForcedShareCap(v, pool, reqsId, ds));
  }

  private readonly shareCapMemo = new Map<PoolState, Memo3<number, number, PodClass, number | undefined>>();

  private computeForcedShareCap(v: Variant, pool: PoolState, reqsId: number, ds: Float64Array): number | undefined {
    const forced = this.forcedNodes(v.cls);
    if (!forced || forced.count < 2) return undefined;
    const share = this.forcedShare(v, pool, reqsId, forced);
    if (!share) return undefined;
    const need = Float64Array.from(ds);
    for (let r = 0; r < need.length; r++) need[r]! += v.cls.req[r]! + share[r]!;
    for (const p of this.ctx.catalog.compatible(pool, reqsId)) if (fitsUsed(p.t.alloc, need)) return p.price;
    return undefined;
  }

  /** An equal share, per forced node, of the pods that may join claims of these requirements. */
  private forcedShare(
    v: Variant,
    pool: PoolState,
    reqsId: number,
    forced: { group: Group; count: number },
  ): Float64Array | null {
    const n = this.ctx.dims.names.length;
    let extended = '';
    for (let r = 3; r < n; r++) if (v.cls.req[r]! > 0) extended += `,${r}`;
    const key = `${pool.index}:${reqsId}:${forced.group.id}${extended}`;
    const hit = this.shareMemo.get(key);
    if (hit !== undefined) return hit;
    const share = new Float64Array(n);
    for (const cls of this.ctx.classes()) {
      if (this.forcedGroup?.get(cls) === forced.group) continue;
      let foreign = false;
      for (let r = 3; r < n && !foreign; r++) foreign = cls.req[r]! > 0 && !(v.cls.req[r]! > 0);
      if (foreign) continue;
      const cv = this.ctx.variant(cls, 0)!;
      if (staticFit(this.ctx.catalog, cv, pool).reason) continue;
      const merged = this.ctx.catalog.merge(reqsId, cv.reqs, this.ctx.catalog.intern(cv.reqs));
      if (merged.conflict) continue;
      for (let r = 0; r < n; r++) share[r]! += (cls.req[r]! * cls.pods.length) / forced.count;
    }
    this.shareMemo.set(key, share);
    return share;
  }

  /** The price of the most price-efficient type for the claim's pods under narrowed requirements. */
  narrowedCap(pool: PoolState, reqsId: number, node: ClaimState, cls: PodClass): number {
    const dsId = this.vectorIds.of(node.ds);
    let cap = pool.capMemo.get(reqsId, dsId, cls.reqId);
    if (cap !== undefined) return cap;
    const req = cls.req;
    const ds = node.ds;
    const demand = this.demand(pool, reqsId, req);
    // Over the types' vectors laid flat, with the pod beside the overhead summed once: a 20,000-pod solve
    // makes this scan of ~800 types 146 times, a tenth of its time as a call per type.
    const { list, alloc, width } = this.ctx.catalog.columns(pool, reqsId);
    if (this.need.length < width) this.need = new Float64Array(width);
    const need = this.need;
    for (let r = 0; r < width; r++) need[r] = ds[r]! + req[r]!;
    // The cost of each type that holds the pod (NaN: it does not), in a buffer kept between calls.
    if (this.costs.length < list.length) this.costs = new Float64Array(list.length * 2);
    const costs = this.costs;
    let bestCost = Number.POSITIVE_INFINITY;
    let first: number | undefined;
    next: for (let i = 0, o = 0; i < list.length; i++, o += width) {
      costs[i] = Number.NaN;
      for (let r = 0; r < width; r++) if (need[r]! > alloc[o + r]!) continue next;
      const p = list[i]!;
      first ??= p.price;
      // unitsOf, on the flat vector.
      let units = Number.POSITIVE_INFINITY;
      for (let r = 0; r < width; r++)
        if (demand[r]! > 0) units = Math.min(units, (alloc[o + r]! - ds[r]!) / demand[r]!);
      units = units === Number.POSITIVE_INFINITY ? 0 : Math.max(units, 0);
      const cost = units > 0 ? p.price / units : Number.POSITIVE_INFINITY;
      costs[i] = cost;
      if (cost < bestCost) bestCost = cost;
    }
    cap = bestCost === Number.POSITIVE_INFINITY ? (first ?? 0) : 0;
    for (let i = 0; i < list.length; i++)
      if (costs[i]! <= bestCost * (1 + EFFICIENCY_TOLERANCE)) cap = Math.max(cap, list[i]!.price);
    pool.capMemo.set(reqsId, dsId, cls.reqId, cap);
    return cap;
  }

  private costs = new Float64Array(0);
  private need = new Float64Array(0);
  /**
   * Overhead vectors interned by their contents: claims of different requirements carry equal overheads
   * in different arrays, and a memo keyed by the array would miss on each. Overheads are never changed.
   */
  private readonly vectorIds = new VectorIds();

  limitByMinValues(pool: PoolState, reqsId: number, node: ClaimState, req: Float64Array, n: number): number {
    const ok = (k: number) => {
      const used = node.used.map((u, r) => u + k * req[r]!);
      const types = this.ctx.catalog
        .compatible(pool, reqsId)
        .filter((p) => p.price <= node.capPrice && fitsUsed(p.t.alloc, used))
        .map((p) => p.t.it);
      return satisfiesMinValues(this.ctx.catalog.reqsById[reqsId]!, types);
    };
    if (ok(n)) return n;
    let lo = 0;
    let hi = n;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (ok(mid)) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  /** A new claim from the first NodePool (by weight) that can take the pod, or undefined. */
  openClaim(v: Variant, podReqs: Requirements, podReqsId: number): ClaimState | undefined {
    const req = v.cls.req;
    for (const pool of this.ctx.pools) {
      const fit = staticFit(this.ctx.catalog, v, pool);
      if (fit.reason) continue;
      const merged = this.ctx.catalog.merge(this.ctx.catalog.intern(pool.domain), podReqs, podReqsId);
      if (merged.conflict) continue;
      const ds = this.ctx.catalog.daemonOverhead(pool, merged.id);
      if (pool.nodesRemaining < 1) {
        v.poolReasons[pool.index] =
          `NodePool ${pool.name}: limits exhausted (nodes ${pool.nodesLimit - pool.nodesRemaining} of ${pool.nodesLimit} used)`;
        continue;
      }
      const memoKey = `${pool.index}:${merged.id}:${v.cls.id}`;
      const memo = this.openMemo.get(memoKey);
      if (memo && exceeds(memo.charged, pool.remaining) < 0) {
        // Same choice as last time: everything it may charge still fits the remaining limits.
        const reserved = this.reserve(v, pool, merged.id, ds);
        if (!reserved) return undefined;
        this.ctx.claims.push(this.newClaim(pool, merged.id, memo.capPrice, ds, memo.charged, memo.forcedBy, reserved));
        return this.ctx.claims[this.ctx.claims.length - 1];
      }
      let best: PricedType | undefined;
      let bestCost = Number.POSITIVE_INFINITY;
      let anyFit = false;
      let blocker: number | undefined;
      const candidates: { p: PricedType; cost: number }[] = [];
      const demand = this.demand(pool, merged.id, req);
      for (const p of this.ctx.catalog.compatible(pool, merged.id)) {
        if (!fitsOne(p.t.alloc, ds, req)) continue;
        anyFit = true;
        if (pool.limited) {
          const over = exceeds(p.t.capacity, pool.remaining);
          if (over >= 0) {
            blocker ??= over;
            continue;
          }
        }
        const units = unitsOf(p.t.alloc, ds, demand);
        const cost = units > 0 ? p.price / units : Number.POSITIVE_INFINITY;
        candidates.push({ p, cost });
        if (cost < bestCost) bestCost = cost;
      }
      // Among types as price-efficient as the best (linear pricing makes many equal), the largest
      // packs the pods onto the fewest nodes; the claim still shrinks to what it holds at the end.
      for (const c of candidates) if (c.cost <= bestCost * (1 + EFFICIENCY_TOLERANCE)) best = c.p;
      // No type holds any share of the mix beside the overhead (the mix needs a resource these types
      // only have for the opening pod): the cheapest that fits the pod.
      if (bestCost === Number.POSITIVE_INFINITY) best = candidates[0]?.p;
      if (!best) {
        if (anyFit && blocker !== undefined) {
          const name = this.ctx.dims.names[blocker]!;
          const used = pool.limit[blocker]! - pool.remaining[blocker]!;
          v.poolReasons[pool.index] =
            `NodePool ${pool.name}: limits exhausted (${name} ${formatLimit(name, used)} of ${formatLimit(name, pool.limit[blocker]!)} used)`;
        } else if (!anyFit) {
          v.topologyReason ??= `no instance type of the required ${podReqs
            .toNodeSelectorRequirements()
            .map((r) => `${r.key}`)
            .join(', ')} fits`;
        }
        continue;
      }
      const unmet = pool.hasMinValues ? this.unmetMinValues(pool, merged.id) : '';
      if (unmet) {
        // Not even every type these requirements allow meets minValues: no claim of them ever will.
        v.poolReasons[pool.index] =
          `NodePool ${pool.name}: minValues requirement is not met for label(s) (label(s)=[${unmet}])`;
        continue;
      }
      const shareCap =
        this.ctx.order === 'priced' && this.ctx.shareForcedNodes
          ? this.forcedShareCap(v, pool, merged.id, ds)
          : undefined;
      // The share only ever lowers the cap: a share larger than the most price-efficient type would be
      // a dearer type for pods that would not all come (1.28× the LP bound on 4,770 mixed pods).
      const forcedBy = shareCap !== undefined && shareCap < best.price ? v : undefined;
      let capPrice =
        this.ctx.order === 'karpenter' ? Number.POSITIVE_INFINITY : forcedBy ? (shareCap ?? best.price) : best.price;
      if (pool.hasMinValues) capPrice = this.capForMinValues(pool, merged.id, capPrice);
      // Karpenter's subtractMax: charge the largest capacity the claim may still launch.
      const charged = new Float64Array(this.ctx.dims.names.length);
      if (pool.limited) {
        for (const p of this.ctx.catalog.compatible(pool, merged.id)) {
          if (p.price > capPrice) break;
          if (!fitsOne(p.t.alloc, ds, req) || exceeds(p.t.capacity, pool.remaining) >= 0) continue;
          for (let r = 0; r < charged.length; r++) charged[r] = Math.max(charged[r]!, p.t.capacity[r]!);
        }
      }
      const reserved = this.reserve(v, pool, merged.id, ds);
      if (!reserved) return undefined;
      this.openMemo.set(memoKey, { capPrice, charged, forcedBy });
      const node = this.newClaim(pool, merged.id, capPrice, ds, charged, forcedBy, reserved);
      this.ctx.claims.push(node);
      return node;
    }
    return undefined;
  }

  /**
   * The reserved offerings a claim of the pool opened for the class holds: of every type it could launch
   * as (fits the pod beside the overhead, within the limits left), as Karpenter reserves them. Undefined
   * when strict mode defers the pod: then no lower-weight NodePool is tried either.
   */
  private reserve(v: Variant, pool: PoolState, reqsId: number, ds: Float64Array): ReservedOption[] | undefined {
    const { ledger } = this.ctx;
    if (!ledger.active) return [];
    const outcome = ledger.open(
      pool,
      reqsId,
      (t) => fitsOne(t.alloc, ds, v.cls.req) && !(pool.limited && exceeds(t.capacity, pool.remaining) >= 0),
    );
    if ('held' in outcome) return outcome.held;
    v.poolReasons[pool.index] = `NodePool ${pool.name}: ${outcome.error}`;
    v.reservedError = outcome.error;
    return undefined;
  }

  private readonly openMemo = new Map<
    string,
    { capPrice: number; charged: Float64Array; forcedBy: Variant | undefined }
  >();

  private newClaim(
    pool: PoolState,
    reqsId: number,
    capPrice: number,
    ds: Float64Array,
    charged: Float64Array,
    forcedBy: Variant | undefined,
    reserved: ReservedOption[],
  ): ClaimState {
    const node: ClaimState = {
      kind: 'claim',
      ...(forcedBy ? { forcedBy } : {}),
      ...(reserved.length > 0 ? { reserved } : {}),
      index: this.ctx.claims.length,
      name: `${pool.name}-${this.ctx.claims.length}`,
      pool,
      reqs: this.ctx.catalog.reqsById[reqsId]!,
      reqsId,
      capPrice,
      frontier: this.ctx.catalog.frontier(pool, reqsId, capPrice, pool.limited ? charged : undefined),
      used: Float64Array.from(ds),
      ds,
      pods: [],
      counts: new Int32Array(this.ctx.groups.length),
      owners: new Int32Array(this.ctx.groups.length),
      batches: [],
    };
    if (pool.limited) {
      for (let r = 0; r < charged.length; r++) pool.remaining[r]! -= charged[r]!;
      node.charged = charged;
    }
    pool.nodesRemaining -= 1;
    return node;
  }

  discardClaim(node: ClaimState): void {
    const pool = node.pool;
    this.ctx.ledger.release(node);
    if (node.charged) for (let r = 0; r < node.charged.length; r++) pool.remaining[r]! += node.charged[r]!;
    pool.nodesRemaining += 1;
    const index = this.ctx.claims.lastIndexOf(node);
    if (index >= 0) this.ctx.claims.splice(index, 1);
  }

  /**
   * The mean pod of those that may share a claim of this pool with these requirements: the classes the
   * pool can take at all (taints, requirements, a type they fit on) whose node selection agrees with the
   * claim's, and which ask for no extended resource (GPUs …) the opening pod does not ask for. A claim
   * is sized for them: a GPU pod elsewhere in the batch, or a pod that fits no NodePool, says nothing
   * about how large a CPU claim should be, and a CPU claim will never hold a GPU pod anyway.
   */
  demand(pool: PoolState, reqsId: number, opening: Float64Array): Float64Array {
    const n = this.ctx.dims.names.length;
    let extended = '';
    for (let r = 0; r < n; r++) if (r > 2 && opening[r]! > 0) extended += `,${r}`;
    const key = `${pool.index}:${reqsId}${extended}`;
    let mean = this.demandMemo.get(key);
    if (mean) return mean;
    mean = new Float64Array(n);
    let count = 0;
    for (const cls of this.ctx.classes()) {
      let foreign = false;
      for (let r = 3; r < n && !foreign; r++) foreign = cls.req[r]! > 0 && !(opening[r]! > 0);
      if (foreign) continue;
      const v = this.ctx.variant(cls, 0)!;
      const fit = staticFit(this.ctx.catalog, v, pool);
      if (fit.reason || fit.reqsId === undefined) continue;
      const merged = this.ctx.catalog.merge(reqsId, v.reqs, this.ctx.catalog.intern(v.reqs));
      if (merged.conflict) continue;
      for (let r = 0; r < n; r++) mean[r]! += cls.req[r]! * cls.pods.length;
      count += cls.pods.length;
    }
    if (count > 0) for (let r = 0; r < n; r++) mean[r]! /= count;
    else mean.set(opening);
    this.demandMemo.set(key, mean);
    return mean;
  }

  /** The keys (comma-joined) whose minValues no claim of these requirements can meet; '' when all can. */
  private unmetMinValues(pool: PoolState, reqsId: number): string {
    const key = `${pool.index}:${reqsId}`;
    let unmet = this.unmetMemo.get(key);
    if (unmet === undefined) {
      const types = this.ctx.catalog.compatible(pool, reqsId).map((p) => p.t.it);
      unmet = unmetMinValues(this.ctx.catalog.reqsById[reqsId]!, types).join(', ');
      this.unmetMemo.set(key, unmet);
    }
    return unmet;
  }

  private readonly unmetMemo = new Map<string, string>();

  private capForMinValues(pool: PoolState, reqsId: number, capPrice: number): number {
    const list = this.ctx.catalog.compatible(pool, reqsId);
    const reqs = this.ctx.catalog.reqsById[reqsId]!;
    for (let i = 0; i < list.length; i++) {
      const price = list[i]!.price;
      if (price < capPrice) continue;
      if (
        satisfiesMinValues(
          reqs,
          list.slice(0, i + 1).map((p) => p.t.it),
        )
      )
        return price;
    }
    return Number.POSITIVE_INFINITY;
  }
}
