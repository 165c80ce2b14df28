// Nominated and FailedScheduling events on pending pods, through the fake API server: one event per pod and claim,
// deduplicated for two minutes as Karpenter's recorder does (also across invocations, which share
// nothing but the API server), then counted; a real kubectl describes the pod with it.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpKubeClient } from '../../shared/kube/client';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { PodEvents } from '../../shared/runtime/pod-events';
import { silentLog } from '../../shared/runtime/telemetry';
import { pod } from '../support/kube/builders';
import { FakeApiServer, testTls } from '../support/kube/fake-apiserver';
import { findKubectl, Kubectl, writeKubeconfig } from '../support/kube/kubectl';

const START = Date.parse('2026-12-03T12:00:00Z');

describe('PodEvents: Nominated and FailedScheduling', () => {
  let server: FakeApiServer;
  let client: HttpKubeClient;
  let now: number;
  let state: InMemoryStateStore;
  const invocation = () => new PodEvents({ recorder: client.eventRecorder(() => now), state, log: silentLog });
  const events = () => server.listObjects('events') as unknown as { message: string; count: number; reason: string }[];

  beforeEach(async () => {
    now = START;
    server = await FakeApiServer.start({ now: () => new Date(now), tls: testTls() });
    client = new HttpKubeClient({ endpoint: server.url, token: async () => 't', ca: server.ca ?? '' });
    state = new InMemoryStateStore(() => now);
  });
  afterEach(async () => {
    client.close();
    await server.stop();
  });

  it('tells each nominated pod its claim, once per two minutes, and counts repeats', async () => {
    const web = server.addPod(pod('web-1'));
    const other = server.addPod(pod('batch-1'));
    await state.nominate({
      nodeClaimName: 'general-x2k9p',
      nodePool: 'general',
      podUids: [web.metadata.uid ?? ''],
      expiresAt: START + 10 * 60_000,
    });
    const first = invocation();
    expect(await first.nominated([web, other])).toBe(1);
    expect(events()).toMatchObject([
      { reason: 'Nominated', message: 'Pod should schedule on: nodeclaim/general-x2k9p', count: 1 },
    ]);
    expect(await first.nominated([web, other])).toBe(0);
    now += 60_000;
    expect(await invocation().nominated([web])).toBe(0);
    expect(events()).toHaveLength(1);
    now += 2 * 60_000;
    expect(await invocation().nominated([web])).toBe(1);
    expect(events()).toMatchObject([{ count: 2 }]);

    const binary = findKubectl();
    if (!binary) throw new Error('no kubectl: set $KUBECTL or install Debian kubernetes-client (.ci/run does)');
    const kubectl = new Kubectl(binary, writeKubeconfig(server.url, { ca: server.ca ?? '' }));
    expect(await kubectl.ok('describe', 'pod', 'web-1')).toMatch(
      /Normal\s+Nominated\s+.*karpenter\s+Pod should schedule on: nodeclaim\/general-x2k9p/,
    );
  });

  it("tells a pod no NodePool can take why (FailedScheduling with the decision's reasons), until a claim holds it", async () => {
    const big = server.addPod(pod('big-1'));
    const fits = server.addPod(pod('web-2'));
    const reasons = [
      'NodePool general: no instance type has 96 cpu and 8Gi memory',
      'NodePool gpu: requires nvidia.com/gpu',
    ];
    await state.recordUnschedulable({
      decision: 'd1',
      reasons,
      podUids: [big.metadata.uid ?? ''],
      expiresAt: START + 5 * 60_000,
    });
    expect(await invocation().failedScheduling([big, fits])).toBe(1);
    expect(events()).toMatchObject([
      {
        reason: 'FailedScheduling',
        message: `Failed to schedule pod, ${reasons.join('; ')}`,
        count: 1,
      },
    ]);
    expect((server.listObjects('events')[0] as unknown as { type: string }).type).toBe('Warning');

    // A later decision placed it after all: the nomination wins and no FailedScheduling is repeated.
    now += 3 * 60_000;
    await state.nominate({
      nodeClaimName: 'general-b7c1d',
      nodePool: 'general',
      podUids: [big.metadata.uid ?? ''],
      expiresAt: START + 20 * 60_000,
    });
    expect(await invocation().failedScheduling([big])).toBe(0);
    // Once the record expires there is nothing to say either.
    now += 5 * 60_000;
    await state.releaseNomination('general-b7c1d');
    expect(await invocation().failedScheduling([big])).toBe(0);
  });

  it('records both events for the watcher from one read of the nominations', async () => {
    const web = server.addPod(pod('web-3'));
    const big = server.addPod(pod('big-2'));
    await state.nominate({
      nodeClaimName: 'general-q4w8e',
      nodePool: 'general',
      podUids: [web.metadata.uid ?? ''],
      expiresAt: START + 10 * 60_000,
    });
    await state.recordUnschedulable({
      decision: 'd2',
      reasons: ['NodePool general: no instance type has 96 cpu'],
      podUids: [big.metadata.uid ?? ''],
      expiresAt: START + 5 * 60_000,
    });
    let reads = 0;
    const counted = {
      nominations: () => {
        reads++;
        return state.nominations();
      },
      unschedulable: () => state.unschedulable(),
    };
    const events = new PodEvents({ recorder: client.eventRecorder(() => now), state: counted, log: silentLog });
    expect(await events.record([web, big])).toBe(2);
    expect(reads).toBe(1);
    expect(server.eventsFor('Pod', 'web-3')).toMatchObject([{ reason: 'Nominated' }]);
    expect(server.eventsFor('Pod', 'big-2')).toMatchObject([{ reason: 'FailedScheduling', type: 'Warning' }]);
  });
});
