import type {
  CreateFleetCommandInput,
  CreateFleetCommandOutput,
  CreateLaunchTemplateCommandInput,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import type { InstanceType } from '../../shared/instancetypes/types';
import {
  InstanceLauncher,
  InsufficientCapacityError,
  isSpreadPlacementGroupLimit,
  LaunchError,
  type LaunchRequest,
  type ResolvedNodeClass,
} from '../../shared/providers/instance';
import type { EC2Api } from '../../shared/providers/ports';
import { InMemoryUnavailableOfferings } from '../../shared/providers/unavailableofferings';
import { awsError, fakeClock, recordingFake } from './fakes';

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'Node',
    tags: { team: 'a' },
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

function instanceType(name: string, price: number, zones = ['us-west-2a', 'us-west-2b']): InstanceType {
  return {
    name,
    labels: { 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/instance-type': name },
    capacity: { cpu: 2000, memory: 8 * 2 ** 30, pods: 29 },
    overhead: { kubeReserved: {}, systemReserved: {}, evictionThreshold: {} },
    allocatable: { cpu: 1930, memory: 7 * 2 ** 30, pods: 29 },
    offerings: zones.map((zone) => ({ zone, capacityType: 'on-demand', price, available: true })),
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
  subnets: [
    { id: 'subnet-a', zone: 'us-west-2a', availableIps: 100, tags: {} },
    { id: 'subnet-b', zone: 'us-west-2b', availableIps: 50, tags: {} },
  ],
  securityGroups: [{ id: 'sg-1' }],
  amis: [
    {
      id: 'ami-x86',
      requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
    },
  ],
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

function request(types: InstanceType[]): LaunchRequest {
  return {
    nodeClaimName: 'general-abcde',
    nodePool,
    nodeClass,
    instanceTypes: types,
    requirements: [],
    capacityType: 'on-demand',
    labels: {},
  };
}

function launched(type: string, zone: string): CreateFleetCommandOutput {
  return {
    $metadata: {},
    Instances: [
      {
        InstanceIds: ['i-0123'],
        InstanceType: type as never,
        Lifecycle: 'on-demand',
        LaunchTemplateAndOverrides: { Overrides: { InstanceType: type as never, AvailabilityZone: zone } },
      },
    ],
  };
}

function ice(type: string, zone: string, code = 'InsufficientInstanceCapacity'): CreateFleetCommandOutput {
  return {
    $metadata: {},
    Errors: [
      {
        ErrorCode: code,
        ErrorMessage: `no ${type} in ${zone}`,
        LaunchTemplateAndOverrides: { Overrides: { InstanceType: type as never, AvailabilityZone: zone } },
      },
    ],
  };
}

function overridesOf(input: unknown): string[] {
  return ((input as CreateFleetCommandInput).LaunchTemplateConfigs ?? []).flatMap((c) =>
    (c.Overrides ?? []).map((o) => `${o.InstanceType}:${o.AvailabilityZone}`),
  );
}

function setup(fleet: (input: CreateFleetCommandInput, call: number) => CreateFleetCommandOutput) {
  let call = 0;
  const ec2 = recordingFake<EC2Api>({
    describeInstances: () => ({ $metadata: {}, Reservations: [] }),
    createFleet: (input) => fleet(input, call++),
  });
  const ensured: string[] = [];
  const invalidated: string[] = [];
  const launchTemplates = {
    ensure: async (input: CreateLaunchTemplateCommandInput) => {
      ensured.push(input.LaunchTemplateName ?? '');
      return { name: input.LaunchTemplateName ?? '', id: 'lt-1', created: false };
    },
    invalidate: (name: string) => {
      invalidated.push(name);
    },
  };
  const clock = fakeClock();
  const unavailable = new InMemoryUnavailableOfferings(clock);
  const sleeps: number[] = [];
  const launcher = new InstanceLauncher({
    ec2,
    launchTemplates,
    unavailable,
    clusterName: 'c1',
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    // The top of the jitter range: the waits are the backoff itself.
    random: () => 1,
  });
  return { ec2, launcher, unavailable, clock, ensured, invalidated, sleeps };
}

const cheap = instanceType('m5.large', 0.096);
const dear = instanceType('m5.xlarge', 0.192);

describe('InstanceLauncher', () => {
  it('returns the instance the claim already has instead of launching another', async () => {
    const ec2 = recordingFake<EC2Api>({
      describeInstances: () => ({
        $metadata: {},
        Reservations: [
          {
            Instances: [
              {
                InstanceId: 'i-old',
                InstanceType: 'm5.xlarge',
                Placement: { AvailabilityZone: 'us-west-2b' },
                InstanceLifecycle: 'spot',
                ImageId: 'ami-x86',
              },
            ],
          },
        ],
      }),
    });
    const launcher = new InstanceLauncher({
      ec2,
      launchTemplates: { ensure: async () => ({ name: 'x', id: 'y', created: false }), invalidate: () => {} },
      unavailable: new InMemoryUnavailableOfferings(fakeClock()),
      clusterName: 'c1',
    });
    expect(await launcher.launch(request([cheap]), resolved)).toEqual({
      instanceId: 'i-old',
      instanceType: 'm5.xlarge',
      zone: 'us-west-2b',
      capacityType: 'spot',
      imageId: 'ami-x86',
      existing: true,
    });
    // No CreateFleet (the fake would have thrown on it), only the lookup by claim tag.
    expect(ec2.calls).toEqual([
      {
        method: 'describeInstances',
        input: {
          Filters: [
            { Name: 'tag:karpenter.sh/nodeclaim', Values: ['general-abcde'] },
            { Name: 'tag:eks:eks-cluster-name', Values: ['c1'] },
            { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
          ],
        },
      },
    ]);
  });

  it('ensures the template and launches the cheapest offerings with a claim-derived ClientToken', async () => {
    const { ec2, launcher, ensured } = setup(() => launched('m5.large', 'us-west-2a'));
    const result = await launcher.launch(request([cheap, dear]), resolved);
    expect(result).toEqual({
      instanceId: 'i-0123',
      instanceType: 'm5.large',
      zone: 'us-west-2a',
      capacityType: 'on-demand',
      imageId: 'ami-x86',
      existing: false,
    });
    expect(ensured).toHaveLength(1);
    const [fleet] = ec2.callsTo('createFleet') as CreateFleetCommandInput[];
    expect(overridesOf(fleet)).toEqual([
      'm5.large:us-west-2a',
      'm5.large:us-west-2b',
      'm5.xlarge:us-west-2a',
      'm5.xlarge:us-west-2b',
    ]);
    expect(fleet?.ClientToken).toMatch(/^karpless-/);
    const tags = Object.fromEntries((fleet?.TagSpecifications?.[0]?.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject({ 'karpenter.sh/nodeclaim': 'general-abcde', Name: 'general-abcde', team: 'a' });
    expect(tags).not.toHaveProperty('karpenter.sh/managed-by');
  });

  it('gives a redelivered launch of the same claim the same ClientToken', async () => {
    const first = setup(() => launched('m5.large', 'us-west-2a'));
    const second = setup(() => launched('m5.large', 'us-west-2a'));
    await first.launcher.launch(request([cheap]), resolved);
    await second.launcher.launch(request([cheap]), resolved);
    const token = (s: typeof first) => (s.ec2.callsTo('createFleet')[0] as CreateFleetCommandInput).ClientToken;
    expect(token(first)).toBe(token(second));
  });

  it('marks an ICE offering unavailable for 3 minutes and retries with what remains', async () => {
    const { ec2, launcher, unavailable, clock } = setup((_input, call) =>
      call === 0 ? ice('m5.large', 'us-west-2a') : launched('m5.large', 'us-west-2b'),
    );
    const result = await launcher.launch(request([cheap, dear]), resolved);
    expect(result).toMatchObject({ instanceType: 'm5.large', zone: 'us-west-2b' });
    const calls = ec2.callsTo('createFleet') as CreateFleetCommandInput[];
    expect(overridesOf(calls[1])).toEqual(['m5.large:us-west-2b', 'm5.xlarge:us-west-2a', 'm5.xlarge:us-west-2b']);
    expect(calls[1]?.ClientToken).not.toBe(calls[0]?.ClientToken);
    expect(unavailable.isUnavailable('on-demand', 'm5.large', 'us-west-2a')).toBe(true);
    clock.advance(180_000);
    expect(unavailable.isUnavailable('on-demand', 'm5.large', 'us-west-2a')).toBe(false);
  });

  it('skips offerings already in the unavailable cache', async () => {
    const { ec2, launcher, unavailable } = setup(() => launched('m5.xlarge', 'us-west-2a'));
    unavailable.markUnavailable('on-demand', 'm5.large', 'us-west-2a', 'ICE');
    unavailable.markUnavailable('on-demand', 'm5.large', 'us-west-2b', 'ICE');
    await launcher.launch(request([cheap, dear]), resolved);
    expect(overridesOf(ec2.callsTo('createFleet')[0])).toEqual(['m5.xlarge:us-west-2a', 'm5.xlarge:us-west-2b']);
  });

  it('throws InsufficientCapacityError listing every reason when nothing remains', async () => {
    const { ec2, launcher } = setup((input) => {
      const [first = ''] = overridesOf(input);
      const [type = '', zone = ''] = first.split(':');
      return ice(type, zone, type === 'm5.large' ? 'InsufficientInstanceCapacity' : 'VcpuLimitExceeded');
    });
    const error = await launcher.launch(request([cheap, dear]), resolved).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientCapacityError);
    expect((error as InsufficientCapacityError).failures.map((f) => `${f.offering} ${f.code}`)).toEqual([
      'on-demand:m5.large:us-west-2a InsufficientInstanceCapacity',
      'on-demand:m5.large:us-west-2b InsufficientInstanceCapacity',
      'on-demand:m5.xlarge:us-west-2a VcpuLimitExceeded',
      'on-demand:m5.xlarge:us-west-2b VcpuLimitExceeded',
    ]);
    expect((error as Error).message).toContain('on-demand:m5.xlarge:us-west-2b: VcpuLimitExceeded');
    expect(ec2.callsTo('createFleet')).toHaveLength(4);
  });

  it('retries a throttled CreateFleet with backoff', async () => {
    const { launcher, sleeps } = setup((_, call) => {
      if (call < 2) throw awsError('RequestLimitExceeded', 'Request limit exceeded.');
      return launched('m5.large', 'us-west-2a');
    });
    expect(await launcher.launch(request([cheap]), resolved)).toMatchObject({ instanceId: 'i-0123' });
    expect(sleeps).toEqual([500, 1000]);
  });

  it('gives up on throttling after its retries and says so', async () => {
    const { launcher, sleeps } = setup(() => {
      throw awsError('RequestLimitExceeded');
    });
    await expect(launcher.launch(request([cheap]), resolved)).rejects.toThrow(/still throttled after 5 attempts/);
    expect(sleeps).toEqual([500, 1000, 2000, 4000]);
  });

  it('recreates a launch template EC2 reports missing, once', async () => {
    const { ec2, launcher, ensured, invalidated } = setup((_, call) =>
      call === 0
        ? ice('m5.large', 'us-west-2a', 'InvalidLaunchTemplateName.NotFoundException')
        : launched('m5.large', 'us-west-2a'),
    );
    await launcher.launch(request([cheap]), resolved);
    expect(invalidated).toHaveLength(1);
    expect(ensured).toHaveLength(2);
    expect(ec2.callsTo('createFleet')).toHaveLength(2);
  });

  it('reports errors that are not about capacity as a LaunchError', async () => {
    const { launcher, unavailable } = setup(() => ice('m5.large', 'us-west-2a', 'UnauthorizedOperation'));
    await expect(launcher.launch(request([cheap]), resolved)).rejects.toThrow(LaunchError);
    expect(unavailable.snapshot()).toEqual({});
  });

  it('refuses a claim whose types have no offering in the node class subnets', async () => {
    const { ec2, launcher } = setup(() => launched('x', 'y'));
    const elsewhere = instanceType('m5.large', 0.1, ['us-west-2c']);
    await expect(launcher.launch(request([elsewhere]), resolved)).rejects.toThrow(InsufficientCapacityError);
    expect(ec2.callsTo('createFleet')).toEqual([]);
  });
});

function fleetError(
  type: string,
  zone: string,
  code: string,
  subnetId?: string,
): NonNullable<CreateFleetCommandOutput['Errors']>[number] {
  return {
    ErrorCode: code,
    ErrorMessage: code,
    LaunchTemplateAndOverrides: {
      Overrides: { InstanceType: type as never, AvailabilityZone: zone, ...(subnetId ? { SubnetId: subnetId } : {}) },
    },
  };
}

describe('InstanceLauncher: the claim requirements decide where it launches', () => {
  it('sends overrides only in the zone a zone-pinned claim allows', async () => {
    const { ec2, launcher } = setup(() => launched('m5.large', 'us-west-2b'));
    const pinned: LaunchRequest = {
      ...request([cheap, dear]),
      requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2b'] }],
    };
    await launcher.launch(pinned, resolved);
    expect(overridesOf(ec2.callsTo('createFleet')[0])).toEqual(['m5.large:us-west-2b', 'm5.xlarge:us-west-2b']);
  });

  it('lets the launch choose spot when the claim allows both and no capacity type is pinned', async () => {
    const { ec2, launcher } = setup(() => launched('m5.large', 'us-west-2a'));
    const spotAndOd = instanceType('m5.large', 0.096);
    spotAndOd.offerings.push({ zone: 'us-west-2a', capacityType: 'spot', price: 0.03, available: true });
    const { capacityType: _pin, ...unpinned } = request([spotAndOd]);
    await launcher.launch(
      {
        ...unpinned,
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }],
      },
      resolved,
    );
    const [fleet] = ec2.callsTo('createFleet') as CreateFleetCommandInput[];
    expect(fleet?.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('spot');
    expect(overridesOf(fleet)).toEqual(['m5.large:us-west-2a']);
  });
});

describe('InstanceLauncher: idempotency edges', () => {
  it('asks under a new token when a redelivered launch must send different overrides', async () => {
    const first = setup(() => launched('m5.large', 'us-west-2a'));
    await first.launcher.launch(request([cheap, dear]), resolved);
    const second = setup(() => launched('m5.xlarge', 'us-west-2a'));
    // Meanwhile m5.large ran out in us-west-2a: the same claim now asks for other overrides.
    second.unavailable.markUnavailable('on-demand', 'm5.large', 'us-west-2a', 'ICE');
    await second.launcher.launch(request([cheap, dear]), resolved);
    const token = (s: typeof first) => (s.ec2.callsTo('createFleet')[0] as CreateFleetCommandInput).ClientToken;
    expect(token(second)).not.toBe(token(first));
  });

  it('launches again under a new token when the token returns an instance that is already gone', async () => {
    let fleets = 0;
    const ec2 = recordingFake<EC2Api>({
      describeInstances: (input) => {
        if (!input.InstanceIds) return { Reservations: [] };
        const id = input.InstanceIds[0] ?? '';
        return {
          Reservations: [
            { Instances: [{ InstanceId: id, State: { Name: id === 'i-dead' ? 'terminated' : 'pending' } }] },
          ],
        };
      },
      createFleet: () => {
        fleets++;
        const out = launched('m5.large', 'us-west-2a');
        const instance = out.Instances?.[0];
        if (instance) instance.InstanceIds = [fleets === 1 ? 'i-dead' : 'i-new'];
        return out;
      },
    });
    const launcher = new InstanceLauncher({
      ec2,
      launchTemplates: {
        ensure: async (i) => ({ name: i.LaunchTemplateName ?? '', id: 'lt', created: false }),
        invalidate: () => {},
      },
      unavailable: new InMemoryUnavailableOfferings(fakeClock()),
      clusterName: 'c1',
    });
    const result = await launcher.launch(request([cheap]), resolved);
    expect(result.instanceId).toBe('i-new');
    const tokens = (ec2.callsTo('createFleet') as CreateFleetCommandInput[]).map((f) => f.ClientToken);
    expect(tokens).toHaveLength(2);
    expect(tokens[1]).not.toBe(tokens[0]);
  });

  it('accepts an instance EC2 does not list yet (eventual consistency) as alive', async () => {
    const ec2 = recordingFake<EC2Api>({
      describeInstances: (input) => {
        if (input.InstanceIds) throw awsError('InvalidInstanceID.NotFound');
        return { Reservations: [] };
      },
      createFleet: () => launched('m5.large', 'us-west-2a'),
    });
    const launcher = new InstanceLauncher({
      ec2,
      launchTemplates: {
        ensure: async (i) => ({ name: i.LaunchTemplateName ?? '', id: 'lt', created: false }),
        invalidate: () => {},
      },
      unavailable: new InMemoryUnavailableOfferings(fakeClock()),
      clusterName: 'c1',
    });
    expect(await launcher.launch(request([cheap]), resolved)).toMatchObject({ instanceId: 'i-0123' });
    expect(ec2.callsTo('createFleet')).toHaveLength(1);
  });
});

describe('InstanceLauncher: errors as Karpenter handles them', () => {
  it('blocks spot for 3 minutes when the spot service-linked role cannot be created', async () => {
    const both = instanceType('m5.large', 0.096);
    both.offerings.push(
      { zone: 'us-west-2a', capacityType: 'spot', price: 0.03, available: true },
      { zone: 'us-west-2b', capacityType: 'spot', price: 0.03, available: true },
    );
    const { ec2, launcher, unavailable, clock } = setup((_input, call) =>
      call === 0
        ? {
            $metadata: {},
            Errors: [fleetError('m5.large', 'us-west-2a', 'AuthFailure.ServiceLinkedRoleCreationNotPermitted')],
          }
        : launched('m5.large', 'us-west-2a'),
    );
    const { capacityType: _pin, ...unpinned } = request([both]);
    const claim = {
      ...unpinned,
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['spot', 'on-demand'] }],
    };
    await launcher.launch(claim, resolved);
    const fleets = ec2.callsTo('createFleet') as CreateFleetCommandInput[];
    expect(fleets.map((f) => f.TargetCapacitySpecification?.DefaultTargetCapacityType)).toEqual(['spot', 'on-demand']);
    expect(unavailable.isScopeUnavailable({ kind: 'capacity-type', capacityType: 'spot' })).toBe(true);
    clock.advance(180_000);
    expect(unavailable.isScopeUnavailable({ kind: 'capacity-type', capacityType: 'spot' })).toBe(false);
  });

  it('counts only service-linked-role and capacity errors as insufficient capacity', async () => {
    const spotOnly = instanceType('m5.large', 0.096);
    spotOnly.offerings = [{ zone: 'us-west-2a', capacityType: 'spot', price: 0.03, available: true }];
    const { launcher } = setup(() => ({
      $metadata: {},
      Errors: [fleetError('m5.large', 'us-west-2a', 'AuthFailure.ServiceLinkedRoleCreationNotPermitted')],
    }));
    const { capacityType: _pin, ...unpinned } = request([spotOnly]);
    await expect(
      launcher.launch(
        { ...unpinned, requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }] },
        resolved,
      ),
    ).rejects.toThrow(InsufficientCapacityError);
  });

  it('moves to another subnet of the zone when one runs out of addresses', async () => {
    const twoSubnets: ResolvedNodeClass = {
      ...resolved,
      subnets: [
        { id: 'subnet-a1', zone: 'us-west-2a', availableIps: 100, tags: {} },
        { id: 'subnet-a2', zone: 'us-west-2a', availableIps: 50, tags: {} },
      ],
    };
    const { ec2, launcher, unavailable } = setup((_input, call) =>
      call === 0
        ? {
            $metadata: {},
            Errors: [fleetError('m5.large', 'us-west-2a', 'InsufficientFreeAddressesInSubnet', 'subnet-a1')],
          }
        : launched('m5.large', 'us-west-2a'),
    );
    await launcher.launch(request([cheap]), twoSubnets);
    const subnets = (ec2.callsTo('createFleet') as CreateFleetCommandInput[]).map(
      (f) => f.LaunchTemplateConfigs?.[0]?.Overrides?.[0]?.SubnetId,
    );
    expect(subnets).toEqual(['subnet-a1', 'subnet-a2']);
    expect(unavailable.isScopeUnavailable({ kind: 'subnet', subnetId: 'subnet-a1' })).toBe(true);
  });

  it('counts in-flight IPs, so the next launch prefers the subnet with more addresses really left', async () => {
    const close: ResolvedNodeClass = {
      ...resolved,
      subnets: [
        { id: 'subnet-a1', zone: 'us-west-2a', availableIps: 60, tags: {} },
        { id: 'subnet-a2', zone: 'us-west-2a', availableIps: 50, tags: {} },
      ],
    };
    const { ec2, launcher } = setup(() => ({
      $metadata: {},
      Instances: [
        {
          InstanceIds: ['i-1'],
          InstanceType: 'm5.large',
          LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', SubnetId: 'subnet-a1' } },
        },
      ],
    }));
    await launcher.launch(request([cheap]), close);
    await launcher.launch({ ...request([cheap]), nodeClaimName: 'general-fghij' }, close);
    const subnets = (ec2.callsTo('createFleet') as CreateFleetCommandInput[]).map(
      (f) => f.LaunchTemplateConfigs?.[0]?.Overrides?.[0]?.SubnetId,
    );
    // m5.large takes 1 + 29 pod IPs: subnet-a1 has 30 left, subnet-a2 still 50.
    expect(subnets).toEqual(['subnet-a1', 'subnet-a2']);
  });

  it('recreates templates once when CreateFleet itself says a template does not exist', async () => {
    const { ec2, launcher, invalidated, ensured } = setup((_input, call) => {
      if (call === 0) throw awsError('InvalidLaunchTemplateName.NotFoundException');
      return launched('m5.large', 'us-west-2a');
    });
    await launcher.launch(request([cheap]), resolved);
    expect(invalidated).toHaveLength(1);
    expect(ensured).toHaveLength(2);
    expect(ec2.callsTo('createFleet')).toHaveLength(2);
  });

  it('marks the reservation, not the offering, when a reserved launch runs out', async () => {
    const reservedType = instanceType('m5.large', 0.096, []);
    reservedType.offerings = [
      {
        zone: 'us-west-2a',
        capacityType: 'reserved',
        price: 0.0001,
        available: true,
        reservationId: 'cr-1',
        reservationType: 'default',
      },
      { zone: 'us-west-2a', capacityType: 'on-demand', price: 0.096, available: true },
    ];
    const { ec2, launcher, unavailable } = setup((_input, call) =>
      call === 0
        ? { $metadata: {}, Errors: [fleetError('m5.large', 'us-west-2a', 'ReservationCapacityExceeded')] }
        : launched('m5.large', 'us-west-2a'),
    );
    const { capacityType: _pin, ...unpinned } = request([reservedType]);
    await launcher.launch(
      {
        ...unpinned,
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved', 'on-demand'] }],
      },
      resolved,
    );
    expect(unavailable.isScopeUnavailable({ kind: 'reservation', reservationId: 'cr-1' })).toBe(true);
    expect(unavailable.isUnavailable('reserved', 'm5.large', 'us-west-2a')).toBe(false);
    const fleets = ec2.callsTo('createFleet') as CreateFleetCommandInput[];
    expect(fleets.map((f) => f.TargetCapacitySpecification?.DefaultTargetCapacityType)).toEqual([
      'on-demand',
      'on-demand',
    ]);
    expect(fleets[0]?.LaunchTemplateConfigs?.[0]?.LaunchTemplateSpecification?.LaunchTemplateName).not.toBe(
      fleets[1]?.LaunchTemplateConfigs?.[0]?.LaunchTemplateSpecification?.LaunchTemplateName,
    );
  });
  it('closes a zone for a spread placement group at its limit, for that group only, and launches elsewhere', async () => {
    const spreadResolved: ResolvedNodeClass = {
      ...resolved,
      placementGroupId: 'pg-1',
      placementGroupStrategy: 'spread',
    };
    const limit = {
      ErrorCode: 'InsufficientInstanceCapacity',
      ErrorMessage:
        'The maximum number of instances in a spread placement group per Availability Zone has been reached.',
      LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large' as never, AvailabilityZone: 'us-west-2a' } },
    };
    const { ec2, launcher, unavailable } = setup((_input, call) =>
      call === 0 ? { $metadata: {}, Errors: [limit] } : launched('m5.large', 'us-west-2b'),
    );
    const result = await launcher.launch(request([cheap, dear]), spreadResolved);
    expect(result.zone).toBe('us-west-2b');
    expect(
      unavailable.isScopeUnavailable({ kind: 'placement-group-zone', placementGroupId: 'pg-1', zone: 'us-west-2a' }),
    ).toBe(true);
    // The offering itself stays usable for launches outside the group.
    expect(unavailable.isUnavailable('on-demand', 'm5.large', 'us-west-2a')).toBe(false);
    const [first, second] = (ec2.callsTo('createFleet') as CreateFleetCommandInput[]).map(overridesOf);
    expect(first).toContain('m5.xlarge:us-west-2a');
    expect(second).toEqual(['m5.large:us-west-2b', 'm5.xlarge:us-west-2b']);
  });

  it('recognises the spread-group limit by its words, and no other capacity error', async () => {
    expect(
      isSpreadPlacementGroupLimit({
        code: 'InsufficientInstanceCapacity',
        message: 'spread placement group per Availability Zone limit reached',
      }),
    ).toBe(true);
    expect(isSpreadPlacementGroupLimit({ code: 'InsufficientInstanceCapacity', message: 'no capacity' })).toBe(false);
    expect(
      isSpreadPlacementGroupLimit({ code: 'InsufficientInstanceCapacity', message: 'cluster placement group is full' }),
    ).toBe(false);
  });

  it('takes one from the reservation per reserved launch and skips it once used up', async () => {
    const reservedType = instanceType('m5.large', 0.096, []);
    reservedType.offerings = [
      { zone: 'us-west-2a', capacityType: 'reserved', price: 1e-8, available: true, reservationId: 'cr-1' },
      { zone: 'us-west-2a', capacityType: 'on-demand', price: 0.096, available: true },
    ];
    const counts = new Map([['cr-1', 1]]);
    const reservations = {
      availableCount: (id: string) => counts.get(id),
      markLaunched: (id: string) => counts.set(id, (counts.get(id) ?? 0) - 1),
      markExhausted: (id: string) => counts.set(id, 0),
    };
    const { ec2, launcher: _unused, unavailable } = setup(() => launched('m5.large', 'us-west-2a'));
    const launcher = new InstanceLauncher({
      ec2,
      launchTemplates: {
        ensure: async (i) => ({ name: i.LaunchTemplateName ?? '', id: 'lt', created: false }),
        invalidate: () => {},
      },
      unavailable,
      clusterName: 'c1',
      reservations,
    });
    const { capacityType: _pin, ...unpinned } = request([reservedType]);
    const claim = {
      ...unpinned,
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['reserved', 'on-demand'] }],
    };
    expect((await launcher.launch({ ...claim, nodeClaimName: 'a' }, resolved)).capacityType).toBe('reserved');
    expect(counts.get('cr-1')).toBe(0);
    expect((await launcher.launch({ ...claim, nodeClaimName: 'b' }, resolved)).capacityType).toBe('on-demand');
  });

  it('counts a reservation EC2 calls full as used up', async () => {
    const reservedType = instanceType('m5.large', 0.096, []);
    reservedType.offerings = [
      { zone: 'us-west-2a', capacityType: 'reserved', price: 1e-8, available: true, reservationId: 'cr-1' },
      { zone: 'us-west-2a', capacityType: 'spot', price: 0.03, available: true },
    ];
    const counts = new Map([['cr-1', 5]]);
    const { ec2, unavailable } = setup((_input, call) =>
      call === 0
        ? { $metadata: {}, Errors: [fleetError('m5.large', 'us-west-2a', 'ReservationCapacityExceeded')] }
        : {
            ...launched('m5.large', 'us-west-2a'),
            Instances: [{ ...launched('m5.large', 'us-west-2a').Instances?.[0], Lifecycle: 'spot' }],
          },
    );
    const launcher = new InstanceLauncher({
      ec2,
      launchTemplates: {
        ensure: async (i) => ({ name: i.LaunchTemplateName ?? '', id: 'lt', created: false }),
        invalidate: () => {},
      },
      unavailable,
      clusterName: 'c1',
      reservations: {
        availableCount: (id) => counts.get(id),
        markLaunched: () => {},
        markExhausted: (id) => counts.set(id, 0),
      },
    });
    const { capacityType: _pin, ...unpinned } = request([reservedType]);
    const result = await launcher.launch(
      {
        ...unpinned,
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved', 'spot', 'on-demand'] },
        ],
      },
      resolved,
    );
    expect(counts.get('cr-1')).toBe(0);
    expect(result.capacityType).toBe('spot');
  });
});
