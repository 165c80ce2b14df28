import { describe, expect, it } from 'vitest';
import { UnsupportedAliasError } from '../../shared/amifamily/alias';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import type { ResolvedAMI } from '../../shared/launch/launchtemplate';
import { type NodeClassResolverDeps, readyNodeClass, resolveNodeClass } from '../../shared/nodeclass';
import type { CapacityReservation } from '../../shared/providers/capacityreservation';
import type { InstanceProfileState } from '../../shared/providers/instanceprofile';
import type { PlacementGroup } from '../../shared/providers/placementgroup';
import type { SecurityGroup } from '../../shared/providers/securitygroup';
import type { Subnet } from '../../shared/providers/subnet';
import { awsError, fakeClock } from '../providers/fakes';

function nodeClass(spec: Partial<EC2NodeClass['spec']> = {}): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default', generation: 3 },
    spec: {
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: 'Node',
      ...spec,
    },
  };
}

const subnet: Subnet = { id: 'subnet-1', zone: 'us-west-2a', zoneID: 'usw2-az2', availableIps: 10, tags: {} };
const group: SecurityGroup = { id: 'sg-1', name: 'nodes' };
const ami: ResolvedAMI = {
  id: 'ami-1',
  name: 'al2023',
  requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
};

function deps(overrides: {
  subnets?: () => Promise<Subnet[]>;
  groups?: () => Promise<SecurityGroup[]>;
  amis?: () => Promise<ResolvedAMI[]>;
  ensure?: () => Promise<string>;
  inspect?: () => Promise<InstanceProfileState>;
  mode?: 'ensure' | 'inspect';
  k8sVersion?: string | null;
}): NodeClassResolverDeps {
  return {
    subnets: { list: overrides.subnets ?? (async () => [subnet]) },
    securityGroups: { list: overrides.groups ?? (async () => [group]) },
    amis: { resolve: overrides.amis ?? (async () => [ami]) },
    instanceProfiles: {
      ensure: overrides.ensure ?? (async () => 'c1_1'),
      inspect:
        overrides.inspect ??
        (async () => ({ name: 'c1_1', exists: true, managed: true, roles: ['Node'], hasRole: true })),
    },
    ...(overrides.k8sVersion === null ? {} : { k8sVersion: overrides.k8sVersion ?? '1.31' }),
    clock: fakeClock(Date.parse('2026-03-01T12:00:00Z')),
    ...(overrides.mode ? { mode: overrides.mode } : {}),
  };
}

function conditions(nc: EC2NodeClass) {
  return Object.fromEntries((nc.status?.conditions ?? []).map((c) => [c.type, [c.status, c.reason, c.message]]));
}

