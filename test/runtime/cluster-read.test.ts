// What the provision decision reads, over HTTP from the fake API server: no finished pod (they hold
// nothing and are never planned), the other pods and the nodes page by page at the latest state.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpKubeClient } from '../../shared/kube/client';
import { pendingInCluster, readCluster, UNFINISHED_PODS } from '../../shared/runtime/cluster-read';
import { node, pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';
import { pendingPod } from './fakes';

let server: FakeApiServer;
let client: HttpKubeClient;

beforeEach(async () => {
  server = await FakeApiServer.start({ token: 't' });
  client = new HttpKubeClient({ endpoint: server.url, token: async () => 't' });
});

afterEach(async () => {
  client.close();
  await server.stop();
});

describe('readCluster', () => {
  it('reads every pod but finished ones and every node, paginated, at the latest state', async () => {
    for (let i = 0; i < 3; i++) server.addNode(node(`n${i}`));
    for (let i = 0; i < 600; i++) server.addPod(pod(`run-${i}`, { nodeName: `n${i % 3}`, phase: 'Running' }));
    server.addPod(pod('job-done', { nodeName: 'n0', phase: 'Succeeded' }));
    server.addPod(pod('job-failed', { nodeName: 'n1', phase: 'Failed' }));
    server.addPod(pendingPod('waiting'));

    const snapshot = await readCluster(client);
    expect(snapshot.pods).toHaveLength(601);
    expect(snapshot.pods.map((p) => p.metadata.name)).not.toContain('job-done');
    expect(snapshot.pods.map((p) => p.metadata.name)).not.toContain('job-failed');
    expect(snapshot.nodes.map((n) => n.metadata.name)).toEqual(['n0', 'n1', 'n2']);

    const pages = server.requestsTo('GET', '/api/v1/pods');
    expect(pages).toHaveLength(2);
    expect(pages[0]?.query).toMatchObject({ fieldSelector: UNFINISHED_PODS, limit: '500' });
    expect(pages[0]?.query).not.toHaveProperty('resourceVersion');
    const nodes = server.requestsTo('GET', '/api/v1/nodes');
    expect(nodes).toHaveLength(1);
    expect(nodes[0]?.query).toMatchObject({ limit: '500' });
    expect(nodes[0]?.query).not.toHaveProperty('resourceVersion');
  });

  it('reports a named pod that has finished since the notice as not planned', async () => {
    const waiting = server.addPod(pendingPod('waiting'));
    const finished = server.addPod(pod('finished', { phase: 'Succeeded' }));
    const { pods, ignored } = pendingInCluster([waiting, finished], (await readCluster(client)).pods);
    expect(pods.map((p) => p.metadata.name)).toEqual(['waiting']);
    expect(ignored).toEqual([{ pod: 'default/finished', reason: 'does not exist or has finished' }]);
  });
});
