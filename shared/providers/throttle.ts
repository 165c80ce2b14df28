// Pacing EC2 calls inside EC2's own request throttling, so a burst of launches waits for tokens
// instead of collecting RequestLimitExceeded. EC2 throttles per account and region with token
// buckets (EC2 developer guide, "Request throttling for the Amazon EC2 API"): a request bucket per
// API action (non-mutating Describe* actions 100 tokens refilled at 20/s, mutating actions 200 at
// 5/s by default) and, for launches and terminations, a resource bucket counted in instances
// (RunInstances, which instant fleets draw from too: 1,000 instances refilled at 2/s; TerminateInstances
// 1,000 at 20/s). The buckets here are this process's view of those: other callers in the account
// draw from the same ones, so throttling can still happen and is retried with backoff and jitter.

import type { CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import type { Clock, Sleep } from './clock';
import type { EC2Api } from './ports';

export interface BucketSpec {
  capacity: number;
  refillPerSecond: number;
}

/** EC2's documented defaults (a limit increase raises them: pass the raised figures). */
export const EC2_BUCKETS = {
  nonMutating: { capacity: 100, refillPerSecond: 20 },
  mutating: { capacity: 200, refillPerSecond: 5 },
  /** Instances launched, by RunInstances or CreateFleet. */
  runInstancesResource: { capacity: 1_000, refillPerSecond: 2 },
  /** Instances terminated. */
  terminateInstancesResource: { capacity: 1_000, refillPerSecond: 20 },
} as const satisfies Record<string, BucketSpec>;

export class TokenBucket {
  private tokens: number;
  private at: number;
  /** Tokens queued takes are waiting for. */
  private owed = 0;
  /** Takes queue here so a large take is not starved by a stream of small ones. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly spec: BucketSpec,
    private readonly clock: Clock,
    private readonly sleep: Sleep,
  ) {
    this.tokens = spec.capacity;
    this.at = clock();
  }

  private refill(): void {
    const now = this.clock();
    // A clock set back (tests, a corrected host clock) refills nothing rather than taking tokens away.
    const elapsed = Math.max(0, now - this.at);
    this.tokens = Math.min(this.spec.capacity, this.tokens + (elapsed / 1000) * this.spec.refillPerSecond);
    this.at = now;
  }

  /** Waits until `count` tokens are there and takes them (a count past the capacity takes a full bucket). */
  take(count = 1): Promise<void> {
    const want = Math.min(count, this.spec.capacity);
    this.owed += want;
    const turn = this.queue.then(async () => {
      for (;;) {
        this.refill();
        if (this.tokens >= want) {
          this.tokens -= want;
          this.owed -= want;
          return;
        }
        await this.sleep(Math.ceil(((want - this.tokens) / this.spec.refillPerSecond) * 1000));
      }
    });
    this.queue = turn.catch(() => {});
    return turn;
  }

  /** Tokens there now (for tests and the benchmark). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /**
   * Tokens a caller can take from now until `ms` from now without waiting past it: those there, less
   * what queued takes wait for, plus the refill (uncapped: tokens taken as they come never overflow).
   */
  within(ms: number): number {
    const refill = ms === Number.POSITIVE_INFINITY ? ms : (Math.max(0, ms) / 1000) * this.spec.refillPerSecond;
    return Math.max(0, this.available() - this.owed + refill);
  }
}

/** What the paced EC2 port can launch before a deadline: the launcher sizes its batches by it. */
export interface LaunchTokens {
  /**
   * Instances that can be launched and then tagged with their claim within `ms`: the instance bucket
   * (one token per instance) and CreateTags' request bucket (one call per batch-launched instance).
   */
  instancesWithin(ms: number): number;
}

export interface Ec2Pacing {
  nonMutating?: BucketSpec;
  mutating?: BucketSpec;
  runInstancesResource?: BucketSpec;
}

/**
 * The EC2 port with each launch-path call waiting for its tokens first: every action its own
 * request bucket (as EC2 counts them), CreateFleet also one resource token per instance asked for.
 */
export function pacedEc2(ec2: EC2Api, clock: Clock, sleep: Sleep, pacing: Ec2Pacing = {}): EC2Api & LaunchTokens {
  const buckets = new Map<string, TokenBucket>();
  const bucket = (action: string, spec: BucketSpec) => {
    let b = buckets.get(action);
    if (!b) {
      b = new TokenBucket(spec, clock, sleep);
      buckets.set(action, b);
    }
    return b;
  };
  const describe = pacing.nonMutating ?? EC2_BUCKETS.nonMutating;
  const mutate = pacing.mutating ?? EC2_BUCKETS.mutating;
  const instances = new TokenBucket(pacing.runInstancesResource ?? EC2_BUCKETS.runInstancesResource, clock, sleep);
  const paced =
    <I, O>(action: string, spec: BucketSpec, call: (input: I) => Promise<O>) =>
    async (input: I): Promise<O> => {
      await bucket(action, spec).take();
      return call(input);
    };
  return {
    ...ec2,
    describeInstances: paced('DescribeInstances', describe, (i) => ec2.describeInstances(i)),
    describeLaunchTemplates: paced('DescribeLaunchTemplates', describe, (i) => ec2.describeLaunchTemplates(i)),
    createLaunchTemplate: paced('CreateLaunchTemplate', mutate, (i) => ec2.createLaunchTemplate(i)),
    createTags: paced('CreateTags', mutate, (i) => ec2.createTags(i)),
    createFleet: paced('CreateFleet', mutate, async (input: CreateFleetCommandInput) => {
      await instances.take(input.TargetCapacitySpecification?.TotalTargetCapacity ?? 1);
      return ec2.createFleet(input);
    }),
    instancesWithin: (ms) => Math.floor(Math.min(instances.within(ms), bucket('CreateTags', mutate).within(ms))),
  };
}

/**
 * The wait before retry `attempt` (0-based) of a throttled call: exponential from `baseMs`, capped,
 * with full jitter so callers throttled together do not come back together.
 */
export function throttleBackoffMs(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random) {
  return Math.round(random() * Math.min(capMs, baseMs * 2 ** attempt));
}
