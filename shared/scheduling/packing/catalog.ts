// The per-pool instance-type catalog of one solve, with its memos: NodePools as the packer prices them,
// requirements interned to ids, pod-side ∩ node-side merges, the types compatible with a claim's
// requirements (cheapest offering each), DaemonSet overhead and the non-dominated types under a price cap.

import type { Pod } from '../../apis/core/v1';
import { parseQuantity } from '../../apis/quantity';
import type { NodePool, NodeSelectorRequirementWithMinValues } from '../../apis/v1/types';
import type { InstanceType, Offering } from '../../instancetypes/types';
import type { SchedulingInput } from '../index';
import {
  allows,
  doesNotExist,
  intersect,
  isEmpty,
  isWellKnownLabel,
  LABEL_CAPACITY_TYPE,
  LABEL_HOSTNAME,
  LABEL_NODEPOOL,
  LABEL_ZONE,
  LABEL_ZONE_ID,
  type Requirement,
  Requirements,
  requirementFrom,
  requirementIn,
} from '../requirements';
import { CPU } from '../resources';
import { untoleratedTaint } from '../taints';
import { hostPorts } from './host-ports';
import { Memo3, VectorIds } from './memo';
import { preferredOffering } from './offerings';
import { cmp } from './ordering';
import { describePool } from './reason-text';
import type { PoolState, PricedType, TypeInfo } from './state';
import { type Dims, dominates, exceedsCharged } from './vectors';

/** Stands for the hostname a NodeClaim's node will get: a value no requirement can name. */
const NEW_NODE_HOSTNAME = '\u0000new-node';

/** Node-side ∩ pod-side requirements: the interned id of the intersection, or the pod's requirement that conflicts. */
export type MergeResult = { id: number; conflict?: Requirement };

/** Types in price order with their vectors laid flat: `alloc[i * width + r]` is type i's allocatable of dim r. */
export interface TypeColumns {
  list: PricedType[];
  alloc: Float64Array;
  capacity: Float64Array;
  width: number;
}

export class TypeCatalog {
  /** Label keys some instance type sets: a requirement on any other key is on a label no node will have. */
  readonly typeKeys = new Set<string>();
  readonly reqsById: Requirements[] = [];
  /**
   * DaemonSet pods with their requests and node selection, one requirement set per required
   * node-affinity term (terms are ORed), for the overhead per claim.
   */
  readonly daemonSets: { pod: Pod; terms: Requirements[]; req: Float64Array }[] = [];
  private readonly reqsIds = new Map<string, number>();
  /** Merges by node-side id, then pod-side id: numeric keys, as the packer asks millions of times per solve. */
  private readonly mergeMemo: Map<number, MergeResult>[] = [];
  private readonly typeInfoCache = new Map<InstanceType, TypeInfo>();
  private readonly columnsMemo = new Map<PoolState, Map<number, TypeColumns>>();
  private readonly selectorMemo = new Map<number, NodeSelectorRequirementWithMinValues[]>();
  private readonly daemonPortsMemo = new Map<number, Pod[]>();

  constructor(
    private readonly input: SchedulingInput,
    readonly dims: Dims,
  ) {}

  poolState(pool: NodePool, index: number): PoolState {
    const { dims } = this;
    const name = pool.metadata.name;
    const list = pool.spec.template.spec.requirements.map(requirementFrom);
    for (const [k, v] of Object.entries(pool.spec.template.metadata?.labels ?? {})) list.push(requirementIn(k, v));
    list.push(requirementIn(LABEL_NODEPOOL, name));
    const limit = new Float64Array(dims.names.length).fill(Number.POSITIVE_INFINITY);
    let nodesLimit = Number.POSITIVE_INFINITY;
    for (const [resource, quantity] of Object.entries(pool.spec.limits ?? {})) {
      const value = parseQuantity(quantity);
      if (resource === 'nodes') nodesLimit = value;
      else limit[dims.index.get(resource)!] = resource === CPU ? value * 1000 : value;
    }
    const used = dims.vector(this.input.nodePoolUsage?.[name]);
    const remaining = limit.map((l, i) => l - used[i]!);
    const usedNodes = this.input.nodePoolUsage?.[name]?.nodes ?? 0;
    const types = (this.input.instanceTypes[name] ?? []).map((it) => this.typeInfo(it));
    return {
      index,
      name,
      pool,
      domain: Requirements.from(list),
      taints: pool.spec.template.spec.taints ?? [],
      types,
      remaining,
      limit,
      nodesRemaining: nodesLimit - usedNodes,
      nodesLimit,
      limited: nodesLimit !== Number.POSITIVE_INFINITY || limit.some((l) => l !== Number.POSITIVE_INFINITY),
      hasMinValues: pool.spec.template.spec.requirements.some((r) => r.minValues !== undefined),
      compatMemo: new Map(),
      frontierMemo: new Memo3(),
      capMemo: new Memo3(),
      dsMemo: new Map(),
      describe: describePool(pool.spec.template.spec.requirements),
    };
  }

