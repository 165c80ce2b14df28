import { createServer, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpKubeClient, type HttpKubeClientOptions } from '../../shared/kube/client';
import { KubeApiError, KubeTransportError } from '../../shared/kube/types';
import { daemonSet, node, pod } from '../support/kube/builders';
import { FakeApiServer, testTls } from '../support/kube/fake-apiserver';

let server: FakeApiServer;
let client: HttpKubeClient;
let sleeps: number[];

function clientFor(fake: FakeApiServer, options: Partial<HttpKubeClientOptions> = {}): HttpKubeClient {
  return new HttpKubeClient({
    endpoint: fake.url,
    token: async () => 'secret',
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
}

beforeEach(async () => {
  sleeps = [];
  server = await FakeApiServer.start({ token: 'secret' });
  client = clientFor(server);
});

afterEach(async () => {
  client.close();
  await server.stop();
});

describe('lists', () => {
  it('lists pods with a field selector for unassigned pods and returns the list resourceVersion', async () => {
    server.addPod(pod('pending'));
    server.addPod(pod('bound', { nodeName: 'n1' }));
    const list = await client.listPods({ fieldSelector: 'spec.nodeName=' });
    expect(list.items.map((p) => p.metadata.name)).toEqual(['pending']);
    expect(list.resourceVersion).toBe(server.resourceVersion);
    expect(server.requestsTo('GET', '/api/v1/pods')[0]?.query).toMatchObject({
      fieldSelector: 'spec.nodeName=',
      limit: '500',
    });
  });

  it('follows continue across pages until the list is complete', async () => {
    for (let i = 0; i < 7; i++) server.addPod(pod(`p${i}`));
    const atList = server.resourceVersion;
    const list = await client.listPods({ limit: 3 });
    expect(list.items.map((p) => p.metadata.name)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    expect(list.resourceVersion).toBe(atList);
    const pages = server.requestsTo('GET', '/api/v1/pods');
    expect(pages).toHaveLength(3);
    expect(pages[0]?.query.continue).toBeUndefined();
    expect(pages[1]?.query.continue).toBeTruthy();
  });

  it("asks for resourceVersion=0 when told, and takes the watch cache's whole answer", async () => {
    for (let i = 0; i < 4; i++) server.addNode(node(`n${i}`));
    const list = await client.listNodes({ resourceVersion: '0', limit: 2 });
    expect(list.items.map((n) => n.metadata.name)).toEqual(['n0', 'n1', 'n2', 'n3']);
    const requests = server.requestsTo('GET', '/api/v1/nodes');
    expect(requests).toHaveLength(1);
    expect(requests[0]?.query).toMatchObject({ resourceVersion: '0', limit: '2' });
  });

  it('restarts a paginated list once when its continue token has expired', async () => {
    for (let i = 0; i < 4; i++) server.addPod(pod(`p${i}`));
    server.injectFault({ method: 'GET', path: /continue=/, status: 410 });
    const list = await client.listPods({ limit: 2 });
    expect(list.items).toHaveLength(4);
    expect(server.requestsTo('GET', '/api/v1/pods').map((r) => r.status)).toEqual([200, 410, 200, 200]);
  });

  it('lists nodes by label selector', async () => {
    server.addNode(node('a', { labels: { 'karpenter.sh/nodepool': 'default' } }));
    server.addNode(node('b'));
    const list = await client.listNodes({ labelSelector: 'karpenter.sh/nodepool' });
    expect(list.items.map((n) => n.metadata.name)).toEqual(['a']);
  });

  it('lists DaemonSets under apps/v1 with kind and apiVersion filled in', async () => {
    server.addDaemonSet(daemonSet('kube-proxy'));
    const list = await client.listDaemonSets();
    expect(list.items).toEqual([
      expect.objectContaining({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: expect.objectContaining({ name: 'kube-proxy' }),
      }),
    ]);
    expect(server.requestsTo('GET', '/apis/apps/v1/daemonsets')).toHaveLength(1);
  });

  it('surfaces a bad selector as a 400 KubeApiError', async () => {
    const error = await client.listPods({ fieldSelector: 'spec.schedulerName=x' }).catch((e) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({ code: 400, reason: 'BadRequest', request: 'GET /api/v1/pods' });
  });
});

describe('persistentvolumeclaims', () => {
  it('gets a claim by namespace and name, and undefined for one that does not exist', async () => {
    server.addPersistentVolumeClaim({ metadata: { name: 'data', namespace: 'db' }, spec: { volumeName: 'pv-1' } });
    expect((await client.getPersistentVolumeClaim('db', 'data'))?.spec?.volumeName).toBe('pv-1');
    expect(await client.getPersistentVolumeClaim('default', 'data')).toBeUndefined();
  });
});

describe('nodes', () => {
  it('gets a node, and undefined for one that does not exist', async () => {
    server.addNode(node('a'));
    expect((await client.getNode('a'))?.metadata.name).toBe('a');
    expect(await client.getNode('missing')).toBeUndefined();
  });

  it('merge-patches labels, taints and unschedulable', async () => {
    server.addNode(
      node('a', { labels: { old: 'x' }, taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] }),
    );
    const patched = await client.patchNode('a', {
      metadata: { labels: { 'karpenter.sh/registered': 'true', old: null } },
      spec: { taints: [], unschedulable: true },
    });
    expect(patched.metadata.labels).toEqual({ 'kubernetes.io/hostname': 'a', 'karpenter.sh/registered': 'true' });
    expect(patched.spec).toEqual({ taints: [], unschedulable: true });
    expect(server.requestsTo('PATCH', '/api/v1/nodes/a')[0]?.contentType).toBe('application/merge-patch+json');
  });

  it('answers a patch with a stale resourceVersion with 409 Conflict, and does not retry it', async () => {
    const created = server.addNode(node('a', { finalizers: ['karpenter.sh/termination'] }));
    server.updateNode('a', (n) => {
      n.metadata.labels = { changed: 'yes' };
    });
    const error = await client
      .patchNode('a', { metadata: { finalizers: [], resourceVersion: created.metadata.resourceVersion ?? '' } })
      .catch((e) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({ code: 409, reason: 'Conflict', request: 'PATCH /api/v1/nodes/a' });
    expect(server.getNode('a')?.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    expect(server.requestsTo('PATCH', '/api/v1/nodes/a')).toHaveLength(1);
  });

  it('answers a patch of a missing node with 404', async () => {
    await expect(client.patchNode('gone', { spec: { unschedulable: true } })).rejects.toMatchObject({
      code: 404,
      reason: 'NotFound',
    });
  });

  it('deletes a node, and a node already gone is not an error', async () => {
    server.addNode(node('a'));
    await client.deleteNode('a');
    expect(server.getNode('a')).toBeUndefined();
    await expect(client.deleteNode('a')).resolves.toBeUndefined();
  });

  it('deleting a node with finalizers marks it; removing the last finalizer removes it', async () => {
    server.addNode(node('a', { finalizers: ['karpenter.sh/termination'] }));
    await client.deleteNode('a');
    const marked = await client.getNode('a');
    expect(marked?.metadata.deletionTimestamp).toBeTruthy();
    await client.patchNode('a', {
      metadata: { finalizers: [], resourceVersion: marked?.metadata.resourceVersion ?? '' },
    });
    expect(await client.getNode('a')).toBeUndefined();
  });
});

describe('failures', () => {
  it('retries 500 with backoff on idempotent calls', async () => {
    server.addNode(node('a'));
    server.injectFault({ method: 'GET', path: '/api/v1/nodes', status: 500, times: 2 });
    const list = await client.listNodes();
    expect(list.items).toHaveLength(1);
    expect(sleeps).toHaveLength(2);
    expect(sleeps[1]).toBeGreaterThanOrEqual(200);
  });

  it('gives up after the configured retries with the last Status', async () => {
    server.injectFault({ method: 'GET', path: '/api/v1/nodes', status: 503, times: Number.POSITIVE_INFINITY });
    const error = await client.listNodes().catch((e) => e);
    expect(error).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
    expect(server.requestsTo('GET', '/api/v1/nodes')).toHaveLength(4);
  });

  it('honours Retry-After on 429', async () => {
    server.injectFault({ method: 'GET', path: '/api/v1/nodes', status: 429, retryAfterSeconds: 2 });
    await client.listNodes();
    expect(sleeps).toEqual([2000]);
  });

  it('retries a patch with a resourceVersion on a 500 only when asked not to', async () => {
    const created = server.addNode(node('a'));
    server.injectFault({ method: 'PATCH', path: '/api/v1/nodes/a', status: 500 });
    await expect(
      client.patchNode('a', {
        metadata: { labels: { x: 'y' }, resourceVersion: created.metadata.resourceVersion ?? '' },
      }),
    ).rejects.toMatchObject({ code: 500 });
    server.injectFault({ method: 'PATCH', path: '/api/v1/nodes/a', status: 500 });
    await expect(client.patchNode('a', { metadata: { labels: { x: 'y' } } })).resolves.toBeTruthy();
  });

  it('retries a connection reset on an idempotent call', async () => {
    server.addNode(node('a'));
    server.injectFault({ method: 'GET', path: '/api/v1/nodes/a', reset: true });
    expect((await client.getNode('a'))?.metadata.name).toBe('a');
    expect(server.requestsTo('GET', '/api/v1/nodes/a')).toHaveLength(2);
  });

  it('times out a hanging request with an error naming the endpoint and the request', async () => {
    const impatient = clientFor(server, { requestTimeoutMs: 100, retry: { retries: 1 } });
    server.injectFault({ method: 'GET', path: '/api/v1/nodes', hang: true, times: 2 });
    const error = await impatient.listNodes().catch((e) => e);
    impatient.close();
    expect(error).toBeInstanceOf(KubeTransportError);
    expect(error.phase).toBe('request');
    expect(error.message).toContain(`GET ${server.url}/api/v1/nodes?limit=500`);
    expect(error.message).toContain('request timeout');
    expect(server.requestsTo('GET', '/api/v1/nodes')).toHaveLength(2);
  });

  it('gives up on a TLS handshake that never completes with a connect timeout', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const stuck = new HttpKubeClient({
      endpoint: `https://127.0.0.1:${port}`,
      token: async () => 'secret',
      connectTimeoutMs: 100,
      retry: { retries: 1 },
      sleep: async () => {},
    });
    try {
      const error = await stuck.listPods().catch((e) => e);
      expect(error).toBeInstanceOf(KubeTransportError);
      expect(error).toMatchObject({ phase: 'connect' });
      expect(error.message).toContain(`GET https://127.0.0.1:${port}/api/v1/pods`);
      expect(error.message).toContain('connect timeout');
      expect(sockets).toHaveLength(2);
    } finally {
      stuck.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('reports a refused connection as a connect failure naming the endpoint', async () => {
    const url = server.url;
    client.close();
    await server.stop();
    const orphan = new HttpKubeClient({ endpoint: url, token: async () => 'secret', sleep: async () => {} });
    const error = await orphan.getNode('a').catch((e) => e);
    expect(error).toBeInstanceOf(KubeTransportError);
    expect(error).toMatchObject({ phase: 'connect' });
    expect(error.message).toContain(`GET ${url}/api/v1/nodes/a`);
    expect(error.message).toContain('ECONNREFUSED');
    server = await FakeApiServer.start();
  });

  it('answers a wrong token with 401 after minting a fresh token once', async () => {
    const asked: unknown[] = [];
    const wrong = clientFor(server, {
      token: async (options) => {
        asked.push(options);
        return 'wrong';
      },
    });
    const error = await wrong.listPods().catch((e) => e);
    wrong.close();
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({ code: 401, reason: 'Unauthorized' });
    expect(error.message).toContain('access entry');
    expect(asked).toEqual([undefined, { refresh: true }]);
  });

  it('recovers from 401 when the fresh token is accepted', async () => {
    let current = 'expired';
    const rotating = clientFor(server, {
      token: async (options) => {
        if (options?.refresh) current = 'secret';
        return current;
      },
    });
    await expect(rotating.listPods()).resolves.toMatchObject({ items: [] });
    rotating.close();
  });

  it('refuses a plain-http endpoint that is not loopback', () => {
    expect(() => new HttpKubeClient({ endpoint: 'http://example.com', token: async () => 'x' })).toThrow(
      /must use https/,
    );
  });
});

describe('https', () => {
  it('talks to a server whose certificate chains to the given CA', async () => {
    const secure = await FakeApiServer.start({ token: 'secret', tls: testTls() });
    secure.addNode(node('a'));
    const trusting = clientFor(secure, { ca: secure.ca ?? '' });
    const untrusting = clientFor(secure, { retry: { retries: 0 } });
    try {
      expect((await trusting.listNodes()).items).toHaveLength(1);
      const error = await untrusting.listNodes().catch((e) => e);
      expect(error).toBeInstanceOf(KubeTransportError);
      expect(error.message).toMatch(/SELF_SIGNED|self-signed/i);
    } finally {
      trusting.close();
      untrusting.close();
      await secure.stop();
    }
  });
});
