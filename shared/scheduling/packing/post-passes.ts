// The passes after the greedy and the tail re-pack (tail-repack.ts): the slack fill (pods out of a dearer
// claim into room others have), the merge of small claims onto one larger type, and the rebalance
// between pairs of cheap claims.
// Every pass moves pods only where their constraints still hold and only when the plan gets cheaper.

import type { Pod } from '../../apis/core/v1';
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_ZONE, LABEL_ZONE_ID } from '../requirements';
import type { TypeCatalog } from './catalog';
import { cheapestFinalType } from './finalize';
import { domainOf, hostRoom } from './hosts';
import { staticFit } from './pool-fit';
import type { ClaimState, Group, OwnTerm, PackingOrder, PodClass, PoolState, PricedType, Variant } from './state';
import { type Dims, exceedsCharged, fitsUsed, roomIn } from './vectors';

/** The merge pass pairs at most this many of the cheapest claims. */
const MERGE_CANDIDATES = 48;

/** What the passes read of the packer's state; they change only the claims. */
export interface PostPassContext {
  readonly catalog: TypeCatalog;
  readonly dims: Dims;
  readonly claims: ClaimState[];
  readonly groups: readonly Group[];
  readonly order: PackingOrder;
  /** Whether pods with topology move too (see `mobile`): Karpenter's order, or a small solve. */
  readonly moveTopology: boolean;
  variant(cls: PodClass, level: number): Variant | undefined;
  /** Every pod class of the solve: the owners of the spreads a cross-zone move must keep. */
  classes(): readonly PodClass[];
  /** The domains a spread of the variant takes its skew over (TopologyTargets.skewDomains). */
  skewDomains(v: Variant, o: OwnTerm): readonly string[];
}

/** Zone-count changes of moves planned but not yet applied, by group id, then zone. */
type ZoneDeltas = Map<number, Map<string, number>>;

/** A zone spread a cross-zone move must keep within its skew. */
interface SpreadOwner {
  maxSkew: number;
  minDomains: number;
  domains: readonly string[];
}

export class PostPasses {
  /**
   * Whether zone-spread pods may change zone (see crossZoneRoom). Off for the first round of passes, so
   * the moves within zones are made first and the cross-zone ones only ever lower what they reach.
   */
  crossZone = false;

  constructor(private readonly ctx: PostPassContext) {}

  // -------------------------------------------------------------------------------------------
  // Slack fill

  /** A class whose pods may sit on any claim that satisfies its node selection: no topology counts it. */
  private free(cls: PodClass): boolean {
    if (cls.matched.length > 0) return false;
    if (cls.movable === undefined) {
      const a = cls.spec.affinity;
      const none = (
        t:
          | {
              requiredDuringSchedulingIgnoredDuringExecution?: unknown[];
              preferredDuringSchedulingIgnoredDuringExecution?: unknown[];
            }
          | undefined,
      ) =>
        (t?.requiredDuringSchedulingIgnoredDuringExecution?.length ?? 0) +
          (t?.preferredDuringSchedulingIgnoredDuringExecution?.length ?? 0) ===
        0;
      cls.movable =
        (cls.spec.topologySpreadConstraints?.length ?? 0) === 0 && none(a?.podAffinity) && none(a?.podAntiAffinity);
    }
    return cls.movable;
  }

  /**
   * A class a post pass may move between claims of one domain: free, or (in Karpenter order) with topology that a move
   * within the same zone (every non-hostname domain) keeps, or a zone spread's skew a move to another
   * zone keeps, checked per move by `moveRoom`. Hostname
   * affinity, its own or one that selects it, ties pods to their node and is never moved.
   */
  private mobile(cls: PodClass): boolean {
    if (this.free(cls)) return true;
    // The priced greedy fills its claims to their type, so these moves find little to gain there (about
    // 1% at 5,000 diverse pods) for most of the solve's time; Karpenter's order leaves the room they use.
    // Small solves make them in both orders (mixed 90 pods: 1.125 → 1.103× the LP bound).
    if (!this.ctx.moveTopology) return false;
    if (cls.mobile === undefined) {
      const v = this.ctx.variant(cls, 0)!;
      cls.mobile =
        !v.own.some((o) => o.kind === 'affinity' && o.group.host) &&
        !cls.matched.some((g) => g.term.kind === 'affinity' && g.host);
    }
    return cls.mobile;
  }

