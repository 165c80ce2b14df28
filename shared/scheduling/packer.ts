// The packer: pending pods → NodeClaims, following Karpenter's Scheduler.Solve (existing capacity first,
// then claims planned in this run, then a new claim from the first NodePool by weight), with two
// departures that make it cheap and fast:
//  - Pods that share a scheduling shape form one class and are placed as a batch: a node takes as many
//    of them as fit in one step, and per-class cursors skip nodes that already refused the class
//    (refusals are permanent: capacity and requirements only shrink, topology counts only grow).
//  - A new claim is capped at the instance type with the lowest price per packed pod for the pending
//    mix, filled first-fit largest-first, and only at the end given every type that fits what it holds,
//    cheapest first, so the tail claims shrink to the smallest type that fits. The last few claims of
//    a run of interchangeable ones are then re-packed onto one or two claims when that is cheaper.
// In `karpenter` order (PackingOrder) it decides as Karpenter does instead: pod by pod in queue order,
// the emptiest claim first, claims uncapped; solve() keeps the cheaper plan.
// This file holds preparation, the order of classes and placement; packing/ holds the rest: vectors,
// state, classes (pod shapes), catalog (types, requirements, overhead), pod-terms (topology groups,
// relaxation), pool-fit (reasons), topology-targets, claim-opening (caps, limits, the forced-node
// share), karpenter-order, hosts, tail-repack, post-passes (slack fill, merge, rebalance), finalize,
// split-fit, offerings, skips, memo.

import type { Pod } from '../apis/core/v1';
import type { ExistingNode, SchedulingInput, SchedulingResult, UnschedulablePod } from './index';
import { TypeCatalog } from './packing/catalog';
import { ClaimOpening } from './packing/claim-opening';
import { classify, specInfos } from './packing/classes';
import { finalize } from './packing/finalize';
import { labelsWithHostPorts } from './packing/host-ports';
import { domainOf, hostRoom } from './packing/hosts';
import { KarpenterOrder } from './packing/karpenter-order';
import { cmp } from './packing/ordering';
import { PodTerms } from './packing/pod-terms';
import { staticFit, unschedulableReasons } from './packing/pool-fit';
import { type PostPassContext, PostPasses } from './packing/post-passes';
import { ReservationLedger } from './packing/reservations';
import { ConflictSkips, FullSkips, firstClear } from './packing/skips';
import type {
  ClaimState,
  ExistingState,
  Fit,
  Group,
  NodeState,
  PackingOrder,
  Pinned,
  PodClass,
  PoolState,
  TypeInfo,
  Variant,
} from './packing/state';
import { TailRepack } from './packing/tail-repack';
import { TopologyTargets } from './packing/topology-targets';
import { Dims, fitsUsed, roomIn, unitsOf } from './packing/vectors';
import { type Requirements, requirementIn } from './requirements';
import { PODS, podRequests } from './resources';
import { schedulingTaints, untoleratedTaint } from './taints';
import { describeTerm, termMatches } from './topology';

/** Finer rounds fill each node with a closer copy of the mix; four keep the placement calls few. */
const ROUNDS_PER_NODE = 4;

/**
 * Up to this many pods the post passes move pods with topology in the priced order too (Karpenter's
 * order always does). Above it they cost more than they save: at 1,000 diverse pods they added half
 * to the solve's time and saved nothing on either catalog or the mixed suite (see PostPasses.mobile).
 */
const TOPOLOGY_MOVES_MAX_PODS = 200;

/** The claim takes none of the pods (shared, frozen: the check runs millions of times per solve). */
const NONE: Fit = Object.freeze({ n: 0 });
/** A claim's requirements conflict with the pod's: it will never take pods of these requirements. */
const CONFLICT: Fit = Object.freeze({ n: 0 });
/** No instance type the claim may still have has room for one more pod of these requests. */
const FULL: Fit = Object.freeze({ n: 0 });

/** No claim skipped. */
const NO_BITS = new Uint32Array(0);

/** A batch pinned to no domain (the variant has no pin keys). */
const UNPINNED: Pinned = Object.freeze({ targets: [], key: '' });

/** Kubelet's default, for nodes whose allocatable omits pods. */
const DEFAULT_MAX_PODS = 110;

export type { PackingOrder } from './packing/state';

