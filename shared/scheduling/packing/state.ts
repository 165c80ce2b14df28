// The packer's state: instance types and NodePools as it prices them, topology groups, pod classes and
// their relaxation variants, and the nodes pods go to (existing nodes and planned claims, each its own type).

import type { Pod } from '../../apis/core/v1';
import type { NodePool, Taint } from '../../apis/v1/types';
import type { InstanceType, Offering } from '../../instancetypes/types';
import type { Requirement, Requirements } from '../requirements';
import type { TopologyTerm } from '../topology';
import type { Memo3 } from './memo';
import type { ReservedOption } from './reservations';

export interface TypeInfo {
  it: InstanceType;
  alloc: Float64Array;
  capacity: Float64Array;
}

export interface PricedType {
  t: TypeInfo;
  price: number;
  offering: Offering;
}

export interface PoolState {
  index: number;
  name: string;
  pool: NodePool;
  domain: Requirements;
  taints: Taint[];
  types: TypeInfo[];
  /** Remaining limits per dim (Infinity when unlimited) and in nodes. */
  remaining: Float64Array;
  limit: Float64Array;
  nodesRemaining: number;
  nodesLimit: number;
  limited: boolean;
  hasMinValues: boolean;
  compatMemo: Map<number, PricedType[]>;
  /** Frontiers by requirements, cap price and interned charge (-1: none). */
  frontierMemo: Memo3<number, number, number, TypeInfo[]>;
  /** Cap prices for claims narrowed by a pod, by requirements, interned overhead and the pod's reqId. */
  capMemo: Memo3<number, number, number, number>;
  dsMemo: Map<number, Float64Array>;
  describe: string;
}

export interface Group {
  id: number;
  term: TopologyTerm;
  key: string;
  host: boolean;
  counts: Map<string, number>;
  owners: Map<string, number>;
  nodesWithMatches: NodeState[];
  total: number;
  example?: string;
  ownerExample?: string;
}

export interface OwnTerm {
  group: Group;
  kind: 'spread' | 'affinity' | 'antiAffinity';
  maxSkew: number;
  minDomains: number;
  self: boolean;
  /** A spread's nodeTaintsPolicy (default Ignore) and nodeAffinityPolicy (default Honor). */
  honorTaints?: boolean;
  ignoreAffinity?: boolean;
}

export interface Batch {
  cls: PodClass;
  n: number;
}

/** What existing nodes and planned claims share: the pods they hold and the topology counts of those. */
export interface HostState {
  index: number;
  name: string;
  used: Float64Array;
  pods: Pod[];
  counts: Int32Array;
  owners: Int32Array;
  /** The class of each run of `pods`, in order, for the post passes. */
  batches: Batch[];
}

/** A real or in-flight node: its labels and allocatable are fixed. */
export interface ExistingState extends HostState {
  kind: 'existing';
  labels: Record<string, string>;
  taints: Taint[];
  alloc: Float64Array;
}

/** A NodeClaim planned in this solve: requirements and instance types that narrow as pods join. */
export interface ClaimState extends HostState {
  kind: 'claim';
  pool: PoolState;
  reqs: Requirements;
  reqsId: number;
  capPrice: number;
  frontier: TypeInfo[];
  /** DaemonSet overhead as counted in `used`. */
  ds: Float64Array;
  /** What it charges against its NodePool's limits, when the pool has any. */
  charged?: Float64Array;
  /** The pod class it was opened for when its cap is that pod's share of a forced node (forcedShareCap). */
  forcedBy?: Variant;
  /** The reserved offerings it holds an instance of (reservations.ts); the post passes leave such claims be. */
  reserved?: ReservedOption[] | undefined;
}

export type NodeState = ExistingState | ClaimState;

export interface PodClass {
  id: number;
  pods: Pod[];
  namespace: string;
  labels: Record<string, string>;
  spec: Pod['spec'];
  first: Pod;
  req: Float64Array;
  /** `req` interned: classes with equal requests share it, and what is learnt of one request vector. */
  reqId: number;
  cpu: number;
  memory: number;
  matched: Group[];
  inverse: Group[];
  variants: Variant[];
  relax: RelaxState | undefined;
  /** Everything but the requests: classes with one signature are packed together, in proportion. */
  signature: string;
  /** What its pods' volumes require of a node (never of its spreads' domains). */
  volume: readonly Requirement[];
  /** No topology spread, pod affinity or anti-affinity of its own: the tail re-pack may move it. */
  movable?: boolean;
  /** Its topology survives a move within one zone (see `mobile`). */
  mobile?: boolean;
}

export interface RelaxState {
  term: number;
  prefAffinity: number;
  prefAnti: number;
  prefNode: number;
  softSpread: number;
  tolerateSoft: boolean;
}

export interface StaticFit {
  reason?: string;
  reqs?: Requirements;
  reqsId?: number;
}

export interface Variant {
  id: number;
  cls: PodClass;
  /** Node selection: nodeSelector, the current required term and the preferred term tried at this level. */
  reqs: Requirements;
  /** The required part of `reqs` only: what a spread's skew domains are narrowed by (Karpenter's StrictRequirements). */
  strictReqs: Requirements;
  tolerateSoft: boolean;
  own: OwnTerm[];
  ownedAnti: Group[];
  pinKeys: string[];
  hostAffinity: OwnTerm | undefined;
  staticFits: (StaticFit | undefined)[];
  domains: Map<string, string[]> | undefined;
  /** Per spread term, the domains its skew is taken over (TopologyTargets.skewDomains). */
  skewDomains: Map<OwnTerm, string[]> | undefined;
  cursors: Map<string, { e: number; c: number }>;
  /** Karpenter order: claims that refused the variant under these targets (refusals are permanent). */
  refused: Map<string, Set<ClaimState>> | undefined;
  /** The variant's requirements pinned to each target domain set, interned. */
  targetReqs: Map<string, { reqs: Requirements; id: number }>;
  /** With one pin key: per domain, the targets and their key, made once (see Packer.placeRun). */
  pins: Map<string, Pinned> | undefined;
  /** Per topology key, the variant's own terms and the groups repelling it on that key (chooseTarget). */
  termsByKey: Map<string, { own: OwnTerm[]; inverse: Group[] }> | undefined;
  poolReasons: (string | undefined)[];
  topologyReason?: string | undefined;
  /** Strict reserved-offering mode: why its last claim was not opened; the pods wait, unrelaxed. */
  reservedError?: string | undefined;
  relaxation: string | undefined;
}

/** The domains a batch is pinned to, as [key, value] pairs, and as the text its memos are keyed by. */
export interface Pinned {
  targets: [string, string][];
  key: string;
}

/**
 * What a node takes of a class: how many pods and, for a planned claim, the requirements, instance
 * types and cap price it narrows to. Returned by the check and handed to commit, so nothing is kept
 * between the two calls.
 */
export interface Fit {
  n: number;
  claim?: { reqsId: number; frontier: TypeInfo[]; capPrice: number };
}

/**
 * How the packer orders its decisions. `priced`: classes of one signature in interleaved rounds, each
 * new claim capped at the most price-efficient type for the pods that may share it. `karpenter`: classes
 * in Karpenter's queue order (CPU, then memory, descending), each new claim open to every type of its
 * NodePool that fits, as Karpenter does; a different greedy, so the cheaper of the two plans is kept.
 */
export type PackingOrder = 'priced' | 'karpenter';
