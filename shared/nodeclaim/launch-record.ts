// The NodeClaim record as the launch writes it: built from the shaped claim before CreateFleet
// (Karpenter's NodeClaimTemplate.ToNodeClaim), completed from what EC2 launched (the AWS provider's
// cloudprovider.Create → PopulateNodeClaimDetails), or rebuilt once from an instance's tags for
// instances launched before records existed. Pure.

import type { Node } from '../apis/core/v1';
import { LABEL_INSTANCE_TYPE, LABEL_NODECLASS, LABEL_NODEPOOL } from '../apis/v1/labels';
import type { EC2NodeClass, NodePool, ResourceList } from '../apis/v1/types';
import { launchHashTags } from '../disruption/hash';
import type { CapacityType, InstanceType, Resources } from '../instancetypes/types';
import type { PlannedNodeClaim } from '../scheduling';
import { CPU } from '../scheduling/resources';
import { type LaunchedInstance, launchedLabels, type NodeClaimLaunch, requirementLabels } from './index';
import {
  type LaunchedDetails,
  markLaunched,
  type NodeClaimRecord,
  type NodeClaimSpec,
  newNodeClaimRecord,
} from './record';

/** Karpenter's default `expireAfter` (the v1 NodePool default). */
export const DEFAULT_EXPIRE_AFTER = '720h';

/** Resources in base units as a Kubernetes resource list (cpu in millicores, the rest as integers). */
export function resourceListOf(resources: Resources): ResourceList {
  const out: ResourceList = {};
  for (const [name, value] of Object.entries(resources).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out[name] = name === CPU ? `${value}m` : String(value);
  }
  return out;
}

function specOf(nodePool: NodePool, nodeClass: EC2NodeClass): Omit<NodeClaimSpec, 'requirements' | 'resources'> {
  const template = nodePool.spec.template.spec;
  return {
    nodeClassRef: { ...template.nodeClassRef, name: nodeClass.metadata.name },
    taints: [...(template.taints ?? [])],
    startupTaints: [...(template.startupTaints ?? [])],
    expireAfter: template.expireAfter ?? DEFAULT_EXPIRE_AFTER,
    ...(template.terminationGracePeriod !== undefined
      ? { terminationGracePeriod: template.terminationGracePeriod }
      : {}),
  };
}

function annotationsOf(nodePool: NodePool, nodeClass: EC2NodeClass): Record<string, string> {
  return { ...(nodePool.spec.template.metadata?.annotations ?? {}), ...launchHashTags(nodePool, nodeClass) };
}

export interface LaunchRecordInput {
  shaped: NodeClaimLaunch;
  claim: PlannedNodeClaim;
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
  /** Epoch ms. */
  now: number;
}

/**
 * The record written before CreateFleet: the claim's labels (narrowed requirement values, template
 * labels, NodePool and EC2NodeClass), its requirements with `node.kubernetes.io/instance-type In`
 * the types it may launch (as upstream's ToNodeClaim adds them), what its pods request, and the
 * NodePool's taints, startup taints, expireAfter and terminationGracePeriod as they are now.
 */
export function launchRecord(input: LaunchRecordInput): NodeClaimRecord {
  const { shaped, claim, nodePool, nodeClass } = input;
  const requirements = shaped.requirements.filter((r) => r.key !== LABEL_INSTANCE_TYPE);
  requirements.push({ key: LABEL_INSTANCE_TYPE, operator: 'In', values: shaped.instanceTypes.map((t) => t.name) });
  return newNodeClaimRecord({
    name: shaped.name,
    labels: shaped.labels,
    annotations: annotationsOf(nodePool, nodeClass),
    spec: {
      ...specOf(nodePool, nodeClass),
      requirements,
      resources: { requests: resourceListOf(claim.requests) },
    },
    now: input.now,
  });
}

/** What EC2 launched, as the record needs it. */
export interface LaunchOutcome {
  instanceId: string;
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  imageId?: string;
}

/**
 * The record completed from its launch: providerID, imageID, the launched type's capacity and
 * allocatable, and its labels (type, zone, zone id, capacity type, reservation). `types` are the
 * types the claim could launch; one EC2 chose.
 */
export function launchedRecord(
  record: NodeClaimRecord,
  outcome: LaunchOutcome,
  types: readonly InstanceType[],
  now: number,
): NodeClaimRecord {
  const type = types.find((t) => t.name === outcome.instanceType);
  return markLaunched(record, launchDetails(outcome, type, now));
}

/** What a launch's details need of its type; a backfill may know only the type's labels. */
type LaunchedType = Pick<InstanceType, 'labels'> &
  Partial<Pick<InstanceType, 'capacity' | 'allocatable' | 'offerings'>>;