export class Packer {
  private readonly dims = new Dims();
  private readonly pools: PoolState[] = [];
  private readonly existing: ExistingState[] = [];
  private readonly claims: ClaimState[] = [];
  private classes: PodClass[] = [];

  private readonly catalog: TypeCatalog;
  private readonly terms = new PodTerms();
  private readonly targets: TopologyTargets;
  private readonly opening: ClaimOpening;
  private readonly ledger: ReservationLedger;
  private readonly karpenterOrder: KarpenterOrder;
  private readonly conflicts = new ConflictSkips();
  private readonly full = new FullSkips();
  /** Request vectors (as text) to their PodClass.reqId. */
  private readonly reqIds = new Map<string, number>();

  constructor(
    private readonly input: SchedulingInput,
    private readonly order: PackingOrder = 'priced',
    /** Priced order: pods that need a node each first, their claims sized as a share (see forcedShareCap). */
    private readonly shareForcedNodes = true,
  ) {
    this.catalog = new TypeCatalog(input, this.dims);
    this.targets = new TopologyTargets(this.catalog, this.pools, this.existing);
    this.ledger = new ReservationLedger(input, this.catalog);
    this.opening = new ClaimOpening({
      ledger: this.ledger,
      catalog: this.catalog,
      dims: this.dims,
      pools: this.pools,
      claims: this.claims,
      groups: this.terms.groups,
      order,
      shareForcedNodes,
      classes: () => this.classes,
      variant: (cls, level) => this.terms.variant(cls, level),
    });
    this.karpenterOrder = new KarpenterOrder({
      catalog: this.catalog,
      existing: this.existing,
      opening: this.opening,
      targets: this.targets,
      canTakeClaim: (v, node, podReqs, podReqsId, want) => this.canTakeClaim(v, node, podReqs, podReqsId, want),
      canTakeExisting: (v, node, podReqs, targets, want) => this.canTakeExisting(v, node, podReqs, targets, want),
      commit: (v, node, pods, start, fit) => this.commit(v, node, pods, start, fit),
    });
  }

  /** Whether this solve placed pods that need a node each first (a plan without it may be cheaper). */
  get sharedForcedNodes(): boolean {
    return this.opening.sharedForcedNodes;
  }

  solve(): SchedulingResult {
    this.prepare();
    const failedByClass = new Map<PodClass, { cls: PodClass; pods: Pod[]; variant: Variant }>();
    const groups =
      this.order === 'karpenter'
        ? this.classes.map((cls) => [cls])
        : this.shareForcedNodes
          ? this.repellingFirst(this.signatureGroups())
          : this.signatureGroups();
    for (const group of groups) {
      // Classes that differ only in their requests are packed in interleaved rounds, so every node
      // receives the group's mix (cpu-heavy and memory-heavy pods together) instead of one shape
      // exhausting one resource while stranding the other.
      const rounds = this.rounds(group);
      for (let round = 0; round < rounds; round++) {
        for (const cls of group) {
          const n = cls.pods.length;
          const from = Math.floor((round * n) / rounds);
          const to = Math.floor(((round + 1) * n) / rounds);
          if (to <= from) continue;
          const result = this.placeClass(cls, cls.pods, from, to);
          if (!result) continue;
          const f = failedByClass.get(cls);
          if (f) {
            f.pods.push(...result.pods);
            f.variant = result.variant;
          } else failedByClass.set(cls, { cls, ...result });
        }
      }
    }
    const failed = [...failedByClass.values()];
    // Pods whose affinity targets were planned after them get another chance, as Karpenter's queue
    // retries until a pass makes no progress.
    let progress = failed.length > 0;
    while (progress) {
      progress = false;
      for (const f of failed) {
        if (f.pods.length === 0) continue;
        const before = f.pods.length;
        const result = this.placeClass(f.cls, f.pods, 0, f.pods.length);
        f.pods = result?.pods ?? [];
        if (result) f.variant = result.variant;
        if (f.pods.length < before) progress = true;
      }
    }
    const unschedulable: UnschedulablePod[] = [];
    for (const f of failed) {
      if (f.pods.length === 0) continue;
      const reasons = unschedulableReasons(this.catalog, this.pools, this.existing.length > 0, f.variant);
      const deferred = f.variant.reservedError !== undefined;
      for (const pod of f.pods) unschedulable.push({ pod, reasons, ...(deferred ? { reservedOffering: true } : {}) });
    }
    if (unschedulable.length > 1) {
      const order = new Map(this.input.pods.map((p, i) => [p, i]));
      unschedulable.sort((a, b) => order.get(a.pod)! - order.get(b.pod)!);
    }
    const context: PostPassContext = {
      catalog: this.catalog,
      dims: this.dims,
      claims: this.claims,
      groups: this.terms.groups,
      order: this.order,
      moveTopology: this.order === 'karpenter' || this.input.pods.length <= TOPOLOGY_MOVES_MAX_PODS,
      variant: (cls, level) => this.terms.variant(cls, level),
      classes: () => this.classes,
      skewDomains: (v, o) => this.targets.skewDomains(v, o),
    };
    const post = new PostPasses(context);
    new TailRepack(context).repackTails();
    post.fillSlack();
    post.mergeClaims();
    post.rebalance();
    // Then zone-spread pods across zones where the skews allow, when pods with topology move at all
    // (see PostPasses.mobile), and after the moves within zones, which would otherwise lose the room
    // these take (us-east-1 diverse 1,000 pods: 1.091 before either, 1.099 with both at once).
    if (context.moveTopology) {
      post.crossZone = true;
      post.fillSlack();
      post.rebalance();
    }
    const nodeClaims = this.claims
      .filter((c) => c.pods.length > 0)
      .map((c) => finalize(this.catalog, c, this.ledger.active));
    const existingNodes = this.existing.filter((n) => n.pods.length > 0).map((n) => ({ name: n.name, pods: n.pods }));
    const totalPrice = nodeClaims.reduce((sum, c) => sum + c.offering.price, 0);
    return { nodeClaims, existingNodes, unschedulable, totalPrice };
  }