  typeInfo(it: InstanceType): TypeInfo {
    let t = this.typeInfoCache.get(it);
    if (!t) {
      t = { it, alloc: this.dims.vector(it.allocatable), capacity: this.dims.vector(it.capacity) };
      this.typeInfoCache.set(it, t);
    }
    return t;
  }

  intern(reqs: Requirements): number {
    const key = reqs.key;
    let id = this.reqsIds.get(key);
    if (id === undefined) {
      id = this.reqsById.length;
      this.reqsIds.set(key, id);
      this.reqsById.push(reqs);
    }
    return id;
  }

  isTypeKey(key: string): boolean {
    return isWellKnownLabel(key) || this.typeKeys.has(key);
  }

  /**
   * Node-side requirements ∩ pod-side. A key the node side does not define and no instance type
   * provides will be absent on the node, so the pod must accept its absence.
   */
  merge(nodeId: number, pod: Requirements, podId: number): MergeResult {
    let memo = this.mergeMemo[nodeId];
    if (!memo) {
      memo = new Map();
      this.mergeMemo[nodeId] = memo;
    }
    const hit = memo.get(podId);
    if (hit !== undefined) return hit;
    const node = this.reqsById[nodeId]!;
    const map = new Map(node.byKey);
    let conflict: Requirement | undefined;
    for (const r of pod.byKey.values()) {
      const base = map.get(r.key) ?? (this.isTypeKey(r.key) ? undefined : doesNotExist(r.key));
      // A new node's hostname is one no pod can know yet (Karpenter pins each NodeClaim to a fresh
      // placeholder): only a requirement that admits an unknown name (NotIn, Exists) fits a claim.
      if (!base && r.key === LABEL_HOSTNAME && !allows(r, NEW_NODE_HOSTNAME)) {
        conflict = r;
        break;
      }
      const next = base ? intersect(base, r) : r;
      if (isEmpty(next)) {
        conflict = r;
        break;
      }
      map.set(r.key, next);
    }
    const result: MergeResult = conflict ? { id: -1, conflict } : { id: this.intern(new Requirements(map)) };
    memo.set(podId, result);
    return result;
  }

  /** Instance types of the pool compatible with the requirements, with their cheapest offering. */
  compatible(pool: PoolState, reqsId: number): PricedType[] {
    let list = pool.compatMemo.get(reqsId);
    if (list) return list;
    const reqs = this.reqsById[reqsId]!;
    const zone = reqs.get(LABEL_ZONE);
    const zoneId = reqs.get(LABEL_ZONE_ID);
    const ct = reqs.get(LABEL_CAPACITY_TYPE);
    const labelReqs = [...reqs.byKey.values()].filter(
      (r) =>
        r.key !== LABEL_ZONE &&
        r.key !== LABEL_ZONE_ID &&
        r.key !== LABEL_CAPACITY_TYPE &&
        r.key !== LABEL_HOSTNAME &&
        r.key !== LABEL_NODEPOOL &&
        this.isTypeKey(r.key),
    );
    list = [];
    for (const t of pool.types) {
      if (!labelReqs.every((r) => allows(r, t.it.labels[r.key]))) continue;
      let best: Offering | undefined;
      for (const o of t.it.offerings) {
        if (!o.available) continue;
        if (zone && !allows(zone, o.zone)) continue;
        if (ct && !allows(ct, o.capacityType)) continue;
        if (zoneId && !allows(zoneId, o.zoneID)) continue;
        if (!best || o.price < best.price || (o.price === best.price && preferredOffering(o, best))) best = o;
      }
      if (best) list.push({ t, price: best.price, offering: best });
    }
    list.sort((a, b) => a.price - b.price || cmp(a.t.it.name, b.t.it.name));
    pool.compatMemo.set(reqsId, list);
    return list;
  }

