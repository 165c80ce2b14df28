import type { CapacityReservation as EC2CapacityReservation } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import type { InstanceType } from '../../shared/instancetypes/types';
import {
  CapacityReservationProvider,
  capacityReservationFromEC2,
  capacityReservationQueries,
  describeCapacityReservationsInput,
  withNodeClassReservations,
} from '../../shared/providers/capacityreservation';
import type { EC2Api } from '../../shared/providers/ports';
import { awsError, fakeClock, recordingFake } from './fakes';

const NOW = Date.parse('2026-03-01T12:00:00Z');

function ec2Reservation(overrides: Partial<EC2CapacityReservation> = {}): EC2CapacityReservation {
  return {
    CapacityReservationId: 'cr-1',
    InstanceType: 'p5.48xlarge',
    AvailabilityZone: 'us-west-2a',
    AvailabilityZoneId: 'usw2-az2',
    OwnerId: '123456789012',
    InstanceMatchCriteria: 'targeted',
    ReservationType: 'default',
    State: 'active',
    AvailableInstanceCount: 3,
    TotalInstanceCount: 4,
    ...overrides,
  };
}

describe('capacityReservationQueries', () => {
  it('looks an id up alone and filters tags, owner and match criteria together, as Karpenter does', () => {
    expect(
      capacityReservationQueries([
        { id: 'cr-1' },
        { tags: { team: 'ml' }, ownerID: '123456789012' },
        { instanceMatchCriteria: 'open' },
        { ownerID: '123456789012' },
      ]),
    ).toEqual([{ id: 'cr-1' }, { tags: { team: 'ml' }, ownerID: '123456789012' }, { instanceMatchCriteria: 'open' }]);
  });

  it('asks only for active reservations, by id without MaxResults, else with filters', () => {
    expect(describeCapacityReservationsInput({ id: 'cr-1' })).toEqual({
      Filters: [{ Name: 'state', Values: ['active'] }],
      CapacityReservationIds: ['cr-1'],
    });
    expect(
      describeCapacityReservationsInput({
        ownerID: '123456789012',
        tags: { team: 'ml', any: '*' },
        instanceMatchCriteria: 'targeted',
      }),
    ).toEqual({
      Filters: [
        { Name: 'state', Values: ['active'] },
        { Name: 'owner-id', Values: ['123456789012'] },
        { Name: 'tag-key', Values: ['any'] },
        { Name: 'tag:team', Values: ['ml'] },
        { Name: 'instance-match-criteria', Values: ['targeted'] },
      ],
      MaxResults: 1000,
    });
  });
});

describe('capacityReservationFromEC2', () => {
  it('maps every status field', () => {
    expect(capacityReservationFromEC2(ec2Reservation({ Interruptible: true }), NOW)).toEqual({
      id: 'cr-1',
      instanceType: 'p5.48xlarge',
      availabilityZone: 'us-west-2a',
      availabilityZoneId: 'usw2-az2',
      ownerID: '123456789012',
      instanceMatchCriteria: 'targeted',
      reservationType: 'default',
      interruptible: true,
      state: 'active',
      availableInstanceCount: 3,
    });
  });

  it('counts a capacity block as expiring 40 minutes before its end, and only a capacity block', () => {
    const soon = new Date(NOW + 39 * 60_000);
    expect(
      capacityReservationFromEC2(ec2Reservation({ ReservationType: 'capacity-block', EndDate: soon }), NOW),
    ).toMatchObject({ reservationType: 'capacity-block', state: 'expiring', endTime: soon.toISOString() });
    expect(
      capacityReservationFromEC2(
        ec2Reservation({ ReservationType: 'capacity-block', EndDate: new Date(NOW + 41 * 60_000) }),
        NOW,
      ),
    ).toMatchObject({ state: 'active' });
    expect(capacityReservationFromEC2(ec2Reservation({ EndDate: soon }), NOW)).toMatchObject({ state: 'active' });
  });

  it('skips a match criteria it does not know, naming it', () => {
    expect(capacityReservationFromEC2(ec2Reservation({ InstanceMatchCriteria: 'future' as 'open' }), NOW)).toEqual({
      id: 'cr-1',
      reason: 'unsupported instance match criteria "future"',
    });
  });
});