  // -------------------------------------------------------------------------------------------
  // Preparation

  private prepare(): void {
    const { input, dims } = this;
    const { infos, reqs, selectorKeys } = specInfos(input.pods, this.terms);
    // Distinct request sets in the order pods first bring them: the dims come in the order pods name them.
    for (const req of reqs) for (const name of Object.keys(req)) dims.add(name);
    const dsReqs = (input.daemonSets ?? []).map((pod) => {
      const req = podRequests(pod);
      for (const name of Object.keys(req)) if (name !== PODS) dims.add(name);
      return req;
    });
    for (const pool of input.nodePools) {
      for (const name of Object.keys(pool.spec.limits ?? {})) if (name !== 'nodes') dims.add(name);
    }
    // matchLabelKeys (pod-template-hash …) are part of the selector text, so the class key covers them.
    for (const node of input.existingNodes ?? []) {
      for (const pod of node.pods)
        for (const t of this.terms.podTerms(pod)) for (const k of t.selector.keys) selectorKeys.add(k);
    }

    this.catalog.daemonSets.push(
      ...(input.daemonSets ?? []).map((pod, i) => {
        const req = { ...dsReqs[i]! };
        return { pod, terms: this.terms.daemonSetTerms(pod), req: dims.vector(req) };
      }),
    );

    // Pools by weight, then name (OrderByWeight).
    const pools = [...input.nodePools].sort(
      (a, b) => (b.spec.weight ?? 0) - (a.spec.weight ?? 0) || cmp(a.metadata.name, b.metadata.name),
    );
    for (const it of Object.values(input.instanceTypes).flat())
      for (const k of Object.keys(it.labels)) this.catalog.typeKeys.add(k);
    for (const [index, pool] of pools.entries()) this.pools.push(this.catalog.poolState(pool, index));

    this.classes = classify(input, infos, [...selectorKeys].sort(), {
      dims,
      terms: this.terms,
      reqIdOf: (req) => this.reqIdOf(req),
    });

    // Existing nodes, initialized ones first, then by name (Karpenter's sortExistingNodes): a node still
    // registering or starting up may never come up, an initialized one is there.
    const initialized = (n: ExistingNode) => n.initialized ?? !n.inFlight;
    const nodes = [...(input.existingNodes ?? [])].sort(
      (a, b) => Number(initialized(b)) - Number(initialized(a)) || cmp(a.name, b.name),
    );
    for (const node of nodes)
      for (const pod of node.pods.filter(isActive))
        for (const t of this.terms.podTerms(pod)) {
          if (t.kind === 'antiAffinity' && !this.terms.isPreferred(pod, t)) this.terms.group(t);
        }
    // Indexed: thousands of classes times every group, run once per solve, often before it is optimized.
    const groups = this.terms.groups;
    for (let c = 0; c < this.classes.length; c++) {
      const cls = this.classes[c]!;
      for (let i = 0; i < groups.length; i++) {
        const g = groups[i]!;
        if (!termMatches(g.term, cls.namespace, cls.labels)) continue;
        cls.matched.push(g);
        if (g.term.kind === 'antiAffinity') cls.inverse.push(g);
      }
    }
    for (const node of nodes) {
      const state: ExistingState = {
        kind: 'existing',
        index: this.existing.length,
        name: node.name,
        labels: node.labels,
        taints: schedulingTaints(node),
        alloc: dims.vector({ [PODS]: DEFAULT_MAX_PODS, ...node.allocatable }),
        used: new Float64Array(dims.names.length),
        pods: [],
        counts: new Int32Array(this.terms.groups.length),
        owners: new Int32Array(this.terms.groups.length),
        batches: [],
      };
      this.existing.push(state);
      for (const pod of node.pods) {
        // A finished pod holds nothing; a terminating one holds its requests until it is gone but no longer
        // counts for topology (Karpenter's IgnoredForTopology).
        if (isTerminal(pod)) continue;
        const req = dims.vector(podRequests(pod));
        for (let r = 0; r < req.length; r++) state.used[r]! += req[r]!;
        if (isTerminating(pod)) continue;
        const namespace = pod.metadata.namespace ?? 'default';
        const labels = labelsWithHostPorts(pod);
        for (const g of this.terms.groups) {
          if (termMatches(g.term, namespace, labels)) this.count(g, state, 1, pod);
        }
        for (const t of this.terms.podTerms(pod)) {
          const g = this.terms.groupByKey.get(t.key);
          if (g && t.kind === 'antiAffinity' && !this.terms.isPreferred(pod, t)) this.own(g, state, 1, pod);
        }
      }
    }
  }

