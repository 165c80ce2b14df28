import { describe, expect, it } from 'vitest';
import {
  buildCreateFleetRequest,
  fleetClientToken,
  offeringKey,
  selectOverrides,
  UNFULFILLABLE_CAPACITY_CODES,
} from '../../shared/launch/fleet';
import { instanceType } from './fixtures';

const subnetsByZone = {
  'us-east-1a': [
    { id: 'subnet-a1', availableIps: 10 },
    { id: 'subnet-a2', availableIps: 200 },
  ],
  'us-east-1b': [{ id: 'subnet-b1', availableIps: 50 }],
};

describe('selectOverrides', () => {
  const types = [
    instanceType('m5.large', [
      { zone: 'us-east-1a', price: 0.096 },
      { zone: 'us-east-1b', price: 0.096 },
      { zone: 'us-east-1a', capacityType: 'spot', price: 0.04 },
    ]),
    instanceType('c5.large', [
      { zone: 'us-east-1b', price: 0.085 },
      { zone: 'us-east-1c', price: 0.085 },
      { zone: 'us-east-1a', price: 0.085, available: false },
    ]),
  ];

  it('pairs the cheapest types with the subnet with most free IPs in each offered zone', () => {
    const overrides = selectOverrides({
      instanceTypes: types,
      capacityType: 'on-demand',
      subnetsByZone,
      templateFor: (t) => `lt-${t}`,
    });
    expect(overrides).toEqual([
      {
        instanceType: 'c5.large',
        zone: 'us-east-1b',
        subnetId: 'subnet-b1',
        price: 0.085,
        launchTemplateName: 'lt-c5.large',
      },
      {
        instanceType: 'm5.large',
        zone: 'us-east-1a',
        subnetId: 'subnet-a2',
        price: 0.096,
        launchTemplateName: 'lt-m5.large',
      },
      {
        instanceType: 'm5.large',
        zone: 'us-east-1b',
        subnetId: 'subnet-b1',
        price: 0.096,
        launchTemplateName: 'lt-m5.large',
      },
    ]);
  });

  it('keeps only offerings of the capacity type', () => {
    const overrides = selectOverrides({
      instanceTypes: types,
      capacityType: 'spot',
      subnetsByZone,
      templateFor: () => 'lt',
    });
    expect(overrides.map((o) => `${o.instanceType}/${o.zone}`)).toEqual(['m5.large/us-east-1a']);
  });

  it('drops offerings the unavailable-offerings cache holds', () => {
    const unavailable = new Set([offeringKey('on-demand', 'c5.large', 'us-east-1b')]);
    const overrides = selectOverrides({
      instanceTypes: types,
      capacityType: 'on-demand',
      subnetsByZone,
      templateFor: () => 'lt',
      isUnavailable: (ct, t, z) => unavailable.has(offeringKey(ct, t, z)),
    });
    expect(overrides.map((o) => o.instanceType)).toEqual(['m5.large', 'm5.large']);
  });

  it('caps the instance types at 60, cheapest first', () => {
    const many = Array.from({ length: 80 }, (_, i) => instanceType(`t${i}.large`, [{ price: 1 + (79 - i) / 100 }]));
    const overrides = selectOverrides({
      instanceTypes: many,
      capacityType: 'on-demand',
      subnetsByZone,
      templateFor: () => 'lt',
    });
    expect(overrides).toHaveLength(60);
    expect(overrides[0]?.instanceType).toBe('t79.large');
    expect(overrides.map((o) => o.instanceType)).not.toContain('t0.large');
    expect(
      selectOverrides({
        instanceTypes: many,
        capacityType: 'on-demand',
        subnetsByZone,
        templateFor: () => 'lt',
        max: 5,
      }),
    ).toHaveLength(5);
  });
});

