// Fuzzing through the handlers: random and mutated interruption events and notices never throw out
// of a handler, never fail a good record beside them, and never launch for a notice that is not valid.

import { readFileSync } from 'node:fs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler as interruptionHandler } from '../../lambdas/interruption/handler';
import { createHandler as provisionHandler } from '../../lambdas/provision/handler';
import { DETAIL_TYPE } from '../../shared/contracts';
import { parseInterruption } from '../../shared/interruption';
import { noticePodFromPod } from '../../shared/notice';
import { type Powertools, powertools } from '../../shared/runtime/powertools';
import type { NodeClaimsLaunchedDetail } from '../../shared/runtime/provision';
import { mutate, mutationArb, randomInput } from '../helpers/mutate';
import { nodePool, standardTypes } from '../scheduling/helpers';
import {
  clusterWith,
  FakeInstances,
  FakeKube,
  FakeState,
  pendingPod,
  RecordingRetryQueue,
  recordingLauncher,
  START,
} from './fakes';

let tools: Powertools;

beforeAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('fuzz', 'c1');
});

const context = {
  getRemainingTimeInMillis: () => 60_000,
  awsRequestId: 'req',
  functionName: 'fn',
} as unknown as Context;

function sqs(bodies: string[]): SQSEvent {
  return { Records: bodies.map((body, i) => ({ messageId: `m${i}`, body }) as SQSRecord) };
}

const asBody = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined'));

const SAMPLES = [
  'spot-interruption-warning.json',
  'rebalance-recommendation.json',
  'instance-state-change-stopping.json',
  'health-scheduled-change.json',
  'capacity-reservation-interruption-warning.json',
].map((f) => JSON.parse(readFileSync(`test/fixtures/events/${f}`, 'utf8')) as unknown);

const GOOD_EVENT = JSON.stringify({
  version: '0',
  id: 'evt-good',
  'detail-type': 'EC2 Spot Instance Interruption Warning',
  source: 'aws.ec2',
  account: '123456789012',
  time: new Date(START).toISOString(),
  region: 'us-west-2',
  resources: [],
  detail: { 'instance-id': 'i-0123456789abcdef0', 'instance-action': 'terminate' },
});

function interruption() {
  return interruptionHandler(
    async () => ({
      ...tools.telemetry,
      cluster: 'c1',
      kube: new FakeKube(async () => {}),
      instances: new FakeInstances(),
      state: new FakeState(() => START),
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

function notice(names: string[]): { [key: string]: unknown } {
  return {
    version: '0',
    source: 'karpless',
    'detail-type': DETAIL_TYPE.podsUnschedulable,
    detail: {
      cluster: 'c1',
      observedAt: new Date(START).toISOString(),
      pods: names.map((n) => noticePodFromPod(pendingPod(n))),
      daemonSets: [],
    },
  };
}

function provision(events: NodeClaimsLaunchedDetail[]) {
  const instances = new FakeInstances();
  return provisionHandler(
    async () => ({
      ...tools.telemetry,
      cluster: 'c1',
      nodePools: [nodePool('default')],
      instanceTypes: async () => ({ byNodePool: { default: standardTypes() }, priceSource: 'bundled' }),
      instances,
      kube: clusterWith(['a', 'x', 'y'].map((n) => pendingPod(n))),
      state: new FakeState(() => START),
      records: new FakeState(() => START),
      launcher: recordingLauncher(instances),
      events: { nodeClaimsLaunched: async (d) => void events.push(d) },
      clock: () => START,
    }),
    tools,
    () => new RecordingRetryQueue(),
  );
}

describe('interruption handler under fuzzing', () => {
  it('never throws, and never fails the good record beside a random or mutated one', async () => {
    const fuzzed = fc.oneof(
      randomInput.map(asBody),
      fc
        .tuple(fc.constantFrom(...SAMPLES), fc.array(mutationArb, { minLength: 1, maxLength: 4 }))
        .map(([sample, mutations]) => asBody(mutate(sample, mutations))),
      fc.tuple(fc.constantFrom(...SAMPLES), fc.nat()).map(([s, n]) => JSON.stringify(s).slice(0, n)),
    );
    await fc.assert(
      fc.asyncProperty(fuzzed, async (body) => {
        const response = await interruption()(sqs([body, GOOD_EVENT]), context);
        for (const f of response.batchItemFailures) expect(f.itemIdentifier).toBe('m0');
      }),
      { numRuns: 150 },
    );
  });
});

describe('provision handler under fuzzing', () => {
  it('never throws, acknowledges what is malformed, and still plans the good notice', async () => {
    const fuzzed = fc.oneof(
      randomInput.map(asBody),
      fc.array(mutationArb, { minLength: 1, maxLength: 4 }).map((m) => asBody(mutate(notice(['x', 'y']), m))),
    );
    await fc.assert(
      fc.asyncProperty(fuzzed, async (body) => {
        const events: NodeClaimsLaunchedDetail[] = [];
        const response = await provision(events)(sqs([body, JSON.stringify(notice(['a']))]), context);
        expect(response.batchItemFailures).toEqual([]);
        expect(events).toHaveLength(1);
        expect(events[0]?.nodeClaims.flatMap((c) => c.pods)).toContain('default/a');
      }),
      { numRuns: 150 },
    );
  });
});
