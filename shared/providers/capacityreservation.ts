// Capacity reservations selected by an EC2NodeClass (AWS pkg/providers/capacityreservation): one
// DescribeCapacityReservations per query (an id term is its own query; tags, ownerID and
// instanceMatchCriteria form another), only `active` ones, cached per query, ended ones dropped,
// and how many instances each can still start: EC2's AvailableInstanceCount at the last listing,
// minus what this process launched into it since, zero once EC2 said it is full.

import type {
  DescribeCapacityReservationsCommandInput,
  CapacityReservation as EC2CapacityReservation,
  Filter,
} from '@aws-sdk/client-ec2';
import type { CapacityReservationSelectorTerm, EC2NodeClass } from '../apis/v1/types';
import { withReservedOfferings } from '../instancetypes/reserved';
import type { InstanceType } from '../instancetypes/types';
import { errorCode, isNotFound } from './aws-errors';
import { type Clock, systemClock, TTLCache } from './clock';
import { tagFilters } from './filters';
import type { EC2Api } from './ports';

export type CapacityReservationPort = Pick<EC2Api, 'describeCapacityReservations'>;

/**
 * The reservation listing is re-read after a minute, Karpenter's nodeclass poll period: new
 * reservations and counts freed by terminations show up that fast, without a call per launch.
 */
export const CAPACITY_RESERVATIONS_TTL_MS = 60_000;

/** A capacity block counts as expiring this long before its end: nothing new launches into it. */
export const CAPACITY_BLOCK_EXPIRY_MS = 40 * 60_000;

/** One reservation as EC2NodeClass status.capacityReservations lists it, plus its free count. */
export interface CapacityReservation {
  id: string;
  instanceType: string;
  availabilityZone: string;
  availabilityZoneId?: string;
  ownerID: string;
  instanceMatchCriteria: 'open' | 'targeted';
  reservationType: 'default' | 'capacity-block';
  interruptible: boolean;
  state: 'active' | 'expiring';
  /** ISO time the reservation ends, when it does. */
  endTime?: string;
  /** Instances it could still start when EC2 was last asked. */
  availableInstanceCount: number;
}

export interface CapacityReservationQuery {
  id?: string;
  ownerID?: string;
  tags?: Record<string, string>;
  instanceMatchCriteria?: 'open' | 'targeted';
}

/** Karpenter's QueriesFromSelectorTerms: an id is looked up alone; the other fields filter together. */
export function capacityReservationQueries(
  terms: readonly CapacityReservationSelectorTerm[],
): CapacityReservationQuery[] {
  const queries: CapacityReservationQuery[] = [];
  for (const term of terms) {
    if (term.id) queries.push({ id: term.id });
    if (Object.keys(term.tags ?? {}).length > 0 || term.instanceMatchCriteria) {
      queries.push({
        ...(term.ownerID ? { ownerID: term.ownerID } : {}),
        ...(term.tags ? { tags: term.tags } : {}),
        ...(term.instanceMatchCriteria ? { instanceMatchCriteria: term.instanceMatchCriteria } : {}),
      });
    }
  }
  return queries;
}

export function describeCapacityReservationsInput(
  query: CapacityReservationQuery,
): DescribeCapacityReservationsCommandInput {
  const filters: Filter[] = [{ Name: 'state', Values: ['active'] }];
  // EC2 refuses MaxResults beside CapacityReservationIds.
  if (query.id) return { Filters: filters, CapacityReservationIds: [query.id] };
  if (query.ownerID) filters.push({ Name: 'owner-id', Values: [query.ownerID] });
  filters.push(...tagFilters(query.tags));
  if (query.instanceMatchCriteria)
    filters.push({ Name: 'instance-match-criteria', Values: [query.instanceMatchCriteria] });
  return { Filters: filters, MaxResults: 1000 };
}