  /**
   * How many of `want` pods of the class may move from one claim to the other: none unless both sit in
   * the same domain of every non-hostname key the class's topology reads (zone counts and skews stay
   * as they are) or, once `crossZone` is on, the only such key is the zone of spreads whose skews the
   * move keeps (see crossZoneRoom); then as many as the receiver's hostname topology admits: the class's own terms, the
   * anti-affinity of pods there, and the hostname spreads of pods there that count the class.
   */
  private moveRoom(cls: PodClass, from: ClaimState, to: ClaimState, want: number, pending?: ZoneDeltas): number {
    if (this.free(cls)) return want;
    if (!this.mobile(cls)) return 0;
    const v = this.ctx.variant(cls, 0)!;
    const same = (key: string) => {
      const d = domainOf(from, key);
      return d !== undefined && d === domainOf(to, key);
    };
    let room = want;
    let crossZone = false;
    for (const o of v.own) if (!o.group.host && !same(o.group.key)) crossZone = true;
    for (const g of cls.matched) if (!g.host && !same(g.key)) crossZone = true;
    if (crossZone) {
      if (!this.crossZone) return 0;
      room = this.crossZoneRoom(cls, v, from, to, want, pending);
      if (room <= 0) return 0;
    }
    room = hostRoom(v, to, room);
    for (const { cls: other } of to.batches) {
      if (room <= 0) break;
      if (other === cls) continue;
      for (const o of this.ctx.variant(other, 0)!.own) {
        if (o.kind === 'spread' && o.group.host && cls.matched.includes(o.group))
          room = Math.min(room, o.maxSkew - to.counts[o.group.id]!);
      }
    }
    return Math.max(room, 0);
  }

  /**
   * How many of `want` pods of the class may move from a claim in one zone to a claim in another: none
   * unless every non-hostname term the class owns or is counted by is a zone spread and both claims are
   * pinned to one zone; then as many as keep every spread that counts the class (DoNotSchedule or not,
   * whatever pods own it) within its maxSkew over its owner's zones, after the moves already planned.
   */
  private crossZoneRoom(
    cls: PodClass,
    v: Variant,
    from: ClaimState,
    to: ClaimState,
    want: number,
    pending: ZoneDeltas | undefined,
  ): number {
    const a = domainOf(from, LABEL_ZONE);
    const b = domainOf(to, LABEL_ZONE);
    if (a === undefined || b === undefined || a === b) return 0;
    for (const o of v.own) if (!o.group.host && (o.kind !== 'spread' || o.group.key !== LABEL_ZONE)) return 0;
    for (const g of cls.matched) if (!g.host && (g.term.kind !== 'spread' || g.key !== LABEL_ZONE)) return 0;
    let room = want;
    for (const g of cls.matched) {
      if (g.host) continue;
      const delta = pending?.get(g.id);
      const count = (d: string) => (g.counts.get(d) ?? 0) + (delta?.get(d) ?? 0);
      for (const owner of this.owners(g)) {
        const zones = owner.domains;
        let k = 0;
        while (k < room) {
          const moved = k + 1;
          let max = Number.NEGATIVE_INFINITY;
          let min = Number.POSITIVE_INFINITY;
          for (const z of zones) {
            const c = count(z) - (z === a ? moved : 0) + (z === b ? moved : 0);
            if (c > max) max = c;
            if (c < min) min = c;
          }
          if (zones.length < owner.minDomains) min = Math.min(min, 0);
          // A zone outside the owner's domains holds pods it does not count; the source losing pods is fine.
          if (zones.length > 0 && max - min > owner.maxSkew) break;
          k = moved;
        }
        room = k;
        if (room === 0) return 0;
      }
    }
    return room;
  }

  private readonly ownersMemo = new Map<number, SpreadOwner[]>();

