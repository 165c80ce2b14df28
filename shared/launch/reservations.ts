// Which planned claims a capacity reservation can really serve (after the fact, what Karpenter
// core's ReservationManager decides while scheduling): the packer prices every claim as if each
// reservation held as many instances as wanted. Walking the claims in plan order, each takes one
// instance of its reservation until the reservation's count is used up; the rest move to their
// cheapest other offering the claim allows (spot before on-demand at equal price), which is what
// their launch will get. A claim that allows nothing else keeps its reservation and is reported.
// Pure.

import type { Offering } from '../instancetypes/types';
import type { PlannedNodeClaim, SchedulingResult } from '../scheduling';
import { allows } from '../scheduling/requirements';
import { claimRequirements, offeringLabels } from './offerings';

const CAPACITY_TYPE_RANK: Record<string, number> = { reserved: 0, spot: 1, 'on-demand': 2 };

export interface SettledReservations {
  result: SchedulingResult;
  /** Reservation id → claims planned onto it past its count, that could go nowhere else. */
  overbooked: Record<string, number>;
}

function better(a: Offering, b: Offering): boolean {
  return (
    a.price < b.price ||
    (a.price === b.price && (CAPACITY_TYPE_RANK[a.capacityType] ?? 3) < (CAPACITY_TYPE_RANK[b.capacityType] ?? 3))
  );
}

/** The claim's cheapest offering it may use with `left` instances of each reservation remaining. */
function cheapestOffering(
  claim: PlannedNodeClaim,
  left: ReadonlyMap<string, number>,
): (Offering & { instanceType: string }) | undefined {
  const reqs = claimRequirements(claim.requirements);
  let best: (Offering & { instanceType: string }) | undefined;
  for (const it of claim.instanceTypes) {
    for (const o of it.offerings) {
      if (!o.available) continue;
      if (o.reservationId !== undefined && (left.get(o.reservationId) ?? 0) <= 0) continue;
      const fits = Object.entries(offeringLabels(o)).every(([key, value]) => {
        const r = reqs.get(key);
        return r === undefined || allows(r, value);
      });
      if (fits && (!best || better(o, best))) best = { ...o, instanceType: it.name };
    }
  }
  return best;
}

export function settleReservations(result: SchedulingResult): SettledReservations {
  const left = new Map<string, number>();
  for (const claim of result.nodeClaims) {
    for (const it of claim.instanceTypes) {
      for (const o of it.offerings) {
        if (o.reservationId !== undefined && !left.has(o.reservationId))
          left.set(o.reservationId, o.reservationCapacity ?? 0);
      }
    }
  }
  if (left.size === 0) return { result, overbooked: {} };
  const overbooked: Record<string, number> = {};
  const nodeClaims = result.nodeClaims.map((claim) => {
    const id = claim.offering.capacityType === 'reserved' ? claim.offering.reservationId : undefined;
    if (id === undefined) return claim;
    if ((left.get(id) ?? 0) > 0) {
      left.set(id, (left.get(id) ?? 0) - 1);
      return claim;
    }
    const next = cheapestOffering(claim, left);
    if (!next) {
      overbooked[id] = (overbooked[id] ?? 0) + 1;
      return claim;
    }
    if (next.reservationId !== undefined) left.set(next.reservationId, (left.get(next.reservationId) ?? 0) - 1);
    return { ...claim, offering: next };
  });
  const totalPrice = nodeClaims.reduce((sum, c) => sum + c.offering.price, 0);
  return { result: { ...result, nodeClaims, totalPrice }, overbooked };
}
