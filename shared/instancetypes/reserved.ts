// Reserved offerings (AWS offering/reserved_capacity_resolver.go): every capacity reservation a node
// class selected becomes one offering of its instance type in its zone, capacity type `reserved`,
// so the scheduler plans onto what the account already pays for, before spot and on-demand. Pure.

import type { InstanceType, Offering } from './types';

/**
 * Karpenter divides the on-demand price by this: a reservation is as good as free, yet a larger
 * reserved type still costs more than a smaller one, so consolidation keeps its order.
 */
export const RESERVED_PRICE_DIVISOR = 10_000_000;

/** What an offering needs to know of a reservation (shared/providers/capacityreservation lists them). */
export interface ReservedCapacity {
  id: string;
  instanceType: string;
  availabilityZone: string;
  availabilityZoneId?: string;
  reservationType: 'default' | 'capacity-block';
  interruptible: boolean;
  state: 'active' | 'expiring';
  /** Instances it can still start. */
  availableInstanceCount: number;
}

function onDemandPrice(it: InstanceType): number | undefined {
  let price: number | undefined;
  for (const o of it.offerings) {
    if (o.capacityType === 'on-demand' && Number.isFinite(o.price)) price = Math.min(price ?? o.price, o.price);
  }
  return price;
}

/** The reserved offering of one reservation for its type. */
export function reservedOffering(it: InstanceType, r: ReservedCapacity): Offering {
  const zones = new Set(it.offerings.map((o) => o.zone));
  const zoneID = r.availabilityZoneId ?? it.offerings.find((o) => o.zone === r.availabilityZone)?.zoneID;
  // Without a known on-demand price the reservation stays usable, at 0 (Karpenter does the same).
  const od = onDemandPrice(it);
  return {
    zone: r.availabilityZone,
    ...(zoneID ? { zoneID } : {}),
    capacityType: 'reserved',
    price: od === undefined ? 0 : od / RESERVED_PRICE_DIVISOR,
    // A zone the node class cannot launch into, a full reservation or a capacity block about to end: listed, not usable.
    available: r.availableInstanceCount > 0 && zones.has(r.availabilityZone) && r.state !== 'expiring',
    reservationId: r.id,
    reservationType: r.reservationType,
    ...(r.interruptible ? { reservationInterruptible: true } : {}),
    reservationCapacity: r.availableInstanceCount,
  };
}

/**
 * The types with the reservations' offerings added (new objects; types without a reservation are
 * returned as they are). A reservation for a type not in the list is ignored: the node class or
 * its AMI family cannot run it.
 */
export function withReservedOfferings(
  types: readonly InstanceType[],
  reservations: readonly ReservedCapacity[],
): InstanceType[] {
  if (reservations.length === 0) return [...types];
  const byType = new Map<string, ReservedCapacity[]>();
  for (const r of reservations) byType.set(r.instanceType, [...(byType.get(r.instanceType) ?? []), r]);
  return types.map((it) => {
    const list = byType.get(it.name);
    if (!list) return it;
    // Applying a fresher listing replaces the offerings of the same reservations.
    const ids = new Set(list.map((r) => r.id));
    const base = it.offerings.filter((o) => o.reservationId === undefined || !ids.has(o.reservationId));
    return { ...it, offerings: [...base, ...list.map((r) => reservedOffering(it, r))] };
  });
}
