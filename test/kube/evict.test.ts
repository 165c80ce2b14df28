import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import { HttpKubeClient, isEvictable } from '../../shared/kube/client';
import { fakeClock } from '../providers/fakes';
import { pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';

let server: FakeApiServer;
let client: HttpKubeClient;
let clock: ReturnType<typeof fakeClock>;
let onSleep: (ms: number) => void;

beforeEach(async () => {
  server = await FakeApiServer.start({ token: 'secret' });
  clock = fakeClock();
  onSleep = () => {};
  client = new HttpKubeClient({
    endpoint: server.url,
    token: async () => 'secret',
    now: clock,
    sleep: async (ms) => {
      clock.advance(ms);
      onSleep(ms);
    },
  });
});

afterEach(async () => {
  client.close();
  await server.stop();
});

function runningWeb(...names: string[]): void {
  for (const name of names) {
    server.addPod(pod(name, { labels: { app: 'web' } }));
    server.bindPod('default', name, 'n1');
  }
}

describe('evictPod', () => {
  it('evicts through the policy/v1 Eviction subresource', async () => {
    runningWeb('web-1');
    expect(await client.evictPod('default', 'web-1', clock() + 60_000)).toEqual({ kind: 'evicted' });
    expect(server.getPod('default', 'web-1')).toBeUndefined();
    const [request] = server.requestsTo('POST', '/api/v1/namespaces/default/pods/web-1/eviction');
    expect(request?.body).toEqual({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'web-1', namespace: 'default' },
    });
    expect(request?.status).toBe(201);
  });

  it('counts a pod that is already gone as evicted', async () => {
    expect(await client.evictPod('default', 'gone', clock() + 60_000)).toEqual({ kind: 'evicted' });
  });

  it('retries while a PodDisruptionBudget refuses, until the budget allows it', async () => {
    runningWeb('web-1', 'web-2');
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'web',
      selector: { matchLabels: { app: 'web' } },
      minAvailable: 2,
    });
    const waits: number[] = [];
    onSleep = (ms) => {
      waits.push(ms);
      if (waits.length === 3) runningWeb('web-3');
    };
    expect(await client.evictPod('default', 'web-1', clock() + 60_000)).toEqual({ kind: 'evicted' });
    expect(server.requestsTo('POST', '/api/v1/namespaces/default/pods/web-1/eviction').map((r) => r.status)).toEqual([
      429, 429, 429, 201,
    ]);
    // Backoff grows between refusals (jitter keeps each within [delay/2, delay]).
    expect(waits[0]).toBeGreaterThanOrEqual(250);
    expect(waits[0]).toBeLessThanOrEqual(500);
    expect(waits[2]).toBeGreaterThanOrEqual(1000);
  });

  it('is blocked once the deadline passes, with the budget message', async () => {
    runningWeb('web-1');
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'web',
      selector: { matchLabels: { app: 'web' } },
      maxUnavailable: 0,
    });
    const deadline = clock() + 20_000;
    const outcome = await client.evictPod('default', 'web-1', deadline);
    expect(outcome).toMatchObject({ kind: 'blocked', message: expect.stringContaining('disruption budget') });
    expect(clock()).toBe(deadline);
    expect(server.getPod('default', 'web-1')).toBeDefined();
    expect(server.requestsTo('POST', '/api/v1/namespaces/default/pods/web-1/eviction').length).toBeGreaterThan(3);
  });

  it('retries a 500 from the API server and then evicts', async () => {
    runningWeb('web-1');
    server.injectFault({ method: 'POST', path: /eviction$/, status: 500 });
    expect(await client.evictPod('default', 'web-1', clock() + 60_000)).toEqual({ kind: 'evicted' });
  });

  it('reports a pod selected by two budgets as blocked, in Karpenter’s words, and throws other 500s', async () => {
    runningWeb('web-1', 'web-2', 'web-3');
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'a',
      selector: { matchLabels: { app: 'web' } },
      maxUnavailable: 1,
    });
    server.addPodDisruptionBudget({ namespace: 'default', name: 'b', selector: {}, maxUnavailable: 1 });
    // Asked once: retrying cannot change that answer.
    expect(await client.evictPod('default', 'web-1', clock() + 60_000)).toEqual({
      kind: 'blocked',
      message: 'eviction does not support multiple PDBs',
    });
    expect(server.requestsTo('POST', /eviction$/)).toHaveLength(1);
    const fast = new HttpKubeClient({ endpoint: server.url, token: async () => 'secret', retry: { retries: 0 } });
    server.injectFault({ method: 'POST', path: /eviction$/, status: 500 });
    await expect(fast.evictPod('default', 'web-2', clock() + 60_000)).rejects.toMatchObject({ code: 500 });
    fast.close();
  });
});

describe('isEvictable', () => {
  const cases: [string, boolean, Pod][] = [
    ['a ReplicaSet pod', true, pod('a', { owner: { kind: 'ReplicaSet', name: 'web-1' }, phase: 'Running' })],
    ['a bare pod', true, pod('a')],
    ['a DaemonSet pod', false, pod('a', { owner: { kind: 'DaemonSet', name: 'kube-proxy' }, phase: 'Running' })],
    ['a mirror pod', false, pod('a', { annotations: { 'kubernetes.io/config.mirror': 'abc' }, phase: 'Running' })],
    ['a static pod owned by its Node', false, pod('a', { owner: { kind: 'Node', name: 'n1' } })],
    ['a Succeeded pod', false, pod('a', { phase: 'Succeeded' })],
    ['a Failed pod', false, pod('a', { phase: 'Failed' })],
    [
      'a pod already terminating',
      false,
      { ...pod('a'), metadata: { name: 'a', deletionTimestamp: '2026-01-01T00:00:00Z' } },
    ],
  ];
  it.each(cases)('%s is evictable: %s', (_name, expected, input) => {
    expect(isEvictable(input)).toBe(expected);
  });
});
