// Which failures each call retries: reads, deletes, evictions and plain merge patches are safe to
// repeat; a patch guarded by a resourceVersion is repeated only when the server cannot have applied it.

import { afterEach, beforeEach, expect, it } from 'vitest';
import { HttpKubeClient } from '../../shared/kube/client';
import { node, pod } from '../support/kube/builders';
import { FakeApiServer, type Fault } from '../support/kube/fake-apiserver';

let server: FakeApiServer;
let client: HttpKubeClient;

beforeEach(async () => {
  server = await FakeApiServer.start();
  server.addNode(node('n1'));
  server.addPod(pod('p1'));
  client = new HttpKubeClient({ endpoint: server.url, token: async () => 'x', sleep: async () => {}, now: () => 0 });
});

afterEach(async () => {
  client.close();
  await server.stop();
});

type Call = { name: string; method: string; path: string; run: (c: HttpKubeClient) => Promise<unknown> };
const rv = () => server.getNode('n1')?.metadata.resourceVersion ?? '';
const calls: Call[] = [
  { name: 'listPods', method: 'GET', path: '/api/v1/pods', run: (c) => c.listPods() },
  { name: 'listNodes', method: 'GET', path: '/api/v1/nodes', run: (c) => c.listNodes() },
  { name: 'listDaemonSets', method: 'GET', path: '/apis/apps/v1/daemonsets', run: (c) => c.listDaemonSets() },
  { name: 'getNode', method: 'GET', path: '/api/v1/nodes/n1', run: (c) => c.getNode('n1') },
  { name: 'deleteNode', method: 'DELETE', path: '/api/v1/nodes/n1', run: (c) => c.deleteNode('n1') },
  {
    name: 'evictPod',
    method: 'POST',
    path: '/api/v1/namespaces/default/pods/p1/eviction',
    run: (c) => c.evictPod('default', 'p1', 1),
  },
  {
    name: 'patchNode',
    method: 'PATCH',
    path: '/api/v1/nodes/n1',
    run: (c) => c.patchNode('n1', { spec: { unschedulable: true } }),
  },
  {
    name: 'patchNode with resourceVersion',
    method: 'PATCH',
    path: '/api/v1/nodes/n1',
    run: (c) => c.patchNode('n1', { metadata: { resourceVersion: rv() }, spec: { unschedulable: true } }),
  },
];

const faults: { name: string; fault: Omit<Fault, 'method' | 'path'>; guardedPatchRetries: boolean }[] = [
  { name: '500', fault: { status: 500 }, guardedPatchRetries: false },
  { name: '503', fault: { status: 503 }, guardedPatchRetries: false },
  { name: '429', fault: { status: 429 }, guardedPatchRetries: true },
  { name: 'connection reset', fault: { reset: true }, guardedPatchRetries: false },
];

const table = calls.flatMap((call) =>
  faults
    // Evictions handle 429 themselves (PodDisruptionBudgets), see evict.test.ts.
    .filter((f) => !(call.name === 'evictPod' && f.name === '429'))
    .map((f) => ({
      ...call,
      faultName: f.name,
      fault: f.fault,
      retried: call.name !== 'patchNode with resourceVersion' || f.guardedPatchRetries,
    })),
);

it.each(table)('$name after $faultName: retried $retried', async ({ method, path, run, fault, retried }) => {
  server.injectFault({ method, path, ...fault });
  const outcome = await run(client).then(
    () => 'ok',
    (error: Error) => error.name,
  );
  expect(outcome).toBe(retried ? 'ok' : fault.reset ? 'KubeTransportError' : 'KubeApiError');
  expect(server.requestsTo(method, path)).toHaveLength(retried ? 2 : 1);
});
