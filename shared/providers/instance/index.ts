// Launches the instance of one NodeClaim (AWS pkg/providers/instance): plan the exact requests
// (shared/launch/request planLaunch: compatible offerings, launch-time filters, templates, fleet),
// ensure the launch templates, CreateFleet, and on capacity errors mark what ran out (offering,
// reservation, subnet or the whole spot capacity type) for 3 minutes and try again with what
// remains. Events are at-least-once, so a claim that already has a live instance gets that
// instance back instead of a second one.

import type { CreateFleetCommandOutput, CreateFleetError, Instance } from '@aws-sdk/client-ec2';
import type { CapacityType } from '../../instancetypes/types';
import {
  type FleetOverride,
  offeringKey,
  SERVICE_LINKED_ROLE_CODE,
  UNFULFILLABLE_CAPACITY_CODES,
} from '../../launch/fleet';
import {
  type LaunchAvailability,
  type LaunchClaim,
  type PlannedLaunch,
  planLaunch,
  type ResolvedNodeClass,
} from '../../launch/request';
import { errorCode, errorMessage, isNotFound, isThrottling, LAUNCH_TEMPLATE_NOT_FOUND_CODES } from '../aws-errors';
import type { CapacityReservationProvider } from '../capacityreservation';
import { realSleep, type Sleep } from '../clock';
import type { LaunchTemplateProvider } from '../launchtemplate';
import type { EC2Api } from '../ports';
import { InflightIPs } from '../subnet';
import { throttleBackoffMs } from '../throttle';
import { scopeKey, type UnavailableOfferings, type UnavailableScope } from '../unavailableofferings';

export type InstancePort = Pick<EC2Api, 'createFleet' | 'describeInstances'> & Partial<Pick<EC2Api, 'createTags'>>;

/**
 * A planned NodeClaim: what to launch. See LaunchClaim for every field; `requirements` (the
 * claim's spec.requirements) is required, and `capacityType` only pins the capacity type.
 */
export type LaunchRequest = LaunchClaim;
export type { ResolvedNodeClass };

export interface LaunchedInstance {
  instanceId: string;
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  imageId?: string;
  /** True when the claim already had this instance (a retried or redelivered launch). */
  existing: boolean;
}

export interface OfferingFailure {
  /** "spot:m5.large:us-west-2a", or "" when EC2 did not name an offering. */
  offering: string;
  code: string;
  message: string;
}

function describeFailures(failures: readonly OfferingFailure[]): string {
  return failures.map((f) => `${f.offering ? `${f.offering}: ` : ''}${f.code}: ${f.message}`).join('; ');
}

/** Every offering the claim could use is out of capacity; Karpenter deletes the claim and re-plans. */
export class InsufficientCapacityError extends Error {
  override readonly name = 'InsufficientCapacityError';
  constructor(
    readonly nodeClaimName: string,
    readonly failures: readonly OfferingFailure[],
  ) {
    super(
      `NodeClaim ${nodeClaimName}: no offering has capacity${failures.length > 0 ? ` (${describeFailures(failures)})` : ' (no offering compatible with its requirements is available in the node class subnets, or all are marked unavailable)'}`,
    );
  }
}

/** CreateFleet failed for a reason other than capacity (permissions, bad template, limits …). */
export class LaunchError extends Error {
  override readonly name = 'LaunchError';
  constructor(
    readonly nodeClaimName: string,
    readonly failures: readonly OfferingFailure[],
  ) {
    super(`NodeClaim ${nodeClaimName}: CreateFleet failed: ${describeFailures(failures)}`);
  }
}