  /** The zone spreads on a group, one per owning class (its first variant: every term it may hold). */
  private owners(g: Group): SpreadOwner[] {
    let list = this.ownersMemo.get(g.id);
    if (list) return list;
    list = [];
    for (const cls of this.ctx.classes()) {
      const v = this.ctx.variant(cls, 0)!;
      for (const o of v.own)
        if (o.group === g && o.kind === 'spread')
          list.push({ maxSkew: o.maxSkew, minDomains: o.minDomains, domains: this.ctx.skewDomains(v, o) });
    }
    this.ownersMemo.set(g.id, list);
    return list;
  }

  /**
   * Claims end on the cheapest type that fits what they hold, often with room to spare: a claim opened
   * for a pod that wants a node of its own, a zone's share of a spread. Free pods (no topology of their
   * own, none counting them) move out of a dearer claim into that room when the claim then fits a
   * cheaper type (or empties), every receiving claim keeping its type and price. Moves only shrink what
   * a claim lists, so NodePool limits hold.
   */
  fillSlack(): void {
    // Claims holding reservations stay as planned (see TailRepack.repackTails).
    const claims = this.ctx.claims.filter((c) => c.pods.length > 0 && !c.pool.hasMinValues && !c.reserved);
    if (claims.length < 2) return;
    const price = new Map<ClaimState, PricedType>();
    for (const c of claims) price.set(c, cheapestFinalType(this.ctx.catalog, c));
    const sources = [...claims].sort((a, b) => price.get(b)!.price - price.get(a)!.price || a.index - b.index);
    // Classes no claim had room for since the last successful move: their next search would fail too.
    const full = new Set<PodClass>();
    for (const source of sources) {
      const freeBatches = source.batches.filter((b) => this.mobile(b.cls));
      if (freeBatches.length === 0) continue;
      const current = price.get(source)!;
      const kept = Float64Array.from(source.used);
      for (const { cls, n } of freeBatches) for (let r = 0; r < kept.length; r++) kept[r]! -= n * cls.req[r]!;
      const floor = this.cheapestFitting(source, source.reqsId, kept);
      if (floor !== undefined && floor.price >= current.price) continue;
      const plan = this.planMoves(source, freeBatches, claims, price, full);
      if (plan.moves.length === 0) continue;
      const left = Float64Array.from(source.used);
      for (const m of plan.moves) for (let r = 0; r < left.length; r++) left[r]! -= m.cls.req[r]!;
      const after = this.cheapestFitting(source, source.reqsId, left);
      let added = 0;
      for (const [to, change] of plan.receivers) added += change.type.price - price.get(to)!.price;
      if ((after?.price ?? 0) + added >= current.price - 1e-9) continue;
      this.applyMoves(source, plan.moves);
      for (const [to, change] of plan.receivers) {
        to.reqsId = change.reqsId;
        to.reqs = this.ctx.catalog.reqsById[change.reqsId]!;
        price.set(to, change.type);
      }
      if (after) price.set(source, after);
      full.clear();
    }
  }

  /**
   * The cheapest type for contents of this size under these requirements (and the claim's limit
   * charge), or undefined when the claim would be empty or no type holds it.
   */
  private cheapestFitting(node: ClaimState, reqsId: number, used: Float64Array): PricedType | undefined {
    const i = this.firstFitting(node, reqsId, used, 0);
    return i < 0 ? undefined : this.ctx.catalog.compatible(node.pool, reqsId)[i];
  }

  /**
   * cheapestFitting as an index into the compatible types (-1: empty or none fits), scanning from
   * `start`: a caller whose contents only grow resumes where the last scan stopped, as no type before
   * it can fit more.
   */
  private firstFitting(node: ClaimState, reqsId: number, used: Float64Array, start: number): number {
    let empty = true;
    for (let r = 0; r < used.length; r++) if (used[r]! - node.ds[r]! > 1e-9) empty = false;
    if (empty) return -1;
    const pool = node.pool;
    const list = this.ctx.catalog.compatible(pool, reqsId);
    for (let i = start; i < list.length; i++) {
      const p = list[i]!;
      if (!fitsUsed(p.t.alloc, used)) continue;
      if (node.charged && exceedsCharged(p.t.capacity, node.charged, pool.limit) >= 0) continue;
      return i;
    }
    return -1;
  }

