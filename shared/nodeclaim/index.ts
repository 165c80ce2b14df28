// NodeClaims in the core: a planned claim becomes what is launched (name, requirements, instance
// types, capacity type) and what the node must carry (labels, taints), as Karpenter's
// NodeClaimTemplate.ToNodeClaim and the AWS launch path compute them. Pure.

import { createHash } from 'node:crypto';
import { nodeLabels } from '../amifamily/userdata/options';
import { resolveAMIFamily } from '../apis/v1/amifamily';
import { LABEL_CAPACITY_TYPE, LABEL_NODECLASS, LABEL_NODEPOOL, LABEL_ZONE, LABEL_ZONE_ID } from '../apis/v1/labels';
import type { EC2NodeClass, NodePool, NodeSelectorRequirementWithMinValues, Taint } from '../apis/v1/types';
import { KUBE } from '../contracts';
import type { CapacityType, InstanceType, Offering } from '../instancetypes/types';
import type { PlannedNodeClaim } from '../scheduling';
import { allows, Requirements, requirementFrom, requirementIn } from '../scheduling/requirements';
import { isRestrictedNodeLabel, requirementValue } from './labels';

export { isRestrictedNodeLabel, requirementValue } from './labels';

/** What one planned claim launches and what its node carries. */
export interface NodeClaimLaunch {
  /** `<nodepool>-<5 chars>`, derived from the seed: a redelivered decision names its claims alike. */
  name: string;
  nodePool: string;
  nodeClass: string;
  /**
   * The NodeClaim's labels at creation: template labels, `karpenter.sh/nodepool`,
   * `karpenter.k8s.aws/ec2nodeclass` and the values of requirements on keys Karpenter may inject
   * (not restricted). Nothing here depends on which instance type EC2 picks.
   */
  labels: Record<string, string>;
  /**
   * The labels the kubelet registers with (`--node-labels`): `labels` plus capacity type and
   * `karpenter.sh/do-not-sync-taints=true` (not for Custom), minus the domains the NodeRestriction
   * admission plugin refuses. One launch template serves every type of the fleet, so no
   * instance-type label is ever here.
   */
  userDataLabels: Record<string, string>;
  taints: Taint[];
  startupTaints: Taint[];
  /** The claim's requirements with `karpenter.sh/capacity-type In [what the types offer]` added. */
  requirements: NodeSelectorRequirementWithMinValues[];
  /** Cheapest first, as planned. */
  instanceTypes: InstanceType[];
  /** The capacity type the fleet request uses: reserved, else spot, else on-demand (AWS getCapacityType). */
  capacityType: CapacityType;
}

export interface NodeClaimInput {
  claim: PlannedNodeClaim;
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
  /**
   * Anything stable for this claim across redeliveries, e.g. `${decisionId}/${claimIndex}`; equal
   * seeds give equal names, different seeds different names (with high probability).
   */
  seed: string;
}

// k8s.io/apimachinery utilrand: no vowels (no words) and no look-alike characters.
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const RANDOM_LENGTH = 5;
// generateName keeps the name within 63 characters by cutting the prefix, as the API server does.
const MAX_GENERATED_PREFIX = 63 - RANDOM_LENGTH;

/** Karpenter's `generateName: <nodepool>-` with the five random characters taken from a seed. */
export function nodeClaimName(nodePool: string, seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  let suffix = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) suffix += NAME_ALPHABET[(digest[i] ?? 0) % NAME_ALPHABET.length];
  return `${`${nodePool}-`.slice(0, MAX_GENERATED_PREFIX)}${suffix}`;
}

