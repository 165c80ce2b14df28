// EC2's token buckets as the paced port keeps them, on a fake clock: what a launcher may still ask
// for before a deadline is what the bucket holds plus what refills by then, less what queued takes
// wait for, and the paced port answers for both buckets a batched launch draws from.

import type { CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import type { EC2Api } from '../../shared/providers/ports';
import { pacedEc2, TokenBucket } from '../../shared/providers/throttle';
import { fakeClock } from './fakes';

/** A sleep that moves the fake clock instead of waiting. */
function sleeper(clock: ReturnType<typeof fakeClock>) {
  return async (ms: number) => clock.advance(ms);
}

describe('TokenBucket.within', () => {
  it('counts the tokens there and the refill until the deadline, less what queued takes wait for', async () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ capacity: 1_000, refillPerSecond: 2 }, clock, sleeper(clock));
    expect(bucket.within(0)).toBe(1_000);
    // Refill past the capacity counts: tokens taken as they come in never overflow the bucket.
    expect(bucket.within(100_000)).toBe(1_200);
    await bucket.take(900);
    expect(bucket.within(50_000)).toBe(200);
    const waiting = bucket.take(300);
    // The queued take owes 300: 100 there, 200 to come.
    expect(bucket.within(0)).toBe(0);
    expect(bucket.within(150_000)).toBe(100);
    await waiting;
    expect(bucket.within(10_000)).toBe(20);
    expect(bucket.within(-5_000)).toBe(0);
  });
});

describe('pacedEc2.instancesWithin', () => {
  const ec2 = {
    createFleet: async (input: CreateFleetCommandInput) => ({
      $metadata: {},
      Instances: [{ InstanceIds: [`i-${input.TargetCapacitySpecification?.TotalTargetCapacity}`] }],
    }),
    createTags: async () => ({ $metadata: {} }),
  } as unknown as EC2Api;

  it('is the fewer of the instance tokens and the CreateTags calls that tag them', async () => {
    const clock = fakeClock();
    const paced = pacedEc2(ec2, clock, sleeper(clock), {
      mutating: { capacity: 200, refillPerSecond: 5 },
      runInstancesResource: { capacity: 1_000, refillPerSecond: 2 },
    });
    // 100 s: 1,000 + 200 instance tokens, but only 200 + 500 CreateTags calls.
    expect(paced.instancesWithin(100_000)).toBe(700);
    expect(paced.instancesWithin(0)).toBe(200);
    await paced.createFleet({ TargetCapacitySpecification: { TotalTargetCapacity: 950 } } as CreateFleetCommandInput);
    // 50 left + 200 refilled in 100 s; CreateTags untouched.
    expect(paced.instancesWithin(100_000)).toBe(250);
    expect(paced.instancesWithin(0)).toBe(50);
  });

  it('never answers more than a CreateFleet could take without waiting past the deadline', async () => {
    const clock = fakeClock();
    const paced = pacedEc2(ec2, clock, sleeper(clock), { runInstancesResource: { capacity: 10, refillPerSecond: 2 } });
    const granted = paced.instancesWithin(30_000);
    expect(granted).toBe(70);
    const start = clock();
    await paced.createFleet({ TargetCapacitySpecification: { TotalTargetCapacity: 10 } } as CreateFleetCommandInput);
    for (let i = 0; i < 6; i++) {
      await paced.createFleet({ TargetCapacitySpecification: { TotalTargetCapacity: 10 } } as CreateFleetCommandInput);
    }
    expect(clock() - start).toBeLessThanOrEqual(30_000);
    expect(paced.instancesWithin(0)).toBe(0);
  });
});
