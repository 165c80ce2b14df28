import { describe, expect, it } from 'vitest';
import type { NodeSelectorRequirementWithMinValues } from '../../shared/apis/v1/types';
import type { InstanceType, Offering } from '../../shared/instancetypes/types';
import {
  claimRequirements,
  MinValuesError,
  type SelectArgs,
  selectLaunchCandidates,
} from '../../shared/launch/offerings';
import { instanceType } from './fixtures';

const ZONE = 'topology.kubernetes.io/zone';
const CT = 'karpenter.sh/capacity-type';

function select(
  types: InstanceType[],
  requirements: NodeSelectorRequirementWithMinValues[],
  extra: Partial<SelectArgs> = {},
) {
  return selectLaunchCandidates({
    nodeClaimName: 'claim-1',
    instanceTypes: types,
    requirements: claimRequirements(requirements),
    isAvailable: () => true,
    ...extra,
  });
}

function pairs(result: ReturnType<typeof select>): string[] {
  return result.candidates.flatMap((c) => c.offerings.map((o) => `${c.instanceType.name}:${o.zone}:${o.capacityType}`));
}

const twoZones = (price: number, capacityTypes: Offering['capacityType'][] = ['on-demand']): Partial<Offering>[] =>
  capacityTypes.flatMap((capacityType) =>
    ['us-east-1a', 'us-east-1b'].map((zone) => ({
      zone,
      capacityType,
      price: capacityType === 'spot' ? price / 2 : price,
    })),
  );

describe('selectLaunchCandidates: the claim requirements decide the offerings', () => {
  const types = [instanceType('m5.large', twoZones(0.096)), instanceType('c5.large', twoZones(0.085))];

  it('keeps only offerings in the zones a zone-pinned claim allows', () => {
    const result = select(types, [{ key: ZONE, operator: 'In', values: ['us-east-1b'] }]);
    expect(pairs(result)).toEqual(['c5.large:us-east-1b:on-demand', 'm5.large:us-east-1b:on-demand']);
  });

  it('honours NotIn zones and zone IDs', () => {
    const withIds = [
      instanceType('m5.large', [
        { zone: 'us-east-1a', zoneID: 'use1-az1' },
        { zone: 'us-east-1b', zoneID: 'use1-az2' },
      ]),
    ];
    expect(pairs(select(withIds, [{ key: ZONE, operator: 'NotIn', values: ['us-east-1a'] }]))).toEqual([
      'm5.large:us-east-1b:on-demand',
    ]);
    expect(pairs(select(withIds, [{ key: 'topology.k8s.aws/zone-id', operator: 'In', values: ['use1-az1'] }]))).toEqual(
      ['m5.large:us-east-1a:on-demand'],
    );
  });

  it('drops types the claim requirements exclude', () => {
    const result = select(types, [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }]);
    expect(result.candidates.map((c) => c.instanceType.name)).toEqual(['m5.large']);
  });

  it('chooses spot over on-demand when both are allowed and spot is offered', () => {
    const mixed = [instanceType('m5.large', twoZones(0.096, ['on-demand', 'spot']))];
    const both = select(mixed, [{ key: CT, operator: 'In', values: ['spot', 'on-demand'] }]);
    expect(both.capacityType).toBe('spot');
    expect(pairs(both)).toEqual(['m5.large:us-east-1a:spot', 'm5.large:us-east-1b:spot']);
    expect(select(mixed, [{ key: CT, operator: 'In', values: ['on-demand'] }]).capacityType).toBe('on-demand');
    // Spot gone everywhere (e.g. cached ICE): on-demand.
    const noSpot = select(mixed, [{ key: CT, operator: 'In', values: ['spot', 'on-demand'] }], {
      isAvailable: (_t, o) => o.capacityType !== 'spot',
    });
    expect(noSpot.capacityType).toBe('on-demand');
  });

  it('leaves out what is unavailable now', () => {
    const result = select(types, [], { isAvailable: (t, o) => !(t === 'c5.large' && o.zone === 'us-east-1a') });
    expect(pairs(result)).toEqual([
      'c5.large:us-east-1b:on-demand',
      'm5.large:us-east-1a:on-demand',
      'm5.large:us-east-1b:on-demand',
    ]);
  });
});