  /** Classes by signature, each list and the lists largest-first (Karpenter's queue order). */
  private signatureGroups(): PodClass[][] {
    const groups = new Map<string, PodClass[]>();
    for (const cls of this.classes) {
      const list = groups.get(cls.signature);
      if (list) list.push(cls);
      else groups.set(cls.signature, [cls]);
    }
    return [...groups.values()];
  }

  /**
   * Priced order places the classes that need a node per pod (required hostname anti-affinity on their
   * own labels) first: those nodes will exist whatever else happens, so the other pods fill them before
   * any claim of their own is opened (see `forcedShareCap`).
   */
  private repellingFirst(groups: PodClass[][]): PodClass[][] {
    const first = groups.filter((g) => (this.opening.forcedNodes(g[0]!)?.count ?? 0) > 1);
    if (first.length === 0) return groups;
    this.opening.sharedForcedNodes = true;
    return [...first, ...groups.filter((g) => !first.includes(g))];
  }

  /** About four rounds per node the group would fill on the most price-efficient instance type. */
  private rounds(group: PodClass[]): number {
    if (group.length === 1) return 1;
    let largest = 0;
    const total = new Float64Array(this.dims.names.length);
    for (const cls of group) {
      largest = Math.max(largest, cls.pods.length);
      for (let r = 0; r < total.length; r++) total[r]! += cls.req[r]! * cls.pods.length;
    }
    const ref = this.referenceAlloc();
    let nodes = 0;
    for (let r = 0; r < total.length; r++)
      if (total[r]! > 0 && ref[r]! > 0) nodes = Math.max(nodes, total[r]! / ref[r]!);
    return Math.max(1, Math.min(largest, Math.ceil(nodes * ROUNDS_PER_NODE)));
  }

  private referenceAllocCache: Float64Array | undefined;

