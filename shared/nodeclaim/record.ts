// The NodeClaim record: Karpenter v1's NodeClaim (metadata, spec, status) as karpless keeps it, one
// per claim in the state table. It is written before CreateFleet and moved along by every function
// that acts on the claim (launch, registration, initialization, drift, termination), so each of them
// reads what the claim was launched as instead of recomputing it from today's NodePool. Pure: the
// store lives behind NodeClaimStore (shared/providers/state.ts).

import { LABEL_NODEPOOL } from '../apis/v1/labels';
import type { NodeClassReference, NodeSelectorRequirementWithMinValues, ResourceList, Taint } from '../apis/v1/types';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** Karpenter v1's NodeClaim condition types (pkg/apis/v1/nodeclaim_status.go). */
export const CONDITION = {
  launched: 'Launched',
  registered: 'Registered',
  initialized: 'Initialized',
  drifted: 'Drifted',
  consolidatable: 'Consolidatable',
} as const;

export type NodeClaimConditionType = (typeof CONDITION)[keyof typeof CONDITION];

export interface NodeClaimCondition {
  type: NodeClaimConditionType;
  status: ConditionStatus;
  /** CamelCase, machine readable ("Launched", "NodeNotFound", "AMIDrift"). */
  reason: string;
  message: string;
  /** RFC 3339; changes only when `status` changes, as metav1.Condition's does. */
  lastTransitionTime: string;
}

export interface NodeClaimMetadata {
  name: string;
  /**
   * The claim's labels: template labels, `karpenter.sh/nodepool`, `karpenter.k8s.aws/ec2nodeclass`,
   * the narrowed requirement values and, once launched, the launched type's, zone's and capacity
   * type's labels. Registration copies them onto the Node.
   */
  labels: Record<string, string>;
  /**
   * The template's annotations plus the NodePool and EC2NodeClass hashes and their versions
   * (`karpenter.sh/nodepool-hash`, `karpenter.sh/nodepool-hash-version`,
   * `karpenter.k8s.aws/ec2nodeclass-hash`, `karpenter.k8s.aws/ec2nodeclass-hash-version`).
   */
  annotations: Record<string, string>;
  /** RFC 3339. */
  creationTimestamp: string;
  /** RFC 3339; set once, when the claim is marked for deletion. */
  deletionTimestamp?: string;
  /**
   * Opaque version the store sets on every write (optimistic concurrency, as Kubernetes'
   * resourceVersion): an update carrying a stale one is refused. Absent on a record not yet stored.
   */
  resourceVersion?: string;
}

export interface NodeClaimSpec {
  nodeClassRef: NodeClassReference;
  /** The NodePool's requirements narrowed by the claim's pods (and the offerings the decision kept). */
  requirements: NodeSelectorRequirementWithMinValues[];
  /** What the claim's pods (and daemonsets) request. */
  resources: { requests: ResourceList };
  taints: Taint[];
  startupTaints: Taint[];
  /** As the NodePool said at launch: a duration ("720h") or "Never". */
  expireAfter: string;
  terminationGracePeriod?: string;
}

export interface NodeClaimStatus {
  /** `aws:///<zone>/<instance id>` once launched. */
  providerID?: string;
  imageID?: string;
  nodeName?: string;
  capacity: ResourceList;
  allocatable: ResourceList;
  conditions: NodeClaimCondition[];
  /**
   * RFC 3339: when a pod last bound to the node, finished on it or was deleted from it (upstream's
   * status.lastPodEventTime); consolidateAfter counts from it.
   */
  lastPodEventTime?: string;
}

export interface NodeClaimRecord {
  metadata: NodeClaimMetadata;
  spec: NodeClaimSpec;
  status: NodeClaimStatus;
}

/** What conditions a new claim starts with: the lifecycle ones Unknown, as Karpenter's status init does. */
const LIFECYCLE_CONDITIONS: readonly NodeClaimConditionType[] = [
  CONDITION.launched,
  CONDITION.registered,
  CONDITION.initialized,
];

const AWAITING = { reason: 'AwaitingReconciliation', message: 'object is awaiting reconciliation' } as const;

export interface NewNodeClaimRecord {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: NodeClaimSpec;
  /** Epoch ms. */
  now: number;
}

/** A record ready to be created: no status yet but Unknown lifecycle conditions. */
export function newNodeClaimRecord(input: NewNodeClaimRecord): NodeClaimRecord {
  const at = iso(input.now);
  return {
    metadata: {
      name: input.name,
      labels: { ...input.labels },
      annotations: { ...input.annotations },
      creationTimestamp: at,
    },
    spec: structuredClone(input.spec),
    status: {
      capacity: {},
      allocatable: {},
      conditions: LIFECYCLE_CONDITIONS.map((type) => ({
        type,
        status: 'Unknown',
        ...AWAITING,
        lastTransitionTime: at,
      })),
    },
  };
}