function queryKey(query: CapacityReservationQuery): string {
  const tags = Object.entries(query.tags ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([query.id ?? '', query.ownerID ?? '', query.instanceMatchCriteria ?? '', tags]);
}

/** A reservation EC2 returned that karpless cannot use, and why (logged, never launched into). */
export interface SkippedReservation {
  id: string;
  reason: string;
}

/**
 * The status form of an EC2 reservation, or why it is skipped: a match criteria other than open or
 * targeted (guards against ones EC2 may add), or fields missing that a launch needs.
 */
export function capacityReservationFromEC2(
  r: EC2CapacityReservation,
  now: number,
): CapacityReservation | SkippedReservation {
  const id = r.CapacityReservationId ?? '';
  if (r.InstanceMatchCriteria !== 'open' && r.InstanceMatchCriteria !== 'targeted') {
    return { id, reason: `unsupported instance match criteria "${r.InstanceMatchCriteria ?? ''}"` };
  }
  if (!id || !r.InstanceType || !r.AvailabilityZone || !r.OwnerId) {
    return { id, reason: 'EC2 returned it without an id, instance type, availability zone or owner' };
  }
  const reservationType = r.ReservationType === 'capacity-block' ? 'capacity-block' : 'default';
  const end = r.EndDate?.getTime();
  const expiring = reservationType === 'capacity-block' && end !== undefined && end - now <= CAPACITY_BLOCK_EXPIRY_MS;
  return {
    id,
    instanceType: r.InstanceType,
    availabilityZone: r.AvailabilityZone,
    ...(r.AvailabilityZoneId ? { availabilityZoneId: r.AvailabilityZoneId } : {}),
    ownerID: r.OwnerId,
    instanceMatchCriteria: r.InstanceMatchCriteria,
    reservationType,
    interruptible: r.Interruptible === true,
    state: expiring ? 'expiring' : 'active',
    ...(r.EndDate ? { endTime: r.EndDate.toISOString() } : {}),
    availableInstanceCount: Math.max(0, r.AvailableInstanceCount ?? 0),
  };
}

function isSkipped(r: CapacityReservation | SkippedReservation): r is SkippedReservation {
  return 'reason' in r;
}

export interface CapacityReservationListing {
  /** Usable reservations, by id. */
  reservations: CapacityReservation[];
  skipped: SkippedReservation[];
}

export interface CapacityReservationProviderOptions {
  clock?: Clock;
  ttlMs?: number;
}

export class CapacityReservationProvider {
  private readonly clock: Clock;
  private readonly cache: TTLCache<EC2CapacityReservation[]>;
  /** id → instances it can still start: EC2's count at the last listing, less launches since. */
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly ec2: CapacityReservationPort,
    options: CapacityReservationProviderOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.cache = new TTLCache(this.clock, options.ttlMs ?? CAPACITY_RESERVATIONS_TTL_MS);
  }

  /** The reservations the terms select, sorted by id; none when there are no terms. */
  async list(terms: readonly CapacityReservationSelectorTerm[]): Promise<CapacityReservationListing> {
    const found = new Map<string, EC2CapacityReservation>();
    for (const query of capacityReservationQueries(terms)) {
      for (const r of await this.query(query)) if (r.CapacityReservationId) found.set(r.CapacityReservationId, r);
    }
    const now = this.clock();
    const reservations: CapacityReservation[] = [];
    const skipped: SkippedReservation[] = [];
    for (const r of found.values()) {
      // An ended reservation may still be listed as active for a while; nothing launches into it.
      if (r.EndDate && r.EndDate.getTime() <= now) continue;
      const converted = capacityReservationFromEC2(r, now);
      if (isSkipped(converted)) skipped.push(converted);
      else {
        reservations.push({
          ...converted,
          availableInstanceCount: this.availableCount(converted.id) ?? converted.availableInstanceCount,
        });
      }
    }
    reservations.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { reservations, skipped };
  }

  /** Instances the reservation can still start, as far as this process knows; undefined for one never listed. */
  availableCount(id: string): number | undefined {
    return this.counts.get(id);
  }

  /** One instance launched into the reservation. */
  markLaunched(id: string): void {
    const count = this.counts.get(id);
    if (count !== undefined && count > 0) this.counts.set(id, count - 1);
  }

  /** EC2 said the reservation is full (ReservationCapacityExceeded): nothing more until it is listed again. */
  markExhausted(id: string): void {
    if (this.counts.has(id)) this.counts.set(id, 0);
  }

  private async query(query: CapacityReservationQuery): Promise<EC2CapacityReservation[]> {
    const key = queryKey(query);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const input = describeCapacityReservationsInput(query);
    const out: EC2CapacityReservation[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.ec2.describeCapacityReservations({ ...input, ...(token ? { NextToken: token } : {}) });
        out.push(...(page.CapacityReservations ?? []));
        token = page.NextToken;
      } while (token);
    } catch (error) {
      // A reservation id that does not exist (any more) selects nothing, as in Karpenter.
      if (!(query.id && (isNotFound(error) || errorCode(error) === 'InvalidCapacityReservationId.NotFound'))) {
        throw error;
      }
    }
    for (const r of out) {
      if (r.CapacityReservationId) this.counts.set(r.CapacityReservationId, Math.max(0, r.AvailableInstanceCount ?? 0));
    }
    this.cache.set(key, out);
    return out;
  }
}

/**
 * The node class's instance types with an offering per reservation it selects. When EC2 cannot
 * list them the types come back without (and the error with them): spot and on-demand still
 * plan, and the node class's CapacityReservationsReady condition reports the failure.
 */
export async function withNodeClassReservations(
  types: readonly InstanceType[],
  nodeClass: EC2NodeClass,
  provider: Pick<CapacityReservationProvider, 'list'>,
): Promise<{ types: InstanceType[]; error?: unknown }> {
  const terms = nodeClass.spec.capacityReservationSelectorTerms ?? [];
  if (terms.length === 0) return { types: [...types] };
  try {
    return { types: withReservedOfferings(types, (await provider.list(terms)).reservations) };
  } catch (error) {
    return { types: [...types], error };
  }
}