  private referenceAlloc(): Float64Array {
    if (this.referenceAllocCache) return this.referenceAllocCache;
    let best: Float64Array = new Float64Array(this.dims.names.length).fill(Number.POSITIVE_INFINITY);
    let bestCost = Number.POSITIVE_INFINITY;
    const none = new Float64Array(this.dims.names.length);
    for (const pool of this.pools) {
      const poolId = this.catalog.intern(pool.domain);
      const demand = this.opening.demand(pool, poolId, none);
      for (const p of this.catalog.compatible(pool, poolId)) {
        const units = unitsOf(p.t.alloc, none, demand);
        if (units <= 0) continue;
        const cost = p.price / units;
        if (cost < bestCost) {
          bestCost = cost;
          best = p.t.alloc;
        }
      }
    }
    this.referenceAllocCache = best;
    return best;
  }

  // -------------------------------------------------------------------------------------------
  // Classes and relaxation

  /**
   * Places pods[from, to) of the class, relaxing it a step at a time while pods are left: the pods left
   * and the variant that last tried them, or undefined when every pod was placed (most calls, so they
   * allocate nothing).
   */
  private placeClass(
    cls: PodClass,
    pods: Pod[],
    from: number,
    to: number,
  ): { pods: Pod[]; variant: Variant } | undefined {
    let level = 0;
    let variant = this.terms.variant(cls, 0)!;
    let at = from;
    for (;;) {
      at = this.placeRun(variant, pods, at, to);
      // A pod waiting for a reservation keeps its preferences: relaxed, it would take what strict mode refuses.
      if (at === to || variant.reservedError) break;
      const next = this.terms.variant(cls, level + 1);
      if (!next) break;
      variant = next;
      level++;
    }
    // The variant of a fully placed class is never read: failed classes keep the last one that tried.
    return at === to ? undefined : { pods: pods.slice(at, to), variant };
  }

  // -------------------------------------------------------------------------------------------
  // Placement

  /** Places pods[from, to) under the variant, batch by batch: the index of the first pod it could not place. */
  private placeRun(v: Variant, pods: Pod[], from: number, to: number): number {
    v.reservedError = undefined;
    if (this.order === 'karpenter' && v.pinKeys.length === 1 && !v.hostAffinity) {
      const run = from === 0 && to === pods.length ? pods : pods.slice(from, to);
      return to - this.karpenterOrder.placeRunClaimFirst(v, run).length;
    }
    let i = from;
    // Domains whose batch placed nothing; made on the first such batch, which most runs never have.
    let blocked: Map<string, Set<string>> | undefined;
    v.topologyReason = undefined;
    while (i < to) {
      let budget = to - i;
      let pinned = UNPINNED;
      if (v.pinKeys.length > 0) {
        const values: string[] = [];
        for (const key of v.pinKeys) {
          const choice = this.targets.chooseTarget(v, key, blocked?.get(key));
          if ('reason' in choice) {
            v.topologyReason = choice.reason;
            return i;
          }
          values.push(choice.value);
          budget = Math.min(budget, choice.budget);
        }
        pinned = this.pinned(v, values);
      }
      const placed = this.placeBatch(v, pods, i, budget, pinned);
      if (placed === 0) {
        const first = pinned.targets[0];
        // Not another domain either: strict mode defers the pod rather than launch it elsewhere.
        if (v.reservedError) return i;
        if (!first) return i;
        blocked ??= new Map();
        let set = blocked.get(first[0]);
        if (!set) {
          set = new Set();
          blocked.set(first[0], set);
        }
        set.add(first[1]);
        continue;
      }
      i += placed;
    }
    return to;
  }

  /** The targets of the variant's pin keys at these values, made once per variant and single domain. */
  private pinned(v: Variant, values: string[]): Pinned {
    const keys = v.pinKeys;
    if (keys.length === 1) {
      let pinned = v.pins?.get(values[0]!);
      if (!pinned) {
        pinned = { targets: [[keys[0]!, values[0]!]], key: `${keys[0]}=${values[0]}` };
        v.pins ??= new Map();
        v.pins.set(values[0]!, pinned);
      }
      return pinned;
    }
    const targets = keys.map((k, i): [string, string] => [k, values[i]!]);
    return { targets, key: targets.map(([k, val]) => `${k}=${val}`).join(',') };
  }

