// The exact AWS requests one NodeClaim's launch makes: its CreateLaunchTemplate inputs and its
// CreateFleet input, built from the claim, the resolved node class and what is unavailable right
// now. Pure: the launcher sends what this returns, and `karpless plan --requests` writes it, so a
// dry run shows byte for byte what a launch would ask AWS for.
// CONTRACT: LaunchClaim, ResolvedNodeClass, LaunchAvailability, PlannedLaunch, planLaunch.

import type { CreateFleetCommandInput, CreateLaunchTemplateCommandInput } from '@aws-sdk/client-ec2';
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TENANCY } from '../apis/v1/labels';
import type { EC2NodeClass, NodePool, NodeSelectorRequirementWithMinValues, Taint } from '../apis/v1/types';
import { launchHashTags } from '../disruption/hash';
import type { CapacityType, InstanceType, Offering } from '../instancetypes/types';
import { allows, requirementIn } from '../scheduling/requirements';
import {
  batchClientToken,
  buildCreateFleetRequest,
  type FleetOverride,
  type FleetReservation,
  fleetClientToken,
  selectOverrides,
} from './fleet';
import {
  buildCreateLaunchTemplateInput,
  type ClusterInfo,
  type ResolvedAMI,
  resolveLaunchTemplates,
  type TemplateReservation,
} from './launchtemplate';
import { type Candidate, claimRequirements, selectLaunchCandidates } from './offerings';
import { instanceTags, launchTags } from './tags';

export const LABEL_PLACEMENT_GROUP_PARTITION = 'karpenter.k8s.aws/placement-group-partition';

/** One NodeClaim to launch: what the scheduler planned for it. */
export interface LaunchClaim {
  nodeClaimName: string;
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
  /** Candidate types (any order: the launch orders them by price). */
  instanceTypes: InstanceType[];
  /**
   * The NodeClaim's spec.requirements (NodePool requirements narrowed by its pods): only offerings
   * compatible with them (zone, zone ID, capacity type, reservation) become fleet overrides, and
   * their minValues survive truncation to 60 types. Required: without it a zone-pinned claim could
   * start where its pods cannot run.
   */
  requirements: NodeSelectorRequirementWithMinValues[];
  /**
   * Pins the capacity type (it must be one the requirements allow). Leave it out to let the launch
   * choose as Karpenter does: reserved, then spot, then on-demand, the first with an offering left.
   */
  capacityType?: CapacityType;
  /** NodeClaim labels (userData registers the node with them). */
  labels: Record<string, string>;
  taints?: Taint[];
  /** The claim requests vpc.amazonaws.com/efa. */
  efa?: boolean;
  /** The claim requests eks.amazonaws.com/nip-slots: the template enables Nitro Enclaves. */
  enclave?: boolean;
}

export interface LaunchSubnet {
  id: string;
  zone: string;
  zoneID?: string;
  availableIps: number;
  tags?: Record<string, string>;
}

/** The node class resolved against AWS (see shared/nodeclass). */
export interface ResolvedNodeClass {
  subnets: LaunchSubnet[];
  securityGroups: { id: string }[];
  amis: ResolvedAMI[];
  instanceProfile: string;
  cluster: ClusterInfo;
  /**
   * spec.placementGroupSelector resolved to its group ID; when absent, the selector's own id (or,
   * for a name-only selector, its name) goes into the template.
   */
  placementGroupId?: string;
  /** The resolved group's strategy: a spread group's per-zone limit closes that zone for the group only. */
  placementGroupStrategy?: 'cluster' | 'partition' | 'spread';
}

/** What cannot be used right now (the unavailable-offerings cache, read before planning). */
export interface LaunchAvailability {
  offering?: (capacityType: CapacityType, instanceType: string, zone: string) => boolean;
  capacityType?: (capacityType: CapacityType) => boolean;
  reservation?: (reservationId: string) => boolean;
  subnet?: (subnetId: string) => boolean;
  /** A spread placement group that reached its per-zone instance limit in this zone. */
  placementGroupZone?: (placementGroupId: string, zone: string) => boolean;
  /** IPs launches of this process have taken from a subnet since it was listed. */
  inflightIPs?: (subnetId: string) => number;
}

export interface PlannedTemplate {
  input: CreateLaunchTemplateCommandInput;
  amiId: string;
  instanceTypes: string[];
  reservationId?: string;
}

export interface PlannedLaunch {
  capacityType: CapacityType;
  candidates: Candidate[];
  /** Only templates some override uses. */
  templates: PlannedTemplate[];
  overrides: FleetOverride[];
  fleet: CreateFleetCommandInput;
}