/** The labels a node gets from requirements: one value per key Karpenter may inject. */
export function requirementLabels(
  requirements: readonly NodeSelectorRequirementWithMinValues[],
): Record<string, string> {
  const labels: Record<string, string> = {};
  const set = Requirements.from(requirements.map(requirementFrom));
  for (const [key, r] of [...set.byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (isRestrictedNodeLabel(key)) continue;
    const value = requirementValue(r);
    if (value !== undefined) labels[key] = value;
  }
  return labels;
}

function offeringCompatible(requirements: Requirements, offering: Offering): boolean {
  const labels: [string, string | undefined][] = [
    [LABEL_ZONE, offering.zone],
    [LABEL_ZONE_ID, offering.zoneID],
    [LABEL_CAPACITY_TYPE, offering.capacityType],
  ];
  return labels.every(([key, value]) => {
    const r = requirements.get(key);
    return r === undefined || value === undefined || allows(r, value);
  });
}

/** Capacity types offered (available, compatible) by the claim's instance types, in preference order. */
function offeredCapacityTypes(requirements: Requirements, instanceTypes: readonly InstanceType[]): CapacityType[] {
  const found = new Set<CapacityType>();
  for (const it of instanceTypes) {
    for (const o of it.offerings) if (o.available && offeringCompatible(requirements, o)) found.add(o.capacityType);
  }
  return (['reserved', 'spot', 'on-demand'] as const).filter((ct) => found.has(ct));
}

/**
 * The requirements with `karpenter.sh/capacity-type In [what the types offer]` added, and the
 * capacity type the fleet request uses: reserved, else spot, else on-demand (AWS getCapacityType).
 */
export function launchCapacity(
  claimRequirements: readonly NodeSelectorRequirementWithMinValues[],
  instanceTypes: readonly InstanceType[],
): { requirements: NodeSelectorRequirementWithMinValues[]; capacityType: CapacityType } {
  let requirements = Requirements.from(claimRequirements.map(requirementFrom));
  const capacityTypes = offeredCapacityTypes(requirements, instanceTypes);
  if (capacityTypes.length > 0) requirements = requirements.add(requirementIn(LABEL_CAPACITY_TYPE, ...capacityTypes));
  // With nothing offered (all marked unavailable since planning) the fleet request fails as on-demand,
  // which is what upstream's getCapacityType falls back to as well.
  return { requirements: requirements.toNodeSelectorRequirements(), capacityType: capacityTypes[0] ?? 'on-demand' };
}

/**
 * Turns a planned claim into its launch: deterministic name, labels, userData labels, taints,
 * requirements, instance types and capacity type. Throws when the NodePool does not match the claim,
 * which is a caller bug rather than bad input.
 */
export function nodeClaimFromPlan(input: NodeClaimInput): NodeClaimLaunch {
  const { claim, nodePool, nodeClass } = input;
  if (claim.nodePool !== nodePool.metadata.name) {
    throw new Error(`nodeClaimFromPlan: claim of NodePool/${claim.nodePool} given NodePool/${nodePool.metadata.name}`);
  }
  const template = nodePool.spec.template;
  const labels: Record<string, string> = {
    ...requirementLabels(claim.requirements),
    ...(template.metadata?.labels ?? {}),
    [LABEL_NODEPOOL]: nodePool.metadata.name,
    [LABEL_NODECLASS]: nodeClass.metadata.name,
  };
  const { requirements, capacityType } = launchCapacity(claim.requirements, claim.instanceTypes);
  const family = resolveAMIFamily(nodeClass) ?? 'Custom';
  return {
    name: nodeClaimName(nodePool.metadata.name, input.seed),
    nodePool: nodePool.metadata.name,
    nodeClass: nodeClass.metadata.name,
    labels,
    userDataLabels: nodeLabels(family, labels, capacityType),
    taints: [...(template.spec.taints ?? [])],
    startupTaints: [...(template.spec.startupTaints ?? [])],
    requirements,
    instanceTypes: claim.instanceTypes,
    capacityType,
  };
}

/** Where EC2 actually put the instance. */
export interface LaunchedInstance {
  /** Only its labels count: a type no longer in the catalog is known by its name label alone. */
  instanceType: Pick<InstanceType, 'labels'>;
  zone: string;
  zoneID?: string;
  capacityType: CapacityType;
  /** Reserved instances: the reservation, labelled as Karpenter labels reserved nodes. */
  reservation?: { id: string; type: 'default' | 'capacity-block' };
}

/**
 * The labels what EC2 launched adds to the claim (Karpenter's PopulateNodeClaimDetails): the
 * launched type's labels, its zone, zone id and capacity type, and the reservation it runs in.
 */
export function launchedLabels(launched: LaunchedInstance): Record<string, string> {
  return {
    ...launched.instanceType.labels,
    [LABEL_ZONE]: launched.zone,
    ...(launched.zoneID !== undefined ? { [LABEL_ZONE_ID]: launched.zoneID } : {}),
    [LABEL_CAPACITY_TYPE]: launched.capacityType,
    ...(launched.reservation
      ? {
          'karpenter.k8s.aws/capacity-reservation-id': launched.reservation.id,
          'karpenter.k8s.aws/capacity-reservation-type': launched.reservation.type,
        }
      : {}),
  };
}

/**
 * The labels the Node gets at registration (Karpenter's PopulateNodeClaimDetails then registration):
 * the launched labels, overridden by the claim's own, plus `karpenter.sh/registered=true`.
 */
export function registrationLabels(
  claim: Pick<NodeClaimLaunch, 'labels'>,
  launched: LaunchedInstance,
): Record<string, string> {
  return { ...launchedLabels(launched), ...claim.labels, [KUBE.registeredLabel]: 'true' };
}
