import { describe, expect, it } from 'vitest';
import type { NodeSelectorRequirementWithMinValues } from '../../shared/apis/v1/types';
import {
  isRestrictedNodeLabel,
  nodeClaimFromPlan,
  nodeClaimName,
  registrationLabels,
  requirementLabels,
} from '../../shared/nodeclaim';
import { type PlannedNodeClaim, solve } from '../../shared/scheduling';
import { nodeClass } from '../launch/fixtures';
import { instanceType, nodePool, pod, standardTypes } from '../scheduling/helpers';

function plan(
  requirements: NodeSelectorRequirementWithMinValues[],
  extra: Parameters<typeof pod>[1] = {},
  types = standardTypes(),
): PlannedNodeClaim {
  const pool = nodePool('general', { requirements, labels: { team: 'a' } });
  const result = solve({ pods: [pod('p', extra)], nodePools: [pool], instanceTypes: { general: types } });
  const claim = result.nodeClaims[0];
  if (!claim) throw new Error(`no claim: ${JSON.stringify(result.unschedulable)}`);
  return claim;
}

describe('isRestrictedNodeLabel', () => {
  it.each([
    ['topology.kubernetes.io/zone', true],
    ['topology.k8s.aws/zone-id', true],
    ['kubernetes.io/arch', true],
    ['kubernetes.io/os', true],
    ['node.kubernetes.io/instance-type', true],
    ['karpenter.sh/capacity-type', true],
    ['karpenter.sh/nodepool', true],
    ['karpenter.k8s.aws/instance-family', true],
    ['karpenter.k8s.aws/instance-gpu-count', true],
    ['karpenter.k8s.aws/instance-tenancy', true],
    ['kubernetes.io/hostname', true],
    ['example.kubernetes.io/thing', true],
    ['karpenter.sh/anything', true],
    ['node.kubernetes.io/custom', false],
    ['node-restriction.kubernetes.io/pool', false],
    ['kops.k8s.io/instancegroup', false],
    ['team', false],
    ['example.com/tier', false],
  ])('%s → %s', (key, restricted) => {
    expect(isRestrictedNodeLabel(key)).toBe(restricted);
  });
});

describe('requirementLabels', () => {
  it.each<[string, NodeSelectorRequirementWithMinValues, Record<string, string>]>([
    ['single-valued In on a custom key', { key: 'team', operator: 'In', values: ['a'] }, { team: 'a' }],
    [
      'multi-valued In: the smallest value',
      { key: 'tier', operator: 'In', values: ['web', 'batch'] },
      { tier: 'batch' },
    ],
    ['Exists on a custom key: a value that satisfies it', { key: 'gpu-ok', operator: 'Exists' }, { 'gpu-ok': '0' }],
    ['NotIn skips the excluded values', { key: 'slot', operator: 'NotIn', values: ['0', '1'] }, { slot: '2' }],
    ['Gt starts above the bound', { key: 'rank', operator: 'Gt', values: ['5'] }, { rank: '6' }],
    ['DoesNotExist gives no label', { key: 'spare', operator: 'DoesNotExist' }, {}],
    ['zone (well known)', { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }, {}],
    ['arch (well known)', { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }, {}],
    ['capacity type (well known)', { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }, {}],
    [
      'instance type (well known)',
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
      {},
    ],
    ['os (well known)', { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }, {}],
    ['instance-family (AWS)', { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }, {}],
    ['instance-cpu (AWS)', { key: 'karpenter.k8s.aws/instance-cpu', operator: 'In', values: ['4'] }, {}],
    [
      'node.kubernetes.io exception',
      { key: 'node.kubernetes.io/role', operator: 'In', values: ['x'] },
      { 'node.kubernetes.io/role': 'x' },
    ],
  ])('%s', (_name, requirement, labels) => {
    expect(requirementLabels([requirement])).toEqual(labels);
  });

  it('intersects requirements on one key before choosing', () => {
    expect(
      requirementLabels([
        { key: 'tier', operator: 'In', values: ['a', 'b', 'c'] },
        { key: 'tier', operator: 'NotIn', values: ['a'] },
      ]),
    ).toEqual({ tier: 'b' });
  });
});

