// Is a node still what its configuration would launch today? Karpenter's drift checks (CORE
// nodeclaim/disruption/drift.go, then AWS cloudprovider/drift.go), in their order: NodePool static
// hash, NodePool requirements, instance type not found, EC2NodeClass static hash, AMI, security
// groups, subnets, capacity reservation, placement group. Pure: the caller re-resolves the node class
// and reads the instance from EC2.
//
// Requirements drift is upstream's StrictlyCompatible: every NodePool requirement must hold for the
// claim's labels, and a key the claim lacks drifts unless the operator is NotIn or DoesNotExist. The
// labels are the claim record's, the Node's and the launched instance type's together, so a
// well-known instance-type label a record leaves out never drifts a node.
//
// AMIDrift is how an AMI release rolls nodes: an alias `al2023@latest` resolves to the new AMI and
// every node on the old one drifts; a pinned `al2023@v20240807` resolves to the same AMI whatever is
// released, so nothing drifts until the pin changes.

import type { EC2NodeClass, NodePool } from '../apis/v1/types';
import { type ResolvedAMI, requirementsMatch } from '../launch/launchtemplate';
import {
  NODECLASS_HASH_TAG,
  NODECLASS_HASH_VERSION,
  NODECLASS_HASH_VERSION_TAG,
  NODEPOOL_HASH_TAG,
  NODEPOOL_HASH_VERSION,
  NODEPOOL_HASH_VERSION_TAG,
  nodeClassHash,
  nodePoolHash,
} from './hash';

export type DriftReason =
  | 'NodePoolDrift'
  | 'RequirementsDrift'
  | 'NodeClassDrift'
  | 'AMIDrift'
  | 'SecurityGroupDrift'
  | 'SubnetDrift'
  | 'CapacityReservationDrift'
  | 'PlacementGroupDrift'
  | 'InstanceTypeNotFound';

export interface Drift {
  reason: DriftReason;
  /** What differs, naming both sides. */
  detail: string;
}

/** The node class as it resolves now; a part that could not be resolved is absent and not compared. */
export interface NodeClassToday {
  nodeClass: EC2NodeClass;
  /** Newest first, as the launch path orders them. */
  amis?: ResolvedAMI[];
  subnetIds?: string[];
  securityGroupIds?: string[];
  /** The reservations the node class selects now ([] when it selects none); absent when not resolved. */
  capacityReservationIds?: string[];
  /** The placement group id the node class resolves to ('' when it names none); absent when not resolved. */
  placementGroupId?: string;
}

/** What EC2 and the cluster say about one node. */
export interface DriftSubject {
  instanceType: string;
  imageId?: string;
  subnetId?: string;
  securityGroupIds?: string[];
  /** The hash tags the instance was launched with. */
  hashTags?: Record<string, string>;
  /** The instance type's labels today (arch, GPU and accelerator counts: what AMI requirements match). */
  instanceTypeLabels?: Record<string, string>;
  /** The Node's labels. */
  nodeLabels?: Record<string, string>;
  /** The claim record's labels (what the claim was launched as). */
  claimLabels?: Record<string, string>;
  /** The capacity reservation the instance runs in. */
  reservationId?: string;
  /**
   * Today's catalog has no offering of the instance type in its zone and capacity type (reserved
   * may fall back to on-demand). Upstream checks this only for claims older than an hour.
   */
  instanceTypeNotFound?: boolean;
}

function staticDrift(
  subject: DriftSubject,
  tags: { hash: string; versionTag: string; version: string },
  today: string,
): boolean {
  const launched = subject.hashTags?.[tags.hash];
  // Compared only when the node carries today's hash version: a version change never drifts.
  if (launched === undefined || subject.hashTags?.[tags.versionTag] !== tags.version) return false;
  return launched !== today;
}

/** The AMI the launch path picks for this instance type now: the first whose requirements its labels meet. */
export function expectedAMI(amis: readonly ResolvedAMI[], labels: Record<string, string>): ResolvedAMI | undefined {
  return amis.find((a) => requirementsMatch(a.requirements, labels));
}

function claimLabels(subject: DriftSubject): Record<string, string> | undefined {
  if (!subject.nodeLabels && !subject.claimLabels) return undefined;
  return { ...subject.instanceTypeLabels, ...subject.nodeLabels, ...subject.claimLabels };
}

/**
 * A key the labels lack drifts only when they are a claim record's: the record holds every label the
 * decision narrowed, as upstream's NodeClaim does. A node without a record (launched before records,
 * or labelled by hand) shows only what it was registered with, so an absent key says nothing.
 */
