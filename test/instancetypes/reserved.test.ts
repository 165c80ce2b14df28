import { describe, expect, it } from 'vitest';
import {
  RESERVED_PRICE_DIVISOR,
  type ReservedCapacity,
  withReservedOfferings,
} from '../../shared/instancetypes/reserved';
import type { InstanceType } from '../../shared/instancetypes/types';

function type(name: string, onDemand: number | undefined, zones = ['us-west-2a', 'us-west-2b']): InstanceType {
  return {
    name,
    labels: {},
    capacity: {},
    overhead: { kubeReserved: {}, systemReserved: {}, evictionThreshold: {} },
    allocatable: {},
    offerings: zones.flatMap((zone) => [
      { zone, zoneID: `id-${zone}`, capacityType: 'spot' as const, price: 0.05, available: true },
      ...(onDemand === undefined
        ? []
        : [{ zone, zoneID: `id-${zone}`, capacityType: 'on-demand' as const, price: onDemand, available: true }]),
    ]),
    info: {} as InstanceType['info'],
  };
}

const reservation: ReservedCapacity = {
  id: 'cr-1',
  instanceType: 'm5.large',
  availabilityZone: 'us-west-2a',
  reservationType: 'default',
  interruptible: false,
  state: 'active',
  availableInstanceCount: 2,
};

describe('withReservedOfferings', () => {
  it("adds one reserved offering per reservation, priced at on-demand / 10,000,000 as Karpenter's", () => {
    const [m5, c5] = withReservedOfferings([type('m5.large', 0.096), type('c5.large', 0.085)], [reservation]);
    expect(m5?.offerings.filter((o) => o.capacityType === 'reserved')).toEqual([
      {
        zone: 'us-west-2a',
        zoneID: 'id-us-west-2a',
        capacityType: 'reserved',
        price: 0.096 / RESERVED_PRICE_DIVISOR,
        available: true,
        reservationId: 'cr-1',
        reservationType: 'default',
        reservationCapacity: 2,
      },
    ]);
    expect(c5?.offerings.some((o) => o.capacityType === 'reserved')).toBe(false);
  });

  it('lists but does not offer a full reservation, an expiring block, or a zone the node class cannot use', () => {
    const [full] = withReservedOfferings([type('m5.large', 0.1)], [{ ...reservation, availableInstanceCount: 0 }]);
    const [expiring] = withReservedOfferings(
      [type('m5.large', 0.1)],
      [{ ...reservation, reservationType: 'capacity-block', state: 'expiring' }],
    );
    const [elsewhere] = withReservedOfferings(
      [type('m5.large', 0.1)],
      [{ ...reservation, availabilityZone: 'us-west-2d' }],
    );
    for (const it of [full, expiring, elsewhere]) {
      expect(it?.offerings.find((o) => o.capacityType === 'reserved')?.available).toBe(false);
    }
  });

  it('keeps a reservation usable at price 0 when the on-demand price is unknown', () => {
    const [m5] = withReservedOfferings([type('m5.large', undefined)], [{ ...reservation, interruptible: true }]);
    expect(m5?.offerings.find((o) => o.capacityType === 'reserved')).toMatchObject({
      price: 0,
      available: true,
      reservationInterruptible: true,
    });
  });

  it('replaces, not duplicates, the offerings of a reservation listed again', () => {
    const once = withReservedOfferings([type('m5.large', 0.1)], [reservation]);
    const twice = withReservedOfferings(once, [{ ...reservation, availableInstanceCount: 1 }]);
    const reserved = twice[0]?.offerings.filter((o) => o.capacityType === 'reserved');
    expect(reserved?.map((o) => o.reservationCapacity)).toEqual([1]);
  });
});
