// What the cluster shows of karpless's state, where Karpenter's CRDs are installed: each NodeClaim
// record as a karpenter.sh/v1 NodeClaim object (spec as launched, status, owner reference to its
// NodePool, the termination finalizer so `kubectl delete nodeclaim` waits for the instance), and each
// NodePool's status (resources in use, node count, Ready / NodeClassReady / ValidationSucceeded).
// Pure: the watcher's status writer (shared/runtime/cluster-status.ts) applies it.

import { parseQuantityOrUndefined } from '../apis/quantity';
import { LABEL_NODEPOOL } from '../apis/v1/labels';
import type { Condition, ResourceList } from '../apis/v1/types';
import { CONDITION, type NodeClaimCondition, type NodeClaimRecord } from './record';

export const TERMINATION_FINALIZER = 'karpenter.sh/termination';

export interface MirroredNodeClaim {
  apiVersion: 'karpenter.sh/v1';
  kind: 'NodeClaim';
  metadata: {
    name: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    finalizers: string[];
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; blockOwnerDeletion: boolean }[];
  };
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
}

/** Ready is Launched ∧ Registered ∧ Initialized, as Karpenter's condition set computes it. */
export function readyCondition(record: NodeClaimRecord): NodeClaimCondition | Condition {
  const lifecycle = [CONDITION.launched, CONDITION.registered, CONDITION.initialized].map((type) =>
    record.status.conditions.find((c) => c.type === type),
  );
  const notTrue = lifecycle.find((c) => c?.status !== 'True');
  const latest = lifecycle
    .map((c) => c?.lastTransitionTime ?? record.metadata.creationTimestamp)
    .sort()
    .at(-1);
  if (!notTrue)
    return { type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: latest ?? '' };
  return {
    type: 'Ready',
    status: notTrue.status === 'False' ? 'False' : 'Unknown',
    reason: notTrue.reason || `${notTrue.type}NotTrue`,
    message: notTrue.message || `${notTrue.type} is not True`,
    lastTransitionTime: notTrue.lastTransitionTime,
  };
}

/** The NodeClaim object for a record; `nodePoolUid` makes it owned by its NodePool object. */
export function mirroredNodeClaim(record: NodeClaimRecord, nodePoolUid?: string): MirroredNodeClaim {
  const nodePool = record.metadata.labels[LABEL_NODEPOOL];
  const spec: Record<string, unknown> = {
    nodeClassRef: record.spec.nodeClassRef,
    requirements: record.spec.requirements,
    resources: record.spec.resources,
    expireAfter: record.spec.expireAfter,
  };
  if (record.spec.taints.length > 0) spec.taints = record.spec.taints;
  if (record.spec.startupTaints.length > 0) spec.startupTaints = record.spec.startupTaints;
  if (record.spec.terminationGracePeriod) spec.terminationGracePeriod = record.spec.terminationGracePeriod;
  const object: MirroredNodeClaim = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: record.metadata.name,
      labels: { ...record.metadata.labels },
      annotations: { ...record.metadata.annotations },
      finalizers: [TERMINATION_FINALIZER],
    },
    spec,
    status: nodeClaimStatus(record),
  };
  if (nodePool && nodePoolUid) {
    object.metadata.ownerReferences = [
      { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: nodePool, uid: nodePoolUid, blockOwnerDeletion: true },
    ];
  }
  return object;
}

export function nodeClaimStatus(record: NodeClaimRecord): Record<string, unknown> {
  const status: Record<string, unknown> = {
    capacity: record.status.capacity,
    allocatable: record.status.allocatable,
    conditions: [...record.status.conditions, readyCondition(record)],
  };
  if (record.status.providerID) status.providerID = record.status.providerID;
  if (record.status.imageID) status.imageID = record.status.imageID;
  if (record.status.nodeName) status.nodeName = record.status.nodeName;
  return status;
}

