// The fake API server itself, spoken to with plain fetch: the JSON it writes is what a real API
// server writes, so a client that passes against it is not passing against a friendlier dialect.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { daemonSet, node, pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';

let server: FakeApiServer;

beforeEach(async () => {
  server = await FakeApiServer.start({ token: 't' });
});

afterEach(async () => {
  await server.stop();
});

async function call(method: string, path: string, body?: unknown, contentType = 'application/json') {
  const response = await fetch(server.url + path, {
    method,
    headers: { authorization: 'Bearer t', 'content-type': contentType },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function watchLines(path: string): Promise<{ type: string; object: Record<string, unknown> }[]> {
  const response = await fetch(server.url + path, { headers: { authorization: 'Bearer t' } });
  const text = await response.text();
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

describe('fake API server', () => {
  it('writes lists as real Kubernetes JSON: kind, resourceVersion, continue, items without kind', async () => {
    server.addPod(pod('a'));
    server.addPod(pod('b'));
    const { status, body } = await call('GET', '/api/v1/pods?limit=1');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: server.resourceVersion, continue: expect.any(String), remainingItemCount: 1 },
    });
    const items = body.items as Record<string, unknown>[];
    expect(items).toHaveLength(1);
    expect(items[0]).not.toHaveProperty('kind');
    expect(items[0]).toMatchObject({
      metadata: { name: 'a', namespace: 'default', uid: expect.any(String), resourceVersion: expect.any(String) },
    });
  });

  it('serves later pages from the snapshot of the first, and 410 once that snapshot is compacted', async () => {
    server.addPod(pod('a'));
    server.addPod(pod('c'));
    const first = await call('GET', '/api/v1/pods?limit=1');
    server.addPod(pod('b'));
    const token = (first.body.metadata as { continue: string }).continue;
    const second = await call('GET', `/api/v1/pods?limit=1&continue=${token}`);
    expect((second.body.items as { metadata: { name: string } }[]).map((p) => p.metadata.name)).toEqual(['c']);
    server.compactHistory();
    const expired = await call('GET', `/api/v1/pods?limit=1&continue=${token}`);
    expect(expired).toMatchObject({ status: 410, body: { kind: 'Status', reason: 'Expired', code: 410 } });
  });

  it('answers resourceVersion=0 from its watch cache: the whole list in one answer, the limit ignored', async () => {
    for (const name of ['a', 'b', 'c']) server.addNode(node(name));
    const { status, body } = await call('GET', '/api/v1/nodes?limit=1&resourceVersion=0');
    expect(status).toBe(200);
    expect((body.items as { metadata: { name: string } }[]).map((n) => n.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(body.metadata).toEqual({ resourceVersion: server.resourceVersion });
  });

  it('refuses a resourceVersion beside continue, as a real server does', async () => {
    for (const name of ['a', 'b']) server.addNode(node(name));
    const first = await call('GET', '/api/v1/nodes?limit=1');
    const token = (first.body.metadata as { continue: string }).continue;
    expect(await call('GET', `/api/v1/nodes?limit=1&continue=${token}&resourceVersion=0`)).toMatchObject({
      status: 400,
      body: { kind: 'Status', reason: 'BadRequest', message: expect.stringContaining('continue') },
    });
  });

  it('leaves finished pods out for status.phase!=Succeeded,status.phase!=Failed, page by page', async () => {
    server.addPod(pod('running', { nodeName: 'n1', phase: 'Running' }));
    server.addPod(pod('done', { nodeName: 'n1', phase: 'Succeeded' }));
    server.addPod(pod('crashed', { nodeName: 'n1', phase: 'Failed' }));
    server.addPod(pod('waiting'));
    const selector = encodeURIComponent('status.phase!=Succeeded,status.phase!=Failed');
    const first = await call('GET', `/api/v1/pods?fieldSelector=${selector}&limit=1`);
    const token = (first.body.metadata as { continue: string }).continue;
    const second = await call('GET', `/api/v1/pods?fieldSelector=${selector}&limit=1&continue=${token}`);
    const names = [first, second].flatMap((page) =>
      (page.body.items as { metadata: { name: string } }[]).map((p) => p.metadata.name),
    );
    expect(names).toEqual(['running', 'waiting']);
    expect(second.body.metadata).not.toHaveProperty('continue');
  });

  it('answers errors with Status objects', async () => {
    expect(await call('GET', '/api/v1/nodes/nope')).toEqual({
      status: 404,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'nodes "nope" not found',
        reason: 'NotFound',
        details: { name: 'nope', kind: 'nodes' },
        code: 404,
      },
    });
    expect(await call('GET', '/api/v1/secrets')).toMatchObject({ status: 404, body: { reason: 'NotFound' } });
    const unauthorized = await fetch(`${server.url}/api/v1/pods`, { headers: { authorization: 'Bearer nope' } });
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('matches set-based label selectors and namespaced paths', async () => {
    server.addPod(pod('a', { labels: { tier: 'web' } }));
    server.addPod(pod('b', { labels: { tier: 'db' } }));
    server.addPod(pod('c', { namespace: 'other', labels: { tier: 'web' } }));
    server.addPod(pod('d'));
    const names = async (path: string) =>
      ((await call('GET', path)).body.items as { metadata: { name: string } }[]).map((p) => p.metadata.name);
    expect(await names('/api/v1/pods?labelSelector=tier%20in%20(web,cache)')).toEqual(['a', 'c']);
    expect(await names('/api/v1/pods?labelSelector=tier%20notin%20(web),tier')).toEqual(['b']);
    expect(await names('/api/v1/pods?labelSelector=!tier')).toEqual(['d']);
    expect(await names('/api/v1/pods?labelSelector=tier!=web')).toEqual(['b', 'd']);
    expect(await names('/api/v1/namespaces/other/pods')).toEqual(['c']);
    expect(await names('/api/v1/pods?fieldSelector=metadata.name=b')).toEqual(['b']);
    expect(await names('/api/v1/pods?fieldSelector=spec.nodeName!=')).toEqual([]);
  });

  it('lists DaemonSets as apps/v1 DaemonSetList', async () => {
    server.addDaemonSet(daemonSet('aws-node'));
    const { body } = await call('GET', '/apis/apps/v1/namespaces/kube-system/daemonsets');
    expect(body).toMatchObject({ kind: 'DaemonSetList', apiVersion: 'apps/v1' });
  });

  it('accepts only merge patches, and validates taints', async () => {
    server.addNode(node('a'));
    expect(await call('PATCH', '/api/v1/nodes/a', [{ op: 'add' }], 'application/json-patch+json')).toMatchObject({
      status: 415,
      body: { reason: 'UnsupportedMediaType' },
    });
    expect(
      await call(
        'PATCH',
        '/api/v1/nodes/a',
        { spec: { taints: [{ key: 'k', effect: 'Sometimes' }] } },
        'application/merge-patch+json',
      ),
    ).toMatchObject({
      status: 422,
      body: { reason: 'Invalid', message: expect.stringContaining('spec.taints[0].effect') },
    });
  });

  it('streams a watch from resourceVersion 0 as the current state, then ends at timeoutSeconds', async () => {
    server.addNode(node('a'));
    const events = await watchLines('/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=0');
    expect(events.map((e) => e.type)).toEqual(['ADDED']);
    expect(events[0]?.object).toMatchObject({ kind: 'Node', apiVersion: 'v1', metadata: { name: 'a' } });
  });

  it('sends node deletion through finalizers as MODIFIED with deletionTimestamp, then DELETED', async () => {
    const from = server.addNode(node('a', { finalizers: ['karpenter.sh/termination'] })).metadata.resourceVersion;
    expect((await call('DELETE', '/api/v1/nodes/a')).body).toMatchObject({
      metadata: { deletionTimestamp: expect.any(String) },
    });
    await call('PATCH', '/api/v1/nodes/a', { metadata: { finalizers: null } }, 'application/merge-patch+json');
    const events = await watchLines(`/api/v1/nodes?watch=true&resourceVersion=${from}&timeoutSeconds=0`);
    expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
    expect(server.getNode('a')).toBeUndefined();
  });

  it('answers a watch from a compacted resourceVersion with an ERROR event carrying 410', async () => {
    server.addNode(node('a'));
    server.compactHistory();
    const events = await watchLines('/api/v1/nodes?watch=true&resourceVersion=1&timeoutSeconds=5');
    expect(events).toEqual([
      { type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) },
    ]);
  });

  it('checks evictions against budgets given as percentages', async () => {
    for (const name of ['w1', 'w2', 'w3', 'w4']) {
      server.addPod(pod(name, { labels: { app: 'w' } }));
      server.bindPod('default', name, 'n1');
    }
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'w',
      selector: { matchLabels: { app: 'w' } },
      maxUnavailable: '25%',
      expectedPods: 4,
    });
    const evict = (name: string) =>
      call('POST', `/api/v1/namespaces/default/pods/${name}/eviction`, {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name, namespace: 'default' },
      });
    expect(await evict('w1')).toMatchObject({ status: 201, body: { kind: 'Status', status: 'Success' } });
    expect(await evict('w2')).toMatchObject({
      status: 429,
      body: {
        reason: 'TooManyRequests',
        details: { causes: [expect.objectContaining({ reason: 'DisruptionBudget' })] },
      },
    });
    expect(await call('POST', '/api/v1/namespaces/default/pods/w2/eviction', { kind: 'Pod' })).toMatchObject({
      status: 400,
    });
  });

  it('lets an unready pod be evicted even when the budget is exhausted', async () => {
    server.addPod(pod('w1', { labels: { app: 'w' } }));
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'w',
      selector: { matchLabels: { app: 'w' } },
      minAvailable: 1,
    });
    expect(server.evictionRefusal('default', 'w1')).toBeUndefined();
    server.bindPod('default', 'w1', 'n1');
    expect(server.evictionRefusal('default', 'w1')).toMatchObject({ code: 429 });
  });

  it('marks a node Ready with a kubelet-style condition', () => {
    server.addNode(node('a'));
    server.markNodeReady('a');
    expect(server.getNode('a')?.status?.conditions).toEqual([
      expect.objectContaining({ type: 'Ready', status: 'True', reason: 'KubeletReady' }),
    ]);
    server.markNodeReady('a', false);
    expect(server.getNode('a')?.status?.conditions?.map((c) => c.status)).toEqual(['False']);
  });
});
