import { describe, expect, it } from 'vitest';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { type DriftSubject, detectDrift, type NodeClassToday } from '../../shared/disruption/drift';
import { expiresAt, isExpired, terminationGracePeriodMs } from '../../shared/disruption/expiration';
import { launchHashTags, NODECLASS_HASH_VERSION_TAG, nodeClassHash, nodePoolHash } from '../../shared/disruption/hash';
import type { ResolvedAMI } from '../../shared/launch/launchtemplate';
import { nodeClass, nodePool } from '../launch/fixtures';

const amd64 = { 'kubernetes.io/arch': 'amd64' };
const arm64 = { 'kubernetes.io/arch': 'arm64' };
const amis = (x86: string, arm: string): ResolvedAMI[] => [
  {
    id: x86,
    name: `al2023-x86-${x86}`,
    requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
  },
  { id: arm, requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] },
];

function subject(pool: NodePool, nc: EC2NodeClass, extra: Partial<DriftSubject> = {}): DriftSubject {
  return {
    instanceType: 'm5.large',
    imageId: 'ami-x86-1',
    subnetId: 'subnet-a',
    securityGroupIds: ['sg-1'],
    hashTags: launchHashTags(pool, nc),
    instanceTypeLabels: amd64,
    nodeLabels: { 'karpenter.sh/nodepool': pool.metadata.name },
    ...extra,
  };
}

function today(nc: EC2NodeClass, extra: Partial<NodeClassToday> = {}): NodeClassToday {
  return {
    nodeClass: nc,
    amis: amis('ami-x86-1', 'ami-arm-1'),
    subnetIds: ['subnet-a', 'subnet-b'],
    securityGroupIds: ['sg-1'],
    ...extra,
  };
}

describe('static hashes', () => {
  const nc = nodeClass({
    tags: { a: '1', b: '2' },
    blockDeviceMappings: [{ deviceName: '/dev/xvda' }, { deviceName: '/dev/xvdb' }],
  });
  it('ignore selector terms, the amiFamily spelling, key and list order', () => {
    const same = nodeClass({
      tags: { b: '2', a: '1' },
      blockDeviceMappings: [{ deviceName: '/dev/xvdb' }, { deviceName: '/dev/xvda' }],
      subnetSelectorTerms: [{ id: 'subnet-9' }],
      amiSelectorTerms: [{ alias: 'al2023@v20240807' }],
      amiFamily: 'AL2023',
    });
    expect(nodeClassHash(same)).toBe(nodeClassHash(nc));
  });

  it.each<[string, Partial<EC2NodeClass['spec']>]>([
    ['userData', { userData: 'echo hi' }],
    ['a tag value', { tags: { a: '1', b: '3' } }],
    ['detailedMonitoring', { detailedMonitoring: true }],
    ['associatePublicIPAddress false', { associatePublicIPAddress: false }],
    ['the metadata hop limit', { metadataOptions: { httpPutResponseHopLimit: 2 } }],
    [
      'a volume size',
      { blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '40Gi' } }, { deviceName: '/dev/xvdb' }] },
    ],
    ['the instance profile', { instanceProfile: 'other' }],
    ['the resolved family', { amiFamily: 'Custom' }],
    ['placementGroupSelector (ec2nodeclass.go Hash includes it)', { placementGroupSelector: { name: 'pg-1' } }],
  ])('change with %s', (_, change) => {
    const base = nodeClass({
      tags: { a: '1', b: '2' },
      blockDeviceMappings: [{ deviceName: '/dev/xvda' }, { deviceName: '/dev/xvdb' }],
    });
    expect(nodeClassHash({ ...base, spec: { ...base.spec, ...change } })).not.toBe(nodeClassHash(base));
  });

  it('hash the NodePool template without requirements; weight, limits and disruption are no change', () => {
    const pool = nodePool();
    const changed: NodePool = {
      ...pool,
      spec: {
        ...pool.spec,
        weight: 50,
        limits: { cpu: '10' },
        disruption: { consolidateAfter: '1m', budgets: [{ nodes: '0' }] },
        template: {
          ...pool.spec.template,
          spec: { ...pool.spec.template.spec, requirements: [{ key: 'x', operator: 'Exists' }] },
        },
      },
    };
    expect(nodePoolHash(changed)).toBe(nodePoolHash(pool));
    // Defaults spelled out are no change (the bundled configuration is defaulted, a test's may not be).
    const explicit: NodePool = {
      ...pool,
      spec: {
        ...pool.spec,
        template: { ...pool.spec.template, spec: { ...pool.spec.template.spec, expireAfter: '720h' } },
      },
    };
    expect(nodePoolHash(explicit)).toBe(nodePoolHash(pool));
    const hopLimit = nodeClass({ metadataOptions: { httpPutResponseHopLimit: 1 } });
    expect(nodeClassHash(hopLimit)).toBe(nodeClassHash(nodeClass()));
    const labelled: NodePool = {
      ...pool,
      spec: { ...pool.spec, template: { ...pool.spec.template, metadata: { labels: { team: 'b' } } } },
    };
    expect(nodePoolHash(labelled)).not.toBe(nodePoolHash(pool));
  });
});

