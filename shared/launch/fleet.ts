// The CreateFleet request Karpenter sends for one NodeClaim, and the choice of its overrides. Pure.
// CONTRACT: FleetOverride, buildCreateFleetRequest, fleetClientToken, selectOverrides,
// UNFULFILLABLE_CAPACITY_CODES, offeringKey, SERVICE_LINKED_ROLE_CODE.

import { createHash } from 'node:crypto';
import type { _InstanceType, CreateFleetCommandInput, FleetLaunchTemplateConfigRequest } from '@aws-sdk/client-ec2';
import type { CapacityType, Offering } from '../instancetypes/types';
import { canonicalJson, toEC2Tags } from './canonical';
import type { Candidate } from './offerings';

export interface FleetOverride {
  instanceType: string;
  zone: string;
  subnetId: string;
  imageId?: string;
  price?: number;
  launchTemplateName: string;
  /** Reserved launches: the reservation the override's template targets. */
  reservationId?: string;
}

export { MAX_INSTANCE_TYPES } from './offerings';

/** Error codes that mean "this offering has no capacity now" (pkg/errors). */
export const UNFULFILLABLE_CAPACITY_CODES: ReadonlySet<string> = new Set([
  'InsufficientInstanceCapacity',
  'MaxSpotInstanceCountExceeded',
  'VcpuLimitExceeded',
  'UnfulfillableCapacity',
  'Unsupported',
  'InsufficientFreeAddressesInSubnet',
  'MaxFleetCountExceeded',
  'ReservationCapacityExceeded',
]);

/** Spot needs its service-linked role; without it every spot offering is out for the cache TTL. */
export const SERVICE_LINKED_ROLE_CODE = 'AuthFailure.ServiceLinkedRoleCreationNotPermitted';

/** The unavailable-offerings cache key: "spot:m5.large:us-east-1a". */
export function offeringKey(capacityType: CapacityType, instanceType: string, zone: string): string {
  return `${capacityType}:${instanceType}:${zone}`;
}

/**
 * A ClientToken derived from the claim and the overrides it asks for: a redelivered launch of the
 * same claim with the same request gets the fleet (and instance) the first call made instead of a
 * second one, while a launch whose overrides changed (an offering ran out, a subnet filled up) is a
 * new request under a new token, never EC2's IdempotentParameterMismatch. `salt` separates
 * deliberate re-launches (e.g. after the instance a token returned was found terminated). At most
 * 64 characters, as EC2 requires.
 */
export function fleetClientToken(
  nodeClaimName: string,
  overrides: readonly FleetOverride[] = [],
  salt?: string,
): string {
  const hash = createHash('sha256').update(nodeClaimName).update('\u0000');
  for (const o of [...overrides].map(canonicalJson).sort()) hash.update(o).update('\u0000');
  if (salt !== undefined) hash.update(`salt:${salt}`);
  return `karpless-${hash.digest('hex').slice(0, 48)}`;
}

/**
 * The ClientToken of a batched launch: one CreateFleet for several identical claims. It is derived
 * from the sorted names of the claims still to launch, the overrides and the salt, so the same
 * claims asking for the same offerings send the same token (EC2 answers a repeated instant fleet
 * with the instances it already launched), and any change (a member launched, an offering ran out)
 * is a new request under a new token. Member order never matters: the names are sorted first.
 */
export function batchClientToken(
  nodeClaimNames: readonly string[],
  overrides: readonly FleetOverride[] = [],
  salt?: string,
): string {
  return fleetClientToken(`batch\u0000${[...nodeClaimNames].sort().join('\u0000')}`, overrides, salt);
}

/** DefaultTargetCapacityType for a launch: reserved capacity launches as its reservation's market. */
function targetCapacityType(
  capacityType: CapacityType,
  reservation: FleetReservation | undefined,
): 'spot' | 'on-demand' | 'capacity-block' | 'reserved-capacity' {
  if (capacityType === 'spot') return 'spot';
  if (capacityType !== 'reserved') return 'on-demand';
  if (reservation?.type === 'capacity-block') return 'capacity-block';
  return reservation?.interruptible ? 'reserved-capacity' : 'on-demand';
}