describe('CapacityReservationProvider', () => {
  function provider(reservations: EC2CapacityReservation[], clock = fakeClock(NOW)) {
    const ec2 = recordingFake<EC2Api>({
      describeCapacityReservations: () => ({ CapacityReservations: reservations }),
    });
    return { ec2, clock, provider: new CapacityReservationProvider(ec2, { clock }) };
  }

  it('unions the terms, drops duplicates and ended reservations, sorts by id', async () => {
    const { provider: p, ec2 } = provider([
      ec2Reservation({ CapacityReservationId: 'cr-2' }),
      ec2Reservation({ CapacityReservationId: 'cr-1' }),
      ec2Reservation({ CapacityReservationId: 'cr-0', EndDate: new Date(NOW - 1) }),
    ]);
    const listing = await p.list([{ id: 'cr-1' }, { tags: { team: 'ml' } }]);
    expect(listing.reservations.map((r) => r.id)).toEqual(['cr-1', 'cr-2']);
    expect(ec2.callsTo('describeCapacityReservations')).toHaveLength(2);
  });

  it('selects nothing and calls nothing without terms', async () => {
    const { provider: p, ec2 } = provider([ec2Reservation()]);
    expect(await p.list([])).toEqual({ reservations: [], skipped: [] });
    expect(ec2.calls).toHaveLength(0);
  });

  it('caches a query for a minute, then asks EC2 again', async () => {
    const { provider: p, ec2, clock } = provider([ec2Reservation()]);
    await p.list([{ id: 'cr-1' }]);
    await p.list([{ id: 'cr-1' }]);
    expect(ec2.callsTo('describeCapacityReservations')).toHaveLength(1);
    clock.advance(60_000);
    await p.list([{ id: 'cr-1' }]);
    expect(ec2.callsTo('describeCapacityReservations')).toHaveLength(2);
  });

  it('follows NextToken', async () => {
    const ec2 = recordingFake<EC2Api>({
      describeCapacityReservations: (input) =>
        input.NextToken
          ? { CapacityReservations: [ec2Reservation({ CapacityReservationId: 'cr-b' })] }
          : { CapacityReservations: [ec2Reservation({ CapacityReservationId: 'cr-a' })], NextToken: 't' },
    });
    const listing = await new CapacityReservationProvider(ec2, { clock: fakeClock(NOW) }).list([
      { tags: { team: 'ml' } },
    ]);
    expect(listing.reservations.map((r) => r.id)).toEqual(['cr-a', 'cr-b']);
  });

  it('counts launches down and a full reservation to zero until the next listing', async () => {
    const { provider: p, clock } = provider([ec2Reservation({ AvailableInstanceCount: 2 })]);
    await p.list([{ id: 'cr-1' }]);
    expect(p.availableCount('cr-1')).toBe(2);
    p.markLaunched('cr-1');
    expect((await p.list([{ id: 'cr-1' }])).reservations[0]?.availableInstanceCount).toBe(1);
    p.markExhausted('cr-1');
    p.markLaunched('cr-1');
    expect(p.availableCount('cr-1')).toBe(0);
    clock.advance(60_000);
    await p.list([{ id: 'cr-1' }]);
    expect(p.availableCount('cr-1')).toBe(2);
    expect(p.availableCount('cr-unknown')).toBeUndefined();
  });

  it('treats a reservation id EC2 does not know as selecting nothing, and other errors as errors', async () => {
    const missing = recordingFake<EC2Api>({
      describeCapacityReservations: () => {
        throw awsError('InvalidCapacityReservationId.NotFound', "The capacity reservation ID 'cr-9' does not exist");
      },
    });
    expect((await new CapacityReservationProvider(missing).list([{ id: 'cr-9' }])).reservations).toEqual([]);
    const denied = recordingFake<EC2Api>({
      describeCapacityReservations: () => {
        throw awsError('UnauthorizedOperation');
      },
    });
    await expect(new CapacityReservationProvider(denied).list([{ tags: { a: 'b' } }])).rejects.toThrow(
      'UnauthorizedOperation',
    );
  });
});

describe('withNodeClassReservations', () => {
  const nodeClass = (terms?: { id: string }[]) =>
    ({ spec: terms ? { capacityReservationSelectorTerms: terms } : {} }) as unknown as EC2NodeClass;
  const m5: InstanceType = {
    name: 'p5.48xlarge',
    labels: {},
    capacity: {},
    overhead: { kubeReserved: {}, systemReserved: {}, evictionThreshold: {} },
    allocatable: {},
    offerings: [{ zone: 'us-west-2a', capacityType: 'on-demand', price: 98.32, available: true }],
    info: {} as InstanceType['info'],
  };

  it('adds the offerings of the reservations the node class selects', async () => {
    const { provider: p } = providerOf([ec2Reservation()]);
    const { types, error } = await withNodeClassReservations([m5], nodeClass([{ id: 'cr-1' }]), p);
    expect(error).toBeUndefined();
    expect(types[0]?.offerings.map((o) => `${o.capacityType}:${o.reservationId ?? ''}`)).toEqual([
      'on-demand:',
      'reserved:cr-1',
    ]);
  });

  it('leaves the types alone, without a call, for a node class without terms', async () => {
    const { provider: p, ec2 } = providerOf([ec2Reservation()]);
    expect((await withNodeClassReservations([m5], nodeClass(), p)).types).toEqual([m5]);
    expect(ec2.calls).toHaveLength(0);
  });

  it('returns the types without reservations and the error when EC2 cannot list them', async () => {
    const ec2 = recordingFake<EC2Api>({
      describeCapacityReservations: () => {
        throw awsError('UnauthorizedOperation');
      },
    });
    const { types, error } = await withNodeClassReservations(
      [m5],
      nodeClass([{ id: 'cr-1' }]),
      new CapacityReservationProvider(ec2),
    );
    expect(types).toEqual([m5]);
    expect(String(error)).toContain('UnauthorizedOperation');
  });
});

function providerOf(reservations: EC2CapacityReservation[]) {
  const ec2 = recordingFake<EC2Api>({ describeCapacityReservations: () => ({ CapacityReservations: reservations }) });
  return { ec2, provider: new CapacityReservationProvider(ec2, { clock: fakeClock(NOW) }) };
}
