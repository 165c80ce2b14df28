import { describe, expect, it } from 'vitest';
import {
  buildCreateFleetRequest,
  fleetClientToken,
  offeringKey,
  selectOverrides,
  UNFULFILLABLE_CAPACITY_CODES,
} from '../../shared/launch/fleet';
import { instanceType } from './fixtures';

const subnets: Record<string, { id: string }> = {
  'us-east-1a': { id: 'subnet-a2' },
  'us-east-1b': { id: 'subnet-b1' },
};

describe('selectOverrides', () => {
  const candidates = [
    {
      instanceType: instanceType('c5.large', []),
      offerings: [
        { zone: 'us-east-1c', capacityType: 'on-demand' as const, price: 0.085, available: true },
        { zone: 'us-east-1b', capacityType: 'on-demand' as const, price: 0.085, available: true },
      ],
    },
    {
      instanceType: instanceType('m5.large', []),
      offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand' as const, price: 0.096, available: true }],
    },
  ];

  it('pairs each candidate offering with its zone subnet and template, in candidate order', () => {
    const overrides = selectOverrides({
      candidates,
      subnetFor: (zone) => subnets[zone],
      templateFor: (t) => ({ name: `lt-${t}`, amiId: 'ami-1' }),
    });
    expect(overrides).toEqual([
      {
        instanceType: 'c5.large',
        zone: 'us-east-1b',
        subnetId: 'subnet-b1',
        imageId: 'ami-1',
        price: 0.085,
        launchTemplateName: 'lt-c5.large',
      },
      {
        instanceType: 'm5.large',
        zone: 'us-east-1a',
        subnetId: 'subnet-a2',
        imageId: 'ami-1',
        price: 0.096,
        launchTemplateName: 'lt-m5.large',
      },
    ]);
  });

  it('carries the reservation of a reserved offering', () => {
    const overrides = selectOverrides({
      candidates: [
        {
          instanceType: instanceType('p5.48xlarge', []),
          offerings: [
            {
              zone: 'us-east-1a',
              capacityType: 'reserved',
              price: 0.001,
              available: true,
              reservationId: 'cr-1',
              reservationType: 'default',
            },
          ],
        },
      ],
      subnetFor: (zone) => subnets[zone],
      templateFor: (_t, o) => ({ name: `lt-${o.reservationId}` }),
    });
    expect(overrides).toEqual([
      {
        instanceType: 'p5.48xlarge',
        zone: 'us-east-1a',
        subnetId: 'subnet-a2',
        price: 0.001,
        launchTemplateName: 'lt-cr-1',
        reservationId: 'cr-1',
      },
    ]);
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

describe('reserved fleets', () => {
  const overrides = [
    {
      instanceType: 'p5.48xlarge',
      zone: 'us-east-1a',
      subnetId: 'subnet-a2',
      price: 0.001,
      launchTemplateName: 'lt-cr',
      reservationId: 'cr-1',
    },
  ];
  it('launches an ordinary reservation on demand', () => {
    const request = buildCreateFleetRequest({
      capacityType: 'reserved',
      overrides,
      tags: {},
      clientToken: 't',
      reservation: { type: 'default' },
    });
    expect(request.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('on-demand');
    expect(request.OnDemandOptions).toEqual({ AllocationStrategy: 'lowest-price' });
  });

  it('launches a capacity block as capacity-block without an allocation strategy', () => {
    const request = buildCreateFleetRequest({
      capacityType: 'reserved',
      overrides,
      tags: {},
      clientToken: 't',
      reservation: { type: 'capacity-block' },
    });
    expect(request.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('capacity-block');
    expect(request).not.toHaveProperty('OnDemandOptions');
    expect(request).not.toHaveProperty('SpotOptions');
  });

  it('launches an interruptible reservation as reserved-capacity', () => {
    const request = buildCreateFleetRequest({
      capacityType: 'reserved',
      overrides,
      tags: {},
      clientToken: 't',
      reservation: { type: 'default', interruptible: true },
    });
    expect(request.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('reserved-capacity');
    expect(request.ReservedCapacityOptions).toEqual({ ReservationTypes: ['interruptible-capacity-reservation'] });
  });
});

describe('fleet client tokens and offering keys', () => {
  const a = { instanceType: 'm5.large', zone: 'us-east-1a', subnetId: 's-a', launchTemplateName: 'lt' };
  const b = { instanceType: 'm5.large', zone: 'us-east-1b', subnetId: 's-b', launchTemplateName: 'lt' };

  it('derives a deterministic token of at most 64 characters from the claim and its overrides', () => {
    const token = fleetClientToken('general-abcde', [a, b]);
    expect(token).toBe(fleetClientToken('general-abcde', [a, b]));
    expect(token.length).toBeLessThanOrEqual(64);
    expect(fleetClientToken('x'.repeat(300), [a]).length).toBeLessThanOrEqual(64);
    expect(fleetClientToken('general-abcdf', [a, b])).not.toBe(token);
  });

  it('changes the token when the overrides change, so EC2 never sees one token with two requests', () => {
    const token = fleetClientToken('general-abcde', [a, b]);
    expect(fleetClientToken('general-abcde', [b])).not.toBe(token);
    expect(fleetClientToken('general-abcde', [a, { ...b, subnetId: 's-b2' }])).not.toBe(token);
    // Order is not a change: the same set of overrides is the same request.
    expect(fleetClientToken('general-abcde', [b, a])).toBe(token);
    expect(fleetClientToken('general-abcde', [a, b], 'i-dead')).not.toBe(token);
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
