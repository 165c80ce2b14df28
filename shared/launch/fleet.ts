// The CreateFleet request Karpenter sends for one NodeClaim, and the choice of its overrides. Pure.
// CONTRACT: FleetOverride, buildCreateFleetRequest, fleetClientToken, selectOverrides,
// UNFULFILLABLE_CAPACITY_CODES, offeringKey.

import { createHash } from 'node:crypto';
import type { _InstanceType, CreateFleetCommandInput, FleetLaunchTemplateConfigRequest } from '@aws-sdk/client-ec2';
import type { CapacityType, InstanceType } from '../instancetypes/types';
import { toEC2Tags } from './launchtemplate';

export interface FleetOverride {
  instanceType: string;
  zone: string;
  subnetId: string;
  imageId?: string;
  price?: number;
  launchTemplateName: string;
}

/** Upstream's maxInstanceTypes: more overrides than this only slow CreateFleet down. */
export const MAX_INSTANCE_TYPES = 60;

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

/** The unavailable-offerings cache key: "spot:m5.large:us-east-1a". */
export function offeringKey(capacityType: CapacityType, instanceType: string, zone: string): string {
  return `${capacityType}:${instanceType}:${zone}`;
}

/**
 * A ClientToken derived from the claim: a redelivered launch of the same claim gets the fleet (and
 * instance) the first call made instead of a second one. Pass a new `attempt` when the request
 * itself changes (e.g. a retry without the offerings that ran out), since EC2 refuses a reused token
 * with different parameters. At most 64 characters, as EC2 requires.
 */
export function fleetClientToken(nodeClaimName: string, attempt?: string): string {
  const source = attempt === undefined ? nodeClaimName : `${nodeClaimName}\u0000${attempt}`;
  return `karpless-${createHash('sha256').update(source).digest('hex').slice(0, 48)}`;
}

export function buildCreateFleetRequest(args: {
  capacityType: CapacityType;
  overrides: FleetOverride[];
  tags: Record<string, string>;
  clientToken: string;
  context?: string;
}): CreateFleetCommandInput {
  const spot = args.capacityType === 'spot';
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
    TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: spot ? 'spot' : 'on-demand' },
    ...(spot
      ? { SpotOptions: { AllocationStrategy: 'price-capacity-optimized' } }
      : { OnDemandOptions: { AllocationStrategy: 'lowest-price' } }),
    LaunchTemplateConfigs: [...configs.values()],
    TagSpecifications: (['instance', 'volume', 'fleet'] as const).map((ResourceType) => ({ ResourceType, Tags: tags })),
  };
}

/**
 * Overrides for one launch: the claim's instance types with a usable offering of the capacity type,
 * cheapest first and at most `max`, each × every zone it is offered in, using that zone's subnet with
 * the most free IPs. Offerings the unavailable-offerings cache holds are left out.
 */
export function selectOverrides(args: {
  instanceTypes: InstanceType[];
  capacityType: CapacityType;
  subnetsByZone: Record<string, { id: string; availableIps: number }[]>;
  templateFor: (type: string) => string;
  isUnavailable?: (capacityType: CapacityType, instanceType: string, zone: string) => boolean;
  max?: number;
}): FleetOverride[] {
  const subnetFor = (zone: string) =>
    [...(args.subnetsByZone[zone] ?? [])].sort((a, b) => b.availableIps - a.availableIps || (a.id < b.id ? -1 : 1))[0];
  const usable = args.instanceTypes
    .map((it, index) => {
      const offerings = it.offerings
        .filter(
          (o) =>
            o.capacityType === args.capacityType &&
            o.available &&
            subnetFor(o.zone) !== undefined &&
            !args.isUnavailable?.(args.capacityType, it.name, o.zone),
        )
        .sort((a, b) => (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0));
      const cheapest = Math.min(...offerings.map((o) => o.price));
      return { it, index, offerings, cheapest };
    })
    .filter((u) => u.offerings.length > 0)
    .sort((a, b) => a.cheapest - b.cheapest || a.index - b.index)
    .slice(0, args.max ?? MAX_INSTANCE_TYPES);
  return usable.flatMap(({ it, offerings }) =>
    offerings.map((o) => ({
      instanceType: it.name,
      zone: o.zone,
      subnetId: subnetFor(o.zone)?.id ?? '',
      price: o.price,
      launchTemplateName: args.templateFor(it.name),
    })),
  );
}