  /**
   * Where each free pod of the source could go, largest class first: first into room a receiver has
   * on its type, then onto receivers its node selection narrows (another family, an arch), whose
   * new type and price the caller weighs. Selections on zone, capacity type or hostname never narrow
   * a receiver: the topology counts of the pods already there were taken under its old domains.
   */
  private planMoves(
    source: ClaimState,
    batches: { cls: PodClass; n: number }[],
    claims: ClaimState[],
    price: Map<ClaimState, PricedType>,
    full: Set<PodClass>,
  ): {
    moves: { cls: PodClass; to: ClaimState }[];
    receivers: Map<ClaimState, { reqsId: number; type: PricedType; used: Float64Array }>;
  } {
    const receivers = new Map<ClaimState, { reqsId: number; type: PricedType; used: Float64Array }>();
    const moves: { cls: PodClass; to: ClaimState }[] = [];
    const bound = new Set<ClaimState>();
    const pending: ZoneDeltas = new Map();
    const order = [...batches].sort((a, b) => b.cls.cpu - a.cls.cpu || b.cls.memory - a.cls.memory);
    for (const { cls, n } of order) {
      if (full.has(cls)) continue;
      const v = this.ctx.variant(cls, 0)!;
      const podId = this.ctx.catalog.intern(v.reqs);
      // A pod without node selection merges into any claim unchanged: it never narrows one.
      const mayNarrow =
        v.reqs.byKey.size > 0 &&
        ![LABEL_ZONE, LABEL_ZONE_ID, LABEL_CAPACITY_TYPE, LABEL_HOSTNAME].some((k) => v.reqs.get(k));
      const free = this.free(cls);
      let placed = 0;
      for (const narrowing of mayNarrow ? [false, true] : [false]) {
        for (const to of claims) {
          if (placed === n) break;
          // An emptied claim is no receiver: its price is no longer paid.
          if (to === source || to.pool !== source.pool || to.pods.length === 0) continue;
          // Pods with topology of their own or counted by others: one such move per receiver and plan, as
          // the room their hostname topology leaves is read from the receiver's counts before any move.
          if (!free && bound.has(to)) continue;
          const planned = receivers.get(to);
          const reqsId = planned?.reqsId ?? to.reqsId;
          const used = planned?.used ?? to.used;
          let type = planned?.type ?? price.get(to)!;
          if (!narrowing && roomIn(type.t.alloc, used, cls.req) <= 0) continue;
          const merged = this.ctx.catalog.merge(reqsId, v.reqs, podId);
          if (merged.conflict || (merged.id !== reqsId) !== narrowing) continue;
          if (narrowing) {
            const one = used.map((u, r) => u + cls.req[r]!);
            const next = this.cheapestFitting(to, merged.id, one);
            if (!next) continue;
            type = next;
          }
          const k = Math.min(
            free ? n - placed : this.moveRoom(cls, source, to, n - placed, pending),
            roomIn(type.t.alloc, used, cls.req),
          );
          if (k <= 0) continue;
          if (!free) {
            bound.add(to);
            this.addZoneMoves(pending, cls, source, to, k);
          }
          const next = planned?.used ?? Float64Array.from(to.used);
          for (let r = 0; r < next.length; r++) next[r]! += k * cls.req[r]!;
          receivers.set(to, { reqsId: merged.id, type, used: next });
          for (let i = 0; i < k; i++) moves.push({ cls, to });
          placed += k;
        }
      }
      if (placed === 0) full.add(cls);
    }
    return { moves, receivers };
  }

  /** Records k pods of the class moving between the claims' zones (nothing when they share one). */
  private addZoneMoves(deltas: ZoneDeltas, cls: PodClass, from: ClaimState, to: ClaimState, k: number): void {
    const a = domainOf(from, LABEL_ZONE);
    const b = domainOf(to, LABEL_ZONE);
    if (a === undefined || b === undefined || a === b) return;
    for (const g of cls.matched) {
      if (g.host) continue;
      let m = deltas.get(g.id);
      if (!m) {
        m = new Map();
        deltas.set(g.id, m);
      }
      m.set(a, (m.get(a) ?? 0) - k);
      m.set(b, (m.get(b) ?? 0) + k);
    }
  }