export function condition(record: NodeClaimRecord, type: NodeClaimConditionType): NodeClaimCondition | undefined {
  return record.status.conditions.find((c) => c.type === type);
}

export function isConditionTrue(record: NodeClaimRecord, type: NodeClaimConditionType): boolean {
  return condition(record, type)?.status === 'True';
}

export interface ConditionChange {
  status: ConditionStatus;
  reason: string;
  message?: string;
  /** Epoch ms. */
  now: number;
}

/**
 * The record with `type` set: lastTransitionTime moves only when the status changes, so a repeated
 * update (a redelivered event) keeps the time the claim really got there. Returns the record itself
 * when nothing changes, so callers can skip the write.
 */
export function setCondition(
  record: NodeClaimRecord,
  type: NodeClaimConditionType,
  change: ConditionChange,
): NodeClaimRecord {
  const current = condition(record, type);
  const message = change.message ?? '';
  if (current && current.status === change.status && current.reason === change.reason && current.message === message) {
    return record;
  }
  const next: NodeClaimCondition = {
    type,
    status: change.status,
    reason: change.reason,
    message,
    lastTransitionTime: current && current.status === change.status ? current.lastTransitionTime : iso(change.now),
  };
  const conditions = current
    ? record.status.conditions.map((c) => (c.type === type ? next : c))
    : [...record.status.conditions, next];
  return { ...record, status: { ...record.status, conditions } };
}

/** The record without the condition (Drifted, Consolidatable are removed rather than set False upstream). */
export function clearCondition(record: NodeClaimRecord, type: NodeClaimConditionType): NodeClaimRecord {
  if (!condition(record, type)) return record;
  return {
    ...record,
    status: { ...record.status, conditions: record.status.conditions.filter((c) => c.type !== type) },
  };
}

/** What the launch learned from EC2: the instance, its image and resources, and the labels it adds. */
export interface LaunchedDetails {
  providerID: string;
  imageID: string;
  capacity: ResourceList;
  allocatable: ResourceList;
  /** Instance type, zone, zone id, capacity type and reservation labels of what EC2 launched. */
  labels: Record<string, string>;
  now: number;
}

/**
 * Launched=True with the instance's details (Karpenter's PopulateNodeClaimDetails): the launched
 * labels are added under the claim's own, which win, as upstream merges them.
 */
export function markLaunched(record: NodeClaimRecord, launched: LaunchedDetails): NodeClaimRecord {
  const next: NodeClaimRecord = {
    ...record,
    metadata: { ...record.metadata, labels: { ...launched.labels, ...record.metadata.labels } },
    status: {
      ...record.status,
      providerID: launched.providerID,
      imageID: launched.imageID,
      capacity: { ...launched.capacity },
      allocatable: { ...launched.allocatable },
    },
  };
  return setCondition(next, CONDITION.launched, { status: 'True', reason: 'Launched', now: launched.now });
}

/** Registered=True with the Node's name. */
export function markRegistered(record: NodeClaimRecord, nodeName: string, now: number): NodeClaimRecord {
  if (record.status.nodeName === nodeName && isConditionTrue(record, CONDITION.registered)) return record;
  const next = { ...record, status: { ...record.status, nodeName } };
  return setCondition(next, CONDITION.registered, { status: 'True', reason: 'Registered', now });
}

/** Initialized=True: the Node is ready, its startup and ephemeral taints gone, its extended resources there. */
export function markInitialized(record: NodeClaimRecord, now: number): NodeClaimRecord {
  return setCondition(record, CONDITION.initialized, { status: 'True', reason: 'Initialized', now });
}

/** The record with deletionTimestamp set (kept when already set: the first mark is the one that counts). */
export function markForDeletion(record: NodeClaimRecord, now: number): NodeClaimRecord {
  if (record.metadata.deletionTimestamp !== undefined) return record;
  return { ...record, metadata: { ...record.metadata, deletionTimestamp: iso(now) } };
}

export function isMarkedForDeletion(record: NodeClaimRecord): boolean {
  return record.metadata.deletionTimestamp !== undefined;
}

/** The EC2 instance id of the claim's providerID (`aws:///<zone>/<id>`), or undefined before launch. */
export function instanceIdOf(record: NodeClaimRecord): string | undefined {
  const id = record.status.providerID?.split('/').pop();
  return id ? id : undefined;
}

/** The NodePool the claim belongs to (its `karpenter.sh/nodepool` label). */
export function nodePoolOf(record: NodeClaimRecord): string | undefined {
  return record.metadata.labels[LABEL_NODEPOOL];
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