export interface InstanceLauncherDeps {
  ec2: InstancePort;
  launchTemplates: Pick<LaunchTemplateProvider, 'ensure' | 'invalidate'>;
  unavailable: UnavailableOfferings;
  clusterName: string;
  region?: string;
  sleep?: Sleep;
  /** Own retries of a throttled call, on top of the SDK's. */
  throttleRetries?: number;
  throttleBaseDelayMs?: number;
  /** Jitter source for the throttling backoff (full jitter: a wait between 0 and the backoff). */
  random?: () => number;
  /** Shared across launches of one process so each launch sees the IPs the previous ones took. */
  inflightIPs?: InflightIPs;
  /**
   * The reservations' free counts (the provider the instance types were built from): a reserved
   * launch takes one, a full reservation is skipped by the next claims of the same decision.
   */
  reservations?: Pick<CapacityReservationProvider, 'availableCount' | 'markLaunched' | 'markExhausted'>;
}

/**
 * EC2's refusal when a spread placement group already holds its per-zone maximum (7 per AZ for
 * rack spread). The exact wording could not be checked against EC2, so it is matched on the words
 * any such message must contain, and only for launches into a spread group.
 */
export function isSpreadPlacementGroupLimit(failure: Pick<OfferingFailure, 'code' | 'message'>): boolean {
  const text = `${failure.code} ${failure.message}`;
  return /placement ?group/i.test(text) && /spread/i.test(text) && /limit|maximum|exceed/i.test(text);
}

/** The longest wait between two attempts of a throttled call. */
const THROTTLE_MAX_DELAY_MS = 20_000;

export const LIVE_STATES = ['pending', 'running', 'stopping', 'stopped'];
const DEAD_STATES = new Set(['shutting-down', 'terminated']);

export function capacityTypeOf(instance: Instance): CapacityType {
  // Only reserved launches target a reservation (the others send preference "none").
  if (instance.CapacityReservationId) return 'reserved';
  return instance.InstanceLifecycle === 'spot' ? 'spot' : 'on-demand';
}

/** Per-launch bookkeeping the retries share. */
export interface LaunchState {
  failures: OfferingFailure[];
  /** Cache keys this launch saw fail, honoured even if the cache port is eventually consistent. */
  failedHere: Set<string>;
  templatesRefreshed: boolean;
  tokenSalt?: string;
}

export class InstanceLauncher {
  protected readonly sleep: Sleep;
  protected readonly inflight: InflightIPs;

  constructor(protected readonly deps: InstanceLauncherDeps) {
    this.sleep = deps.sleep ?? realSleep;
    this.inflight = deps.inflightIPs ?? new InflightIPs();
  }