  private applyMoves(source: ClaimState, moves: { cls: PodClass; to: ClaimState }[]): void {
    const wanted = new Map<PodClass, ClaimState[]>();
    for (const m of moves) {
      const list = wanted.get(m.cls);
      if (list) list.push(m.to);
      else wanted.set(m.cls, [m.to]);
    }
    const pods: Pod[] = [];
    const batches: { cls: PodClass; n: number }[] = [];
    let i = 0;
    for (const { cls, n } of source.batches) {
      const targets = wanted.get(cls);
      let kept = 0;
      for (let k = 0; k < n; k++) {
        const pod = source.pods[i++]!;
        const to = targets?.shift();
        if (!to) {
          pods.push(pod);
          kept++;
          continue;
        }
        to.pods.push(pod);
        const last = to.batches[to.batches.length - 1];
        if (last && last.cls === cls) last.n++;
        else to.batches.push({ cls, n: 1 });
        for (let r = 0; r < cls.req.length; r++) {
          to.used[r]! += cls.req[r]!;
          source.used[r]! -= cls.req[r]!;
        }
        // Hostname counts follow the pod, and so do zone counts when it changes zone (a zone spread's
        // move, see crossZoneRoom); every other domain is kept by the moves.
        for (const g of cls.matched) {
          source.counts[g.id]!--;
          to.counts[g.id]!++;
          if (!g.host) {
            const a = domainOf(source, g.key);
            const b = domainOf(to, g.key);
            if (a !== b && a !== undefined && b !== undefined) {
              g.counts.set(a, (g.counts.get(a) ?? 0) - 1);
              g.counts.set(b, (g.counts.get(b) ?? 0) + 1);
            }
          }
        }
        for (const g of this.ctx.variant(cls, 0)!.ownedAnti) {
          source.owners[g.id]!--;
          to.owners[g.id]!++;
        }
      }
      if (kept > 0) batches.push({ cls, n: kept });
    }
    source.pods = pods;
    source.batches = batches;
  }

  // -------------------------------------------------------------------------------------------
  // Rebalance

