import { describe, expect, it } from 'vitest';
import type { NodeSelectorRequirementWithMinValues } from '../../shared/apis/v1/types';
import { launchHashTags, NODECLASS_HASH_TAG, nodeClassHash } from '../../shared/disruption/hash';
import type { InstanceType } from '../../shared/instancetypes/types';
import { type LaunchClaim, planLaunch, type ResolvedNodeClass } from '../../shared/launch/request';
import { instanceType, nodeClass, nodePool } from './fixtures';

const resolved: ResolvedNodeClass = {
  subnets: [
    { id: 'subnet-a', zone: 'us-east-1a', availableIps: 100 },
    { id: 'subnet-b', zone: 'us-east-1b', availableIps: 100 },
  ],
  securityGroups: [{ id: 'sg-1' }],
  amis: [{ id: 'ami-1', requirements: [] }],
  instanceProfile: 'prod_1',
  cluster: {
    name: 'prod',
    endpoint: 'https://prod.example',
    caBundle: 'Y2E=',
    serviceCIDR: '10.100.0.0/16',
    version: '1.33',
    dnsIP: '10.100.0.10',
    ipv6: false,
  },
};

function claim(
  types: InstanceType[],
  requirements: NodeSelectorRequirementWithMinValues[] = [],
  extra = {},
): LaunchClaim {
  return {
    nodeClaimName: 'general-abc',
    nodePool: nodePool(),
    nodeClass: nodeClass(),
    instanceTypes: types,
    requirements,
    labels: {},
    ...extra,
  };
}

const m5 = instanceType('m5.large', [{ zone: 'us-east-1a' }, { zone: 'us-east-1b' }]);

describe('planLaunch', () => {
  it('tags instances with the static drift hashes, which spec.tags cannot replace', () => {
    const nc = nodeClass({ tags: { [NODECLASS_HASH_TAG]: 'mine' } });
    const plan = planLaunch(claim([m5], [], { nodeClass: nc }), resolved, { clusterName: 'prod' });
    const instance = plan.fleet.TagSpecifications?.find((t) => t.ResourceType === 'instance')?.Tags ?? [];
    const tags = Object.fromEntries(instance.map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject(launchHashTags(nodePool(), nc));
    expect(tags[NODECLASS_HASH_TAG]).toBe(nodeClassHash(nc));
  });

  it('builds templates and a fleet whose overrides use exactly those templates', () => {
    const plan = planLaunch(claim([m5]), resolved, { clusterName: 'prod' });
    expect(plan.capacityType).toBe('on-demand');
    expect(plan.templates).toHaveLength(1);
    const name = plan.templates[0]?.input.LaunchTemplateName;
    expect(plan.fleet.LaunchTemplateConfigs?.map((c) => c.LaunchTemplateSpecification?.LaunchTemplateName)).toEqual([
      name,
    ]);
    expect(plan.fleet.LaunchTemplateConfigs?.[0]?.Overrides?.map((o) => [o.SubnetId, o.ImageId])).toEqual([
      ['subnet-a', 'ami-1'],
      ['subnet-b', 'ami-1'],
    ]);
  });

  it('plans nothing when no offering is compatible', () => {
    const plan = planLaunch(
      claim([m5], [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1c'] }]),
      resolved,
      { clusterName: 'prod' },
    );
    expect(plan.overrides).toEqual([]);
    expect(plan.templates).toEqual([]);
  });

  it('takes dedicated tenancy and the placement partition from the claim requirements', () => {
    const plan = planLaunch(
      claim(
        [m5],
        [
          { key: 'karpenter.k8s.aws/instance-tenancy', operator: 'In', values: ['dedicated'] },
          { key: 'karpenter.k8s.aws/placement-group-partition', operator: 'In', values: ['3'] },
        ],
        { nodeClass: nodeClass({ placementGroupSelector: { id: 'pg-123' } }) },
      ),
      resolved,
      { clusterName: 'prod' },
    );
    expect(plan.templates[0]?.input.LaunchTemplateData?.Placement).toEqual({
      Tenancy: 'dedicated',
      GroupId: 'pg-123',
      PartitionNumber: 3,
    });
    // Default tenancy is preferred whenever the claim allows it.
    const either = planLaunch(
      claim([m5], [{ key: 'karpenter.k8s.aws/instance-tenancy', operator: 'In', values: ['default', 'dedicated'] }], {
        nodeClass: nodeClass({ placementGroupSelector: { name: 'my-group' } }),
      }),
      resolved,
      { clusterName: 'prod' },
    );
    expect(either.templates[0]?.input.LaunchTemplateData?.Placement).toEqual({
      Tenancy: 'default',
      GroupName: 'my-group',
    });
  });

  it('makes one template per reservation, each targeting its reservation', () => {
    const p5 = instanceType('p5.48xlarge', [
      { zone: 'us-east-1a', capacityType: 'reserved', price: 0.001, reservationId: 'cr-a', reservationType: 'default' },
      { zone: 'us-east-1b', capacityType: 'reserved', price: 0.001, reservationId: 'cr-b', reservationType: 'default' },
    ]);
    const plan = planLaunch(
      claim([p5], [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved', 'on-demand'] }]),
      resolved,
      { clusterName: 'prod' },
    );
    expect(plan.capacityType).toBe('reserved');
    const targets = plan.templates.map(
      (t) =>
        t.input.LaunchTemplateData?.CapacityReservationSpecification?.CapacityReservationTarget?.CapacityReservationId,
    );
    expect(targets.sort()).toEqual(['cr-a', 'cr-b']);
    const byTemplate = Object.fromEntries(
      (plan.fleet.LaunchTemplateConfigs ?? []).map((c) => [
        c.LaunchTemplateSpecification?.LaunchTemplateName,
        c.Overrides?.map((o) => o.AvailabilityZone),
      ]),
    );
    for (const t of plan.templates) {
      const zone = t.reservationId === 'cr-a' ? 'us-east-1a' : 'us-east-1b';
      expect(byTemplate[t.input.LaunchTemplateName ?? '']).toEqual([zone]);
    }
    expect(plan.fleet.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('on-demand');
  });

  it('enables enclaves when the claim asks', () => {
    const plan = planLaunch(claim([m5], [], { enclave: true }), resolved, { clusterName: 'prod' });
    expect(plan.templates[0]?.input.LaunchTemplateData?.EnclaveOptions).toEqual({ Enabled: true });
  });
});
