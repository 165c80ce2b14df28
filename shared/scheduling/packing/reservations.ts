// Capacity reservations across one plan (Karpenter's ReservationManager and the reserved-offering half
// of its NodeClaim.CanAdd): every reservation can start only so many instances (Offering.reservationCapacity),
// and a claim does not know until launch which of its instance types it becomes, so a new claim holds
// one instance of every reserved offering it could launch into, pessimistically, and gives back the ones
// its narrowing type set leaves behind. In `strict` mode (Karpenter's provisioner, which passes
// DisableReservedCapacityFallback) a pod that could use a reserved offering whose instances the plan's
// other claims hold is deferred to the next decision: no spot or on-demand instead, no lower-weight
// NodePool, no relaxed preference. In `fallback` mode (its disruption simulations) it takes what is left.

import type { Offering } from '../../instancetypes/types';
import type { SchedulingInput } from '../index';
import { allows, LABEL_CAPACITY_TYPE, LABEL_ZONE, LABEL_ZONE_ID } from '../requirements';
import type { TypeCatalog } from './catalog';
import type { ClaimState, PoolState, TypeInfo } from './state';
import { fitsUsed, roomIn } from './vectors';

export const LABEL_RESERVATION_ID = 'karpenter.k8s.aws/capacity-reservation-id';

/** Karpenter's ReservedOfferingError texts (nodeclaim.go), which its tests and logs name. */
export const RESERVED_UNAVAILABLE =
  'one or more instance types with compatible reserved offerings are available, but could not be reserved';

/** How the plan treats a pod whose compatible reserved offerings are all held by its other claims. */
export type ReservedOfferingMode = 'strict' | 'fallback';

/** A reserved offering of one instance type. */
export interface ReservedOption {
  t: TypeInfo;
  offering: Offering & { reservationId: string };
}

export type Reservation = { held: ReservedOption[] } | { error: string };

export class ReservationLedger {
  /** Whether any offering counts its instances: without one the plan skips every step below. */
  readonly active: boolean;
  readonly strict: boolean;
  /** Instances each reservation can still start, less what this plan's claims hold. */
  private readonly remaining = new Map<string, number>();
  private readonly memo = new Map<string, ReservedOption[]>();

  constructor(
    input: SchedulingInput,
    private readonly catalog: TypeCatalog,
  ) {
    this.strict = (input.reservedOfferingMode ?? 'strict') === 'strict';
    for (const types of Object.values(input.instanceTypes))
      for (const it of types)
        for (const o of it.offerings) {
          if (o.capacityType !== 'reserved' || !o.reservationId || o.reservationCapacity === undefined) continue;
          // NodePools sharing a reservation may have listed it at different moments: the lower count holds.
          const current = this.remaining.get(o.reservationId);
          if (current === undefined || o.reservationCapacity < current)
            this.remaining.set(o.reservationId, o.reservationCapacity);
        }
    this.active = this.remaining.size > 0;
  }

  /** The available, counted reserved offerings of the pool's types compatible with the requirements. */
  options(pool: PoolState, reqsId: number): ReservedOption[] {
    const key = `${pool.index}:${reqsId}`;
    let list = this.memo.get(key);
    if (list) return list;
    const reqs = this.catalog.reqsById[reqsId]!;
    const zone = reqs.get(LABEL_ZONE);
    const zoneId = reqs.get(LABEL_ZONE_ID);
    const ct = reqs.get(LABEL_CAPACITY_TYPE);
    const id = reqs.get(LABEL_RESERVATION_ID);
    list = [];
    // `compatible` already holds the types whose labels the requirements allow and that have an offering left.
    for (const p of this.catalog.compatible(pool, reqsId))
      for (const o of p.t.it.offerings) {
        if (o.capacityType !== 'reserved' || !o.available || !o.reservationId) continue;
        if (!this.remaining.has(o.reservationId)) continue;
        if ((zone && !allows(zone, o.zone)) || (zoneId && !allows(zoneId, o.zoneID))) continue;
        if ((ct && !allows(ct, 'reserved')) || (id && !allows(id, o.reservationId))) continue;
        list.push({ t: p.t, offering: o as ReservedOption['offering'] });
      }
    this.memo.set(key, list);
    return list;
  }

  /**
   * What a new claim holds among the options of the types it may launch as (`fits`): one instance of
   * every reservation with one left. None compatible: nothing held. All held elsewhere: in strict mode
   * the claim is not opened (the error says why), in fallback mode it opens holding nothing.
   */
  open(pool: PoolState, reqsId: number, fits: (t: TypeInfo) => boolean): Reservation {
    const compatible = this.options(pool, reqsId).filter((o) => fits(o.t));
    if (compatible.length === 0) return { held: [] };
    const held = compatible.filter((o) => this.remaining.get(o.offering.reservationId)! > 0);
    if (held.length === 0) {
      if (!this.strict) return { held: [] };
      const ids = [...new Set(compatible.map((o) => o.offering.reservationId))].sort();
      return {
        error: `${RESERVED_UNAVAILABLE} (${ids.join(', ')}: every instance left is held by another claim of this plan); deferred to the next decision`,
      };
    }
    for (const id of new Set(held.map((o) => o.offering.reservationId))) this.take(id, -1);
    return { held };
  }

  /**
   * Strict mode: how many of `n` more pods of these requests the claim may take under the narrowed
   * requirements and still launch into a reservation it holds (Karpenter refuses the pod that would
   * "remove all compatible reserved offering options").
   */
  room(node: ClaimState, reqsId: number, req: Float64Array, n: number): number {
    if (!this.strict || !node.reserved || node.reserved.length === 0) return n;
    const allowed =
      reqsId === node.reqsId ? undefined : new Set(this.options(node.pool, reqsId).map((o) => o.offering));
    let best = 0;
    for (const o of node.reserved) {
      if (allowed && !allowed.has(o.offering)) continue;
      best = Math.max(best, roomIn(o.t.alloc, node.used, req));
      if (best >= n) return n;
    }
    return best;
  }

  /** After pods joined the claim: the reservations none of its remaining types can use go back. */
  settle(node: ClaimState): void {
    if (!node.reserved || node.reserved.length === 0) return;
    const allowed = new Set(this.options(node.pool, node.reqsId).map((o) => o.offering));
    const kept = node.reserved.filter((o) => allowed.has(o.offering) && fitsUsed(o.t.alloc, node.used));
    if (kept.length === node.reserved.length) return;
    this.giveBack(node.reserved, kept);
    // Holding none, the claim is an ordinary one again (the post passes may move its pods).
    node.reserved = kept.length > 0 ? kept : undefined;
  }

  /** A claim discarded unused gives back all it held. */
  release(node: ClaimState): void {
    if (!node.reserved) return;
    this.giveBack(node.reserved, []);
    node.reserved = undefined;
  }

  private giveBack(before: ReservedOption[], after: ReservedOption[]): void {
    const keep = new Set(after.map((o) => o.offering.reservationId));
    for (const id of new Set(before.map((o) => o.offering.reservationId))) if (!keep.has(id)) this.take(id, 1);
  }

  private take(id: string, delta: number): void {
    this.remaining.set(id, this.remaining.get(id)! + delta);
  }
}