  /**
   * Pairs of the cheapest claims of one NodePool trade free pods: k pods of a class move from one to
   * the other when the two then cost less together (the receiver may narrow to another family, never
   * to another zone, capacity type or hostname; a zone-spread pod changes zone only as `moveRoom`
   * allows). Bounded like the merge: only the cheapest claims.
   */
  rebalance(): void {
    const price = new Map<ClaimState, number>();
    const candidates: ClaimState[] = [];
    for (const c of this.ctx.claims) {
      if (c.pods.length === 0 || c.pool.hasMinValues || c.reserved) continue;
      price.set(c, cheapestFinalType(this.ctx.catalog, c).price);
      candidates.push(c);
    }
    candidates.sort((a, b) => price.get(a)! - price.get(b)! || a.index - b.index);
    candidates.length = Math.min(candidates.length, MERGE_CANDIDATES);
    // Per receiver and requirements, the first type that fits what it holds now: a receiver taking pods
    // fits none before it, so its scans start there. Dropped for the two claims a move changes.
    const floors = new Map<ClaimState, Map<number, number>>();
    const floor = (to: ClaimState, reqsId: number) => {
      let byReqs = floors.get(to);
      if (!byReqs) {
        byReqs = new Map();
        floors.set(to, byReqs);
      }
      let at = byReqs.get(reqsId);
      if (at === undefined) {
        at = Math.max(0, this.firstFitting(to, reqsId, to.used, 0));
        byReqs.set(reqsId, at);
      }
      return at;
    };
    for (const from of candidates) {
      for (const { cls, n } of [...from.batches]) {
        if (!this.mobile(cls) || from.pods.length === 0) continue;
        // What the source costs without k of these pods, the same for every receiver. A receiver only
        // gets dearer by taking pods, so when the source is no cheaper without all of them, none gains.
        const without = this.withoutPods(from, cls);
        if ((without(n)?.price ?? 0) >= price.get(from)! - 1e-9) continue;
        const v = this.ctx.variant(cls, 0)!;
        const fixed = [LABEL_ZONE, LABEL_ZONE_ID, LABEL_CAPACITY_TYPE, LABEL_HOSTNAME].some((k) => v.reqs.get(k));
        let best:
          | { to: ClaimState; k: number; reqsId: number; a?: PricedType; b: PricedType; gain: number }
          | undefined;
        for (const to of candidates) {
          if (to === from || to.pool !== from.pool || to.pods.length === 0) continue;
          const merged = this.ctx.catalog.merge(to.reqsId, v.reqs, this.ctx.catalog.intern(v.reqs));
          if (merged.conflict || (fixed && merged.id !== to.reqsId)) continue;
          const before = price.get(from)! + price.get(to)!;
          const most = this.moveRoom(cls, from, to, n);
          const types = this.ctx.catalog.compatible(to.pool, merged.id);
          const got = this.scratch(to.used.length);
          let at = most > 0 ? floor(to, merged.id) : 0;
          for (let k = 1; k <= most; k++) {
            for (let r = 0; r < got.length; r++) got[r] = to.used[r]! + k * cls.req[r]!;
            // The receiver's contents only grow with k: no type before the last fit fits now.
            at = this.firstFitting(to, merged.id, got, at);
            const b = at < 0 ? undefined : types[at]!;
            // The receiver only gets dearer as it takes more: once it alone costs what both did, no
            // larger k gains (or beats the best found).
            if (!b || b.price >= before - 1e-9 - (best?.gain ?? 0)) break;
            const a = without(k);
            const gain = before - (a?.price ?? 0) - b.price;
            if (gain > 1e-9 && (!best || gain > best.gain))
              best = { to, k, reqsId: merged.id, b, gain, ...(a ? { a } : {}) };
          }
        }
        if (!best) continue;
        const moves = Array.from({ length: best.k }, () => ({ cls, to: best.to }));
        this.applyMoves(from, moves);
        floors.delete(from);
        floors.delete(best.to);
        best.to.reqsId = best.reqsId;
        best.to.reqs = this.ctx.catalog.reqsById[best.reqsId]!;
        price.set(best.to, best.b.price);
        price.set(from, best.a?.price ?? 0);
      }
    }
  }

  /**
   * The cheapest type for the claim without k of its pods of the class (k ≥ 1), each made when first
   * asked: most pairs are settled by k = n alone, and the rest ask for a few k.
   */
  private withoutPods(from: ClaimState, cls: PodClass): (k: number) => PricedType | undefined {
    const memo = new Map<number, PricedType | undefined>();
    return (k) => {
      if (memo.has(k)) return memo.get(k);
      const left = from.used.map((u, r) => u - k * cls.req[r]!);
      const p = this.cheapestFitting(from, from.reqsId, left);
      memo.set(k, p);
      return p;
    };
  }

  private scratchVector: Float64Array | undefined;

  /** A vector for contents tried and dropped within one loop, reused rather than made per try. */
  private scratch(width: number): Float64Array {
    if (this.scratchVector?.length !== width) this.scratchVector = new Float64Array(width);
    return this.scratchVector;
  }

  // -------------------------------------------------------------------------------------------
  // Merge