describe('resolveNodeClass', () => {
  it('is Ready with every status field when everything resolves', async () => {
    const resolution = await resolveNodeClass(nodeClass(), deps({}));
    expect(resolution.ready).toBe(true);
    expect(resolution.nodeClass.status).toEqual({
      subnets: [{ id: 'subnet-1', zone: 'us-west-2a', zoneID: 'usw2-az2' }],
      securityGroups: [{ id: 'sg-1', name: 'nodes' }],
      amis: [{ id: 'ami-1', name: 'al2023', requirements: ami.requirements }],
      instanceProfile: 'c1_1',
      conditions: ['AMIsReady', 'SubnetsReady', 'SecurityGroupsReady', 'InstanceProfileReady', 'Ready'].map((type) => ({
        type,
        status: 'True',
        reason: type,
        lastTransitionTime: '2026-03-01T12:00:00.000Z',
        observedGeneration: 3,
      })),
    });
    expect(
      readyNodeClass(resolution, {
        name: 'c1',
        endpoint: 'e',
        caBundle: 'c',
        version: '1.31',
        dnsIP: 'd',
        ipv6: false,
      }),
    ).toMatchObject({
      instanceProfile: 'c1_1',
      subnets: [subnet],
    });
  });

  it.each([
    [
      'no subnet matches',
      { subnets: async () => [] },
      'SubnetsReady',
      ['False', 'SubnetsNotFound', 'SubnetSelector did not match any Subnets'],
    ],
    [
      'no security group matches',
      { groups: async () => [] },
      'SecurityGroupsReady',
      ['False', 'SecurityGroupsNotFound', 'SecurityGroupSelector did not match any SecurityGroups'],
    ],
    [
      'no AMI matches',
      { amis: async () => [] },
      'AMIsReady',
      ['False', 'AMINotFound', 'AMISelector did not match any AMIs'],
    ],
    [
      'the alias is unsupported',
      {
        amis: async () => {
          throw new UnsupportedAliasError('AL2 AMIs are not published for Kubernetes 1.33');
        },
      },
      'AMIsReady',
      ['False', 'UnsupportedAlias', 'AL2 AMIs are not published for Kubernetes 1.33'],
    ],
    [
      'DescribeSubnets is not allowed',
      {
        subnets: async () => {
          throw awsError('UnauthorizedOperation', 'You are not authorized');
        },
      },
      'SubnetsReady',
      ['Unknown', 'ResolutionFailed', 'UnauthorizedOperation: You are not authorized'],
    ],
  ])('reports %s', async (_, override, type, expected) => {
    const resolution = await resolveNodeClass(nodeClass(), deps(override));
    expect(resolution.ready).toBe(false);
    const all = conditions(resolution.nodeClass);
    expect(all[type]).toEqual(expected);
    expect(all.Ready).toEqual([expected[0], 'UnhealthyDependents', `${type}=${expected[0]}`]);
  });

  it('lists every unhealthy dependent in Ready', async () => {
    const resolution = await resolveNodeClass(nodeClass(), deps({ subnets: async () => [], amis: async () => [] }));
    expect(conditions(resolution.nodeClass).Ready).toEqual([
      'False',
      'UnhealthyDependents',
      'AMIsReady=False, SubnetsReady=False',
    ]);
    expect(() =>
      readyNodeClass(resolution, {
        name: 'c1',
        endpoint: 'e',
        caBundle: 'c',
        version: '1.31',
        dnsIP: 'd',
        ipv6: false,
      }),
    ).toThrow(
      /EC2NodeClass\/default is not ready \(AMIsReady=False, SubnetsReady=False\): AMIsReady=False \(AMINotFound/,
    );
  });

  it('cannot resolve an alias without the Kubernetes version', async () => {
    const resolution = await resolveNodeClass(nodeClass(), deps({ k8sVersion: null }));
    expect(conditions(resolution.nodeClass).AMIsReady).toEqual([
      'Unknown',
      'KubernetesVersionUnknown',
      'an alias needs the cluster Kubernetes version; pass --cluster-name so it is read from EKS',
    ]);
  });

  it('resolves id terms without the Kubernetes version', async () => {
    const resolution = await resolveNodeClass(
      nodeClass({ amiSelectorTerms: [{ id: 'ami-1' }], amiFamily: 'AL2023' }),
      deps({ k8sVersion: null }),
    );
    expect(resolution.ready).toBe(true);
  });

  describe('instance profile', () => {
    it('creates the managed profile in ensure mode', async () => {
      let ensured = 0;
      const resolution = await resolveNodeClass(nodeClass(), deps({ ensure: async () => `c1_${++ensured}` }));
      expect(resolution.instanceProfile).toBe('c1_1');
      expect(ensured).toBe(1);
    });

    it('reports a managed profile not created yet as Unknown in inspect mode', async () => {
      const resolution = await resolveNodeClass(
        nodeClass(),
        deps({
          mode: 'inspect',
          ensure: async () => {
            throw new Error('inspect must not create');
          },
          inspect: async () => ({ name: 'c1_1', exists: false, managed: true, roles: [], hasRole: false }),
        }),
      );
      expect(conditions(resolution.nodeClass).InstanceProfileReady).toEqual([
        'Unknown',
        'InstanceProfileNotCreated',
        'instance profile "c1_1" with role "Node" does not exist yet; it is created at the first launch',
      ]);
      expect(conditions(resolution.nodeClass).Ready?.[0]).toBe('Unknown');
    });

    it('reports a missing spec.instanceProfile as not found', async () => {
      const resolution = await resolveNodeClass(
        nodeClass({ role: undefined, instanceProfile: 'mine' } as never),
        deps({ inspect: async () => ({ name: 'mine', exists: false, managed: false, roles: [], hasRole: false }) }),
      );
      expect(conditions(resolution.nodeClass).InstanceProfileReady).toEqual([
        'False',
        'InstanceProfileNotFound',
        'spec.instanceProfile: instance profile "mine" does not exist',
      ]);
    });
  });

  it('keeps lastTransitionTime while a condition keeps its status', async () => {
    const before = nodeClass();
    before.status = {
      conditions: [
        { type: 'SubnetsReady', status: 'True', reason: 'SubnetsReady', lastTransitionTime: '2025-01-01T00:00:00Z' },
      ],
    };
    const resolution = await resolveNodeClass(before, deps({}));
    const times = Object.fromEntries(
      (resolution.nodeClass.status?.conditions ?? []).map((c) => [c.type, c.lastTransitionTime]),
    );
    expect(times.SubnetsReady).toBe('2025-01-01T00:00:00Z');
    expect(times.AMIsReady).toBe('2026-03-01T12:00:00.000Z');
  });
});

describe('resolveNodeClass: capacity reservations and placement groups', () => {
  const cluster = { name: 'c1', endpoint: 'e', caBundle: 'c', version: '1.31', dnsIP: 'd', ipv6: false };
  const reservation: CapacityReservation = {
    id: 'cr-1',
    instanceType: 'p5.48xlarge',
    availabilityZone: 'us-west-2a',
    ownerID: '123456789012',
    instanceMatchCriteria: 'targeted',
    reservationType: 'capacity-block',
    interruptible: false,
    state: 'active',
    endTime: '2026-03-02T00:00:00.000Z',
    availableInstanceCount: 1,
  };
  const group: PlacementGroup = { id: 'pg-1', name: 'critical', strategy: 'spread', state: 'available' };

  it('leaves both conditions out for a node class that selects neither', async () => {
    const resolution = await resolveNodeClass(nodeClass(), {
      ...deps({}),
      capacityReservations: { list: async () => ({ reservations: [reservation], skipped: [] }) },
      placementGroups: { get: async () => group },
    });
    const types = (resolution.nodeClass.status?.conditions ?? []).map((c) => c.type);
    expect(types).not.toContain('CapacityReservationsReady');
    expect(types).not.toContain('PlacementGroupReady');
    expect(resolution.capacityReservations).toEqual([]);
  });

  it('reports the reservations in status and CapacityReservationsReady=True, even when none match', async () => {
    const withTerms = nodeClass({ capacityReservationSelectorTerms: [{ tags: { team: 'ml' } }] });
    const found = await resolveNodeClass(withTerms, {
      ...deps({}),
      capacityReservations: { list: async () => ({ reservations: [reservation], skipped: [] }) },
    });
    expect(found.ready).toBe(true);
    expect(conditions(found.nodeClass).CapacityReservationsReady).toEqual([
      'True',
      'CapacityReservationsReady',
      undefined,
    ]);
    expect(found.nodeClass.status?.capacityReservations).toEqual([
      {
        id: 'cr-1',
        availabilityZone: 'us-west-2a',
        instanceType: 'p5.48xlarge',
        ownerID: '123456789012',
        instanceMatchCriteria: 'targeted',
        reservationType: 'capacity-block',
        state: 'active',
        endTime: '2026-03-02T00:00:00.000Z',
      },
    ]);
    const none = await resolveNodeClass(withTerms, {
      ...deps({}),
      capacityReservations: { list: async () => ({ reservations: [], skipped: [{ id: 'cr-x', reason: 'why' }] }) },
    });
    expect(none.ready).toBe(true);
    expect(conditions(none.nodeClass).CapacityReservationsReady).toEqual([
      'True',
      'CapacityReservationsReady',
      'skipped cr-x: why',
    ]);
    expect(none.nodeClass.status?.capacityReservations).toBeUndefined();
  });

  it('is not Ready while the reservations cannot be listed, naming the field', async () => {
    const resolution = await resolveNodeClass(nodeClass({ capacityReservationSelectorTerms: [{ id: 'cr-1' }] }), {
      ...deps({}),
      capacityReservations: {
        list: async () => {
          throw awsError('UnauthorizedOperation', 'not allowed to ec2:DescribeCapacityReservations');
        },
      },
    });
    expect(resolution.ready).toBe(false);
    expect(conditions(resolution.nodeClass).CapacityReservationsReady).toEqual([
      'Unknown',
      'ResolutionFailed',
      'spec.capacityReservationSelectorTerms: UnauthorizedOperation: not allowed to ec2:DescribeCapacityReservations',
    ]);
    expect(conditions(resolution.nodeClass).Ready?.[2]).toContain('CapacityReservationsReady=Unknown');
  });

  it('resolves the placement group into status and the launch view', async () => {
    const resolution = await resolveNodeClass(nodeClass({ placementGroupSelector: { name: 'critical' } }), {
      ...deps({}),
      placementGroups: { get: async () => group },
    });
    expect(resolution.ready).toBe(true);
    expect(conditions(resolution.nodeClass).PlacementGroupReady).toEqual(['True', 'PlacementGroupReady', undefined]);
    expect(resolution.nodeClass.status?.placementGroups).toEqual([
      { id: 'pg-1', name: 'critical', strategy: 'spread', state: 'available' },
    ]);
    expect(readyNodeClass(resolution, cluster)).toMatchObject({
      placementGroupId: 'pg-1',
      placementGroupStrategy: 'spread',
    });
  });

  it.each([
    [
      'a group EC2 does not have',
      async () => undefined,
      'PlacementGroupNotFound',
      'placement group "critical" not found',
    ],
    [
      'a group not available',
      async () => ({ ...group, state: 'deleting' }),
      'PlacementGroupNotAvailable',
      'is in state "deleting", expected "available"',
    ],
    [
      'a failed lookup',
      async () => {
        throw awsError('UnauthorizedOperation');
      },
      'PlacementGroupResolutionFailed',
      'failed to resolve placement group "critical": UnauthorizedOperation',
    ],
  ])('is not Ready for %s', async (_name, get, reason, message) => {
    const resolution = await resolveNodeClass(nodeClass({ placementGroupSelector: { name: 'critical' } }), {
      ...deps({}),
      placementGroups: { get },
    });
    expect(resolution.ready).toBe(false);
    const [status, why, text] = conditions(resolution.nodeClass).PlacementGroupReady ?? [];
    expect([status, why]).toEqual(['False', reason]);
    expect(text).toContain(message);
    expect(resolution.nodeClass.status?.placementGroups).toBeUndefined();
    expect(() => readyNodeClass(resolution, cluster)).toThrow(/PlacementGroupReady=False/);
  });
});