export interface NodePoolStatusInput {
  /** The NodePool's claim records. */
  records: readonly NodeClaimRecord[];
  /** The Ready condition of its EC2NodeClass object, when the cluster has one. */
  nodeClassReady?: Pick<Condition, 'status' | 'reason' | 'message'>;
  /** Its EC2NodeClass object is being deleted (karpless launches nothing for it meanwhile). */
  nodeClassTerminating?: boolean;
  /** The first validation error of the NodePool ("spec.weight: …"), when it has one. */
  validationError?: string;
  /** RFC 3339, for conditions that change now. */
  now: string;
  /** The conditions the object has now: a condition keeps its lastTransitionTime until its status changes. */
  previous?: readonly Condition[];
}

/**
 * A NodePool's status as Karpenter's counter and readiness controllers write it: the summed capacity
 * of its claims not being deleted (plus `nodes`), and Ready from ValidationSucceeded and NodeClassReady.
 */
export function nodePoolStatus(input: NodePoolStatusInput): Record<string, unknown> {
  const live = input.records.filter((r) => r.metadata.deletionTimestamp === undefined);
  const resources: Record<string, string> = {};
  const totals = new Map<string, number>();
  for (const record of live) {
    for (const [name, value] of Object.entries(record.status.capacity as ResourceList)) {
      totals.set(name, (totals.get(name) ?? 0) + (parseQuantityOrUndefined(value as string | number) ?? 0));
    }
  }
  for (const [name, total] of totals) resources[name] = formatQuantity(name, total);
  resources.nodes = String(live.length);
  const validation: Pick<Condition, 'status' | 'reason' | 'message'> = input.validationError
    ? { status: 'False', reason: 'ValidationFailed', message: input.validationError }
    : { status: 'True', reason: 'ValidationSucceeded', message: '' };
  const nodeClass: Pick<Condition, 'status' | 'reason' | 'message'> = input.nodeClassTerminating
    ? { status: 'False', reason: 'NodeClassTerminating', message: 'NodeClass is Terminating' }
    : input.nodeClassReady
      ? input.nodeClassReady.status === 'True'
        ? { status: 'True', reason: 'NodeClassReady', message: '' }
        : { status: input.nodeClassReady.status, reason: 'NodeClassNotReady', message: 'EC2NodeClass is not Ready' }
      : {
          status: 'Unknown',
          reason: 'NodeClassNotFound',
          message: 'no EC2NodeClass object with that name in the cluster',
        };
  const blocking = [
    ['ValidationSucceeded', validation],
    ['NodeClassReady', nodeClass],
  ].find(([, c]) => (c as Condition).status !== 'True') as [string, Condition] | undefined;
  const ready: Pick<Condition, 'status' | 'reason' | 'message'> = blocking
    ? {
        status: blocking[1].status === 'False' ? 'False' : 'Unknown',
        reason: `${blocking[0]}NotTrue`,
        message: blocking[1].message ?? '',
      }
    : { status: 'True', reason: 'Ready', message: '' };
  return {
    resources,
    nodes: live.length,
    conditions: withTransitions(
      [
        { type: 'ValidationSucceeded', ...validation },
        { type: 'NodeClassReady', ...nodeClass },
        { type: 'Ready', ...ready },
      ],
      input.previous ?? [],
      input.now,
    ),
  };
}

/** Keeps a condition's lastTransitionTime while its status stays the same (metav1.Condition semantics). */
export function withTransitions(next: Condition[], previous: readonly Condition[], now: string): Condition[] {
  return next.map((c) => {
    const before = previous.find((p) => p.type === c.type);
    return {
      ...c,
      lastTransitionTime: before && before.status === c.status ? (before.lastTransitionTime ?? now) : now,
    };
  });
}

/** Memory-like totals in Ki as the API server prints node capacity; counts as plain numbers. */
function formatQuantity(name: string, value: number): string {
  if (name === 'memory' || name.endsWith('storage')) {
    return value % 2 ** 30 === 0 ? `${value / 2 ** 30}Gi` : `${Math.round(value / 2 ** 10)}Ki`;
  }
  return Number.isInteger(value) ? String(value) : `${Math.round(value * 1000)}m`;
}