describe('detectDrift', () => {
  const pool = nodePool();
  const nc = nodeClass();

  it('finds nothing on a node that matches today', () => {
    expect(detectDrift(subject(pool, nc), pool, today(nc))).toBeUndefined();
  });

  it('finds AMIDrift when the node class now resolves another AMI for the instance type, naming both', () => {
    expect(detectDrift(subject(pool, nc), pool, today(nc, { amis: amis('ami-x86-2', 'ami-arm-1') }))).toEqual({
      reason: 'AMIDrift',
      detail: 'node runs ami-x86-1; EC2NodeClass/default now resolves ami-x86-2 (al2023-x86-ami-x86-2) for m5.large',
    });
    // Only the arm64 AMI changed: an amd64 node is up to date.
    expect(detectDrift(subject(pool, nc), pool, today(nc, { amis: amis('ami-x86-1', 'ami-arm-2') }))).toBeUndefined();
    const armNode = subject(pool, nc, { imageId: 'ami-arm-1', instanceTypeLabels: arm64 });
    expect(detectDrift(armNode, pool, today(nc, { amis: amis('ami-x86-1', 'ami-arm-2') }))?.reason).toBe('AMIDrift');
  });

  it('does not guess when the AMIs or the instance type are unknown today', () => {
    expect(detectDrift(subject(pool, nc), pool, today(nc, { amis: [] }))).toBeUndefined();
    const unknownType = subject(pool, nc);
    delete unknownType.instanceTypeLabels;
    expect(detectDrift(unknownType, pool, today(nc, { amis: amis('ami-x86-2', 'ami-arm-1') }))).toBeUndefined();
  });

  it('finds NodeClassDrift and NodePoolDrift from the launch hashes, before AMIDrift', () => {
    const launched = subject(pool, nc);
    const newer = nodeClass({ userData: 'echo changed' });
    expect(detectDrift(launched, pool, today(newer, { amis: amis('ami-x86-2', 'ami-arm-2') }))?.reason).toBe(
      'NodeClassDrift',
    );
    const newPool: NodePool = {
      ...pool,
      spec: { ...pool.spec, template: { ...pool.spec.template, spec: { ...pool.spec.template.spec, taints: [] } } },
    };
    expect(detectDrift(launched, newPool, today(newer))).toMatchObject({
      reason: 'NodePoolDrift',
      detail: 'NodePool/general spec.template changed since the node was launched',
    });
  });

  it('never drifts on a hash of another version, or a node launched without hashes', () => {
    const newer = nodeClass({ userData: 'echo changed' });
    const old = subject(pool, nc);
    old.hashTags = { ...old.hashTags, [NODECLASS_HASH_VERSION_TAG]: 'karpless-0' };
    expect(detectDrift(old, pool, today(newer))).toBeUndefined();
    const untagged = subject(pool, nc);
    delete untagged.hashTags;
    expect(detectDrift(untagged, pool, today(newer))).toBeUndefined();
  });

  it('finds RequirementsDrift when the node labels leave the pool requirements', () => {
    const spotOnly: NodePool = {
      ...pool,
      spec: {
        ...pool.spec,
        template: {
          ...pool.spec.template,
          spec: {
            ...pool.spec.template.spec,
            requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
          },
        },
      },
    };
    const node = subject(spotOnly, nc, { nodeLabels: { 'karpenter.sh/capacity-type': 'on-demand' } });
    expect(detectDrift(node, spotOnly, today(nc))).toMatchObject({ reason: 'RequirementsDrift' });
  });

  it('finds security-group and subnet drift from what the node class selects now', () => {
    expect(detectDrift(subject(pool, nc), pool, today(nc, { securityGroupIds: ['sg-1', 'sg-2'] }))?.reason).toBe(
      'SecurityGroupDrift',
    );
    expect(detectDrift(subject(pool, nc), pool, today(nc, { subnetIds: ['subnet-b'] }))).toEqual({
      reason: 'SubnetDrift',
      detail: 'node is in subnet-a, which EC2NodeClass/default no longer selects (subnet-b)',
    });
    // Nothing known about the instance's groups (moto drops them from fleet launches): no verdict.
    const unknown = subject(pool, nc);
    delete unknown.securityGroupIds;
    expect(detectDrift(unknown, pool, today(nc, { securityGroupIds: ['sg-2'] }))).toBeUndefined();
  });

  it('cloudprovider/drift.go isCapacityReservationDrifted: a reservation the node class no longer selects', () => {
    const reserved = subject(pool, nc, { reservationId: 'cr-1' });
    expect(detectDrift(reserved, pool, today(nc, { capacityReservationIds: ['cr-2'] }))).toEqual({
      reason: 'CapacityReservationDrift',
      detail: 'node runs in cr-1, which EC2NodeClass/default no longer selects',
    });
    expect(detectDrift(reserved, pool, today(nc, { capacityReservationIds: ['cr-1'] }))).toBeUndefined();
    // Not resolved today: no verdict.
    expect(detectDrift(reserved, pool, today(nc))).toBeUndefined();
  });

  it('cloudprovider/drift.go isPlacementGroupDrifted: the claim label against the group the node class resolves', () => {
    const inGroup = subject(pool, nc, { claimLabels: { 'karpenter.k8s.aws/placement-group-id': 'pg-1' } });
    expect(detectDrift(inGroup, pool, today(nc, { placementGroupId: 'pg-2' }))?.reason).toBe('PlacementGroupDrift');
    expect(detectDrift(inGroup, pool, today(nc, { placementGroupId: '' }))?.detail).toBe(
      'node is in placement group pg-1; EC2NodeClass/default now resolves (none)',
    );
    expect(detectDrift(subject(pool, nc), pool, today(nc, { placementGroupId: 'pg-2' }))?.reason).toBe(
      'PlacementGroupDrift',
    );
    expect(detectDrift(inGroup, pool, today(nc, { placementGroupId: 'pg-1' }))).toBeUndefined();
  });

  it('nodeclaim/disruption drift.go instanceTypeNotFound: drifts before the node class checks', () => {
    const gone = subject(pool, nc, { instanceTypeNotFound: true, imageId: 'ami-other' });
    expect(detectDrift(gone, pool, today(nc))?.reason).toBe('InstanceTypeNotFound');
  });

  it('nodeclaim/disruption drift.go areRequirementsDrifted: reads the claim record labels over the Node labels', () => {
    const spotOnly: NodePool = {
      ...pool,
      spec: {
        ...pool.spec,
        template: {
          ...pool.spec.template,
          spec: {
            ...pool.spec.template.spec,
            requirements: [{ key: 'example.com/team', operator: 'In', values: ['blue'] }],
          },
        },
      },
    };
    const node = subject(spotOnly, nc, { claimLabels: { 'example.com/team': 'blue' } });
    expect(detectDrift(node, spotOnly, today(nc))).toBeUndefined();
    expect(detectDrift(subject(spotOnly, nc, { claimLabels: {} }), spotOnly, today(nc))?.reason).toBe(
      'RequirementsDrift',
    );
    // Without a record the Node's labels say only what it registered with.
    expect(detectDrift(subject(spotOnly, nc), spotOnly, today(nc))).toBeUndefined();
  });
});

describe('expiration', () => {
  const base = nodePool();
  const withTemplate = (spec: Partial<NodePool['spec']['template']['spec']>): NodePool => ({
    ...base,
    spec: { ...base.spec, template: { ...base.spec.template, spec: { ...base.spec.template.spec, ...spec } } },
  });
  it('expires at launch + expireAfter (720h by default), never with Never', () => {
    expect(expiresAt(base, 0)).toBe(720 * 3600 * 1000);
    expect(isExpired(withTemplate({ expireAfter: '1h' }), 0, 3600 * 1000 - 1)).toBe(false);
    expect(isExpired(withTemplate({ expireAfter: '1h' }), 0, 3600 * 1000)).toBe(true);
    expect(isExpired(withTemplate({ expireAfter: 'Never' }), 0, Number.MAX_SAFE_INTEGER)).toBe(false);
    expect(isExpired(base, undefined, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('reads terminationGracePeriod, absent meaning no bound', () => {
    expect(terminationGracePeriodMs(withTemplate({ terminationGracePeriod: '1h30m' }))).toBe(5400 * 1000);
    expect(terminationGracePeriodMs(base)).toBeUndefined();
  });
});
