// Capacity reservations across one plan (shared/scheduling/packing/reservations.ts): what each mode does
// with a reservation's remaining instances, beyond the upstream specs the conformance suite holds
// (test/conformance/scheduling/karpenter-scheduling-suite.yaml, Reserved Instance Types).

import { describe, expect, it } from 'vitest';
import type { InstanceType } from '../../shared/instancetypes/types';
import {
  type PlannedNodeClaim,
  type ReservedOfferingMode,
  type SchedulingInput,
  type SchedulingResult,
  solve,
} from '../../shared/scheduling';
import { Packer } from '../../shared/scheduling/packer';
import { fakeInstanceType } from '../conformance/scheduling/fake-cloudprovider';
import { nodePool, pods } from './helpers';
import { violations } from './invariants';

const RESERVATION_ID = 'karpenter.k8s.aws/capacity-reservation-id';
const ON_DEMAND_AND_SPOT = [
  { zone: 'test-zone-1', capacityType: 'spot' as const },
  { zone: 'test-zone-1', capacityType: 'on-demand' as const },
];

/** small (2 cpu) and medium (3 cpu) each with a reservation of `left` instances (null: uncounted), and large (6 cpu) without. */
function types(left: number | null): InstanceType[] {
  const reserved = (id: string, price: number) => ({
    zone: 'test-zone-1',
    capacityType: 'reserved' as const,
    price,
    reservationId: id,
    ...(left === null ? {} : { reservationCapacity: left }),
  });
  return [
    fakeInstanceType('large', { cpu: 6, memoryGiB: 6, offerings: ON_DEMAND_AND_SPOT }),
    fakeInstanceType('medium', {
      cpu: 3,
      memoryGiB: 3,
      offerings: [...ON_DEMAND_AND_SPOT, reserved('r-medium', 6e-6)],
    }),
    fakeInstanceType('small', { cpu: 2, memoryGiB: 2, offerings: [...ON_DEMAND_AND_SPOT, reserved('r-small', 4e-6)] }),
  ];
}

function input(cpu: string, count: number, mode?: ReservedOfferingMode, left: number | null = 1): SchedulingInput {
  const pool = nodePool('default', {
    requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved', 'spot', 'on-demand'] }],
  });
  return {
    pods: pods('p', count, { cpu, memory: '100Mi' }),
    nodePools: [pool],
    instanceTypes: { default: types(left) },
    ...(mode ? { reservedOfferingMode: mode } : {}),
  };
}

const heldIds = (c: PlannedNodeClaim) => c.requirements.find((r) => r.key === RESERVATION_ID)?.values ?? [];

/** Claims that launch into each reservation: never more than its instances. */
function launchesInto(result: SchedulingResult): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of result.nodeClaims)
    if (c.offering.capacityType === 'reserved')
      out[c.offering.reservationId!] = (out[c.offering.reservationId!] ?? 0) + 1;
  return out;
}

describe('reservations across one plan', () => {
  it('strict (the default): the claim holds both reservations it could launch into, the other pods wait, unrelaxed and flagged', () => {
    const i = input('1800m', 3);
    const result = solve(i);
    expect(violations(i, result)).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
    expect(heldIds(result.nodeClaims[0]!)).toEqual(['r-medium', 'r-small']);
    expect(result.nodeClaims[0]!.offering).toMatchObject({ instanceType: 'small', reservationId: 'r-small' });
    // Its other types stay, so the launch can still fall back when EC2 says the reservation is full.
    expect(result.nodeClaims[0]!.instanceTypes.map((t) => t.name)).toEqual(['small', 'medium', 'large']);
    expect(result.unschedulable).toHaveLength(2);
    for (const u of result.unschedulable) {
      expect(u.reservedOffering).toBe(true);
      expect(u.reasons).toEqual([
        'NodePool default: one or more instance types with compatible reserved offerings are available, but could not be reserved (r-medium, r-small: every instance left is held by another claim of this plan); deferred to the next decision',
      ]);
    }
  });

  it('fallback: the pods past the reservations take spot or on-demand, and no reservation launches more than it holds', () => {
    const i = input('1800m', 3, 'fallback');
    const result = solve(i);
    expect(violations(i, result)).toEqual([]);
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims.flatMap((c) => c.pods)).toHaveLength(3);
    expect(launchesInto(result)).toEqual({ 'r-small': 1 });
    for (const c of result.nodeClaims.filter((x) => x.offering.capacityType !== 'reserved')) {
      // Held by another claim: this one may not launch into it.
      expect(heldIds(c)).toEqual([]);
      expect(c.requirements).toContainEqual({
        key: 'karpenter.sh/capacity-type',
        operator: 'In',
        values: ['spot', 'on-demand'],
      });
    }
  });

  it('takes as many claims into a reservation as it has instances left', () => {
    const i = input('1800m', 5, 'strict', 2);
    const result = solve(i);
    // Two claims each hold one instance of both reservations; the third finds both used up.
    expect(result.nodeClaims).toHaveLength(2);
    expect(launchesInto(result)).toEqual({ 'r-small': 2 });
    expect(result.unschedulable.map((u) => u.pod.metadata.name)).toEqual(['p-2', 'p-3', 'p-4']);
  });

  it('gives back what a claim narrows away from, and the next claim holds it (Karpenter order)', () => {
    // Karpenter's order adds each pod to the emptiest claim: the first claim holds r-small and r-medium,
    // at 2.7 cpu only medium (and large) fit, so r-small goes back and the claim opened for the pod that
    // no longer fits takes it.
    const i = input('900m', 4, 'strict');
    const result = new Packer(i, 'karpenter').solve();
    expect(violations(i, result)).toEqual([]);
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims.map((c) => [c.pods.length, heldIds(c), c.offering.instanceType])).toEqual([
      [3, ['r-medium'], 'medium'],
      [1, ['r-small'], 'small'],
    ]);
  });

  it('strict: no pod joins a claim if that would leave it no reservation it holds (Karpenter order)', () => {
    // The second pod fits only large beside the first, which has no reservation: it waits.
    const result = new Packer(input('1800m', 3, 'strict'), 'karpenter').solve();
    expect(result.nodeClaims.map((c) => [c.pods.length, heldIds(c)])).toEqual([[1, ['r-medium', 'r-small']]]);
    expect(result.unschedulable.map((u) => u.reservedOffering)).toEqual([true, true]);
  });

  it('fallback: a claim narrowed past every reservation it held holds none and launches without one', () => {
    const i = input('900m', 4, 'fallback');
    const result = new Packer(i, 'karpenter').solve();
    expect(violations(i, result)).toEqual([]);
    expect(result.nodeClaims.flatMap((c) => c.pods)).toHaveLength(4);
    for (const c of result.nodeClaims) {
      expect(heldIds(c)).toEqual([]);
      expect(c.offering.capacityType).not.toBe('reserved');
    }
  });

  it('counts nothing for offerings that give no count of their instances', () => {
    const result = solve(input('1800m', 3, 'strict', null));
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims.every((c) => heldIds(c).length === 0)).toBe(true);
  });
});