  private placeBatch(v: Variant, pods: Pod[], start: number, want: number, pinned: Pinned): number {
    const { targets, key: targetsKey } = pinned;
    let memo = v.targetReqs.get(targetsKey);
    if (!memo) {
      let reqs = v.reqs;
      for (const [k, val] of targets) reqs = reqs.add(requirementIn(k, val));
      memo = { reqs, id: this.catalog.intern(reqs) };
      v.targetReqs.set(targetsKey, memo);
    }
    const podReqs = memo.reqs;
    const podReqsId = memo.id;
    let placed = 0;
    const host = v.hostAffinity;
    if (host && host.group.total > 0) {
      // Pod affinity on hostname: only nodes that already run a matching pod qualify, and that set grows.
      for (const node of [...host.group.nodesWithMatches]) {
        if (placed >= want) break;
        const fit =
          node.kind === 'existing'
            ? { n: this.canTakeExisting(v, node, podReqs, targets, want - placed) }
            : this.canTakeClaim(v, node, podReqs, podReqsId, want - placed);
        if (fit.n > 0) {
          this.commit(v, node, pods, start + placed, fit);
          placed += fit.n;
        }
      }
      if (placed === 0)
        v.topologyReason ??= `${describeTerm(host.group.term)}: the nodes with matching pods cannot take it`;
      return placed;
    }
    let cursor = v.cursors.get(targetsKey);
    if (!cursor) {
      cursor = { e: 0, c: 0 };
      v.cursors.set(targetsKey, cursor);
    }
    while (cursor.e < this.existing.length && placed < want) {
      const node = this.existing[cursor.e]!;
      const n = this.canTakeExisting(v, node, podReqs, targets, want - placed);
      if (n > 0) {
        this.commit(v, node, pods, start + placed, { n });
        placed += n;
        if (placed < want) cursor.e++;
      } else cursor.e++;
    }
    if (this.order === 'karpenter')
      return (
        placed +
        this.karpenterOrder.placeEmptiestFirst(v, pods, start + placed, want - placed, targetsKey, podReqs, podReqsId)
      );
    const full = this.full.of(podReqsId, v.cls.reqId);
    for (;;) {
      const conflicting = this.conflicts.of(podReqsId);
      cursor.c = firstClear(conflicting, NO_BITS, cursor.c);
      if (cursor.c >= this.claims.length || placed >= want) break;
      // Past the claims known full too, many words at a time: thousands of classes each walk the claims.
      const free = firstClear(conflicting, full.bits, cursor.c);
      if (free !== cursor.c) {
        cursor.c = free;
        continue;
      }
      const node = this.claims[cursor.c]!;
      const fit = this.canTakeClaim(v, node, podReqs, podReqsId, want - placed);
      if (fit.n > 0) {
        this.commit(v, node, pods, start + placed, fit);
        placed += fit.n;
        if (placed < want) cursor.c++;
      } else {
        if (fit === CONFLICT) this.conflicts.add(podReqsId, cursor.c);
        else if (fit === FULL && !node.pool.hasMinValues) full.mark(cursor.c);
        cursor.c++;
      }
    }
    if (host && host.group.total === 0 && !host.self) return placed;
    while (placed < want) {
      const node = this.opening.openClaim(v, podReqs, podReqsId);
      if (!node) break;
      const fit = this.canTakeClaim(v, node, podReqs, podReqsId, want - placed);
      if (fit.n === 0) {
        this.opening.discardClaim(node);
        break;
      }
      this.commit(v, node, pods, start + placed, fit);
      placed += fit.n;
      if (host) break;
    }
    return placed;
  }

  private reqIdOf(req: Float64Array): number {
    const key = req.join(',');
    let id = this.reqIds.get(key);
    if (id === undefined) {
      id = this.reqIds.size;
      this.reqIds.set(key, id);
    }
    return id;
  }

  private canTakeExisting(
    v: Variant,
    node: ExistingState,
    podReqs: Requirements,
    targets: [string, string][],
    want: number,
  ): number {
    const labels = node.labels;
    for (const [k, val] of targets) if (labels[k] !== val) return 0;
    if (untoleratedTaint(v.cls.spec.tolerations, node.taints, v.tolerateSoft)) return 0;
    if (!podReqs.matchesLabels(labels)) return 0;
    const room = hostRoom(v, node, want);
    if (room === 0) return 0;
    return Math.min(room, roomIn(node.alloc, node.used, v.cls.req));
  }

