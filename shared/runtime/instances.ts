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
import { isNotFound } from '../providers/aws-errors';

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

export class ClaimInstances {
  constructor(
    private readonly ec2: InstancesPort,
    private readonly cluster: string,
  ) {}

  private async describe(input: DescribeInstancesCommandInput): Promise<ClaimInstance[]> {
    const out: ClaimInstance[] = [];
    let token: string | undefined;
    do {
      const page = await this.ec2.describeInstances({ ...input, ...(token ? { NextToken: token } : {}) });
      for (const reservation of page.Reservations ?? []) {
        for (const instance of reservation.Instances ?? []) {
          const claim = claimInstance(instance, this.cluster);
          if (claim) out.push(claim);
        }
      }
      token = page.NextToken;
    } while (token);
    return out;
  }

  /**
   * The given instances that are ours, in any state. A filter (not InstanceIds) so an id that does
   * not exist is simply absent instead of failing the whole call.
   */
  async byIds(instanceIds: readonly string[]): Promise<Map<string, ClaimInstance>> {
    if (instanceIds.length === 0) return new Map();
    const found = await this.describe({
      Filters: [
        { Name: 'instance-id', Values: [...instanceIds] },
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

  /** Terminates the instances; one already gone is not an error. */
  async terminate(instanceIds: readonly string[]): Promise<void> {
    if (instanceIds.length === 0) return;
    try {
      await this.ec2.terminateInstances({ InstanceIds: [...instanceIds] });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
