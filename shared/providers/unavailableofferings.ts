// The unavailable-offerings (ICE) cache behind a port: an offering that just failed for lack of
// capacity is skipped for 3 minutes (UnavailableOfferingsTTL). The runtime backs it with the state
// table (StateUnavailableOfferings) so it outlives one Lambda invocation; InMemoryUnavailableOfferings
// serves the CLI and tests.

import type { CapacityType } from '../instancetypes/types';
import { offeringKey } from '../launch/fleet';
import type { Clock } from './clock';
import type { StateLedgers, StateStore } from './state';

export const UNAVAILABLE_OFFERINGS_TTL_MS = 3 * 60 * 1000;

/**
 * What runs out beyond one offering: a whole capacity type (spot without its service-linked role),
 * a subnet without free addresses, a reservation that is used up, a zone where a spread placement
 * group holds as many instances as EC2 allows (that group only). Reserved launches mark the
 * reservation, never the offering, since other reservations may serve the same type and zone.
 */
export type UnavailableScope =
  | { kind: 'capacity-type'; capacityType: CapacityType }
  | { kind: 'subnet'; subnetId: string }
  | { kind: 'reservation'; reservationId: string }
  | { kind: 'placement-group-zone'; placementGroupId: string; zone: string };

/** The cache key of a scope ("capacity-type:spot", "subnet:subnet-1", "reservation:cr-1"). */
export function scopeKey(scope: UnavailableScope): string {
  switch (scope.kind) {
    case 'capacity-type':
      return `capacity-type:${scope.capacityType}`;
    case 'subnet':
      return `subnet:${scope.subnetId}`;
    case 'reservation':
      return `reservation:${scope.reservationId}`;
    case 'placement-group-zone':
      return `placement-group:${scope.placementGroupId}:${scope.zone}`;
  }
}

export interface UnavailableOfferings {
  isUnavailable(capacityType: CapacityType, instanceType: string, zone: string): boolean | Promise<boolean>;
  markUnavailable(capacityType: CapacityType, instanceType: string, zone: string, reason: string): void | Promise<void>;
  isScopeUnavailable(scope: UnavailableScope): boolean | Promise<boolean>;
  markScopeUnavailable(scope: UnavailableScope, reason: string): void | Promise<void>;
}

export class InMemoryUnavailableOfferings implements UnavailableOfferings {
  private readonly entries = new Map<string, { until: number; reason: string }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = UNAVAILABLE_OFFERINGS_TTL_MS,
  ) {}

  isUnavailable(capacityType: CapacityType, instanceType: string, zone: string): boolean {
    return this.has(offeringKey(capacityType, instanceType, zone));
  }

  markUnavailable(capacityType: CapacityType, instanceType: string, zone: string, reason: string): void {
    this.entries.set(offeringKey(capacityType, instanceType, zone), { until: this.clock() + this.ttlMs, reason });
  }

  isScopeUnavailable(scope: UnavailableScope): boolean {
    return this.has(scopeKey(scope));
  }

  markScopeUnavailable(scope: UnavailableScope, reason: string): void {
    this.entries.set(scopeKey(scope), { until: this.clock() + this.ttlMs, reason });
  }

  private has(key: string): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    if (entry.until <= this.clock()) {
      this.entries.delete(key);
      return false;
    }
    return true;
  }

  /** Offering key → reason, for diagnostics (`karpless status -o wide`, logs). */
  snapshot(): Record<string, string> {
    const now = this.clock();
    const out: Record<string, string> = {};
    for (const [key, entry] of this.entries) if (entry.until > now) out[key] = entry.reason;
    return out;
  }
}

/** How old the view of the shared cache may get before a lookup reads it again. */
export const UNAVAILABLE_OFFERINGS_REFRESH_MS = 5_000;

export interface StateUnavailableOfferingsOptions {
  ttlMs?: number;
  refreshMs?: number;
}

/**
 * The ICE cache kept in the state table, so an offering one invocation found out of capacity is
 * skipped by the next ones too. A launch asks about every type × zone of a claim: lookups answer
 * from one read of all live entries (refreshed when older than `refreshMs`), not one read each.
 */
export class StateUnavailableOfferings implements UnavailableOfferings {
  private entries = new Map<string, { until: number; reason: string }>();
  private loadedAt: number | undefined;
  private readonly ttlMs: number;
  private readonly refreshMs: number;

  constructor(
    private readonly store: Pick<StateStore, 'markOfferingUnavailable'> &
      Pick<StateLedgers, 'unavailableOfferings' | 'markScopeUnavailable'>,
    private readonly clock: Clock,
    options: StateUnavailableOfferingsOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? UNAVAILABLE_OFFERINGS_TTL_MS;
    this.refreshMs = options.refreshMs ?? UNAVAILABLE_OFFERINGS_REFRESH_MS;
  }

  /** Reads every live entry of the shared cache; call before a decision that uses has(). */
  async refresh(): Promise<void> {
    const records = await this.store.unavailableOfferings();
    const entries = new Map<string, { until: number; reason: string }>();
    for (const r of records) {
      const key = r.scope ?? offeringKey(r.capacityType, r.instanceType, r.zone);
      entries.set(key, { until: r.expiresAt, reason: r.reason });
    }
    this.entries = entries;
    this.loadedAt = this.clock();
  }

  async isUnavailable(capacityType: CapacityType, instanceType: string, zone: string): Promise<boolean> {
    await this.refreshIfStale();
    return this.has(capacityType, instanceType, zone);
  }

  async isScopeUnavailable(scope: UnavailableScope): Promise<boolean> {
    await this.refreshIfStale();
    const entry = this.entries.get(scopeKey(scope));
    return entry !== undefined && entry.until > this.clock();
  }

  async markScopeUnavailable(scope: UnavailableScope, reason: string): Promise<void> {
    const key = scopeKey(scope);
    this.entries.set(key, { until: this.clock() + this.ttlMs, reason });
    await this.store.markScopeUnavailable(key, reason, this.ttlMs);
  }

  private async refreshIfStale(): Promise<void> {
    if (this.loadedAt === undefined || this.clock() - this.loadedAt >= this.refreshMs) await this.refresh();
  }

  /**
   * From the last refresh() and this instance's own marks, without reading: the synchronous form
   * that resolveInstanceTypes' `unavailable` option takes.
   */
  has(capacityType: CapacityType, instanceType: string, zone: string): boolean {
    const entry = this.entries.get(offeringKey(capacityType, instanceType, zone));
    return entry !== undefined && entry.until > this.clock();
  }

  async markUnavailable(capacityType: CapacityType, instanceType: string, zone: string, reason: string): Promise<void> {
    this.entries.set(offeringKey(capacityType, instanceType, zone), { until: this.clock() + this.ttlMs, reason });
    await this.store.markOfferingUnavailable(capacityType, instanceType, zone, reason, this.ttlMs);
  }

  /** Offering key → reason, for diagnostics. */
  snapshot(): Record<string, string> {
    const now = this.clock();
    const out: Record<string, string> = {};
    for (const [key, entry] of this.entries) if (entry.until > now) out[key] = entry.reason;
    return out;
  }
}
