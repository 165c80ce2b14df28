// EC2NodeClass readiness (AWS pkg/controllers/nodeclass): resolve subnets, security groups, AMIs
// and the instance profile, and report them as Karpenter's status conditions and status fields.
// A launch needs Ready=True; `karpless status` prints the same conditions.

import { UnsupportedAliasError } from '../amifamily/alias';
import type { Condition, EC2NodeClass, EC2NodeClassStatus } from '../apis/v1/types';
import type { ClusterInfo, ResolvedAMI } from '../launch/launchtemplate';
import type { AMIProvider } from '../providers/ami';
import { errorCode, errorMessage } from '../providers/aws-errors';
import type { CapacityReservation } from '../providers/capacityreservation';
import { type Clock, systemClock } from '../providers/clock';
import type { ResolvedNodeClass } from '../providers/instance';
import type { InstanceProfileProvider } from '../providers/instanceprofile';
import type { PlacementGroup } from '../providers/placementgroup';
import type { SecurityGroup, SecurityGroupProvider } from '../providers/securitygroup';
import type { Subnet, SubnetProvider } from '../providers/subnet';
import {
  CONDITION_CAPACITY_RESERVATIONS_READY,
  CONDITION_PLACEMENT_GROUP_READY,
  type PlacementDeps,
  placementStatus,
  resolveCapacityReservations,
  resolvePlacementGroup,
} from './placement';

export const CONDITION_SUBNETS_READY = 'SubnetsReady';
export const CONDITION_SECURITY_GROUPS_READY = 'SecurityGroupsReady';
export const CONDITION_AMIS_READY = 'AMIsReady';
export const CONDITION_INSTANCE_PROFILE_READY = 'InstanceProfileReady';
export const CONDITION_READY = 'Ready';

/** The dependents of Ready, in the order Karpenter lists them. */
export const NODECLASS_CONDITIONS = [
  CONDITION_AMIS_READY,
  CONDITION_SUBNETS_READY,
  CONDITION_SECURITY_GROUPS_READY,
  CONDITION_INSTANCE_PROFILE_READY,
] as const;

/** Dependents of Ready reported only for node classes that select reservations or a placement group. */
export const OPTIONAL_NODECLASS_CONDITIONS = [
  CONDITION_CAPACITY_RESERVATIONS_READY,
  CONDITION_PLACEMENT_GROUP_READY,
] as const;

export interface NodeClassResolverDeps extends PlacementDeps {
  subnets: Pick<SubnetProvider, 'list'>;
  securityGroups: Pick<SecurityGroupProvider, 'list'>;
  amis: Pick<AMIProvider, 'resolve'>;
  instanceProfiles: Pick<InstanceProfileProvider, 'ensure' | 'inspect'>;
  /** The cluster's Kubernetes version ("1.31"); without it an alias cannot be resolved. */
  k8sVersion?: string;
  clock?: Clock;
  /**
   * 'ensure' (the launch path) creates the managed instance profile as Karpenter does; 'inspect'
   * (`karpless status`) changes nothing and reports a profile not created yet as Unknown.
   */
  mode?: 'ensure' | 'inspect';
}

export interface NodeClassResolution {
  /** The node class with status filled in. */
  nodeClass: EC2NodeClass;
  ready: boolean;
  subnets: Subnet[];
  securityGroups: SecurityGroup[];
  amis: ResolvedAMI[];
  instanceProfile?: string;
  /** Reservations the selector terms found (empty without terms). */
  capacityReservations: CapacityReservation[];
  placementGroup?: PlacementGroup;
}

type Outcome = Pick<Condition, 'status' | 'reason' | 'message'>;

function failed(error: unknown): Outcome {
  const code = errorCode(error);
  return { status: 'Unknown', reason: 'ResolutionFailed', message: `${code ? `${code}: ` : ''}${errorMessage(error)}` };
}

async function attempt<T>(work: () => Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await work() };
  } catch (error) {
    return { error };
  }
}