describe('selectLaunchCandidates: launch-time filters', () => {
  it('drops metal and accelerated types while ordinary ones remain', () => {
    const gpu = instanceType('g5.xlarge', [{ price: 0.05 }], { gpus: 1 });
    gpu.capacity['nvidia.com/gpu'] = 1;
    const metal = instanceType('m5.metal', [{ price: 0.01 }]);
    const neuron = instanceType('inf2.xlarge', [{ price: 0.02 }]);
    neuron.capacity['aws.amazon.com/neuron'] = 1;
    const plain = instanceType('m5.large', [{ price: 0.096 }]);
    expect(select([gpu, metal, neuron, plain], []).candidates.map((c) => c.instanceType.name)).toEqual(['m5.large']);
    // Only rare types left: they launch.
    expect(select([gpu, metal], []).candidates.map((c) => c.instanceType.name)).toEqual(['m5.metal', 'g5.xlarge']);
  });

  it('drops spot types dearer than the cheapest on-demand offering when both are allowed', () => {
    const cheapOd = instanceType('c5.large', [{ price: 0.085 }]);
    const pricySpot = instanceType('m5.4xlarge', [
      { capacityType: 'spot', price: 0.3 },
      { capacityType: 'on-demand', price: 0.768 },
    ]);
    const cheapSpot = instanceType('m5.large', [{ capacityType: 'spot', price: 0.04 }]);
    const both = [{ key: CT, operator: 'In' as const, values: ['spot', 'on-demand'] }];
    const result = select([cheapOd, pricySpot, cheapSpot], both);
    expect(result.capacityType).toBe('spot');
    expect(result.candidates.map((c) => c.instanceType.name)).toEqual(['m5.large']);
    // Spot only: no cap.
    const spotOnly = select([cheapOd, pricySpot, cheapSpot], [{ key: CT, operator: 'In', values: ['spot'] }]);
    expect(spotOnly.candidates.map((c) => c.instanceType.name)).toEqual(['m5.large', 'm5.4xlarge']);
  });

  it('skips the exotic and spot filters when a requirement has minValues', () => {
    const metal = instanceType('m5.metal', [{ price: 0.01 }]);
    const plain = instanceType('m5.large', [{ price: 0.096 }]);
    const result = select(
      [metal, plain],
      [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 2 }],
    );
    expect(result.candidates.map((c) => c.instanceType.name)).toEqual(['m5.metal', 'm5.large']);
  });

  it('truncates to the 60 cheapest types and refuses when that loses minValues', () => {
    const many = Array.from({ length: 80 }, (_, i) => {
      const t = instanceType(`t${i}.large`, [{ price: 1 + (79 - i) / 100 }]);
      t.labels['karpenter.k8s.aws/instance-family'] = i < 60 ? 'cheap' : `family-${i}`;
      return t;
    });
    const result = select(many, []);
    expect(result.candidates).toHaveLength(60);
    expect(result.candidates[0]?.instanceType.name).toBe('t79.large');
    // The 60 cheapest are t20…t79: families family-60…family-79 plus "cheap" = 21 distinct.
    expect(
      select(many, [{ key: 'karpenter.k8s.aws/instance-family', operator: 'Exists', minValues: 21 }]).candidates,
    ).toHaveLength(60);
    expect(() =>
      select(many, [{ key: 'karpenter.k8s.aws/instance-family', operator: 'Exists', minValues: 22 }]),
    ).toThrow(MinValuesError);
  });
});

describe('selectLaunchCandidates: capacity reservations', () => {
  const reserved = (id: string, zone: string, extra: Partial<Offering> = {}): Partial<Offering> => ({
    zone,
    capacityType: 'reserved',
    price: 0.0001,
    reservationId: id,
    reservationType: 'default',
    reservationCapacity: 1,
    ...extra,
  });
  const all = [{ key: CT, operator: 'In' as const, values: ['reserved', 'on-demand'] }];

  it('prefers reserved capacity and keeps one reservation per zone, the fullest', () => {
    const p5 = instanceType('p5.48xlarge', [
      reserved('cr-small', 'us-east-1a', { reservationCapacity: 1 }),
      reserved('cr-big', 'us-east-1a', { reservationCapacity: 4 }),
      { zone: 'us-east-1a', price: 98 },
    ]);
    const plain = instanceType('m5.large', [{ price: 0.096 }]);
    const result = select([p5, plain], all);
    expect(result.capacityType).toBe('reserved');
    expect(result.candidates.map((c) => [c.instanceType.name, c.offerings.map((o) => o.reservationId)])).toEqual([
      ['p5.48xlarge', ['cr-big']],
    ]);
  });

  it('honours a claim pinned to one reservation', () => {
    const p5 = instanceType('p5.48xlarge', [reserved('cr-1', 'us-east-1a'), reserved('cr-2', 'us-east-1b')]);
    const result = select(p5 ? [p5] : [], [
      ...all,
      { key: 'karpenter.k8s.aws/capacity-reservation-id', operator: 'In', values: ['cr-2'] },
    ]);
    expect(pairs(result)).toEqual(['p5.48xlarge:us-east-1b:reserved']);
  });

  it('keeps a single capacity block: CreateFleet takes one', () => {
    const block = (id: string, price: number) =>
      reserved(id, 'us-east-1a', { reservationType: 'capacity-block', price });
    const a = instanceType('p5.48xlarge', [block('cb-1', 0.002), block('cb-2', 0.001)]);
    const b = instanceType('p4d.24xlarge', [block('cb-3', 0.003)]);
    const result = select([a, b], all);
    expect(result.candidates.map((c) => [c.instanceType.name, c.offerings.map((o) => o.reservationId)])).toEqual([
      ['p5.48xlarge', ['cb-2']],
    ]);
  });

  it('falls back to on-demand when every reservation is used up', () => {
    const p5 = instanceType('p5.48xlarge', [reserved('cr-1', 'us-east-1a'), { zone: 'us-east-1a', price: 98 }]);
    const result = select([p5], all, { isAvailable: (_t, o) => o.reservationId !== 'cr-1' });
    expect(result.capacityType).toBe('on-demand');
    expect(pairs(result)).toEqual(['p5.48xlarge:us-east-1a:on-demand']);
  });
});