  /** The requirement set in API form (NodeSelectorRequirements), made once per set; callers copy it. */
  selectorRequirements(reqsId: number): readonly NodeSelectorRequirementWithMinValues[] {
    let list = this.selectorMemo.get(reqsId);
    if (!list) {
      list = this.reqsById[reqsId]!.toNodeSelectorRequirements();
      this.selectorMemo.set(reqsId, list);
    }
    return list;
  }

  /**
   * The compatible types' allocatable and capacity laid flat, type after type (`width` values each),
   * in the order of `compatible`: what the final fit scans read for every claim.
   */
  columns(pool: PoolState, reqsId: number): TypeColumns {
    let memo = this.columnsMemo.get(pool);
    if (!memo) {
      memo = new Map();
      this.columnsMemo.set(pool, memo);
    }
    let columns = memo.get(reqsId);
    if (columns) return columns;
    const list = this.compatible(pool, reqsId);
    const width = this.dims.names.length;
    const alloc = new Float64Array(list.length * width);
    const capacity = new Float64Array(list.length * width);
    list.forEach((p, i) => {
      alloc.set(p.t.alloc, i * width);
      capacity.set(p.t.capacity, i * width);
    });
    columns = { list, alloc, capacity, width };
    memo.set(reqsId, columns);
    return columns;
  }

  /** DaemonSet pods that would run on a node of these requirements (tolerate the taints, match). */
  daemonOverhead(pool: PoolState, reqsId: number): Float64Array {
    let v = pool.dsMemo.get(reqsId);
    if (v) return v;
    v = new Float64Array(this.dims.names.length);
    for (const ds of this.daemonSets) {
      // A DaemonSet pod ignores PreferNoSchedule, as Karpenter's isDaemonPodCompatible tolerates it.
      if (untoleratedTaint(ds.pod.spec.tolerations, pool.taints, true)) continue;
      const runs = ds.terms.some((terms) => {
        const merged = this.merge(reqsId, terms, this.intern(terms));
        return !merged.conflict && this.compatible(pool, merged.id).length > 0;
      });
      if (runs) for (let r = 0; r < v.length; r++) v[r]! += ds.req[r]!;
    }
    pool.dsMemo.set(reqsId, v);
    return v;
  }

  /**
   * The DaemonSet pods that bind host ports and run on every node of the pool (they tolerate its taints
   * and their requirements fit its template): Karpenter's per-template daemonHostPortUsage, which every
   * new claim of the pool starts with.
   */
  daemonHostPortPods(pool: PoolState): Pod[] {
    let pods = this.daemonPortsMemo.get(pool.index);
    if (pods) return pods;
    const poolId = this.intern(pool.domain);
    pods = this.daemonSets
      .filter((ds) => hostPorts(ds.pod).length > 0)
      .filter((ds) => !untoleratedTaint(ds.pod.spec.tolerations, pool.taints, true))
      .filter((ds) =>
        ds.terms.some((terms) => {
          const merged = this.merge(poolId, terms, this.intern(terms));
          return !merged.conflict;
        }),
      )
      .map((ds) => ds.pod);
    this.daemonPortsMemo.set(pool.index, pods);
    return pods;
  }

  /**
   * Non-dominated types (on every resource) among the compatible ones priced ≤ cap. Under NodePool
   * limits only types within what the claim was charged count: they are filtered before dominance
   * pruning, so a larger type beyond the charge cannot hide a smaller one within it.
   */
  frontier(pool: PoolState, reqsId: number, capPrice: number, charged?: Float64Array): TypeInfo[] {
    const chargeId = charged ? this.chargeIds.of(charged) : -1;
    let f = pool.frontierMemo.get(reqsId, capPrice, chargeId);
    if (f) return f;
    f = [];
    for (const p of this.compatible(pool, reqsId)) {
      if (p.price > capPrice) break;
      if (charged && exceedsCharged(p.t.capacity, charged, pool.limit) >= 0) continue;
      const a = p.t.alloc;
      if (f.some((q) => dominates(q.alloc, a))) continue;
      f = f.filter((q) => !dominates(a, q.alloc));
      f.push(p.t);
    }
    pool.frontierMemo.set(reqsId, capPrice, chargeId, f);
    return f;
  }

  /**
   * Charges interned by their contents (charges are never changed): the frontier is asked for on every
   * check of a pod that narrows a claim, and joining the charge's numbers into its memo key each time
   * cost more than the memo saved.
   */
  private readonly chargeIds = new VectorIds();
}
