import { describe, expect, it } from 'vitest';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import { type CapacityType, type Catalog, loadBuiltInCatalog, resolveInstanceTypes } from '../../shared/instancetypes';
import { catalogType, M6G_XLARGE, nodeClass } from './helpers';

const TWO_ZONES = catalogType({
  name: 'm5.xlarge',
  offerings: [
    { zone: 'us-east-1a', capacityType: 'on-demand', price: 0.192, available: true },
    { zone: 'us-east-1a', capacityType: 'spot', price: 0.08, available: true },
    { zone: 'us-east-1b', capacityType: 'on-demand', price: 0.192, available: true },
    { zone: 'us-east-1b', capacityType: 'spot', price: 0.07, available: false },
    { zone: 'us-east-1c', capacityType: 'spot', price: Number.NaN, available: true },
  ],
});
const CATALOG: Catalog = { version: 1, region: 'us-east-1', instanceTypes: [TWO_ZONES, M6G_XLARGE] };

function withSubnets(subnets: { zone: string; zoneID?: string }[]): EC2NodeClass {
  const nc = nodeClass();
  nc.status = { subnets: subnets.map((s, i) => ({ id: `subnet-${i}`, ...s })) };
  return nc;
}

function offeringKeys(nc: EC2NodeClass, options: Parameters<typeof resolveInstanceTypes>[2] = {}): string[] {
  const [m5] = resolveInstanceTypes(CATALOG, nc, options);
  return (m5?.offerings ?? []).map((o) => `${o.zone}/${o.capacityType}/${o.available ? 'up' : 'down'}`);
}

describe('resolveInstanceTypes offerings', () => {
  it('keeps every zone when none is known, and marks unpriced or unavailable offerings down', () => {
    expect(offeringKeys(nodeClass())).toEqual([
      'us-east-1a/on-demand/up',
      'us-east-1a/spot/up',
      'us-east-1b/on-demand/up',
      'us-east-1b/spot/down',
      'us-east-1c/spot/down',
    ]);
  });

  it('limits offerings to the zones given', () => {
    expect(offeringKeys(nodeClass(), { zones: ['us-east-1b'] })).toEqual([
      'us-east-1b/on-demand/up',
      'us-east-1b/spot/down',
    ]);
  });

  it("limits offerings to the NodeClass subnets' zones and takes their zone IDs", () => {
    const [m5] = resolveInstanceTypes(CATALOG, withSubnets([{ zone: 'us-east-1a', zoneID: 'use1-az4' }]));
    expect(m5?.offerings).toEqual([
      { zone: 'us-east-1a', zoneID: 'use1-az4', capacityType: 'on-demand', price: 0.192, available: true },
      { zone: 'us-east-1a', zoneID: 'use1-az4', capacityType: 'spot', price: 0.08, available: true },
    ]);
  });

  it('lets options.zones win over the subnets', () => {
    expect(offeringKeys(withSubnets([{ zone: 'us-east-1a' }]), { zones: ['us-east-1b'] })).toHaveLength(2);
  });

  it('keeps a type whose zones the NodeClass lacks, with no offerings', () => {
    const types = resolveInstanceTypes(CATALOG, nodeClass(), { zones: ['eu-west-1a'] });
    expect(types.map((t) => [t.name, t.offerings.length])).toEqual([
      ['m5.xlarge', 0],
      ['m6g.xlarge', 0],
    ]);
  });

  it('marks offerings unavailable through the callback, with its arguments', () => {
    const asked: string[] = [];
    const unavailable = (capacityType: CapacityType, instanceType: string, zone: string) => {
      asked.push(`${capacityType}/${instanceType}/${zone}`);
      return capacityType === 'spot' && zone === 'us-east-1a';
    };
    expect(offeringKeys(nodeClass(), { unavailable })).toEqual([
      'us-east-1a/on-demand/up',
      'us-east-1a/spot/down',
      'us-east-1b/on-demand/up',
      'us-east-1b/spot/down',
      'us-east-1c/spot/down',
    ]);
    expect(asked).toContain('spot/m5.xlarge/us-east-1a');
  });
});

describe('resolveInstanceTypes types', () => {
  it('keeps catalog order and the catalog entry as info', () => {
    const types = resolveInstanceTypes(CATALOG, nodeClass());
    expect(types.map((t) => t.name)).toEqual(['m5.xlarge', 'm6g.xlarge']);
    expect(types[0]?.info).toBe(TWO_ZONES);
  });

  it('leaves arm64 types out under Windows families', () => {
    expect(resolveInstanceTypes(CATALOG, nodeClass('Windows2022')).map((t) => t.name)).toEqual(['m5.xlarge']);
  });

  it('takes the family from amiFamily before the alias', () => {
    const nc = nodeClass('AL2023', { amiFamily: 'Bottlerocket', kubelet: { podsPerCore: 1 } });
    // Bottlerocket ignores podsPerCore; AL2023 would cap m5.xlarge at 4 pods.
    expect(resolveInstanceTypes(CATALOG, nc)[0]?.capacity.pods).toBe(58);
  });

  it('resolves the whole built-in catalog with positive allocatable CPU and memory', () => {
    const types = resolveInstanceTypes(loadBuiltInCatalog(), nodeClass());
    expect(types.length).toBe(loadBuiltInCatalog().instanceTypes.length);
    const bad = types.filter(
      (t) => !((t.allocatable.cpu ?? 0) > 0 && (t.allocatable.memory ?? 0) > 0 && (t.capacity.pods ?? 0) > 0),
    );
    expect(bad.map((t) => t.name)).toEqual([]);
  });
});
