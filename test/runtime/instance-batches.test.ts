// DescribeInstances and TerminateInstances batched as Karpenter batches them (shared/runtime/instance-batches.ts,
// aws/karpenter-provider-aws pkg/batcher): concurrent callers share calls, each gets its own answer, and
// one bad id fails only its own caller.

import type {
  DescribeInstancesCommandInput,
  DescribeInstancesCommandOutput,
  Instance,
  TerminateInstancesCommandInput,
  TerminateInstancesCommandOutput,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { TAG } from '../../shared/contracts';
import { ClaimInstances, type InstancesPort } from '../../shared/runtime/instances';

const CLUSTER = 'demo';

function awsError(name: string): Error {
  return Object.assign(new Error(name), { name });
}

/** EC2 as far as these calls go: known instances, per-id refusals, and a log of every call. */
class FakeEc2 implements InstancesPort {
  readonly instances = new Map<string, Instance>();
  readonly describeCalls: string[][] = [];
  readonly terminateCalls: string[][] = [];
  /** Ids whose termination EC2 refuses with this error code. */
  readonly refuse = new Map<string, string>();

  add(count: number): string[] {
    return Array.from({ length: count }, (_, i) => {
      const id = `i-${(this.instances.size + 1).toString(16).padStart(17, '0')}`;
      this.instances.set(id, {
        InstanceId: id,
        InstanceType: 'm5.large',
        State: { Name: 'running' },
        Placement: { AvailabilityZone: 'us-west-2a' },
        Tags: [
          { Key: TAG.clusterName, Value: CLUSTER },
          { Key: TAG.nodeClaim, Value: `claim-${i}` },
          { Key: TAG.nodePool, Value: 'default' },
        ],
      });
      return id;
    });
  }

  async describeInstances(input: DescribeInstancesCommandInput): Promise<DescribeInstancesCommandOutput> {
    const ids = input.Filters?.find((f) => f.Name === 'instance-id')?.Values ?? [];
    if (ids.length > 200) throw awsError('FilterLimitExceeded');
    this.describeCalls.push([...ids]);
    await Promise.resolve();
    const found = ids.flatMap((id) => this.instances.get(id) ?? []);
    return { Reservations: [{ Instances: found }], $metadata: {} };
  }

  async terminateInstances(input: TerminateInstancesCommandInput): Promise<TerminateInstancesCommandOutput> {
    const ids = input.InstanceIds ?? [];
    this.terminateCalls.push([...ids]);
    await Promise.resolve();
    // As EC2: one unknown or refused id fails the whole call.
    const unknown = ids.find((id) => !this.instances.has(id));
    if (unknown) throw awsError('InvalidInstanceID.NotFound');
    const refused = ids.find((id) => this.refuse.has(id));
    if (refused) throw awsError(this.refuse.get(refused) ?? 'UnauthorizedOperation');
    for (const id of ids) {
      const instance = this.instances.get(id);
      if (instance) instance.State = { Name: 'shutting-down' };
    }
    return {
      TerminatingInstances: ids.map((id) => ({
        InstanceId: id,
        CurrentState: { Name: 'shutting-down' },
        PreviousState: { Name: 'running' },
      })),
      $metadata: {},
    };
  }
}

describe('batched DescribeInstances (Karpenter pkg/batcher describeinstances.go)', () => {
  it('answers 50 concurrent lookups with two calls, each caller getting its own instance', async () => {
    const ec2 = new FakeEc2();
    const ids = ec2.add(50);
    const instances = new ClaimInstances(ec2, CLUSTER);
    const answers = await Promise.all(ids.map((id) => instances.byIds([id])));
    expect(ec2.describeCalls).toHaveLength(2);
    expect(ec2.describeCalls[0]).toEqual([ids[0]]);
    expect(ec2.describeCalls[1]).toHaveLength(49);
    answers.forEach((answer, i) => {
      expect([...answer.keys()]).toEqual([ids[i]]);
    });
  });

  it('leaves an id EC2 does not know out of its caller answer, and no other caller is affected', async () => {
    const ec2 = new FakeEc2();
    const [known] = ec2.add(1);
    const instances = new ClaimInstances(ec2, CLUSTER);
    const [mine, missing] = await Promise.all([
      instances.byIds([known ?? '']),
      instances.byIds(['i-0000000000000dead']),
    ]);
    expect(mine.get(known ?? '')?.nodeClaimName).toBe('claim-0');
    expect(missing.size).toBe(0);
  });

  it('splits more ids than a filter takes into calls of at most 200', async () => {
    const ec2 = new FakeEc2();
    const ids = ec2.add(450);
    const found = await new ClaimInstances(ec2, CLUSTER).byIds(ids);
    expect(found.size).toBe(450);
    expect(ec2.describeCalls.map((c) => c.length)).toEqual([200, 200, 50]);
  });
});

describe('batched TerminateInstances (Karpenter pkg/batcher terminateinstances.go)', () => {
  it('terminates 100 instances asked for at once in two calls', async () => {
    const ec2 = new FakeEc2();
    const ids = ec2.add(100);
    const instances = new ClaimInstances(ec2, CLUSTER);
    await Promise.all(ids.map((id) => instances.terminate([id])));
    expect(ec2.terminateCalls).toHaveLength(2);
    expect(instances.batchedCalls.terminate).toBe(2);
    expect([...ec2.instances.values()].every((i) => i.State?.Name === 'shutting-down')).toBe(true);
  });

  it('retries each id alone when one unknown id fails the merged call, and the unknown one is not an error', async () => {
    const ec2 = new FakeEc2();
    const ids = ec2.add(4);
    const instances = new ClaimInstances(ec2, CLUSTER);
    const first = instances.terminate([ids[0] ?? '']);
    const rest = [...ids.slice(1), 'i-0000000000000dead'].map((id) => instances.terminate([id]));
    await expect(Promise.all([first, ...rest])).resolves.toHaveLength(5);
    // The lone first call, the merged call that EC2 refused, then each of its four ids alone.
    expect(ec2.terminateCalls.map((c) => c.length)).toEqual([1, 4, 1, 1, 1, 1]);
    expect([...ec2.instances.values()].every((i) => i.State?.Name === 'shutting-down')).toBe(true);
  });

  it('fails only the caller whose instance EC2 refuses', async () => {
    const ec2 = new FakeEc2();
    const ids = ec2.add(3);
    const [a, b, c] = ids as [string, string, string];
    ec2.refuse.set(c, 'OperationNotPermitted');
    const instances = new ClaimInstances(ec2, CLUSTER);
    const outcomes = await Promise.allSettled([a, b, c].map((id) => instances.terminate([id])));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toContain('OperationNotPermitted');
    expect(ec2.instances.get(b)?.State?.Name).toBe('shutting-down');
    expect(ec2.instances.get(c)?.State?.Name).toBe('running');
  });
});