  /**
   * Two claims of one NodePool whose pods are all free (see `free`) and whose requirements agree move
   * onto one claim when one type holding both costs less than the two. The cheapest claims are the
   * ones left part-empty (a selector kept their pods off the claims before them), so only they are
   * paired, which bounds the pass whatever the number of claims.
   */
  mergeClaims(): void {
    const price = new Map<ClaimState, number>();
    const candidates: ClaimState[] = [];
    for (const c of this.ctx.claims) {
      const pool = c.pool;
      if (c.pods.length === 0 || pool.limited || pool.hasMinValues || c.reserved) continue;
      if (!c.batches.every((b) => this.hostOnly(b.cls))) continue;
      price.set(c, cheapestFinalType(this.ctx.catalog, c).price);
      candidates.push(c);
    }
    candidates.sort((a, b) => price.get(a)! - price.get(b)! || a.index - b.index);
    candidates.length = Math.min(candidates.length, MERGE_CANDIDATES);
    for (const a of candidates) {
      if (a.pods.length === 0) continue;
      let best: { into: ClaimState; reqsId: number; ds: Float64Array; type: PricedType; saving: number } | undefined;
      for (const into of candidates) {
        if (into === a || into.pods.length === 0) continue;
        const pool = into.pool;
        const reqsId = this.mergeInto(into, a, pool);
        if (reqsId === undefined || !this.shareHost(a, into)) continue;
        const ds = this.ctx.catalog.daemonOverhead(pool, reqsId);
        const used = Float64Array.from(ds);
        for (let r = 0; r < used.length; r++) used[r]! += a.used[r]! - a.ds[r]! + into.used[r]! - into.ds[r]!;
        const type = this.ctx.catalog.compatible(pool, reqsId).find((p) => fitsUsed(p.t.alloc, used));
        if (!type) continue;
        const saving = price.get(a)! + price.get(into)! - type.price;
        if (saving > 1e-9 && (!best || saving > best.saving)) best = { into, reqsId, ds, type, saving };
      }
      if (!best) continue;
      const { into } = best;
      for (let r = 0; r < into.used.length; r++)
        into.used[r] = best.ds[r]! + a.used[r]! - a.ds[r]! + into.used[r]! - into.ds[r]!;
      into.pods.push(...a.pods);
      into.batches.push(...a.batches);
      for (let g = 0; g < into.counts.length; g++) {
        into.counts[g]! += a.counts[g]!;
        into.owners[g]! += a.owners[g]!;
      }
      into.ds = best.ds;
      into.reqsId = best.reqsId;
      into.reqs = this.ctx.catalog.reqsById[best.reqsId]!;
      into.capPrice = best.type.price;
      into.frontier = [best.type.t];
      price.set(into, best.type.price);
      a.pods = [];
      a.batches = [];
      a.pool.nodesRemaining += 1;
    }
  }

  /** A class whose topology, its own and any that counts it, is all on hostname: a merge keeps its zone. */
  private hostOnly(cls: PodClass): boolean {
    if (this.free(cls)) return true;
    const v = this.ctx.variant(cls, 0)!;
    return v.own.every((o) => o.group.host) && cls.matched.every((g) => g.host);
  }

  /** Whether the pods of two claims may share one node by their hostname topology. */
  private shareHost(a: ClaimState, b: ClaimState): boolean {
    const check = (x: ClaimState, y: ClaimState) => {
      for (const { cls } of x.batches) {
        for (const g of cls.inverse) if (g.host && y.owners[g.id]! > 0) return false;
        for (const o of this.ctx.variant(cls, 0)!.own) {
          const merged = x.counts[o.group.id]! + y.counts[o.group.id]!;
          if (o.kind === 'antiAffinity' && merged > (o.self ? 1 : 0)) return false;
          if (o.kind === 'spread' && merged > o.maxSkew) return false;
        }
      }
      return true;
    };
    return check(a, b) && check(b, a);
  }

  /**
   * The requirements of `into` narrowed by every pod class of `from`, or undefined when one of them
   * may not run there. Another NodePool's claim qualifies when it takes the class (its taints, its
   * requirements), as Karpenter lets a pod join an in-flight claim of any NodePool.
   */
  private mergeInto(into: ClaimState, from: ClaimState, pool: PoolState): number | undefined {
    let reqsId = into.reqsId;
    for (const { cls } of from.batches) {
      const v = this.ctx.variant(cls, 0)!;
      if (pool !== from.pool && staticFit(this.ctx.catalog, v, pool).reason) return undefined;
      const merged = this.ctx.catalog.merge(reqsId, v.reqs, this.ctx.catalog.intern(v.reqs));
      if (merged.conflict) return undefined;
      reqsId = merged.id;
    }
    return reqsId;
  }
}
