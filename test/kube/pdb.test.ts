import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpKubeClient } from '../../shared/kube/client';
import { pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';

let server: FakeApiServer;
let client: HttpKubeClient;

beforeEach(async () => {
  server = await FakeApiServer.start({ token: 'secret' });
  client = new HttpKubeClient({ endpoint: server.url, token: async () => 'secret' });
});

afterEach(async () => {
  client.close();
  await server.stop();
});

describe('listPodDisruptionBudgets', () => {
  it('lists every budget with the disruptions it allows now', async () => {
    // Prepare: two running web pods, one budget that needs both, one that needs one
    for (const name of ['w1', 'w2']) {
      server.addPod(pod(name, { labels: { app: 'web' } }));
      server.bindPod('default', name, 'n1');
      server.updatePod('default', name, (p) => {
        p.status = { phase: 'Running' };
      });
    }
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'all',
      selector: { matchLabels: { app: 'web' } },
      minAvailable: 2,
    });
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'one',
      selector: { matchLabels: { app: 'web' } },
      maxUnavailable: 1,
    });
    // Act
    const list = await client.listPodDisruptionBudgets();
    // Assess
    expect(list.items.map((b) => [b.metadata.name, b.status?.disruptionsAllowed, b.spec?.selector])).toEqual([
      ['all', 0, { matchLabels: { app: 'web' } }],
      ['one', 1, { matchLabels: { app: 'web' } }],
    ]);
    expect(server.requestsTo('GET', '/apis/policy/v1/poddisruptionbudgets')).toHaveLength(1);
  });
});
