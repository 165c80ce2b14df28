import { describe, expect, it } from 'vitest';
import type { InstanceType, Offering } from '../../shared/instancetypes/types';
import { settleReservations } from '../../shared/launch/reservations';
import type { PlannedNodeClaim, SchedulingResult } from '../../shared/scheduling';

const reserved: Offering = {
  zone: 'us-east-1a',
  capacityType: 'reserved',
  price: 1e-8,
  available: true,
  reservationId: 'cr-1',
  reservationCapacity: 1,
};

function type(name: string, offerings: Offering[]): InstanceType {
  return {
    name,
    labels: {},
    capacity: {},
    overhead: { kubeReserved: {}, systemReserved: {}, evictionThreshold: {} },
    allocatable: {},
    offerings,
    info: {} as InstanceType['info'],
  };
}

const m5 = type('m5.large', [
  reserved,
  { zone: 'us-east-1a', capacityType: 'spot', price: 0.04, available: true },
  { zone: 'us-east-1b', capacityType: 'spot', price: 0.03, available: true },
  { zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096, available: true },
]);

function claim(capacityTypes: string[], zone?: string): PlannedNodeClaim {
  return {
    nodePool: 'p',
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: capacityTypes },
      ...(zone ? [{ key: 'topology.kubernetes.io/zone', operator: 'In' as const, values: [zone] }] : []),
    ],
    instanceTypes: [m5],
    offering: { ...reserved, instanceType: 'm5.large' },
    pods: [],
    requests: {},
  };
}

function result(claims: PlannedNodeClaim[]): SchedulingResult {
  return {
    nodeClaims: claims,
    existingNodes: [],
    unschedulable: [],
    totalPrice: claims.reduce((s, c) => s + c.offering.price, 0),
  };
}

describe('settleReservations', () => {
  it('gives the reservation to the first claims of the plan and the cheapest allowed offering to the rest', () => {
    const { result: settled, overbooked } = settleReservations(
      result([claim(['reserved', 'spot', 'on-demand']), claim(['reserved', 'spot', 'on-demand'], 'us-east-1a')]),
    );
    expect(settled.nodeClaims.map((c) => `${c.offering.capacityType}:${c.offering.zone}`)).toEqual([
      'reserved:us-east-1a',
      'spot:us-east-1a',
    ]);
    expect(settled.totalPrice).toBeCloseTo(1e-8 + 0.04, 10);
    expect(overbooked).toEqual({});
  });

  it('moves a claim only where its requirements allow (on-demand when spot is not allowed)', () => {
    const { result: settled } = settleReservations(
      result([claim(['reserved', 'on-demand']), claim(['reserved', 'on-demand'])]),
    );
    expect(settled.nodeClaims[1]?.offering).toMatchObject({ capacityType: 'on-demand', price: 0.096 });
  });

  it('keeps and reports a claim whose NodePool allows only reserved', () => {
    const { result: settled, overbooked } = settleReservations(result([claim(['reserved']), claim(['reserved'])]));
    expect(settled.nodeClaims.map((c) => c.offering.capacityType)).toEqual(['reserved', 'reserved']);
    expect(overbooked).toEqual({ 'cr-1': 1 });
  });

  it('returns a plan without reservations as it is', () => {
    const plain = result([{ ...claim(['spot']), instanceTypes: [type('c5.large', [])] }]);
    expect(settleReservations(plain).result).toBe(plain);
  });
});