export interface PlanLaunchOptions {
  clusterName: string;
  region?: string;
  availability?: LaunchAvailability;
  /** Separates a deliberate re-launch's ClientToken from the first one (see fleetClientToken). */
  tokenSalt?: string;
  /**
   * One CreateFleet for several identical claims (the claim planned stands for all of them): the
   * fleet asks for one instance per member, carries the batch's tag instead of a claim's name, and
   * its ClientToken comes from the members' names (batchClientToken). Each instance gets its
   * claim's karpenter.sh/nodeclaim and Name tags after the launch.
   */
  batch?: LaunchBatch;
}

export interface LaunchBatch {
  /** The batch's id (karpless.sh/launch-batch on its instances). */
  id: string;
  /** The claims still to launch: one instance each. */
  members: readonly string[];
}

/** The tag that names the batch an instance was launched in, until its claim's own tags are applied. */
export const LAUNCH_BATCH_TAG = 'karpless.sh/launch-batch';

function tenancyOf(claim: LaunchClaim): 'default' | 'dedicated' {
  const r = claimRequirements(claim.requirements).get(LABEL_INSTANCE_TENANCY);
  if (!r || allows(r, 'default')) return 'default';
  return allows(r, 'dedicated') ? 'dedicated' : 'default';
}

function partitionOf(claim: LaunchClaim): number | undefined {
  const r = claim.requirements.find((x) => x.key === LABEL_PLACEMENT_GROUP_PARTITION && x.operator === 'In');
  const value = r?.values?.length === 1 ? Number(r.values[0]) : Number.NaN;
  return Number.isInteger(value) ? value : undefined;
}

function subnetPicker(resolved: ResolvedNodeClass, availability: LaunchAvailability) {
  const inflight = availability.inflightIPs ?? (() => 0);
  const byZone = new Map<string, { id: string; free: number }[]>();
  for (const s of resolved.subnets) {
    if (availability.subnet?.(s.id)) continue;
    byZone.set(s.zone, [...(byZone.get(s.zone) ?? []), { id: s.id, free: s.availableIps - inflight(s.id) }]);
  }
  for (const list of byZone.values()) list.sort((a, b) => b.free - a.free || (a.id < b.id ? -1 : 1));
  return (zone: string) => byZone.get(zone)?.[0];
}

function reservationOf(o: Offering): TemplateReservation | undefined {
  if (o.capacityType !== 'reserved' || !o.reservationId) return undefined;
  return {
    id: o.reservationId,
    type: o.reservationType ?? 'default',
    ...(o.reservationInterruptible ? { interruptible: true } : {}),
  };
}

/** Every template the candidates need: one set per reservation for reserved launches, else one set. */
function planTemplates(
  claim: LaunchClaim,
  resolved: ResolvedNodeClass,
  capacityType: CapacityType,
  candidates: readonly Candidate[],
  options: PlanLaunchOptions,
): Map<string, PlannedTemplate> {
  const groups = new Map<string, { reservation?: TemplateReservation; types: InstanceType[] }>();
  for (const c of candidates) {
    for (const o of c.offerings) {
      const reservation = reservationOf(o);
      const key = reservation?.id ?? '';
      const group = groups.get(key) ?? { ...(reservation ? { reservation } : {}), types: [] };
      if (!group.types.includes(c.instanceType)) group.types.push(c.instanceType);
      groups.set(key, group);
    }
  }
  const tenancy = tenancyOf(claim);
  const partition = partitionOf(claim);
  const selector = claim.nodeClass.spec.placementGroupSelector;
  const placementGroupId = resolved.placementGroupId ?? selector?.id;
  const placementGroupName = placementGroupId === undefined ? selector?.name : undefined;
  const templates = new Map<string, PlannedTemplate>();
  for (const [reservationId, group] of groups) {
    const resolvedGroups = resolveLaunchTemplates({
      clusterName: options.clusterName,
      cluster: resolved.cluster,
      nodePool: claim.nodePool,
      nodeClass: claim.nodeClass,
      instanceTypes: group.types,
      amis: resolved.amis,
      capacityType,
      instanceProfile: resolved.instanceProfile,
      securityGroupIds: resolved.securityGroups.map((g) => g.id),
      labels: claim.labels,
      ...(claim.taints ? { taints: claim.taints } : {}),
      ...(claim.efa !== undefined ? { efa: claim.efa } : {}),
      ...(options.region ? { region: options.region } : {}),
      ...(group.reservation ? { reservation: group.reservation } : {}),
      tenancy,
      ...(placementGroupId !== undefined ? { placementGroupId } : {}),
      ...(placementGroupName !== undefined ? { placementGroupName } : {}),
      ...(partition !== undefined ? { placementGroupPartition: partition } : {}),
      ...(claim.enclave ? { enclave: true } : {}),
    });
    for (const g of resolvedGroups) {
      const planned: PlannedTemplate = {
        input: buildCreateLaunchTemplateInput(g.spec),
        amiId: g.spec.amiId,
        instanceTypes: g.instanceTypes.map((t) => t.name),
        ...(reservationId ? { reservationId } : {}),
      };
      for (const t of g.instanceTypes) {
        const key = `${t.name}\u0000${reservationId}`;
        if (!templates.has(key)) templates.set(key, planned);
      }
    }
  }
  return templates;
}

