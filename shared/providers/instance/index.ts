// Launches the instance of one NodeClaim (AWS pkg/providers/instance): ensure its launch templates,
// CreateFleet over the cheapest offerings, and on capacity errors mark those offerings unavailable
// for 3 minutes and try again with what remains. Events are at-least-once, so a claim that already
// has an instance gets that instance back instead of a second one.

import type { CreateFleetCommandOutput, CreateFleetError, Instance } from '@aws-sdk/client-ec2';
import type { EC2NodeClass, NodePool, Taint } from '../../apis/v1/types';
import type { CapacityType, InstanceType } from '../../instancetypes/types';
import {
  buildCreateFleetRequest,
  type FleetOverride,
  fleetClientToken,
  offeringKey,
  selectOverrides,
  UNFULFILLABLE_CAPACITY_CODES,
} from '../../launch/fleet';
import {
  buildCreateLaunchTemplateInput,
  type ClusterInfo,
  type ResolvedAMI,
  resolveLaunchTemplates,
} from '../../launch/launchtemplate';
import { instanceTags } from '../../launch/tags';
import { errorCode, errorMessage, isThrottling, LAUNCH_TEMPLATE_NOT_FOUND_CODES } from '../aws-errors';
import { realSleep, type Sleep } from '../clock';
import type { LaunchTemplateProvider } from '../launchtemplate';
import type { EC2Api } from '../ports';
import type { SecurityGroup } from '../securitygroup';
import { type Subnet, subnetsByZone } from '../subnet';
import type { UnavailableOfferings } from '../unavailableofferings';

export type InstancePort = Pick<EC2Api, 'createFleet' | 'describeInstances'>;

/** A planned NodeClaim: what to launch. */
export interface LaunchRequest {
  nodeClaimName: string;
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
  /** Candidate types, cheapest first. */
  instanceTypes: InstanceType[];
  capacityType: CapacityType;
  /** NodeClaim labels (userData registers the node with them). */
  labels: Record<string, string>;
  taints?: Taint[];
  efa?: boolean;
}

/** The node class resolved against AWS (see shared/nodeclass). */
export interface ResolvedNodeClass {
  subnets: Subnet[];
  securityGroups: SecurityGroup[];
  amis: ResolvedAMI[];
  instanceProfile: string;
  cluster: ClusterInfo;
}

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
      `NodeClaim ${nodeClaimName}: no offering has capacity${failures.length > 0 ? ` (${describeFailures(failures)})` : ' (all candidate offerings are marked unavailable)'}`,
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
}

const LIVE_STATES = ['pending', 'running', 'stopping', 'stopped'];

function capacityTypeOf(instance: Instance): CapacityType {
  return instance.InstanceLifecycle === 'spot' ? 'spot' : 'on-demand';
}

export class InstanceLauncher {
  private readonly sleep: Sleep;