export async function resolveNodeClass(
  nodeClass: EC2NodeClass,
  deps: NodeClassResolverDeps,
): Promise<NodeClassResolution> {
  const now = new Date((deps.clock ?? systemClock)()).toISOString();
  const outcomes = new Map<string, Outcome>();
  const spec = nodeClass.spec;

  const subnetsResult = await attempt(() => deps.subnets.list(spec.subnetSelectorTerms));
  const subnets = subnetsResult.value ?? [];
  outcomes.set(
    CONDITION_SUBNETS_READY,
    subnetsResult.error
      ? failed(subnetsResult.error)
      : subnets.length === 0
        ? { status: 'False', reason: 'SubnetsNotFound', message: 'SubnetSelector did not match any Subnets' }
        : { status: 'True', reason: CONDITION_SUBNETS_READY },
  );

  const groupsResult = await attempt(() => deps.securityGroups.list(spec.securityGroupSelectorTerms));
  const securityGroups = groupsResult.value ?? [];
  outcomes.set(
    CONDITION_SECURITY_GROUPS_READY,
    groupsResult.error
      ? failed(groupsResult.error)
      : securityGroups.length === 0
        ? {
            status: 'False',
            reason: 'SecurityGroupsNotFound',
            message: 'SecurityGroupSelector did not match any SecurityGroups',
          }
        : { status: 'True', reason: CONDITION_SECURITY_GROUPS_READY },
  );

  const hasAlias = spec.amiSelectorTerms.some((t) => t.alias);
  let amis: ResolvedAMI[] = [];
  if (hasAlias && !deps.k8sVersion) {
    outcomes.set(CONDITION_AMIS_READY, {
      status: 'Unknown',
      reason: 'KubernetesVersionUnknown',
      message: 'an alias needs the cluster Kubernetes version; pass --cluster-name so it is read from EKS',
    });
  } else {
    const amiResult = await attempt(() => deps.amis.resolve(nodeClass, deps.k8sVersion ?? ''));
    amis = amiResult.value ?? [];
    outcomes.set(
      CONDITION_AMIS_READY,
      amiResult.error instanceof UnsupportedAliasError
        ? { status: 'False', reason: 'UnsupportedAlias', message: amiResult.error.message }
        : amiResult.error
          ? failed(amiResult.error)
          : amis.length === 0
            ? { status: 'False', reason: 'AMINotFound', message: 'AMISelector did not match any AMIs' }
            : { status: 'True', reason: CONDITION_AMIS_READY },
    );
  }

  let instanceProfile: string | undefined;
  const profileResult = await attempt(async () => {
    if ((deps.mode ?? 'ensure') === 'ensure' && !spec.instanceProfile) {
      instanceProfile = await deps.instanceProfiles.ensure(nodeClass);
      return { status: 'True', reason: CONDITION_INSTANCE_PROFILE_READY } satisfies Outcome;
    }
    const state = await deps.instanceProfiles.inspect(nodeClass);
    if (!state.managed) {
      if (!state.exists) {
        return {
          status: 'False',
          reason: 'InstanceProfileNotFound',
          message: `spec.instanceProfile: instance profile "${state.name}" does not exist`,
        } satisfies Outcome;
      }
      instanceProfile = state.name;
      return { status: 'True', reason: CONDITION_INSTANCE_PROFILE_READY } satisfies Outcome;
    }
    if (state.exists && state.hasRole) {
      instanceProfile = state.name;
      return { status: 'True', reason: CONDITION_INSTANCE_PROFILE_READY } satisfies Outcome;
    }
    return {
      status: 'Unknown',
      reason: 'InstanceProfileNotCreated',
      message: `instance profile "${state.name}" with role "${spec.role ?? ''}" ${state.exists ? 'does not hold the role yet' : 'does not exist yet'}; it is created at the first launch`,
    } satisfies Outcome;
  });
  outcomes.set(
    CONDITION_INSTANCE_PROFILE_READY,
    profileResult.error ? failed(profileResult.error) : (profileResult.value as Outcome),
  );

  const reserved = await resolveCapacityReservations(spec, deps);
  if (reserved.outcome) outcomes.set(CONDITION_CAPACITY_RESERVATIONS_READY, reserved.outcome);
  const placement = await resolvePlacementGroup(spec, deps);
  if (placement.outcome) outcomes.set(CONDITION_PLACEMENT_GROUP_READY, placement.outcome);
  const dependents = [...NODECLASS_CONDITIONS, ...OPTIONAL_NODECLASS_CONDITIONS.filter((type) => outcomes.has(type))];

  const unhealthy = dependents.filter((type) => outcomes.get(type)?.status !== 'True');
  const ready: Outcome =
    unhealthy.length === 0
      ? { status: 'True', reason: CONDITION_READY }
      : {
          status: unhealthy.some((t) => outcomes.get(t)?.status === 'False') ? 'False' : 'Unknown',
          reason: 'UnhealthyDependents',
          message: unhealthy.map((t) => `${t}=${outcomes.get(t)?.status}`).join(', '),
        };
  outcomes.set(CONDITION_READY, ready);

  const previous = new Map((nodeClass.status?.conditions ?? []).map((c) => [c.type, c]));
  const conditions: Condition[] = [...dependents, CONDITION_READY].map((type) => {
    const outcome = outcomes.get(type) ?? { status: 'Unknown' };
    const before = previous.get(type);
    return {
      type,
      status: outcome.status,
      ...(outcome.reason ? { reason: outcome.reason } : {}),
      ...(outcome.message ? { message: outcome.message } : {}),
      lastTransitionTime:
        before && before.status === outcome.status && before.lastTransitionTime ? before.lastTransitionTime : now,
      ...(nodeClass.metadata.generation !== undefined ? { observedGeneration: nodeClass.metadata.generation } : {}),
    };
  });

  const status: EC2NodeClassStatus = {
    ...(subnets.length > 0
      ? { subnets: subnets.map((s) => ({ id: s.id, zone: s.zone, ...(s.zoneID ? { zoneID: s.zoneID } : {}) })) }
      : {}),
    ...(securityGroups.length > 0 ? { securityGroups: securityGroups.map((g) => ({ ...g })) } : {}),
    ...(amis.length > 0
      ? {
          amis: amis.map((a) => ({
            id: a.id,
            ...(a.name ? { name: a.name } : {}),
            ...(a.deprecated ? { deprecated: true } : {}),
            requirements: a.requirements,
          })),
        }
      : {}),
    ...placementStatus(reserved.reservations, placement.placementGroup),
    ...(instanceProfile ? { instanceProfile } : {}),
    conditions,
  };
  return {
    nodeClass: { ...nodeClass, status },
    ready: ready.status === 'True',
    subnets,
    securityGroups,
    amis,
    ...(instanceProfile ? { instanceProfile } : {}),
    capacityReservations: reserved.reservations,
    ...(placement.placementGroup ? { placementGroup: placement.placementGroup } : {}),
  };
}

/** The launch-path view of a ready node class; throws naming what is not ready. */
export function readyNodeClass(resolution: NodeClassResolution, cluster: ClusterInfo): ResolvedNodeClass {
  if (!resolution.ready || !resolution.instanceProfile) {
    const ready = resolution.nodeClass.status?.conditions?.find((c) => c.type === CONDITION_READY);
    const details = (resolution.nodeClass.status?.conditions ?? [])
      .filter((c) => c.type !== CONDITION_READY && c.status !== 'True')
      .map((c) => `${c.type}=${c.status} (${c.reason ?? ''}${c.message ? `: ${c.message}` : ''})`)
      .join('; ');
    throw new Error(
      `EC2NodeClass/${resolution.nodeClass.metadata.name} is not ready (${ready?.message ?? 'Ready is not True'}): ${details}`,
    );
  }
  return {
    subnets: resolution.subnets,
    securityGroups: resolution.securityGroups,
    amis: resolution.amis,
    instanceProfile: resolution.instanceProfile,
    cluster,
    ...(resolution.placementGroup
      ? { placementGroupId: resolution.placementGroup.id, placementGroupStrategy: resolution.placementGroup.strategy }
      : {}),
  };
}
