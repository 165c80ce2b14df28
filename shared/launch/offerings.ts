// Which offerings one NodeClaim may launch on (AWS pkg/providers/instance Create + filter/, core
// cloudprovider.InstanceTypes.Truncate): the claim's requirements narrow every instance type to its
// compatible, available offerings; Karpenter's launch-time filters drop reservation mixes, rare types
// and overpriced spot; the cheapest 60 types remain (minValues re-checked); the capacity type is
// reserved > spot > on-demand, the first with an offering left. Pure.
// CONTRACT: LaunchCandidates, selectLaunchCandidates, offeringLabels, MinValuesError.

import { LABEL_CAPACITY_TYPE, LABEL_ZONE, LABEL_ZONE_ID } from '../apis/v1/labels';
import type { NodeSelectorRequirementWithMinValues } from '../apis/v1/types';
import type { CapacityType, InstanceType, Offering } from '../instancetypes/types';
import { allows, Requirements as RequirementSet, type Requirements, requirementFrom } from '../scheduling/requirements';

export const LABEL_CAPACITY_RESERVATION_ID = 'karpenter.k8s.aws/capacity-reservation-id';
export const LABEL_CAPACITY_RESERVATION_TYPE = 'karpenter.k8s.aws/capacity-reservation-type';
export const LABEL_INSTANCE_SIZE = 'karpenter.k8s.aws/instance-size';

/** Upstream's maxInstanceTypes: more overrides than this only slow CreateFleet down. */
export const MAX_INSTANCE_TYPES = 60;

/** Extended resources that make a type "exotic" (filter.ExoticInstanceTypeFilter). */
const EXOTIC_RESOURCES = [
  'aws.amazon.com/neuron',
  'aws.amazon.com/neuroncore',
  'amd.com/gpu',
  'nvidia.com/gpu',
  'habana.ai/gaudi',
] as const;

/** The labels an offering defines: zone, zone ID, capacity type and, when reserved, its reservation. */
export function offeringLabels(o: Offering): Record<string, string> {
  return {
    [LABEL_ZONE]: o.zone,
    ...(o.zoneID ? { [LABEL_ZONE_ID]: o.zoneID } : {}),
    [LABEL_CAPACITY_TYPE]: o.capacityType,
    ...(o.capacityType === 'reserved' && o.reservationId
      ? {
          [LABEL_CAPACITY_RESERVATION_ID]: o.reservationId,
          [LABEL_CAPACITY_RESERVATION_TYPE]: o.reservationType ?? 'default',
        }
      : {}),
  };
}

// Only keys the offering or type defines are checked: a well-known key it leaves undefined is no
// constraint (scheduling.AllowUndefinedWellKnownLabels), and other keys were settled by the scheduler.
function compatibleLabels(reqs: Requirements, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(labels)) {
    const r = reqs.get(key);
    if (r && !allows(r, value)) return false;
  }
  return true;
}

export function claimRequirements(requirements: readonly NodeSelectorRequirementWithMinValues[]): Requirements {
  return RequirementSet.from(requirements.map((r) => requirementFrom(r)));
}

/** Thrown when the 60 cheapest types no longer satisfy a minValues requirement (core Truncate). */
export class MinValuesError extends Error {
  override readonly name = 'MinValuesError';
  constructor(
    readonly nodeClaimName: string,
    readonly keys: Record<string, number>,
  ) {
    super(
      `NodeClaim ${nodeClaimName}: minValues requirement is not met after truncating to the ${MAX_INSTANCE_TYPES} cheapest instance types (${Object.entries(
        keys,
      )
        .map(([k, n]) => `${k}: ${n} values`)
        .join(', ')}); widen the NodePool requirements or lower minValues`,
    );
  }
}

/** One type kept for the launch, with the offerings it may use (compatible, available, filtered). */
export interface Candidate {
  instanceType: InstanceType;
  offerings: Offering[];
}

export interface LaunchCandidates {
  capacityType: CapacityType;
  /** Cheapest first, at most MAX_INSTANCE_TYPES; offerings only of `capacityType`. */
  candidates: Candidate[];
}

export interface SelectArgs {
  nodeClaimName: string;
  instanceTypes: readonly InstanceType[];
  requirements: Requirements;
  /** False for offerings that cannot be used now (ICE cache, no subnet in the zone, reservation used up …). */
  isAvailable: (instanceType: string, offering: Offering) => boolean;
  max?: number;
}

/** Karpenter's getCapacityType: reserved, then spot, then on-demand. */
const CAPACITY_TYPE_ORDER: readonly CapacityType[] = ['reserved', 'spot', 'on-demand'];

function cheapest(offerings: readonly Offering[]): number {
  return offerings.reduce((min, o) => Math.min(min, o.price), Number.POSITIVE_INFINITY);
}

function byName(a: Candidate, b: Candidate): number {
  const x = a.instanceType.name;
  const y = b.instanceType.name;
  return x < y ? -1 : x > y ? 1 : 0;
}

function hasMinValues(reqs: Requirements): boolean {
  for (const r of reqs.byKey.values()) if (r.minValues !== undefined) return true;
  return false;
}

function allowsCapacityType(reqs: Requirements, ct: CapacityType): boolean {
  const r = reqs.get(LABEL_CAPACITY_TYPE);
  return r === undefined || allows(r, ct);
}