describe('nodeClaimName', () => {
  it('has the <nodepool>-<5 chars> form and depends only on the seed', () => {
    const name = nodeClaimName('general', 'decision-1/0');
    expect(name).toMatch(/^general-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(nodeClaimName('general', 'decision-1/0')).toBe(name);
    const others = new Set(Array.from({ length: 50 }, (_, i) => nodeClaimName('general', `decision-1/${i}`)));
    expect(others.size).toBe(50);
  });

  it('cuts a long NodePool name so the result stays within 63 characters', () => {
    const name = nodeClaimName('p'.repeat(70), 'x');
    expect(name).toHaveLength(63);
    expect(name.startsWith('p'.repeat(58))).toBe(true);
  });
});

describe('nodeClaimFromPlan', () => {
  const pool = (requirements: NodeSelectorRequirementWithMinValues[] = []) =>
    nodePool('general', {
      requirements,
      labels: { team: 'a' },
      taints: [{ key: 'dedicated', value: 'a', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'cilium', effect: 'NoExecute' }],
    });

  it('labels the node with template labels, owners and injectable requirement values only', () => {
    const requirements: NodeSelectorRequirementWithMinValues[] = [
      { key: 'tier', operator: 'In', values: ['web'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m', 'c'] },
    ];
    const launch = nodeClaimFromPlan({
      claim: plan(requirements),
      nodePool: pool(requirements),
      nodeClass: nodeClass({}, 'default'),
      seed: 'd/0',
    });
    expect(launch.labels).toEqual({
      team: 'a',
      tier: 'web',
      'karpenter.sh/nodepool': 'general',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
    });
    expect(launch.name).toBe(nodeClaimName('general', 'd/0'));
    expect(launch.taints).toEqual([{ key: 'dedicated', value: 'a', effect: 'NoSchedule' }]);
    expect(launch.startupTaints).toEqual([{ key: 'cilium', effect: 'NoExecute' }]);
  });

  it('gives userData the claim labels, capacity type and do-not-sync-taints, never instance-type labels', () => {
    const launch = nodeClaimFromPlan({
      claim: plan([]),
      nodePool: pool(),
      nodeClass: nodeClass({}, 'default'),
      seed: 'd/0',
    });
    expect(launch.userDataLabels).toEqual({
      team: 'a',
      'karpenter.sh/nodepool': 'general',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      'karpenter.sh/capacity-type': 'on-demand',
      'karpenter.sh/do-not-sync-taints': 'true',
    });
    expect(launch.instanceTypes.length).toBeGreaterThan(1);
    for (const key of Object.keys(launch.userDataLabels)) {
      expect(key.startsWith('karpenter.k8s.aws/instance-')).toBe(false);
      expect(key).not.toBe('node.kubernetes.io/instance-type');
    }
  });

  it('leaves do-not-sync-taints out for Custom userData, as upstream does', () => {
    const launch = nodeClaimFromPlan({
      claim: plan([]),
      nodePool: pool(),
      nodeClass: nodeClass({ amiFamily: 'Custom', amiSelectorTerms: [{ id: 'ami-1' }] }, 'default'),
      seed: 'd/0',
    });
    expect(launch.userDataLabels['karpenter.sh/do-not-sync-taints']).toBeUndefined();
  });

  it('drops labels the NodeRestriction plugin would refuse from userData but keeps them on the claim', () => {
    const p = nodePool('general', { labels: { 'node-restriction.kubernetes.io/pool': 'x' } });
    const claim = solve({ pods: [pod('p')], nodePools: [p], instanceTypes: { general: standardTypes() } })
      .nodeClaims[0]!;
    const launch = nodeClaimFromPlan({ claim, nodePool: p, nodeClass: nodeClass({}, 'default'), seed: 's' });
    expect(launch.labels['node-restriction.kubernetes.io/pool']).toBe('x');
    expect(launch.userDataLabels['node-restriction.kubernetes.io/pool']).toBeUndefined();
  });

  it.each<[string, ('spot' | 'on-demand' | 'reserved')[], NodeSelectorRequirementWithMinValues[], string, string[]]>([
    ['spot preferred over on-demand when allowed', ['spot', 'on-demand'], [], 'spot', ['on-demand', 'spot']],
    [
      'on-demand when the requirement excludes spot',
      ['spot', 'on-demand'],
      [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
      'on-demand',
      ['on-demand'],
    ],
    ['reserved before spot', ['reserved', 'spot', 'on-demand'], [], 'reserved', ['on-demand', 'reserved', 'spot']],
  ])('capacity type: %s', (_name, capacityTypes, requirements, expected, allowed) => {
    const types = [instanceType('m5.large', { cpu: 2, memoryGiB: 8, capacityTypes })];
    const launch = nodeClaimFromPlan({
      claim: plan(requirements, {}, types),
      nodePool: pool(requirements),
      nodeClass: nodeClass({}, 'default'),
      seed: 's',
    });
    expect(launch.capacityType).toBe(expected);
    expect(launch.userDataLabels['karpenter.sh/capacity-type']).toBe(expected);
    expect(launch.requirements).toContainEqual({ key: 'karpenter.sh/capacity-type', operator: 'In', values: allowed });
    expect(launch.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')?.values).toEqual(['m5.large']);
  });

  it('ignores offerings that are unavailable or outside the zone requirement when choosing the capacity type', () => {
    const it = instanceType('m5.large', { cpu: 2, memoryGiB: 8, capacityTypes: ['spot', 'on-demand'] });
    const claim = plan([], {}, [it]);
    const narrowed: PlannedNodeClaim = {
      ...claim,
      requirements: [...claim.requirements, { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-a'] }],
      instanceTypes: [
        {
          ...it,
          offerings: it.offerings.map((o) =>
            o.capacityType === 'spot' && o.zone === 'zone-a' ? { ...o, available: false } : o,
          ),
        },
      ],
    };
    const launch = nodeClaimFromPlan({
      claim: narrowed,
      nodePool: pool(),
      nodeClass: nodeClass({}, 'default'),
      seed: 's',
    });
    expect(launch.capacityType).toBe('on-demand');
  });

  it('refuses a NodePool that is not the claim’s', () => {
    expect(() =>
      nodeClaimFromPlan({ claim: plan([]), nodePool: nodePool('other'), nodeClass: nodeClass(), seed: 's' }),
    ).toThrow('claim of NodePool/general given NodePool/other');
  });
});

describe('registrationLabels', () => {
  it('adds the launched type, zone and capacity type under the claim labels, and registered=true', () => {
    const it = instanceType('m5.large', { cpu: 2, memoryGiB: 8 });
    const labels = registrationLabels(
      { labels: { team: 'a', 'karpenter.sh/nodepool': 'general' } },
      { instanceType: it, zone: 'us-east-1b', zoneID: 'use1-az2', capacityType: 'spot' },
    );
    expect(labels).toMatchObject({
      team: 'a',
      'karpenter.sh/nodepool': 'general',
      'node.kubernetes.io/instance-type': 'm5.large',
      'karpenter.k8s.aws/instance-family': 'm5',
      'karpenter.k8s.aws/instance-cpu': '2',
      'topology.kubernetes.io/zone': 'us-east-1b',
      'topology.k8s.aws/zone-id': 'use1-az2',
      'karpenter.sh/capacity-type': 'spot',
      'karpenter.sh/registered': 'true',
    });
  });

  it('labels a reserved node with its reservation, and no other node', () => {
    const it = instanceType('p5.48xlarge', { cpu: 192, memoryGiB: 2048 });
    const reserved = registrationLabels(
      { labels: {} },
      { instanceType: it, zone: 'z', capacityType: 'reserved', reservation: { id: 'cr-1', type: 'capacity-block' } },
    );
    expect(reserved).toMatchObject({
      'karpenter.sh/capacity-type': 'reserved',
      'karpenter.k8s.aws/capacity-reservation-id': 'cr-1',
      'karpenter.k8s.aws/capacity-reservation-type': 'capacity-block',
    });
    const plain = registrationLabels({ labels: {} }, { instanceType: it, zone: 'z', capacityType: 'on-demand' });
    expect(plain['karpenter.k8s.aws/capacity-reservation-id']).toBeUndefined();
  });

  it('lets the claim labels win over the type’s', () => {
    const it = instanceType('m5.large', { cpu: 2, memoryGiB: 8, labels: { tier: 'type' } });
    const labels = registrationLabels(
      { labels: { tier: 'claim' } },
      { instanceType: it, zone: 'z', capacityType: 'on-demand' },
    );
    expect(labels.tier).toBe('claim');
    expect(labels['topology.k8s.aws/zone-id']).toBeUndefined();
  });
});