function requirementsDrift(
  nodePool: NodePool,
  labels: Record<string, string> | undefined,
  fromRecord: boolean,
): string | undefined {
  if (!labels) return undefined;
  for (const r of nodePool.spec.template.spec.requirements) {
    if (!fromRecord && !(r.key in labels)) continue;
    if (!requirementsMatch([r], labels)) {
      return `label ${r.key}=${labels[r.key] ?? '(absent)'} no longer satisfies ${r.key} ${r.operator} ${(r.values ?? []).join(',')}`;
    }
  }
  return undefined;
}

function setsDiffer(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size !== right.size || [...left].some((x) => !right.has(x));
}

/** The first drift found, in Karpenter's order, or undefined when the node is up to date. */
export function detectDrift(subject: DriftSubject, nodePool: NodePool, today: NodeClassToday): Drift | undefined {
  const pool = `NodePool/${nodePool.metadata.name}`;
  const nodeClass = `EC2NodeClass/${today.nodeClass.metadata.name}`;
  const poolTags = { hash: NODEPOOL_HASH_TAG, versionTag: NODEPOOL_HASH_VERSION_TAG, version: NODEPOOL_HASH_VERSION };
  if (staticDrift(subject, poolTags, nodePoolHash(nodePool))) {
    return { reason: 'NodePoolDrift', detail: `${pool} spec.template changed since the node was launched` };
  }
  const requirement = requirementsDrift(nodePool, claimLabels(subject), subject.claimLabels !== undefined);
  if (requirement) return { reason: 'RequirementsDrift', detail: `${pool}: ${requirement}` };
  if (subject.instanceTypeNotFound) {
    return {
      reason: 'InstanceTypeNotFound',
      detail: `${pool} no longer offers ${subject.instanceType} in the node's zone and capacity type`,
    };
  }
  const classTags = {
    hash: NODECLASS_HASH_TAG,
    versionTag: NODECLASS_HASH_VERSION_TAG,
    version: NODECLASS_HASH_VERSION,
  };
  if (staticDrift(subject, classTags, nodeClassHash(today.nodeClass))) {
    return { reason: 'NodeClassDrift', detail: `${nodeClass} spec changed since the node was launched` };
  }
  if (today.amis && today.amis.length > 0 && subject.imageId && subject.instanceTypeLabels) {
    const expected = expectedAMI(today.amis, subject.instanceTypeLabels);
    if (expected && expected.id !== subject.imageId) {
      return {
        reason: 'AMIDrift',
        detail: `node runs ${subject.imageId}; ${nodeClass} now resolves ${expected.id}${expected.name ? ` (${expected.name})` : ''} for ${subject.instanceType}`,
      };
    }
  }
  if (today.securityGroupIds && today.securityGroupIds.length > 0 && subject.securityGroupIds) {
    if (setsDiffer(subject.securityGroupIds, today.securityGroupIds)) {
      return {
        reason: 'SecurityGroupDrift',
        detail: `node has security groups ${subject.securityGroupIds.join(',')}; ${nodeClass} now selects ${[...today.securityGroupIds].sort().join(',')}`,
      };
    }
  }
  if (today.subnetIds && today.subnetIds.length > 0 && subject.subnetId) {
    if (!today.subnetIds.includes(subject.subnetId)) {
      return {
        reason: 'SubnetDrift',
        detail: `node is in ${subject.subnetId}, which ${nodeClass} no longer selects (${[...today.subnetIds].sort().join(',')})`,
      };
    }
  }
  return placementDrift(subject, today, nodeClass);
}

const PLACEMENT_GROUP_ID_LABEL = 'karpenter.k8s.aws/placement-group-id';

function placementDrift(subject: DriftSubject, today: NodeClassToday, nodeClass: string): Drift | undefined {
  if (
    subject.reservationId &&
    today.capacityReservationIds &&
    !today.capacityReservationIds.includes(subject.reservationId)
  ) {
    return {
      reason: 'CapacityReservationDrift',
      detail: `node runs in ${subject.reservationId}, which ${nodeClass} no longer selects`,
    };
  }
  if (today.placementGroupId !== undefined) {
    const launched = claimLabels(subject)?.[PLACEMENT_GROUP_ID_LABEL] ?? '';
    if (launched !== today.placementGroupId) {
      return {
        reason: 'PlacementGroupDrift',
        detail: `node is in placement group ${launched || '(none)'}; ${nodeClass} now resolves ${today.placementGroupId || '(none)'}`,
      };
    }
  }
  return undefined;
}
