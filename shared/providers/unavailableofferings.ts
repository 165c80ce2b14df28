// The unavailable-offerings (ICE) cache behind a port: an offering that just failed for lack of
// capacity is skipped for 3 minutes (UnavailableOfferingsTTL). The runtime backs it with DynamoDB so
// it outlives one Lambda invocation; InMemoryUnavailableOfferings serves the CLI and tests.

import type { CapacityType } from '../instancetypes/types';
import { offeringKey } from '../launch/fleet';
import type { Clock } from './clock';

export const UNAVAILABLE_OFFERINGS_TTL_MS = 3 * 60 * 1000;

export interface UnavailableOfferings {
  isUnavailable(capacityType: CapacityType, instanceType: string, zone: string): boolean | Promise<boolean>;
  markUnavailable(capacityType: CapacityType, instanceType: string, zone: string, reason: string): void | Promise<void>;
}

export class InMemoryUnavailableOfferings implements UnavailableOfferings {
  private readonly entries = new Map<string, { until: number; reason: string }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = UNAVAILABLE_OFFERINGS_TTL_MS,
  ) {}

  isUnavailable(capacityType: CapacityType, instanceType: string, zone: string): boolean {
    const key = offeringKey(capacityType, instanceType, zone);
    const entry = this.entries.get(key);
    if (!entry) return false;
    if (entry.until <= this.clock()) {
      this.entries.delete(key);
      return false;
    }
    return true;
  }

  markUnavailable(capacityType: CapacityType, instanceType: string, zone: string, reason: string): void {
    this.entries.set(offeringKey(capacityType, instanceType, zone), { until: this.clock() + this.ttlMs, reason });
  }

  /** Offering key → reason, for diagnostics (`karpless status -o wide`, logs). */
  snapshot(): Record<string, string> {
    const now = this.clock();
    const out: Record<string, string> = {};
    for (const [key, entry] of this.entries) if (entry.until > now) out[key] = entry.reason;
    return out;
  }
}
