// Our instances, read from EC2 tags: EC2 is the source of truth for NodeClaims. An instance is ours
// when it carries this cluster's eks:eks-cluster-name tag and a karpenter.sh/nodeclaim tag; anything
// else (another cluster's node, a managed node group, an instance that does not exist) is not.

import type {
  DescribeInstancesCommandInput,
  DescribeInstancesCommandOutput,
  Instance,
  TerminateInstancesCommandInput,
  TerminateInstancesCommandOutput,
} from '@aws-sdk/client-ec2';
import { TAG } from '../contracts';
import { HASH_TAG_KEYS } from '../disruption/hash';
import type { CapacityType } from '../instancetypes/types';
import { LAUNCH_BATCH_TAG } from '../launch/request';
import { isNotFound } from '../providers/aws-errors';
import { mapLimit } from './concurrency';
import { IdBatcher } from './instance-batches';

export interface InstancesPort {
  describeInstances(input: DescribeInstancesCommandInput): Promise<DescribeInstancesCommandOutput>;
  terminateInstances(input: TerminateInstancesCommandInput): Promise<TerminateInstancesCommandOutput>;
}

/** One launched NodeClaim as EC2 knows it. */
export interface ClaimInstance {
  instanceId: string;
  nodeClaimName: string;
  nodePool: string;
  nodeClass: string;
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  /** Reserved instances: the capacity reservation it runs in, and whether that is a capacity block. */
  reservation?: { id: string; type: 'default' | 'capacity-block' };
  /** pending, running, stopping, stopped, shutting-down, terminated. */
  state: string;
  /** Epoch ms. */
  launchTime?: number;
  /** EKS nodes are usually named after it: a cheap first guess at the instance's Node. */
  privateDnsName?: string;
  /** What the drift check compares with today's configuration (shared/disruption/drift.ts). */
  imageId?: string;
  subnetId?: string;
  securityGroupIds?: string[];
  /** The static drift hash tags the instance was launched with (shared/disruption/hash.ts), if any. */
  hashTags?: Record<string, string>;
}

/** An instance a launch batch started and no claim took (see ClaimInstances.unclaimedLaunches). */
export interface UnclaimedLaunch {
  instanceId: string;
  batch: string;
  /** Epoch ms. */
  launchTime?: number;
}

/** The instance id of an AWS providerID (`aws:///us-west-2a/i-0123…`), or undefined for any other. */
export function instanceIdFromProviderID(providerID: string | undefined): string | undefined {
  if (!providerID?.startsWith('aws://')) return undefined;
  const last = providerID.split('/').pop() ?? '';
  return /^i-[0-9a-f]+$/.test(last) ? last : undefined;
}

function tagValue(instance: Instance, key: string): string | undefined {
  return instance.Tags?.find((t) => t.Key === key)?.Value;
}

function claimInstance(instance: Instance, cluster: string): ClaimInstance | undefined {
  const nodeClaimName = tagValue(instance, TAG.nodeClaim);
  if (!instance.InstanceId || !nodeClaimName || tagValue(instance, TAG.clusterName) !== cluster) return undefined;
  return {
    instanceId: instance.InstanceId,
    nodeClaimName,
    nodePool: tagValue(instance, TAG.nodePool) ?? '',
    nodeClass: tagValue(instance, TAG.nodeClass) ?? '',
    instanceType: instance.InstanceType ?? '',
    zone: instance.Placement?.AvailabilityZone ?? '',
    // Only reserved launches target a reservation (the others send preference "none").
    capacityType: instance.CapacityReservationId
      ? 'reserved'
      : instance.InstanceLifecycle === 'spot'
        ? 'spot'
        : 'on-demand',
    ...(instance.CapacityReservationId
      ? {
          reservation: {
            id: instance.CapacityReservationId,
            type: instance.InstanceLifecycle === 'capacity-block' ? ('capacity-block' as const) : ('default' as const),
          },
        }
      : {}),
    state: instance.State?.Name ?? 'unknown',
    ...(instance.LaunchTime ? { launchTime: new Date(instance.LaunchTime).getTime() } : {}),
    ...(instance.PrivateDnsName ? { privateDnsName: instance.PrivateDnsName } : {}),
    ...driftFields(instance),
  };
}

function driftFields(instance: Instance): Partial<ClaimInstance> {
  const hashTags: Record<string, string> = {};
  for (const key of HASH_TAG_KEYS) {
    const value = tagValue(instance, key);
    if (value !== undefined) hashTags[key] = value;
  }
  const groups = (instance.SecurityGroups ?? []).flatMap((g) => (g.GroupId ? [g.GroupId] : []));
  return {
    ...(instance.ImageId ? { imageId: instance.ImageId } : {}),
    ...(instance.SubnetId ? { subnetId: instance.SubnetId } : {}),
    ...(groups.length > 0 ? { securityGroupIds: groups.sort() } : {}),
    ...(Object.keys(hashTags).length > 0 ? { hashTags } : {}),
  };
}

const LIVE_STATES = ['pending', 'running'];

/** EC2 refuses more values than this in one filter (FilterLimitExceeded). */
const MAX_FILTER_VALUES = 200;
/** Karpenter's terminate batch size (EC2 takes up to 1,000 ids). */
const MAX_TERMINATE_IDS = 500;
/** Ids retried alone at once after a merged TerminateInstances left them running. */
const SINGLE_TERMINATE_CONCURRENCY = 8;
const TERMINATING_STATES = new Set(['shutting-down', 'terminated']);