/** filter.CapacityReservationTypeFilter + CapacityBlockFilter + ReservedOfferingFilter. */
function reservationFilters(reqs: Requirements, types: Candidate[]): Candidate[] {
  if (!allowsCapacityType(reqs, 'reserved')) return types;
  const partitions = new Map<string, { price: number; types: Candidate[] }>();
  for (const c of types) {
    const byType = new Map<string, Offering[]>();
    for (const o of c.offerings) {
      if (o.capacityType !== 'reserved') continue;
      const t = o.reservationType ?? 'default';
      byType.set(t, [...(byType.get(t) ?? []), o]);
    }
    for (const [t, offerings] of byType) {
      const p = partitions.get(t) ?? { price: Number.POSITIVE_INFINITY, types: [] };
      p.price = Math.min(p.price, cheapest(offerings));
      p.types.push({ instanceType: c.instanceType, offerings });
      partitions.set(t, p);
    }
  }
  if (partitions.size === 0) return types;
  // CreateFleet takes one market type per request: the cheapest partition wins, default before capacity-block.
  const [selectedType, selected] = [...partitions.entries()].sort(
    ([ta, a], [tb, b]) => a.price - b.price || (ta === 'default' ? -1 : tb === 'default' ? 1 : 0),
  )[0] as [string, { types: Candidate[] }];
  if (selectedType === 'capacity-block') {
    // CreateFleet accepts a single capacity block per request.
    let best: Candidate | undefined;
    for (const c of selected.types) {
      const o = [...c.offerings].sort((a, b) => a.price - b.price)[0];
      if (o && (!best || (best.offerings[0]?.price ?? Number.POSITIVE_INFINITY) > o.price)) {
        best = { instanceType: c.instanceType, offerings: [o] };
      }
    }
    return best ? [best] : types;
  }
  // One reservation per pool (type, zone): the one with the most capacity left.
  return selected.types.map((c) => {
    const perZone = new Map<string, Offering>();
    for (const o of c.offerings) {
      const current = perZone.get(o.zone);
      if (!current || (o.reservationCapacity ?? 0) > (current.reservationCapacity ?? 0)) perZone.set(o.zone, o);
    }
    return { instanceType: c.instanceType, offerings: [...perZone.values()] };
  });
}

export function isExotic(it: InstanceType): boolean {
  const size = it.labels[LABEL_INSTANCE_SIZE] ?? it.name.slice(it.name.indexOf('.') + 1);
  if (size.includes('metal')) return true;
  return EXOTIC_RESOURCES.some((r) => (it.capacity[r] ?? 0) > 0);
}

/** filter.SpotInstanceFilter: with spot and on-demand allowed, no spot type dearer than the cheapest on-demand. */
function spotFilter(reqs: Requirements, types: Candidate[]): Candidate[] {
  if (!allowsCapacityType(reqs, 'spot') || !allowsCapacityType(reqs, 'on-demand')) return types;
  const all = types.flatMap((c) => c.offerings);
  const onDemand = all.filter((o) => o.capacityType === 'on-demand');
  if (onDemand.length === 0 || !all.some((o) => o.capacityType === 'spot')) return types;
  const cap = cheapest(onDemand);
  return types.filter((c) => {
    if (c.offerings.some((o) => o.capacityType === 'reserved')) return true;
    const spot = c.offerings.filter((o) => o.capacityType === 'spot');
    return spot.length === 0 || spot.some((o) => o.price <= cap);
  });
}

/** Distinct values per minValues key that `types` fall short on; empty when all are met. */
export function unmetMinValues(reqs: Requirements, types: readonly InstanceType[]): Record<string, number> {
  const unmet: Record<string, number> = {};
  for (const r of reqs.byKey.values()) {
    if (r.minValues === undefined) continue;
    const values = new Set(types.flatMap((t) => (t.labels[r.key] !== undefined ? [t.labels[r.key] as string] : [])));
    if (values.size < r.minValues) unmet[r.key] = values.size;
  }
  return unmet;
}

/**
 * The offerings a claim may launch on, in Karpenter's order: compatible and available; reservation
 * filters; exotic and spot filters (skipped under minValues); truncate to the cheapest `max` types
 * (minValues re-checked, MinValuesError when lost); then the capacity type, reserved > spot >
 * on-demand, and only its offerings. Empty `candidates` means nothing can launch.
 */
export function selectLaunchCandidates(args: SelectArgs): LaunchCandidates {
  const reqs = args.requirements;
  let types: Candidate[] = [];
  for (const it of args.instanceTypes) {
    if (!compatibleLabels(reqs, it.labels)) continue;
    const offerings = it.offerings.filter(
      (o) => o.available && compatibleLabels(reqs, offeringLabels(o)) && args.isAvailable(it.name, o),
    );
    if (offerings.length > 0) types.push({ instanceType: it, offerings });
  }
  types = reservationFilters(reqs, types);
  if (!hasMinValues(reqs)) {
    const generic = types.filter((c) => !isExotic(c.instanceType));
    if (generic.length > 0) types = generic;
    types = spotFilter(reqs, types);
  }
  const ordered = types
    .map((c, index) => ({ c, index, price: cheapest(c.offerings) }))
    .sort((a, b) => a.price - b.price || byName(a.c, b.c) || a.index - b.index)
    .map((x) => x.c)
    .slice(0, args.max ?? MAX_INSTANCE_TYPES);
  const unmet = unmetMinValues(
    reqs,
    ordered.map((c) => c.instanceType),
  );
  if (Object.keys(unmet).length > 0 && ordered.length > 0) throw new MinValuesError(args.nodeClaimName, unmet);

  // Offerings left are all compatible, so any capacity type among them is one the claim allows;
  // with none left, on-demand (upstream's default) and no candidates.
  const capacityType =
    CAPACITY_TYPE_ORDER.find((ct) => ordered.some((c) => c.offerings.some((o) => o.capacityType === ct))) ??
    'on-demand';
  const candidates = ordered
    .map((c) => ({
      instanceType: c.instanceType,
      offerings: c.offerings.filter((o) => o.capacityType === capacityType),
    }))
    .filter((c) => c.offerings.length > 0);
  return { capacityType, candidates };
}