  /** The claim's live instance, if it has one (tag karpenter.sh/nodeclaim). */
  async findExisting(nodeClaimName: string): Promise<LaunchedInstance | undefined> {
    const out = await this.retryThrottled(() =>
      this.deps.ec2.describeInstances({
        Filters: [
          { Name: 'tag:karpenter.sh/nodeclaim', Values: [nodeClaimName] },
          { Name: 'tag:eks:eks-cluster-name', Values: [this.deps.clusterName] },
          { Name: 'instance-state-name', Values: LIVE_STATES },
        ],
      }),
    );
    const instance = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId);
    if (!instance?.InstanceId) return undefined;
    return {
      instanceId: instance.InstanceId,
      instanceType: instance.InstanceType ?? '',
      zone: instance.Placement?.AvailabilityZone ?? '',
      capacityType: capacityTypeOf(instance),
      ...(instance.ImageId ? { imageId: instance.ImageId } : {}),
      existing: true,
    };
  }

  async launch(request: LaunchRequest, resolved: ResolvedNodeClass): Promise<LaunchedInstance> {
    const existing = await this.findExisting(request.nodeClaimName);
    if (existing) return existing;

    const state: LaunchState = { failures: [], failedHere: new Set(), templatesRefreshed: false };
    const zones = new Set(resolved.subnets.map((s) => s.zone)).size;
    const maxAttempts = request.instanceTypes.length * Math.max(1, zones) * 2 + resolved.subnets.length + 3;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const plan = planLaunch(request, resolved, {
        clusterName: this.deps.clusterName,
        ...(this.deps.region ? { region: this.deps.region } : {}),
        availability: await this.availability(request, resolved, state.failedHere),
        ...(state.tokenSalt !== undefined ? { tokenSalt: state.tokenSalt } : {}),
      });
      if (plan.overrides.length === 0) throw new InsufficientCapacityError(request.nodeClaimName, state.failures);
      for (const template of plan.templates) {
        await this.retryThrottled(() => this.deps.launchTemplates.ensure(template.input));
      }
      let out: CreateFleetCommandOutput;
      try {
        out = await this.retryThrottled(() => this.deps.ec2.createFleet(plan.fleet));
      } catch (error) {
        // A template deleted behind our cache, reported for the whole request: recreate once.
        if (!this.refreshTemplates(errorCode(error), plan, state)) throw error;
        continue;
      }
      const outcome = await this.outcome(request, resolved, plan, out, state);
      if (outcome === 'retry') continue;
      return outcome;
    }
    throw new InsufficientCapacityError(request.nodeClaimName, state.failures);
  }

  /** The launched instance, or 'retry' after recording what failed; throws when nothing can help. */
  protected async outcome(
    request: LaunchRequest,
    resolved: ResolvedNodeClass,
    plan: PlannedLaunch,
    out: CreateFleetCommandOutput,
    state: LaunchState,
  ): Promise<LaunchedInstance | 'retry'> {
    const zoneOfSubnet = new Map(resolved.subnets.map((s) => [s.id, s.zone]));
    const launched = (out.Instances ?? []).find((i) => (i.InstanceIds ?? []).length > 0);
    const instanceId = launched?.InstanceIds?.[0];
    if (launched && instanceId) {
      if (await this.isDead(instanceId)) {
        // The token's fleet already ran and its instance is gone (an identical replay after the
        // first instance died): a new token asks EC2 for a new instance.
        state.tokenSalt = instanceId;
        return 'retry';
      }
      const result = this.launchedInstance(plan, launched, instanceId, zoneOfSubnet);
      const reservationId = plan.overrides.find(
        (o) => o.instanceType === result.instanceType && o.zone === result.zone,
      )?.reservationId;
      if (plan.capacityType === 'reserved' && reservationId) this.deps.reservations?.markLaunched(reservationId);
      const subnetId =
        launched.LaunchTemplateAndOverrides?.Overrides?.SubnetId ??
        plan.overrides.find((o) => o.instanceType === result.instanceType && o.zone === result.zone)?.subnetId;
      const type = request.instanceTypes.find((t) => t.name === result.instanceType);
      // VPC CNI gives each pod an address: the type's pod capacity bounds what the node will take.
      if (subnetId) this.inflight.add(subnetId, 1 + (type?.capacity.pods ?? 0));
      return result;
    }

    const capacityFailures: OfferingFailure[] = [];
    const otherFailures: OfferingFailure[] = [];
    let templateMissing = false;
    for (const error of out.Errors ?? []) {
      const failure = this.failureOf(error, plan.capacityType, zoneOfSubnet);
      if (await this.markCapacityFailure(error, failure, plan, resolved, state)) capacityFailures.push(failure);
      else {
        if (LAUNCH_TEMPLATE_NOT_FOUND_CODES.has(failure.code)) templateMissing = true;
        otherFailures.push(failure);
      }
    }
    state.failures.push(...capacityFailures);
    if (templateMissing && this.refreshTemplates('InvalidLaunchTemplateName.NotFoundException', plan, state)) {
      return 'retry';
    }
    if (otherFailures.length > 0) {
      throw new LaunchError(request.nodeClaimName, [...state.failures, ...otherFailures]);
    }
    if (capacityFailures.length === 0) {
      throw new LaunchError(request.nodeClaimName, [
        { offering: '', code: 'NoInstance', message: 'CreateFleet returned neither an instance nor an error' },
      ]);
    }
    return 'retry';
  }

  /**
   * Records a capacity error where Karpenter does: the offering (or, for reserved launches, the
   * reservation), the subnet when it ran out of addresses, the whole spot capacity type when its
   * service-linked role is missing. False when the error is not about capacity.
   */
  protected async markCapacityFailure(
    error: CreateFleetError,
    failure: OfferingFailure,
    plan: PlannedLaunch,
    resolved: ResolvedNodeClass,
    state: LaunchState,
  ): Promise<boolean> {
    const reason = `${failure.code}: ${failure.message}`;
    if (failure.code === SERVICE_LINKED_ROLE_CODE) {
      await this.markScope(state, { kind: 'capacity-type', capacityType: 'spot' }, reason);
      return true;
    }
    const [, type = '', zone = ''] = failure.offering.split(':');
    if (
      resolved.placementGroupStrategy === 'spread' &&
      resolved.placementGroupId &&
      zone &&
      isSpreadPlacementGroupLimit(failure)
    ) {
      // The group is full in this zone; other zones, and other node classes here, still launch.
      const scope = { kind: 'placement-group-zone', placementGroupId: resolved.placementGroupId, zone } as const;
      await this.markScope(state, scope, reason);
      return true;
    }
    if (!UNFULFILLABLE_CAPACITY_CODES.has(failure.code) || !failure.offering) return false;
    const override = plan.overrides.find((o) => o.instanceType === type && o.zone === zone);
    const subnetId = error.LaunchTemplateAndOverrides?.Overrides?.SubnetId ?? override?.subnetId;
    if (failure.code === 'InsufficientFreeAddressesInSubnet' && subnetId) {
      // The subnet is full, not the offering: another subnet of the zone may still launch it.
      await this.markScope(state, { kind: 'subnet', subnetId }, reason);
      return true;
    }
    if (plan.capacityType === 'reserved' && override?.reservationId) {
      if (failure.code === 'ReservationCapacityExceeded') this.deps.reservations?.markExhausted(override.reservationId);
      await this.markScope(state, { kind: 'reservation', reservationId: override.reservationId }, reason);
    } else {
      await this.deps.unavailable.markUnavailable(plan.capacityType, type, zone, reason);
      state.failedHere.add(failure.offering);
    }
    return true;
  }

  protected async markScope(state: LaunchState, scope: UnavailableScope, reason: string): Promise<void> {
    await this.deps.unavailable.markScopeUnavailable(scope, reason);
    state.failedHere.add(scopeKey(scope));
  }

  /** Drops the plan's templates from the cache once, so the next attempt recreates them. */
  protected refreshTemplates(code: string | undefined, plan: PlannedLaunch, state: LaunchState): boolean {
    if (!code || !LAUNCH_TEMPLATE_NOT_FOUND_CODES.has(code) || state.templatesRefreshed) return false;
    state.templatesRefreshed = true;
    for (const t of plan.templates) this.deps.launchTemplates.invalidate(t.input.LaunchTemplateName ?? '');
    return true;
  }

  /** Whether EC2 says the instance is gone; an instance it does not know yet is new, so alive. */
  protected async isDead(instanceId: string): Promise<boolean> {
    try {
      const out = await this.retryThrottled(() => this.deps.ec2.describeInstances({ InstanceIds: [instanceId] }));
      const instance = (out.Reservations ?? [])
        .flatMap((r) => r.Instances ?? [])
        .find((i) => i.InstanceId === instanceId);
      return instance?.State?.Name !== undefined && DEAD_STATES.has(instance.State.Name);
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  protected launchedInstance(
    plan: PlannedLaunch,
    launched: NonNullable<CreateFleetCommandOutput['Instances']>[number],
    instanceId: string,
    zoneOfSubnet: Map<string, string>,
  ): LaunchedInstance {
    const override = launched.LaunchTemplateAndOverrides?.Overrides;
    const chosen: FleetOverride | undefined =
      plan.overrides.find(
        (o) => o.instanceType === launched.InstanceType && (!override?.SubnetId || o.subnetId === override.SubnetId),
      ) ?? plan.overrides.find((o) => o.instanceType === launched.InstanceType);
    const type = launched.InstanceType ?? chosen?.instanceType ?? '';
    const imageId = override?.ImageId ?? chosen?.imageId;
    return {
      instanceId,
      instanceType: type,
      zone:
        override?.AvailabilityZone ??
        (override?.SubnetId ? zoneOfSubnet.get(override.SubnetId) : undefined) ??
        chosen?.zone ??
        '',
      capacityType:
        plan.capacityType === 'reserved'
          ? 'reserved'
          : launched.Lifecycle === 'spot'
            ? 'spot'
            : launched.Lifecycle === 'on-demand'
              ? 'on-demand'
              : plan.capacityType,
      ...(imageId ? { imageId } : {}),
      existing: false,
    };
  }

  /** The cache read once per attempt into sync predicates for the pure planner. */
  protected async availability(
    request: LaunchRequest,
    resolved: ResolvedNodeClass,
    failedHere: ReadonlySet<string>,
  ): Promise<LaunchAvailability> {
    const keys = new Set(failedHere);
    const zones = new Set(resolved.subnets.map((s) => s.zone));
    const cache = this.deps.unavailable;
    const check = async (scope: UnavailableScope) => {
      const key = scopeKey(scope);
      if (!keys.has(key) && (await cache.isScopeUnavailable(scope))) keys.add(key);
    };
    for (const capacityType of ['spot', 'on-demand', 'reserved'] as const) {
      await check({ kind: 'capacity-type', capacityType });
    }
    for (const s of resolved.subnets) await check({ kind: 'subnet', subnetId: s.id });
    const groupId = resolved.placementGroupId;
    if (groupId)
      for (const zone of zones) await check({ kind: 'placement-group-zone', placementGroupId: groupId, zone });
    for (const type of request.instanceTypes) {
      for (const o of type.offerings) {
        if (!o.available || !zones.has(o.zone)) continue;
        const key = offeringKey(o.capacityType, type.name, o.zone);
        if (!keys.has(key) && (await cache.isUnavailable(o.capacityType, type.name, o.zone))) keys.add(key);
        if (o.reservationId) await check({ kind: 'reservation', reservationId: o.reservationId });
      }
    }
    return {
      offering: (ct, type, zone) => keys.has(offeringKey(ct, type, zone)),
      capacityType: (capacityType) => keys.has(scopeKey({ kind: 'capacity-type', capacityType })),
      reservation: (reservationId) =>
        keys.has(scopeKey({ kind: 'reservation', reservationId })) ||
        this.deps.reservations?.availableCount(reservationId) === 0,
      placementGroupZone: (placementGroupId, zone) =>
        keys.has(scopeKey({ kind: 'placement-group-zone', placementGroupId, zone })),
      subnet: (subnetId) => keys.has(scopeKey({ kind: 'subnet', subnetId })),
      inflightIPs: (id) => this.inflight.get(id),
    };
  }

  protected failureOf(
    error: CreateFleetError,
    capacityType: CapacityType,
    zoneOfSubnet: Map<string, string>,
  ): OfferingFailure {
    const override = error.LaunchTemplateAndOverrides?.Overrides;
    const zone = override?.AvailabilityZone ?? (override?.SubnetId ? zoneOfSubnet.get(override.SubnetId) : undefined);
    return {
      offering: override?.InstanceType && zone ? offeringKey(capacityType, override.InstanceType, zone) : '',
      code: error.ErrorCode ?? 'Unknown',
      message: error.ErrorMessage ?? '',
    };
  }

  protected async retryThrottled<T>(call: () => Promise<T>): Promise<T> {
    const retries = this.deps.throttleRetries ?? 4;
    const base = this.deps.throttleBaseDelayMs ?? 500;
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        if (!isThrottling(error) || attempt >= retries) {
          if (isThrottling(error)) {
            throw new Error(
              `still throttled after ${retries + 1} attempts (${errorCode(error)}: ${errorMessage(error)})`,
              {
                cause: error,
              },
            );
          }
          throw error;
        }
        await this.sleep(throttleBackoffMs(attempt, base, THROTTLE_MAX_DELAY_MS, this.deps.random));
      }
    }
  }
}