/** What a reserved launch's fleet needs to know about its reservations (one market type per fleet). */
export interface FleetReservation {
  type: 'default' | 'capacity-block';
  interruptible?: boolean;
}

export function buildCreateFleetRequest(args: {
  capacityType: CapacityType;
  overrides: FleetOverride[];
  tags: Record<string, string>;
  clientToken: string;
  context?: string;
  /** Reserved launches only. */
  reservation?: FleetReservation;
  /** Instances asked for at once: a batch of identical claims (default 1). */
  targetCapacity?: number;
}): CreateFleetCommandInput {
  const target = targetCapacityType(args.capacityType, args.reservation);
  const configs = new Map<string, FleetLaunchTemplateConfigRequest>();
  for (const o of args.overrides) {
    let config = configs.get(o.launchTemplateName);
    if (!config) {
      config = {
        LaunchTemplateSpecification: { LaunchTemplateName: o.launchTemplateName, Version: '$Latest' },
        Overrides: [],
      };
      configs.set(o.launchTemplateName, config);
    }
    config.Overrides?.push({
      InstanceType: o.instanceType as _InstanceType,
      SubnetId: o.subnetId,
      // Redundant with the subnet; kept so per-override errors name the zone.
      AvailabilityZone: o.zone,
      ...(o.imageId !== undefined ? { ImageId: o.imageId } : {}),
      ...(o.price !== undefined ? { Priority: o.price } : {}),
    });
  }
  const tags = toEC2Tags(args.tags);
  return {
    Type: 'instant',
    ClientToken: args.clientToken,
    ...(args.context !== undefined ? { Context: args.context } : {}),
    TargetCapacitySpecification: { TotalTargetCapacity: args.targetCapacity ?? 1, DefaultTargetCapacityType: target },
    // Capacity blocks take no allocation strategy; interruptible reservations name their type.
    ...(target === 'spot'
      ? { SpotOptions: { AllocationStrategy: 'price-capacity-optimized' } }
      : target === 'on-demand'
        ? { OnDemandOptions: { AllocationStrategy: 'lowest-price' } }
        : target === 'reserved-capacity'
          ? { ReservedCapacityOptions: { ReservationTypes: ['interruptible-capacity-reservation'] } }
          : {}),
    LaunchTemplateConfigs: [...configs.values()],
    TagSpecifications: (['instance', 'volume', 'fleet'] as const).map((ResourceType) => ({ ResourceType, Tags: tags })),
  };
}

/**
 * Overrides for one launch: every candidate type (cheapest first, as selectLaunchCandidates left
 * them) × each of its offerings, in the subnet `subnetFor` picks for the offering's zone; offerings
 * in a zone without a usable subnet are left out. Only offerings compatible with the claim reach
 * here, so a zone-pinned claim gets overrides in its zones only.
 */
export function selectOverrides(args: {
  candidates: readonly Candidate[];
  subnetFor: (zone: string) => { id: string } | undefined;
  /** The launch template of a type (and, for reserved offerings, of its reservation). */
  templateFor: (instanceType: string, offering: Offering) => { name: string; amiId?: string } | undefined;
}): FleetOverride[] {
  const overrides: FleetOverride[] = [];
  for (const { instanceType, offerings } of args.candidates) {
    const sorted = [...offerings].sort((a, b) => (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0));
    for (const o of sorted) {
      const subnet = args.subnetFor(o.zone);
      const template = args.templateFor(instanceType.name, o);
      if (!subnet || !template) continue;
      overrides.push({
        instanceType: instanceType.name,
        zone: o.zone,
        subnetId: subnet.id,
        ...(template.amiId !== undefined ? { imageId: template.amiId } : {}),
        price: o.price,
        launchTemplateName: template.name,
        ...(o.capacityType === 'reserved' && o.reservationId ? { reservationId: o.reservationId } : {}),
      });
    }
  }
  return overrides;
}
