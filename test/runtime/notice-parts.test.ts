// Parts of one split notice reach one decision: the parts of an observation that arrive over several
// invocations are kept until the last one arrives, and a part that never arrives holds the others
// back for a bounded time only, after which the decision goes ahead with what it has and says so.

import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHandler as provisionHandler } from '../../lambdas/provision/handler';
import { DETAIL_TYPE } from '../../shared/contracts';
import { noticePodFromPod, splitNotice } from '../../shared/notice';
import type { PodsUnschedulableDetail } from '../../shared/notice/types';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { assembleParts, gatherNotices, NOTICE_PART_WAIT_MS } from '../../shared/runtime/notice-parts';
import { provisionBatchOf } from '../../shared/runtime/notices';
import { type Powertools, powertools } from '../../shared/runtime/powertools';
import type { NodeClaimsLaunchedDetail } from '../../shared/runtime/provision';
import { nodePool, standardTypes } from '../scheduling/helpers';
import {
  clusterWith,
  FakeInstances,
  FakeState,
  pendingPod,
  RecordingLog,
  RecordingRetryQueue,
  recordingLauncher,
  START,
} from './fakes';

const NAMES = Array.from({ length: 40 }, (_, i) => `p${i}`);

/** One observation of 40 pods split into parts of a few pods each. */
function parts(observedAt = new Date(START).toISOString()): PodsUnschedulableDetail[] {
  const detail = { cluster: 'c1', observedAt, pods: NAMES.map((n) => noticePodFromPod(pendingPod(n))), daemonSets: [] };
  return splitNotice(detail, 1_000);
}

function whole(names: string[]): PodsUnschedulableDetail {
  return {
    cluster: 'c1',
    observedAt: new Date(START + 5_000).toISOString(),
    pods: names.map((n) => noticePodFromPod(pendingPod(n))),
    daemonSets: [],
  };
}

let now: number;
let store: InMemoryStateStore;
let log: RecordingLog;

beforeEach(() => {
  now = START;
  store = new InMemoryStateStore(() => now);
  log = new RecordingLog();
});

const gather = (details: PodsUnschedulableDetail[]) => gatherNotices({ parts: store, clock: () => now, log }, details);

describe('parts of a split notice', () => {
  it('are planned together once the last one arrives, over three invocations', async () => {
    const all = parts();
    expect(all.length).toBeGreaterThanOrEqual(6);
    const third = Math.ceil(all.length / 3);

    expect((await gather(all.slice(0, third))).ready).toEqual([]);
    now += 1_000;
    expect((await gather(all.slice(third, 2 * third))).ready).toEqual([]);
    now += 1_000;
    const last = await gather(all.slice(2 * third));
    expect(last.ready).toHaveLength(all.length);
    expect(
      provisionBatchOf(last.ready)
        ?.pods.map((p) => p.metadata.name)
        .sort(),
    ).toEqual([...NAMES].sort());
    await last.planned();
    expect(await store.noticeParts()).toEqual([]);
  });

  it('keeps a redelivered part once, and plans a whole notice at once beside waiting parts', async () => {
    const all = parts();
    await gather(all.slice(0, 2));
    const again = await gather([...all.slice(0, 2), whole(['w1'])]);
    expect(again.ready.map((d) => d.pods.map((p) => p.name))).toEqual([['w1']]);
    expect((await store.noticeParts()).map((p) => p.index).sort()).toEqual([0, 1]);
  });

  it('wait a bounded time for a part that never arrives, then are planned with what arrived, the gap logged', async () => {
    const all = parts();
    const lost = 1;
    const arrived = all.filter((_, i) => i !== lost);
    expect((await gather(arrived)).ready).toEqual([]);
    now += NOTICE_PART_WAIT_MS - 1;
    expect((await gather([whole(['w1'])])).ready).toHaveLength(1);

    now += 1;
    const next = await gather([whole(['w2'])]);
    expect(next.ready).toHaveLength(1 + arrived.length);
    const planned = provisionBatchOf(next.ready)?.pods.map((p) => p.metadata.name) ?? [];
    expect(planned).toContain('w2');
    for (const pod of all[lost]?.pods ?? []) expect(planned).not.toContain(pod.name);
    expect(log.lines.find((l) => l.message.startsWith('notice parts never arrived'))?.fields).toMatchObject({
      batchId: all[0]?.part?.batchId,
      missing: [lost],
      waitedMs: NOTICE_PART_WAIT_MS,
    });
    // Kept until the decision succeeds: a failed one finds them again.
    expect((await gather([])).ready).toHaveLength(arrived.length);
    await next.planned();
    expect(await store.noticeParts()).toEqual([]);
  });

  it('counts the wait from the first kept part, not from each arrival', () => {
    const all = parts();
    const kept = all.slice(0, 2).map((d, index) => ({
      batchId: d.part?.batchId ?? '',
      index,
      count: all.length,
      detail: JSON.stringify(d),
      receivedAt: START,
      expiresAt: START + 900_000,
    }));
    const verdict = assembleParts(all.slice(2, 3), kept, START + 5_000);
    expect(verdict.keep.map((k) => [k.index, k.receivedAt])).toEqual([[2, START]]);
    expect(verdict.waiting).toEqual([{ batchId: kept[0]?.batchId, have: 3, count: all.length }]);
  });
});

describe('the provision handler and split notices', () => {
  let tools: Powertools;
  let events: NodeClaimsLaunchedDetail[];

  beforeAll(() => {
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    tools = powertools('test', 'c1');
  });

  function sqs(details: PodsUnschedulableDetail[]): SQSEvent {
    return {
      Records: details.map(
        (detail, i) =>
          ({
            messageId: `m${i}`,
            receiptHandle: `r${i}`,
            body: JSON.stringify({ source: 'karpless', 'detail-type': DETAIL_TYPE.podsUnschedulable, detail }),
            attributes: { ApproximateReceiveCount: '1', MessageGroupId: 'c1' },
          }) as SQSRecord,
      ),
    };
  }

  it('makes one decision for an observation whose parts arrive four at a time (the queue gives ten at most)', async () => {
    events = [];
    const instances = new FakeInstances();
    const state = new FakeState(() => now);
    const handler = provisionHandler(
      async () => ({
        ...tools.telemetry,
        cluster: 'c1',
        nodePools: [nodePool('default')],
        instanceTypes: async () => ({ byNodePool: { default: standardTypes() }, priceSource: 'bundled' }),
        instances,
        kube: clusterWith(NAMES.map((n) => pendingPod(n))),
        state,
        records: state,
        launcher: recordingLauncher(instances),
        events: { nodeClaimsLaunched: async (d) => void events.push(d) },
        clock: () => now,
        noticeParts: store,
      }),
      tools,
      () => new RecordingRetryQueue(),
    );
    const context = { getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
    const all = parts();
    for (let i = 0; i < all.length; i += 4) {
      expect((await handler(sqs(all.slice(i, i + 4)), context)).batchItemFailures).toEqual([]);
    }
    expect(events).toHaveLength(1);
    const placed = events[0]?.nodeClaims.flatMap((c) => c.pods) ?? [];
    expect(placed.sort()).toEqual(NAMES.map((n) => `default/${n}`).sort());
    expect(await store.noticeParts()).toEqual([]);
  });
});