/** What TerminateInstances said of one id: nothing when it is going (or already gone). */
interface TerminateOutcome {
  error?: unknown;
}

export class ClaimInstances {
  private readonly describeBatches: IdBatcher<ClaimInstance>;
  private readonly terminateBatches: IdBatcher<TerminateOutcome>;

  constructor(
    private readonly ec2: InstancesPort,
    private readonly cluster: string,
  ) {
    this.describeBatches = new IdBatcher((ids) => this.describeIds(ids), MAX_FILTER_VALUES);
    this.terminateBatches = new IdBatcher((ids) => this.terminateIds(ids), MAX_TERMINATE_IDS);
  }

  /** DescribeInstances and TerminateInstances calls made so far through the batches. */
  get batchedCalls(): { describe: number; terminate: number } {
    return { describe: this.describeBatches.calls, terminate: this.terminateBatches.calls };
  }

  /** Every instance the filters match, all pages. */
  private async describeAll(input: DescribeInstancesCommandInput): Promise<Instance[]> {
    const out: Instance[] = [];
    let token: string | undefined;
    do {
      const page = await this.ec2.describeInstances({ ...input, ...(token ? { NextToken: token } : {}) });
      for (const reservation of page.Reservations ?? []) out.push(...(reservation.Instances ?? []));
      token = page.NextToken;
    } while (token);
    return out;
  }

  private async describe(input: DescribeInstancesCommandInput): Promise<ClaimInstance[]> {
    return (await this.describeAll(input)).flatMap((instance) => claimInstance(instance, this.cluster) ?? []);
  }

  /**
   * The given instances that are ours, in any state. A filter (not InstanceIds) so an id that does
   * not exist is simply absent instead of failing the whole call. Concurrent callers share calls.
   */
  byIds(instanceIds: readonly string[]): Promise<Map<string, ClaimInstance>> {
    return this.describeBatches.request(instanceIds);
  }

  private async describeIds(ids: string[]): Promise<Map<string, ClaimInstance>> {
    const found = await this.describe({
      Filters: [
        { Name: 'instance-id', Values: ids },
        { Name: `tag:${TAG.clusterName}`, Values: [this.cluster] },
      ],
    });
    return new Map(found.map((i) => [i.instanceId, i]));
  }

  /** Our pending or running instances: the candidates for in-flight NodeClaims. */
  async live(): Promise<ClaimInstance[]> {
    return this.describe({
      Filters: [
        { Name: `tag:${TAG.clusterName}`, Values: [this.cluster] },
        { Name: `tag-key`, Values: [TAG.nodeClaim] },
        { Name: 'instance-state-name', Values: LIVE_STATES },
      ],
    });
  }

  /**
   * Instances of this cluster launched by a batch (they carry its launch-batch tag) that no claim's
   * tag was ever put on: the launcher died between CreateFleet and tagging, and no later attempt
   * adopted them. Nothing else lists them (they are not `live()`), so gc looks for them here.
   */
  async unclaimedLaunches(): Promise<UnclaimedLaunch[]> {
    const launched = await this.describeAll({
      Filters: [
        { Name: `tag:${TAG.clusterName}`, Values: [this.cluster] },
        { Name: 'tag-key', Values: [LAUNCH_BATCH_TAG] },
        { Name: 'instance-state-name', Values: LIVE_STATES },
      ],
    });
    return launched.flatMap((instance) =>
      instance.InstanceId && tagValue(instance, TAG.nodeClaim) === undefined
        ? [
            {
              instanceId: instance.InstanceId,
              batch: tagValue(instance, LAUNCH_BATCH_TAG) ?? '',
              ...(instance.LaunchTime ? { launchTime: new Date(instance.LaunchTime).getTime() } : {}),
            },
          ]
        : [],
    );
  }

  /**
   * Terminates the instances; one already gone is not an error. Concurrent callers share calls; an
   * id the merged call did not start terminating is tried alone, so one bad id fails only its caller.
   */
  async terminate(instanceIds: readonly string[]): Promise<void> {
    const outcomes = await this.terminateBatches.request(instanceIds);
    for (const id of instanceIds) {
      const error = outcomes.get(id)?.error;
      if (error !== undefined) throw error;
    }
  }

  private async terminateIds(ids: string[]): Promise<Map<string, TerminateOutcome>> {
    const outcomes = new Map<string, TerminateOutcome>();
    let failure: unknown;
    try {
      const out = await this.ec2.terminateInstances({ InstanceIds: ids });
      for (const change of out.TerminatingInstances ?? []) {
        if (change.InstanceId && TERMINATING_STATES.has(change.CurrentState?.Name ?? '')) {
          outcomes.set(change.InstanceId, {});
        }
      }
    } catch (error) {
      // One id EC2 does not know fails the whole call (InvalidInstanceID.NotFound): the rest go alone.
      failure = error;
    }
    const [single] = ids;
    if (ids.length === 1 && single !== undefined) {
      if (failure === undefined || isNotFound(failure)) return new Map([[single, {}]]);
      return new Map([[single, { error: failure }]]);
    }
    const rest = ids.filter((id) => !outcomes.has(id));
    await mapLimit(rest, SINGLE_TERMINATE_CONCURRENCY, async (id) => {
      try {
        await this.ec2.terminateInstances({ InstanceIds: [id] });
        outcomes.set(id, {});
      } catch (error) {
        outcomes.set(id, isNotFound(error) ? {} : { error });
      }
    });
    return outcomes;
  }
}
