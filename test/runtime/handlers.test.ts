// The handlers over in-memory fakes: records in, batch item failures out, nothing thrown.

import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHandler as interruptionHandler } from '../../lambdas/interruption/handler';
import { createHandler as provisionHandler } from '../../lambdas/provision/handler';
import { createHandler as watcherHandler } from '../../lambdas/watcher/handler';
import { DETAIL_TYPE } from '../../shared/contracts';
import { parseInterruption } from '../../shared/interruption';
import { noticePodFromPod } from '../../shared/notice';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import type { Powertools } from '../../shared/runtime/powertools';
import { powertools } from '../../shared/runtime/powertools';
import type { NodeClaimsLaunchedDetail } from '../../shared/runtime/provision';
import { PROVISION_RETRY, retryDelaySeconds } from '../../shared/runtime/provision-retry';
import { nodePool, standardTypes } from '../scheduling/helpers';
import {
  boundPod,
  clusterWith,
  FakeInstances,
  FakeKube,
  FakeState,
  pendingPod,
  RecordingRetryQueue,
  recordingLauncher,
  START,
  virtualTime,
} from './fakes';

let tools: Powertools;

beforeAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('test', 'c1');
});

function context(remainingMs = 60_000): Context {
  return { getRemainingTimeInMillis: () => remainingMs, awsRequestId: 'req', functionName: 'fn' } as unknown as Context;
}

function sqs(bodies: string[], attempt = 1): SQSEvent {
  return {
    Records: bodies.map(
      (body, i) =>
        ({
          messageId: `m${i}`,
          receiptHandle: `r${i}`,
          body,
          attributes: { ApproximateReceiveCount: String(attempt), MessageGroupId: 'c1' },
        }) as SQSRecord,
    ),
  };
}

function spotEvent(instanceId: string, id = `evt-${instanceId}`): string {
  return JSON.stringify({
    version: '0',
    id,
    'detail-type': 'EC2 Spot Instance Interruption Warning',
    source: 'aws.ec2',
    account: '123456789012',
    time: new Date(START).toISOString(),
    region: 'us-west-2',
    resources: [`arn:aws:ec2:us-west-2:instance/${instanceId}`],
    detail: { 'instance-id': instanceId, 'instance-action': 'terminate' },
  });
}

describe('interruption handler', () => {
  let kube: FakeKube;
  let instances: FakeInstances;
  let state: FakeState;

  beforeEach(() => {
    kube = new FakeKube(async () => {});
    instances = new FakeInstances();
    state = new FakeState(() => START);
  });

  function handler() {
    return interruptionHandler(
      async () => ({
        ...tools.telemetry,
        cluster: 'c1',
        kube,
        instances,
        state,
        parse(body) {
          const result = parseInterruption(body);
          if (!result.ok) throw new Error(result.error);
          return result.message;
        },
        rebalanceAction: 'record',
        isEvictable: () => true,
        clock: () => START,
        sleep: async () => {},
      }),
      tools,
    );
  }

  it('fails only the malformed record of a batch, and acts on the good ones', async () => {
    instances.add({ instanceId: 'i-0aaaaaaa', nodeClaimName: 'default-a', capacityType: 'spot' });
    const response = await handler()(
      sqs([
        spotEvent('i-0aaaaaaa'),
        '{"version":"0","source":"aws.ec2","detail-type":"EC2 Spot Instance Interruption Warning","detail":{}}',
        '{"trunc',
        spotEvent('i-0eeeeeee'),
      ]),
      context(),
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }]);
    expect(instances.terminated).toEqual(['i-0aaaaaaa']);
  });

  it('reports every record when its dependencies cannot be built, and throws nothing', async () => {
    const failing = interruptionHandler(async () => {
      throw new Error('KARPLESS_STATE_TABLE is not set');
    }, tools);
    const response = await failing(sqs([spotEvent('i-0aaaaaaa'), spotEvent('i-0bbbbbbb')]), context());
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m0', 'm1']);
  });

  it('reports a whole batch of failures without throwing', async () => {
    const response = await handler()(sqs(['x', 'y']), context());
    expect(response.batchItemFailures).toHaveLength(2);
  });
});

