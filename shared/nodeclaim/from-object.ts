// The way back from ./mirror: a NodeClaim object in the cluster (mirrored by the watcher, or
// Karpenter's own) read as the record and the instance the provision decision counts. Used where
// the state table and EC2 are not read, by `karpless plan --from-cluster`: the cluster's NodeClaims
// are then the claims in flight and the capacity counted against NodePool limits. Pure.

import {
  LABEL_CAPACITY_TYPE,
  LABEL_INSTANCE_TYPE,
  LABEL_NODECLASS,
  LABEL_NODEPOOL,
  LABEL_ZONE,
} from '../apis/v1/labels';
import type { NodeClassReference, ResourceList } from '../apis/v1/types';
import type { CapacityType } from '../instancetypes/types';
import type { NodeClaimCondition, NodeClaimRecord } from './record';

/** A NodeClaim as the API server returns it (what the record needs of it). */
export interface NodeClaimObject {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string;
    deletionTimestamp?: string;
  };
  spec?: unknown;
  status?: unknown;
}

/** What the decision reads of an instance of ours (shared/runtime/instances.ts ClaimInstance). */
export interface NodeClaimInstance {
  instanceId: string;
  nodeClaimName: string;
  nodePool: string;
  nodeClass: string;
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  state: string;
  launchTime?: number;
}

type Spec = {
  nodeClassRef?: NodeClassReference;
  requirements?: NodeClaimRecord['spec']['requirements'];
  resources?: { requests?: ResourceList };
  taints?: NodeClaimRecord['spec']['taints'];
  startupTaints?: NodeClaimRecord['spec']['startupTaints'];
  expireAfter?: string;
  terminationGracePeriod?: string;
};
type Status = Partial<Omit<NodeClaimRecord['status'], 'conditions'>> & { conditions?: { type?: string }[] };

const LIFECYCLE = new Set(['Launched', 'Registered', 'Initialized', 'Drifted', 'Consolidatable']);

export function recordFromNodeClaimObject(object: NodeClaimObject): NodeClaimRecord {
  const spec = (object.spec ?? {}) as Spec;
  const status = (object.status ?? {}) as Status;
  const { metadata } = object;
  return {
    metadata: {
      name: metadata.name,
      labels: { ...(metadata.labels ?? {}) },
      annotations: { ...(metadata.annotations ?? {}) },
      creationTimestamp: metadata.creationTimestamp ?? new Date(0).toISOString(),
      ...(metadata.deletionTimestamp ? { deletionTimestamp: metadata.deletionTimestamp } : {}),
    },
    spec: {
      nodeClassRef: spec.nodeClassRef ?? {
        group: 'karpenter.k8s.aws',
        kind: 'EC2NodeClass',
        name: metadata.labels?.[LABEL_NODECLASS] ?? '',
      },
      requirements: spec.requirements ?? [],
      resources: { requests: spec.resources?.requests ?? {} },
      taints: spec.taints ?? [],
      startupTaints: spec.startupTaints ?? [],
      expireAfter: spec.expireAfter ?? 'Never',
      ...(spec.terminationGracePeriod ? { terminationGracePeriod: spec.terminationGracePeriod } : {}),
    },
    status: {
      ...(status.providerID ? { providerID: status.providerID } : {}),
      ...(status.imageID ? { imageID: status.imageID } : {}),
      ...(status.nodeName ? { nodeName: status.nodeName } : {}),
      capacity: status.capacity ?? {},
      allocatable: status.allocatable ?? {},
      // Ready is derived (mirror.ts readyCondition); the record keeps the conditions it is derived from.
      conditions: (status.conditions ?? []).filter((c): c is NodeClaimCondition => LIFECYCLE.has(String(c.type))),
      ...(status.lastPodEventTime ? { lastPodEventTime: status.lastPodEventTime } : {}),
    },
  };
}

/** The instance of a launched NodeClaim (`aws:///<zone>/<id>`); undefined before launch or for another provider. */
export function instanceFromNodeClaimObject(object: NodeClaimObject): NodeClaimInstance | undefined {
  const record = recordFromNodeClaimObject(object);
  const match = /^aws:\/\/\/([^/]+)\/(i-[0-9a-f]+)$/.exec(record.status.providerID ?? '');
  if (!match?.[1] || !match[2]) return undefined;
  const labels = record.metadata.labels;
  const launched = record.status.conditions.find((c) => c.type === 'Launched' && c.status === 'True');
  const launchTime = launched ? Date.parse(launched.lastTransitionTime) : Number.NaN;
  return {
    instanceId: match[2],
    nodeClaimName: record.metadata.name,
    nodePool: labels[LABEL_NODEPOOL] ?? '',
    nodeClass: labels[LABEL_NODECLASS] ?? record.spec.nodeClassRef.name,
    instanceType: labels[LABEL_INSTANCE_TYPE] ?? '',
    zone: labels[LABEL_ZONE] ?? match[1],
    capacityType: (labels[LABEL_CAPACITY_TYPE] ?? 'on-demand') as CapacityType,
    state: 'running',
    ...(Number.isFinite(launchTime) ? { launchTime } : {}),
  };
}