  /** How many pods of the class a planned claim takes, and the requirements, types and cap it narrows to. */
  private canTakeClaim(v: Variant, node: ClaimState, podReqs: Requirements, podReqsId: number, want: number): Fit {
    const none = NONE;
    const pool = node.pool;
    if (staticFit(this.catalog, v, pool).reason) return none;
    const merged = this.catalog.merge(node.reqsId, podReqs, podReqsId);
    if (merged.conflict) return CONFLICT;
    const room = hostRoom(v, node, want);
    if (room === 0) return none;
    let frontier = node.frontier;
    let capPrice = node.capPrice;
    if (merged.id !== node.reqsId) {
      // The pod narrows the claim (another family, an arch): its cap was chosen among types it may no
      // longer use, so it is chosen again among those it may, never below what it was.
      if (!pool.hasMinValues) {
        // A claim sized as a share of a forced node keeps being sized so: the pods that narrow it (a zone
        // pin, a family) are the pods the share was made for.
        const narrowed = this.opening.narrowedCap(pool, merged.id, node, v.cls);
        const share = node.forcedBy ? this.opening.forcedShareCap(node.forcedBy, pool, merged.id, node.ds) : undefined;
        capPrice = Math.max(capPrice, Math.min(share ?? narrowed, narrowed));
      }
      // Types that no longer hold what the claim has are dropped by commit, on success only: most
      // checks refuse, and a type that does not fit has no room for the pod either.
      frontier = this.catalog.frontier(pool, merged.id, capPrice, node.charged);
    }
    const req = v.cls.req;
    let best = 0;
    for (const t of frontier) {
      const n = roomIn(t.alloc, node.used, req);
      if (n > best) best = n;
    }
    if (best === 0) return FULL;
    let n = Math.min(room, best);
    if (n > 0 && pool.hasMinValues) n = this.opening.limitByMinValues(pool, merged.id, node, req, n);
    if (n > 0 && node.reserved) n = this.ledger.room(node, merged.id, req, n);
    return n > 0 ? { n, claim: { reqsId: merged.id, frontier, capPrice } } : none;
  }

  private commit(v: Variant, node: NodeState, pods: Pod[], start: number, fit: Fit): void {
    const { n, claim } = fit;
    for (let i = start; i < start + n; i++) node.pods.push(pods[i]!);
    node.batches.push({ cls: v.cls, n });
    const req = v.cls.req;
    for (let r = 0; r < req.length; r++) node.used[r]! += n * req[r]!;
    if (claim && node.kind === 'claim') {
      if (claim.reqsId !== node.reqsId || claim.capPrice !== node.capPrice) this.full.lapse(node.index);
      node.reqsId = claim.reqsId;
      node.reqs = this.catalog.reqsById[claim.reqsId]!;
      node.frontier = fitting(claim.frontier, node.used);
      node.capPrice = claim.capPrice;
      if (node.reserved) this.ledger.settle(node);
    }
    const example = pods[start]!;
    for (const g of v.cls.matched) this.count(g, node, n, example);
    for (const g of v.ownedAnti) this.own(g, node, n, example);
  }

  private count(g: Group, node: NodeState, n: number, example: Pod): void {
    if (node.counts[g.id] === 0 && g.host) g.nodesWithMatches.push(node);
    node.counts[g.id]! += n;
    g.total += n;
    g.example ??= podName(example);
    if (!g.host) {
      const d = domainOf(node, g.key);
      if (d !== undefined) g.counts.set(d, (g.counts.get(d) ?? 0) + n);
    }
  }

  private own(g: Group, node: NodeState, n: number, example: Pod): void {
    node.owners[g.id]! += n;
    g.ownerExample ??= podName(example);
    if (!g.host) {
      const d = domainOf(node, g.key);
      if (d !== undefined) g.owners.set(d, (g.owners.get(d) ?? 0) + n);
    }
  }
}

/** The types that hold `used`: the list itself when all do (most commits), copied only when one drops out. */
function fitting(types: TypeInfo[], used: Float64Array): TypeInfo[] {
  for (let i = 0; i < types.length; i++) {
    if (!fitsUsed(types[i]!.alloc, used)) return types.filter((t) => fitsUsed(t.alloc, used));
  }
  return types;
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function isTerminating(pod: Pod): boolean {
  return pod.metadata.deletionTimestamp !== undefined;
}

function isActive(pod: Pod): boolean {
  return !isTerminal(pod) && !isTerminating(pod);
}

function podName(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}