describe('buildCreateFleetRequest', () => {
  const overrides = [
    { instanceType: 'c5.large', zone: 'us-east-1b', subnetId: 'subnet-b1', price: 0.085, launchTemplateName: 'lt-1' },
    {
      instanceType: 'g5.xlarge',
      zone: 'us-east-1a',
      subnetId: 'subnet-a2',
      price: 1.0,
      launchTemplateName: 'lt-2',
      imageId: 'ami-gpu',
    },
    { instanceType: 'm5.large', zone: 'us-east-1a', subnetId: 'subnet-a2', price: 0.096, launchTemplateName: 'lt-1' },
  ];
  const tags = { 'eks:eks-cluster-name': 'prod', Name: 'general-abc' };

  it('asks for one instant instance at the lowest price on demand, grouped by template', () => {
    const request = buildCreateFleetRequest({
      capacityType: 'on-demand',
      overrides,
      tags,
      clientToken: 'tok',
      context: 'ctx',
    });
    expect(request).toEqual({
      Type: 'instant',
      ClientToken: 'tok',
      Context: 'ctx',
      TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' },
      OnDemandOptions: { AllocationStrategy: 'lowest-price' },
      LaunchTemplateConfigs: [
        {
          LaunchTemplateSpecification: { LaunchTemplateName: 'lt-1', Version: '$Latest' },
          Overrides: [
            { InstanceType: 'c5.large', SubnetId: 'subnet-b1', AvailabilityZone: 'us-east-1b', Priority: 0.085 },
            { InstanceType: 'm5.large', SubnetId: 'subnet-a2', AvailabilityZone: 'us-east-1a', Priority: 0.096 },
          ],
        },
        {
          LaunchTemplateSpecification: { LaunchTemplateName: 'lt-2', Version: '$Latest' },
          Overrides: [
            {
              InstanceType: 'g5.xlarge',
              SubnetId: 'subnet-a2',
              AvailabilityZone: 'us-east-1a',
              ImageId: 'ami-gpu',
              Priority: 1,
            },
          ],
        },
      ],
      TagSpecifications: ['instance', 'volume', 'fleet'].map((ResourceType) => ({
        ResourceType,
        Tags: [
          { Key: 'eks:eks-cluster-name', Value: 'prod' },
          { Key: 'Name', Value: 'general-abc' },
        ],
      })),
    });
  });

  it('uses price-capacity-optimized for spot', () => {
    const request = buildCreateFleetRequest({ capacityType: 'spot', overrides, tags, clientToken: 'tok' });
    expect(request.SpotOptions).toEqual({ AllocationStrategy: 'price-capacity-optimized' });
    expect(request.OnDemandOptions).toBeUndefined();
    expect(request.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('spot');
    expect(request).not.toHaveProperty('Context');
  });
});

describe('fleet client tokens and offering keys', () => {
  it('derives a deterministic token of at most 64 characters from the claim', () => {
    const token = fleetClientToken('general-abcde');
    expect(token).toBe(fleetClientToken('general-abcde'));
    expect(token.length).toBeLessThanOrEqual(64);
    expect(fleetClientToken('x'.repeat(300)).length).toBeLessThanOrEqual(64);
    expect(fleetClientToken('general-abcde', '2')).not.toBe(token);
    expect(fleetClientToken('general-abcdf')).not.toBe(token);
  });

  it('formats offering keys as capacityType:instanceType:zone', () => {
    expect(offeringKey('spot', 'm5.large', 'us-east-1a')).toBe('spot:m5.large:us-east-1a');
  });

  it('knows the capacity error codes', () => {
    expect([...UNFULFILLABLE_CAPACITY_CODES]).toEqual(
      expect.arrayContaining([
        'InsufficientInstanceCapacity',
        'MaxSpotInstanceCountExceeded',
        'InsufficientFreeAddressesInSubnet',
      ]),
    );
    expect(UNFULFILLABLE_CAPACITY_CODES.has('RequestLimitExceeded')).toBe(false);
  });
});