  constructor(private readonly deps: InstanceLauncherDeps) {
    this.sleep = deps.sleep ?? realSleep;
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

    let templateFor = await this.ensureTemplates(request, resolved);
    const byZone = subnetsByZone(resolved.subnets);
    const zoneOfSubnet = new Map(resolved.subnets.map((s) => [s.id, s.zone]));
    const tags = instanceTags({
      clusterName: this.deps.clusterName,
      nodePool: request.nodePool.metadata.name,
      nodeClass: request.nodeClass,
      nodeClaimName: request.nodeClaimName,
    });
    const failures: OfferingFailure[] = [];
    const failedHere = new Set<string>();
    let templatesRefreshed = false;
    const maxAttempts = request.instanceTypes.length * Math.max(1, Object.keys(byZone).length) + 2;

    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const unavailable = await this.unavailableOfferings(request, Object.keys(byZone), failedHere);
      const candidates = request.instanceTypes.filter((t) => templateFor.has(t.name));
      const overrides: FleetOverride[] = selectOverrides({
        instanceTypes: candidates,
        capacityType: request.capacityType,
        subnetsByZone: byZone,
        templateFor: (type) => templateFor.get(type)?.name ?? '',
        isUnavailable: (ct, type, zone) => unavailable.has(offeringKey(ct, type, zone)),
      });
      if (overrides.length === 0) throw new InsufficientCapacityError(request.nodeClaimName, failures);

      const fleet = buildCreateFleetRequest({
        capacityType: request.capacityType,
        overrides,
        tags,
        // A new token per attempt: EC2 rejects a reused token whose request changed.
        clientToken: fleetClientToken(request.nodeClaimName, attempt === 0 ? undefined : String(attempt)),
        ...(request.nodeClass.spec.context ? { context: request.nodeClass.spec.context } : {}),
      });
      const out: CreateFleetCommandOutput = await this.retryThrottled(() => this.deps.ec2.createFleet(fleet));

      const capacityFailures: OfferingFailure[] = [];
      const otherFailures: OfferingFailure[] = [];
      let templateMissing = false;
      for (const error of out.Errors ?? []) {
        const failure = this.failureOf(error, request.capacityType, zoneOfSubnet);
        if (UNFULFILLABLE_CAPACITY_CODES.has(failure.code) && failure.offering) {
          const [, type = '', zone = ''] = failure.offering.split(':');
          await this.deps.unavailable.markUnavailable(
            request.capacityType,
            type,
            zone,
            `${failure.code}: ${failure.message}`,
          );
          failedHere.add(failure.offering);
          capacityFailures.push(failure);
        } else {
          if (LAUNCH_TEMPLATE_NOT_FOUND_CODES.has(failure.code)) templateMissing = true;
          otherFailures.push(failure);
        }
      }
      failures.push(...capacityFailures);

      const launched = (out.Instances ?? []).find((i) => (i.InstanceIds ?? []).length > 0);
      const instanceId = launched?.InstanceIds?.[0];
      if (launched && instanceId) {
        const override = launched.LaunchTemplateAndOverrides?.Overrides;
        const chosen =
          overrides.find(
            (o) =>
              o.instanceType === launched.InstanceType && (!override?.SubnetId || o.subnetId === override.SubnetId),
          ) ?? overrides.find((o) => o.instanceType === launched.InstanceType);
        const type = launched.InstanceType ?? chosen?.instanceType ?? '';
        const imageId = override?.ImageId ?? templateFor.get(type)?.amiId;
        return {
          instanceId,
          instanceType: type,
          zone:
            override?.AvailabilityZone ??
            (override?.SubnetId ? zoneOfSubnet.get(override.SubnetId) : undefined) ??
            chosen?.zone ??
            '',
          capacityType:
            launched.Lifecycle === 'spot'
              ? 'spot'
              : launched.Lifecycle === 'on-demand'
                ? 'on-demand'
                : request.capacityType,
          ...(imageId ? { imageId } : {}),
          existing: false,
        };
      }
      if (templateMissing && !templatesRefreshed) {
        // Deleted behind our cache (e.g. by garbage collection): drop it and recreate once.
        templatesRefreshed = true;
        for (const name of new Set([...templateFor.values()].map((t) => t.name))) {
          this.deps.launchTemplates.invalidate(name);
        }
        templateFor = await this.ensureTemplates(request, resolved);
        continue;
      }
      if (otherFailures.length > 0) throw new LaunchError(request.nodeClaimName, [...failures, ...otherFailures]);
      if (capacityFailures.length === 0) {
        throw new LaunchError(request.nodeClaimName, [
          { offering: '', code: 'NoInstance', message: 'CreateFleet returned neither an instance nor an error' },
        ]);
      }
    }
    throw new InsufficientCapacityError(request.nodeClaimName, failures);
  }

  /** instance type → its launch template and AMI, ensuring each template exists. */
  private async ensureTemplates(
    request: LaunchRequest,
    resolved: ResolvedNodeClass,
  ): Promise<Map<string, { name: string; amiId: string }>> {
    const groups = resolveLaunchTemplates({
      clusterName: this.deps.clusterName,
      cluster: resolved.cluster,
      nodePool: request.nodePool,
      nodeClass: request.nodeClass,
      instanceTypes: request.instanceTypes,
      amis: resolved.amis,
      capacityType: request.capacityType,
      instanceProfile: resolved.instanceProfile,
      securityGroupIds: resolved.securityGroups.map((g) => g.id),
      labels: request.labels,
      ...(request.taints ? { taints: request.taints } : {}),
      ...(request.efa !== undefined ? { efa: request.efa } : {}),
      ...(this.deps.region ? { region: this.deps.region } : {}),
    });
    const templateFor = new Map<string, { name: string; amiId: string }>();
    for (const group of groups) {
      const input = buildCreateLaunchTemplateInput(group.spec);
      const ensured = await this.retryThrottled(() => this.deps.launchTemplates.ensure(input));
      for (const type of group.instanceTypes) {
        if (!templateFor.has(type.name)) templateFor.set(type.name, { name: ensured.name, amiId: group.spec.amiId });
      }
    }
    return templateFor;
  }

  /** Keys of the claim's offerings that cannot be used now: cached ICE, failed in this launch, or not offered. */
  private async unavailableOfferings(
    request: LaunchRequest,
    zones: readonly string[],
    failedHere: ReadonlySet<string>,
  ): Promise<Set<string>> {
    const keys = new Set(failedHere);
    for (const type of request.instanceTypes) {
      for (const zone of zones) {
        const key = offeringKey(request.capacityType, type.name, zone);
        if (keys.has(key)) continue;
        const offered = type.offerings.some(
          (o) => o.zone === zone && o.capacityType === request.capacityType && o.available,
        );
        if (!offered || (await this.deps.unavailable.isUnavailable(request.capacityType, type.name, zone)))
          keys.add(key);
      }
    }
    return keys;
  }

  private failureOf(
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

  private async retryThrottled<T>(call: () => Promise<T>): Promise<T> {
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
        await this.sleep(base * 2 ** attempt);
      }
    }
  }
}