describe('provision handler', () => {
  let instances: FakeInstances;
  let state: FakeState;
  let events: NodeClaimsLaunchedDetail[];
  let retries: RecordingRetryQueue;

  beforeEach(() => {
    instances = new FakeInstances();
    state = new FakeState(() => START);
    events = [];
    retries = new RecordingRetryQueue();
  });

  function handler(fail = false) {
    return provisionHandler(
      async () => ({
        ...tools.telemetry,
        cluster: 'c1',
        nodePools: [nodePool('default')],
        instanceTypes: async () => ({ byNodePool: { default: standardTypes() }, priceSource: 'bundled' }),
        instances,
        kube: clusterWith(['a', 'b', 'c', 'd'].map((n) => pendingPod(n))),
        state,
        records: state,
        launcher: recordingLauncher(instances, { fail }),
        events: { nodeClaimsLaunched: async (d) => void events.push(d) },
        clock: () => START,
      }),
      tools,
      () => retries,
    );
  }

  function notice(cluster = 'c1', names = ['a', 'b']): string {
    return JSON.stringify({
      version: '0',
      source: 'karpless',
      'detail-type': DETAIL_TYPE.podsUnschedulable,
      detail: {
        cluster,
        observedAt: new Date(START).toISOString(),
        pods: names.map((n) => noticePodFromPod(pendingPod(n))),
        daemonSets: [],
      },
    });
  }

  it('plans one decision for the batch and acknowledges malformed notices', async () => {
    const response = await handler()(
      sqs([notice(), notice('c1', ['c']), '{"detail-type":"Other"}', notice('c2')]),
      context(),
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(events).toHaveLength(1);
    expect(events[0]?.nodeClaims.flatMap((c) => c.pods).sort()).toEqual(['default/a', 'default/b', 'default/c']);
  });

  it('acknowledges a notice whose pod the API server would refuse, and plans none of its pods', async () => {
    const bad = JSON.parse(notice('c1', ['d'])) as { detail: { pods: { containers: unknown[] }[] } };
    const pod = bad.detail.pods[0];
    if (pod) pod.containers = [{ name: 'app', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }];
    const response = await handler()(sqs([notice(), JSON.stringify(bad)]), context());
    expect(response.batchItemFailures).toEqual([]);
    expect(events).toHaveLength(1);
    expect(events[0]?.nodeClaims.flatMap((c) => c.pods).sort()).toEqual(['default/a', 'default/b']);
  });

  it('returns the whole batch when a launch may succeed later, visible again in 5 s instead of 12 min', async () => {
    const response = await handler(true)(sqs([notice(), notice('c1', ['c'])]), context());
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m0', 'm1']);
    expect(retries.delays).toEqual([
      { messageId: 'm0', seconds: 5 },
      { messageId: 'm1', seconds: 5 },
    ]);
  });

  it('backs off exponentially with the attempt, up to a minute', async () => {
    await handler(true)(sqs([notice()], 3), context());
    await handler(true)(sqs([notice()], 4), context());
    expect(retries.delays.map((d) => d.seconds)).toEqual([20, 40]);
    expect(retryDelaySeconds(10)).toBe(60);
  });

  it('moves the batch to the dead-letter queue with its reason after the last attempt', async () => {
    const response = await handler(true)(sqs([notice(), notice('c1', ['c'])], PROVISION_RETRY.maxAttempts), context());
    expect(response.batchItemFailures).toEqual([]);
    expect(retries.delays).toEqual([]);
    expect(retries.deadLettered.map((d) => [d.messageId, d.attempts])).toEqual([
      ['m0', 5],
      ['m1', 5],
    ]);
    expect(retries.deadLettered[0]?.reason).toMatch(/NodeClaim launch\(es\) failed/);
  });

  it('still returns the batch when its retry delay cannot be set (the queue timeout applies)', async () => {
    retries.failRetries = true;
    const response = await handler(true)(sqs([notice()]), context());
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
  });
});

describe('watcher handler', () => {
  it('watches until shortly before the timeout and reports', async () => {
    const time = virtualTime();
    const kube = new FakeKube(time.sleep);
    kube.putPod(pendingPod('a'));
    kube.putPod(boundPod('b', 'n1'));
    const published: string[][] = [];
    const handler = watcherHandler(
      async () => ({
        ...tools.telemetry,
        kube,
        instances: new FakeInstances(),
        state: new FakeState(time.clock),
        notices: {
          publish: async (b) => {
            published.push(b.pods.map((p) => p.metadata.name));
            return 1;
          },
        },
        records: new InMemoryStateStore(time.clock),
        claims: {
          backfill: async () => {
            throw new Error('no node of ours in this test');
          },
          terminationGracePeriodMs: () => undefined,
        },
        isEvictable: () => true,
        clock: time.clock,
        sleep: time.sleep,
      }),
      tools,
    );
    const report = await time.run(handler({}, context(20_000)));
    expect(report).toMatchObject({ noticesPut: 1, podsNoticed: 1 });
    expect(published).toEqual([['a']]);
    expect(time.clock() - START).toBeLessThanOrEqual(15_500);
  });

  it('fails the invocation when the run failed at its job (pending pods never put in a notice)', async () => {
    const time = virtualTime();
    const kube = new FakeKube(time.sleep);
    kube.putPod(pendingPod('a'));
    const handler = watcherHandler(
      async () => ({
        ...tools.telemetry,
        kube,
        instances: new FakeInstances(),
        state: new FakeState(time.clock),
        notices: {
          publish: async () => {
            throw new Error('PutEvents: AccessDeniedException');
          },
        },
        records: new InMemoryStateStore(time.clock),
        claims: {
          backfill: async () => {
            throw new Error('no node of ours in this test');
          },
          terminationGracePeriodMs: () => undefined,
        },
        isEvictable: () => true,
        clock: time.clock,
        sleep: time.sleep,
      }),
      tools,
    );
    await expect(time.run(handler({}, context(10_000)))).rejects.toThrow(
      'watcher run failed: 1 pending pod(s) were never put in a notice',
    );
  });

  it('fails the invocation (Errors metric, alarm) when it cannot start', async () => {
    const handler = watcherHandler(async () => {
      throw new Error('DescribeCluster: AccessDenied');
    }, tools);
    await expect(handler({}, context())).rejects.toThrow('DescribeCluster: AccessDenied');
  });
});