function launchDetails(outcome: LaunchOutcome, type: LaunchedType | undefined, now: number): LaunchedDetails {
  const offering = type?.offerings?.find((o) => o.zone === outcome.zone && o.capacityType === outcome.capacityType);
  const launched: LaunchedInstance = {
    instanceType: type ?? { labels: { [LABEL_INSTANCE_TYPE]: outcome.instanceType } },
    zone: outcome.zone,
    ...(offering?.zoneID !== undefined ? { zoneID: offering.zoneID } : {}),
    capacityType: outcome.capacityType,
    ...(outcome.capacityType === 'reserved' && offering?.reservationId
      ? { reservation: { id: offering.reservationId, type: offering.reservationType ?? 'default' } }
      : {}),
  };
  return {
    providerID: `aws:///${outcome.zone}/${outcome.instanceId}`,
    imageID: outcome.imageId ?? '',
    capacity: type?.capacity ? resourceListOf(type.capacity) : {},
    allocatable: type?.allocatable ? resourceListOf(type.allocatable) : {},
    labels: launchedLabels(launched),
    now,
  };
}

/** What an instance's tags say (runtime ClaimInstance fits it). */
export interface TaggedInstance {
  instanceId: string;
  nodeClaimName: string;
  nodePool: string;
  nodeClass: string;
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  reservation?: { id: string; type: 'default' | 'capacity-block' };
  imageId?: string;
  launchTime?: number;
  hashTags?: Record<string, string>;
}

/**
 * What the NodeClaim object Karpenter created for an instance karpless adopts fixed for the claim's
 * life. Upstream's expiration counts the claim's spec.expireAfter from its creationTimestamp
 * (nodeclaim/expiration), both set when Karpenter created it, so an adopted node keeps the deadline
 * Karpenter gave it; the instance's launch stands in only when the object is gone.
 */
export interface AdoptedClaim {
  creationTimestamp: string;
  expireAfter?: string;
  terminationGracePeriod?: string;
}

export interface BackfillInput {
  instance: TaggedInstance;
  /** Karpenter's NodeClaim object of the instance's claim, when karpless adopts one it launched. */
  adopted?: AdoptedClaim;
  /** Today's NodePool, when it still exists: the tags carry no requirements, taints or template. */
  nodePool?: NodePool;
  /** The launched type as the NodePool resolves it today (or only its labels), for capacity and labels. */
  instanceType?: LaunchedType;
  now: number;
}

/**
 * The record of an instance launched before records existed, written once where the watcher or gc
 * meets it. The tags say the claim, pool, class, type, zone, capacity type and hashes; the rest
 * comes from today's NodePool, which is what registration used for these nodes until now, so the
 * node's labels do not change under it. Launched, since the instance exists.
 */
export function backfillRecord(input: BackfillInput): NodeClaimRecord {
  const { instance, nodePool } = input;
  const template = nodePool?.spec.template;
  const labels: Record<string, string> = {
    ...requirementLabels(template?.spec.requirements ?? []),
    ...(template?.metadata?.labels ?? {}),
    [LABEL_NODEPOOL]: instance.nodePool,
    ...(instance.nodeClass ? { [LABEL_NODECLASS]: instance.nodeClass } : {}),
  };
  const adoptedAt = input.adopted ? Date.parse(input.adopted.creationTimestamp) : Number.NaN;
  const created = Number.isFinite(adoptedAt) ? adoptedAt : (input.instance.launchTime ?? input.now);
  // An adopted claim keeps the terms Karpenter created it with, a grace period it had none of included.
  const terms = input.adopted
    ? { expireAfter: input.adopted.expireAfter, terminationGracePeriod: input.adopted.terminationGracePeriod }
    : { expireAfter: template?.spec.expireAfter, terminationGracePeriod: template?.spec.terminationGracePeriod };
  const record = newNodeClaimRecord({
    name: instance.nodeClaimName,
    labels,
    annotations: { ...(template?.metadata?.annotations ?? {}), ...(instance.hashTags ?? {}) },
    spec: {
      nodeClassRef: {
        group: template?.spec.nodeClassRef.group ?? 'karpenter.k8s.aws',
        kind: template?.spec.nodeClassRef.kind ?? 'EC2NodeClass',
        name: instance.nodeClass,
      },
      requirements: [
        ...(template?.spec.requirements ?? []).filter((r) => r.key !== LABEL_INSTANCE_TYPE),
        { key: LABEL_INSTANCE_TYPE, operator: 'In', values: [instance.instanceType] },
      ],
      resources: { requests: {} },
      taints: [...(template?.spec.taints ?? [])],
      startupTaints: [...(template?.spec.startupTaints ?? [])],
      expireAfter: terms.expireAfter ?? template?.spec.expireAfter ?? DEFAULT_EXPIRE_AFTER,
      ...(terms.terminationGracePeriod !== undefined ? { terminationGracePeriod: terms.terminationGracePeriod } : {}),
    },
    now: created,
  });
  const details = launchDetails(instance, input.instanceType, created);
  if (instance.reservation) {
    details.labels['karpenter.k8s.aws/capacity-reservation-id'] = instance.reservation.id;
    details.labels['karpenter.k8s.aws/capacity-reservation-type'] = instance.reservation.type;
  }
  return markLaunched(record, details);
}

/**
 * A backfilled record sized from its registered Node: the kubelet's capacity and allocatable are
 * what the node really has, where a backfill may know only the type's labels.
 */
export function withNodeCapacity(record: NodeClaimRecord, node: Node): NodeClaimRecord {
  return {
    ...record,
    status: {
      ...record.status,
      capacity: { ...(node.status?.capacity ?? record.status.capacity) },
      allocatable: { ...(node.status?.allocatable ?? record.status.allocatable) },
    },
  };
}