/**
 * The launch of one claim as AWS requests: candidates (compatible, available, filtered, truncated),
 * the capacity type, the launch templates and the CreateFleet input whose overrides cover exactly
 * the candidates' offerings of that capacity type in zones with a usable subnet. `overrides` empty
 * means nothing can launch now. Throws MinValuesError when truncation loses a minValues.
 */
export function planLaunch(claim: LaunchClaim, resolved: ResolvedNodeClass, options: PlanLaunchOptions): PlannedLaunch {
  const availability = options.availability ?? {};
  let requirements = claimRequirements(claim.requirements);
  if (claim.capacityType) requirements = requirements.add(requirementIn(LABEL_CAPACITY_TYPE, claim.capacityType));
  const subnetFor = subnetPicker(resolved, availability);
  const groupId = resolved.placementGroupId ?? claim.nodeClass.spec.placementGroupSelector?.id;
  const { capacityType, candidates } = selectLaunchCandidates({
    nodeClaimName: claim.nodeClaimName,
    instanceTypes: claim.instanceTypes,
    requirements,
    isAvailable: (type, o) =>
      subnetFor(o.zone) !== undefined &&
      !availability.capacityType?.(o.capacityType) &&
      !availability.offering?.(o.capacityType, type, o.zone) &&
      !(groupId !== undefined && availability.placementGroupZone?.(groupId, o.zone)) &&
      !(o.capacityType === 'reserved' && o.reservationId && availability.reservation?.(o.reservationId)),
  });
  const templates = planTemplates(claim, resolved, capacityType, candidates, options);
  const overrides = selectOverrides({
    candidates,
    subnetFor,
    templateFor: (type, o) => {
      const t = templates.get(`${type}\u0000${reservationOf(o)?.id ?? ''}`);
      return t && { name: t.input.LaunchTemplateName ?? '', amiId: t.amiId };
    },
  });
  const used = new Set(overrides.map((o) => o.launchTemplateName));
  const planned = [...new Map([...templates.values()].map((t) => [t.input.LaunchTemplateName ?? '', t])).values()];
  const firstReserved = candidates.flatMap((c) => c.offerings).find((o) => reservationOf(o));
  const reservation: FleetReservation | undefined =
    capacityType === 'reserved' && firstReserved
      ? {
          type: firstReserved.reservationType ?? 'default',
          ...(firstReserved.reservationInterruptible ? { interruptible: true } : {}),
        }
      : undefined;
  const fleet = buildCreateFleetRequest({
    capacityType,
    overrides,
    // The static drift hashes last: the drift check reads them back, so spec.tags cannot replace them.
    tags: {
      ...(options.batch
        ? {
            ...launchTags({
              clusterName: options.clusterName,
              nodePool: claim.nodePool.metadata.name,
              nodeClass: claim.nodeClass,
            }),
            [LAUNCH_BATCH_TAG]: options.batch.id,
          }
        : instanceTags({
            clusterName: options.clusterName,
            nodePool: claim.nodePool.metadata.name,
            nodeClass: claim.nodeClass,
            nodeClaimName: claim.nodeClaimName,
          })),
      ...launchHashTags(claim.nodePool, claim.nodeClass),
    },
    clientToken: options.batch
      ? batchClientToken(options.batch.members, overrides, options.tokenSalt)
      : fleetClientToken(claim.nodeClaimName, overrides, options.tokenSalt),
    ...(options.batch ? { targetCapacity: options.batch.members.length } : {}),
    ...(claim.nodeClass.spec.context ? { context: claim.nodeClass.spec.context } : {}),
    ...(reservation ? { reservation } : {}),
  });
  return {
    capacityType,
    candidates,
    templates: planned.filter((t) => used.has(t.input.LaunchTemplateName ?? '')),
    overrides,
    fleet,
  };
}
