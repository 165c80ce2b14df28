import type {
  CreateFleetCommandInput,
  CreateFleetCommandOutput,
  CreateTagsCommandInput,
  DescribeInstancesCommandInput,
  Instance,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import type { InstanceType } from '../../shared/instancetypes/types';
import { LAUNCH_BATCH_TAG } from '../../shared/launch/request';
import {
  InsufficientCapacityError,
  LaunchError,
  type LaunchRequest,
  type ResolvedNodeClass,
} from '../../shared/providers/instance';
import { BatchingInstanceLauncher } from '../../shared/providers/instance/batch';
import type { EC2Api } from '../../shared/providers/ports';
import { InMemoryUnavailableOfferings } from '../../shared/providers/unavailableofferings';
import { fakeClock, recordingFake } from './fakes';

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'Node',
  },
};

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      spec: { requirements: [], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
    },
  },
};

function instanceType(name: string, price: number): InstanceType {
  return {
    name,
    labels: { 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/instance-type': name },
    capacity: { cpu: 2000, memory: 8 * 2 ** 30, pods: 29 },
    overhead: { kubeReserved: {}, systemReserved: {}, evictionThreshold: {} },
    allocatable: { cpu: 1930, memory: 7 * 2 ** 30, pods: 29 },
    offerings: [{ zone: 'us-west-2a', capacityType: 'on-demand', price, available: true }],
    info: {
      name,
      arch: 'amd64',
      vcpu: 2,
      memoryMiB: 8192,
      maximumNetworkInterfaces: 3,
      ipv4PerInterface: 10,
      gpus: 0,
      offerings: [],
    },
  };
}

const resolved: ResolvedNodeClass = {
  subnets: [{ id: 'subnet-a', zone: 'us-west-2a', availableIps: 1000, tags: {} }],
  securityGroups: [{ id: 'sg-1' }],
  amis: [{ id: 'ami-x86', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }],
  instanceProfile: 'c1_123',
  cluster: {
    name: 'c1',
    endpoint: 'https://c1.example',
    caBundle: 'Y2E=',
    serviceCIDR: '172.20.0.0/16',
    version: '1.31',
    dnsIP: '172.20.0.10',
    ipv6: false,
  },
};

const TYPES = [instanceType('m5.large', 0.096), instanceType('m5.xlarge', 0.192)];

function member(name: string): LaunchRequest {
  return { nodeClaimName: name, nodePool, nodeClass, instanceTypes: TYPES, requirements: [], labels: {} };
}

function fleetOf(
  type: string,
  ids: string[],
  errors: CreateFleetCommandOutput['Errors'] = [],
): CreateFleetCommandOutput {
  return {
    $metadata: {},
    Instances: ids.length
      ? [
          {
            InstanceIds: ids,
            InstanceType: type as never,
            Lifecycle: 'on-demand',
            LaunchTemplateAndOverrides: { Overrides: { InstanceType: type as never, AvailabilityZone: 'us-west-2a' } },
          },
        ]
      : [],
    Errors: errors,
  };
}

function setup(
  fleet: (input: CreateFleetCommandInput, call: number) => CreateFleetCommandOutput,
  earlier: Instance[] = [],
) {
  let call = 0;
  const fleets: CreateFleetCommandInput[] = [];
  const ec2 = recordingFake<EC2Api>({
    describeInstances: (input: DescribeInstancesCommandInput) => {
      const filters = input.Filters ?? [];
      const matches = earlier.filter((i) =>
        filters
          .filter((f) => f.Name?.startsWith('tag:'))
          .every((f) => (f.Values ?? []).includes(i.Tags?.find((t) => `tag:${t.Key}` === f.Name)?.Value ?? '\u0000')),
      );
      return { $metadata: {}, Reservations: [{ Instances: matches }] };
    },
    createFleet: (input: CreateFleetCommandInput) => {
      fleets.push(input);
      return fleet(input, call++);
    },
    createTags: () => ({}),
  });
  const unavailable = new InMemoryUnavailableOfferings(fakeClock());
  const launcher = new BatchingInstanceLauncher({
    ec2,
    launchTemplates: {
      ensure: async (input) => ({ name: input.LaunchTemplateName ?? '', id: 'lt-1', created: false }),
      invalidate: () => {},
    },
    unavailable,
    clusterName: 'c1',
    sleep: async () => {},
  });
  return { ec2, launcher, unavailable, fleets };
}

const capacityOf = (input: CreateFleetCommandInput | undefined) =>
  input?.TargetCapacitySpecification?.TotalTargetCapacity;
const tagsOf = (input: CreateFleetCommandInput | undefined) =>
  Object.fromEntries(
    (input?.TagSpecifications?.find((t) => t.ResourceType === 'instance')?.Tags ?? []).map((t) => [t.Key, t.Value]),
  );

describe('BatchingInstanceLauncher', () => {
  it('launches identical claims with one CreateFleet for all of them and hands each one instance', async () => {
    const { launcher, fleets } = setup((input) =>
      fleetOf('m5.large', ['i-03', 'i-01', 'i-02'].slice(0, capacityOf(input))),
    );
    const out = await launcher.launchBatch([member('c-b'), member('c-a'), member('c-c')], resolved, 'b-1');
    expect(fleets).toHaveLength(1);
    expect(capacityOf(fleets[0])).toBe(3);
    // Claim tags come after the launch: the fleet carries the batch's tag, never one claim's name.
    expect(tagsOf(fleets[0])[LAUNCH_BATCH_TAG]).toBe('b-1');
    expect(tagsOf(fleets[0])['karpenter.sh/nodeclaim']).toBeUndefined();
    expect(tagsOf(fleets[0]).Name).toBeUndefined();
    // Instances in id order to members in name order: a replay hands out the same pairs.
    expect([...out.entries()].map(([name, r]) => [name, r instanceof Error ? r.message : r.instanceId]).sort()).toEqual(
      [
        ['c-a', 'i-01'],
        ['c-b', 'i-02'],
        ['c-c', 'i-03'],
      ],
    );
  });

  it('derives the token from the members, whatever their order, and changes it when they change', async () => {
    const first = setup((input) => fleetOf('m5.large', ['i-1', 'i-2'].slice(0, capacityOf(input))));
    await first.launcher.launchBatch([member('x'), member('y')], resolved, 'b-2');
    const again = setup((input) => fleetOf('m5.large', ['i-1', 'i-2'].slice(0, capacityOf(input))));
    await again.launcher.launchBatch([member('y'), member('x')], resolved, 'b-2');
    const fewer = setup((input) => fleetOf('m5.large', ['i-1'].slice(0, capacityOf(input))));
    await fewer.launcher.launchBatch([member('x')], resolved, 'b-2');
    expect(again.fleets[0]?.ClientToken).toBe(first.fleets[0]?.ClientToken);
    expect(fewer.fleets[0]?.ClientToken).not.toBe(first.fleets[0]?.ClientToken);
    expect(first.fleets[0]?.ClientToken?.length).toBeLessThanOrEqual(64);
  });

  it('retries the members a partial fleet left without an instance on their next offering, after marking the ICE', async () => {
    const { launcher, fleets, unavailable } = setup((input, call) =>
      call === 0
        ? fleetOf(
            'm5.large',
            ['i-1', 'i-2'],
            [
              {
                ErrorCode: 'InsufficientInstanceCapacity',
                ErrorMessage: 'no more m5.large',
                LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2a' } },
              },
            ],
          )
        : fleetOf('m5.xlarge', ['i-3', 'i-4'].slice(0, capacityOf(input))),
    );
    const out = await launcher.launchBatch(['a', 'b', 'c', 'd'].map(member), resolved, 'b-3');
    expect(fleets.map(capacityOf)).toEqual([4, 2]);
    expect(JSON.stringify(fleets[1]?.LaunchTemplateConfigs)).not.toContain('"m5.large"');
    expect(await unavailable.isUnavailable('on-demand', 'm5.large', 'us-west-2a')).toBe(true);
    expect([...out.values()].map((r) => (r instanceof Error ? 'error' : r.instanceType)).sort()).toEqual([
      'm5.large',
      'm5.large',
      'm5.xlarge',
      'm5.xlarge',
    ]);
  });

  it('gives the members left the fleet’s errors when nothing else can launch them', async () => {
    const { launcher } = setup(() =>
      fleetOf('m5.large', ['i-1'], [{ ErrorCode: 'UnauthorizedOperation', ErrorMessage: 'not allowed' }]),
    );
    const out = await launcher.launchBatch(['a', 'b'].map(member), resolved, 'b-4');
    expect(out.get('a')).toMatchObject({ instanceId: 'i-1' });
    expect(out.get('b')).toBeInstanceOf(LaunchError);
    expect((out.get('b') as Error).message).toContain('UnauthorizedOperation');

    const ice = setup(() =>
      fleetOf(
        'm5.large',
        [],
        [
          {
            ErrorCode: 'InsufficientInstanceCapacity',
            ErrorMessage: 'none',
            LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2a' } },
          },
          {
            ErrorCode: 'InsufficientInstanceCapacity',
            ErrorMessage: 'none',
            LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.xlarge', AvailabilityZone: 'us-west-2a' } },
          },
        ],
      ),
    );
    const none = await ice.launcher.launchBatch(['a', 'b'].map(member), resolved, 'b-5');
    expect(none.get('a')).toBeInstanceOf(InsufficientCapacityError);
    expect(none.get('b')).toBeInstanceOf(InsufficientCapacityError);
  });

  it('hands out the instances an interrupted attempt launched instead of launching again', async () => {
    const tags = (extra: Record<string, string>) =>
      Object.entries({ 'eks:eks-cluster-name': 'c1', [LAUNCH_BATCH_TAG]: 'b-6', ...extra }).map(([Key, Value]) => ({
        Key,
        Value,
      }));
    const earlier: Instance[] = [
      {
        InstanceId: 'i-9',
        InstanceType: 'm5.large',
        Placement: { AvailabilityZone: 'us-west-2a' },
        Tags: tags({ 'karpenter.sh/nodeclaim': 'b' }),
      },
      { InstanceId: 'i-7', InstanceType: 'm5.large', Placement: { AvailabilityZone: 'us-west-2a' }, Tags: tags({}) },
    ];
    const { launcher, fleets } = setup((input) => fleetOf('m5.large', ['i-8'].slice(0, capacityOf(input))), earlier);
    const out = await launcher.launchBatch(['a', 'b', 'c'].map(member), resolved, 'b-6');
    expect(out.get('b')).toMatchObject({ instanceId: 'i-9', existing: true, tagged: true });
    expect(out.get('a')).toMatchObject({ instanceId: 'i-7', existing: true, tagged: false });
    expect(out.get('c')).toMatchObject({ instanceId: 'i-8', existing: false, tagged: false });
    expect(fleets.map(capacityOf)).toEqual([1]);
  });

  it('tags an instance with its claim’s name and Name after the launch', async () => {
    const { launcher, ec2 } = setup(() => fleetOf('m5.large', []));
    await launcher.tagClaim('i-1', 'general-abcde', nodeClass);
    await launcher.tagClaim('i-2', 'general-fghij', {
      ...nodeClass,
      spec: { ...nodeClass.spec, tags: { Name: 'mine' } },
    });
    const calls = ec2.callsTo('createTags') as CreateTagsCommandInput[];
    expect(calls[0]).toEqual({
      Resources: ['i-1'],
      Tags: [
        { Key: 'karpenter.sh/nodeclaim', Value: 'general-abcde' },
        { Key: 'Name', Value: 'general-abcde' },
      ],
    });
    expect(calls[1]?.Tags).toEqual([{ Key: 'karpenter.sh/nodeclaim', Value: 'general-fghij' }]);
  });
});
