// The watcher's status writer against the fake API server with Karpenter's CRDs installed: NodeClaim
// records appear as NodeClaim objects with their conditions as claims launch, register and
// initialize (read back by a real kubectl), NodePool status counts them, `kubectl delete nodeclaim`
// marks the record for deletion and deletes the Node, and an object goes once its record is gone.
// Without the CRDs nothing is written and the missing CRDs are logged once.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { karpenterCrds } from '../../shared/apis/v1/crds';
import { HttpKubeClient } from '../../shared/kube/client';
import {
  markInitialized,
  markLaunched,
  markRegistered,
  type NodeClaimRecord,
  newNodeClaimRecord,
} from '../../shared/nodeclaim/record';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { ClusterStatusWriter } from '../../shared/runtime/cluster-status';
import { node } from '../support/kube/builders';
import { FakeApiServer, testTls } from '../support/kube/fake-apiserver';
import { findKubectl, Kubectl, writeKubeconfig } from '../support/kube/kubectl';

const NOW = Date.parse('2026-12-03T12:00:00Z');
const NODE = 'ip-10-0-1-17.us-west-2.compute.internal';

function claim(name: string): NodeClaimRecord {
  return newNodeClaimRecord({
    name,
    labels: { 'karpenter.sh/nodepool': 'general', 'karpenter.k8s.aws/ec2nodeclass': 'default' },
    annotations: {},
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
      resources: { requests: { cpu: '1' } },
      taints: [],
      startupTaints: [],
      expireAfter: '720h',
    },
    now: NOW - 5 * 60_000,
  });
}

const launched = (record: NodeClaimRecord) =>
  markLaunched(record, {
    providerID: 'aws:///us-west-2a/i-0abc',
    imageID: 'ami-0123',
    capacity: { cpu: '2', memory: '8Gi', pods: '29' },
    allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' },
    labels: {
      'node.kubernetes.io/instance-type': 'm5.large',
      'karpenter.sh/capacity-type': 'spot',
      'topology.kubernetes.io/zone': 'us-west-2a',
    },
    now: NOW - 4 * 60_000,
  });

describe('ClusterStatusWriter', () => {
  let server: FakeApiServer;
  let client: HttpKubeClient;
  let state: InMemoryStateStore;
  let warnings: string[];
  let writer: ClusterStatusWriter;
  const conditions = (name: string) =>
    Object.fromEntries(
      (
        (server.getObject('nodeclaims', name)?.status as { conditions?: { type: string; status: string }[] })
          ?.conditions ?? []
      ).map((c) => [c.type, c.status]),
    );

  beforeEach(async () => {
    server = await FakeApiServer.start({ now: () => new Date(NOW), tls: testTls() });
    client = new HttpKubeClient({ endpoint: server.url, token: async () => 't', ca: server.ca ?? '' });
    state = new InMemoryStateStore(() => NOW);
    warnings = [];
    writer = new ClusterStatusWriter({
      karpenter: client.karpenterObjects(),
      records: state,
      kube: client,
      log: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} },
      clock: () => NOW,
    });
  });
  afterEach(async () => {
    client.close();
    await server.stop();
  });

  it('writes nothing without the CRDs and says so once', async () => {
    await state.createNodeClaim(claim('general-a1b2c'));
    expect((await writer.sync()).crds).toBe(false);
    expect((await writer.sync()).crds).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/infra\/kubernetes\/crds/);
    expect(server.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('mirrors a claim through launch, registration and initialization, owned by its NodePool', async () => {
    server.installCustomResources(karpenterCrds());
    const pool = server.putObject('nodepools', {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'general' },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            requirements: [],
          },
        },
      },
    } as never);
    let record = (await state.createNodeClaim(claim('general-a1b2c'))) as NodeClaimRecord;
    await writer.sync();
    const created = server.getObject('nodeclaims', 'general-a1b2c');
    expect(created?.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        name: 'general',
        uid: pool.metadata.uid,
        blockOwnerDeletion: true,
      },
    ]);
    expect(created?.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    expect(conditions('general-a1b2c')).toEqual({
      Launched: 'Unknown',
      Registered: 'Unknown',
      Initialized: 'Unknown',
      Ready: 'Unknown',
    });

    record = (await state.updateNodeClaim(launched(record))) as NodeClaimRecord;
    await writer.sync();
    expect(conditions('general-a1b2c')).toMatchObject({ Launched: 'True', Registered: 'Unknown', Ready: 'Unknown' });
    expect(server.getObject('nodeclaims', 'general-a1b2c')?.status).toMatchObject({
      providerID: 'aws:///us-west-2a/i-0abc',
      imageID: 'ami-0123',
      capacity: { cpu: '2', memory: '8Gi' },
    });
    record = (await state.updateNodeClaim(markRegistered(record, NODE, NOW - 3 * 60_000))) as NodeClaimRecord;
    record = (await state.updateNodeClaim(markInitialized(record, NOW - 2 * 60_000))) as NodeClaimRecord;
    await writer.sync();
    expect(conditions('general-a1b2c')).toEqual({
      Launched: 'True',
      Registered: 'True',
      Initialized: 'True',
      Ready: 'True',
    });
    expect(server.getObject('nodepools', 'general')?.status).toMatchObject({
      resources: { cpu: '2', memory: '8Gi', pods: '29', nodes: '1' },
      nodes: 1,
    });

    const binary = findKubectl();
    if (!binary) throw new Error('no kubectl: set $KUBECTL or install Debian kubernetes-client (.ci/run does)');
    const kubectl = new Kubectl(binary, writeKubeconfig(server.url, { ca: server.ca ?? '' }));
    const rows = (await kubectl.ok('get', 'nodeclaims'))
      .trim()
      .split('\n')
      .map((l) => l.split(/\s{2,}/));
    expect(rows[0]).toEqual(['NAME', 'TYPE', 'CAPACITY', 'ZONE', 'NODE', 'READY', 'AGE']);
    expect(rows[1]?.slice(0, 6)).toEqual(['general-a1b2c', 'm5.large', 'spot', 'us-west-2a', NODE, 'True']);
  });

  it('turns kubectl delete nodeclaim into the termination path, and lets the object go with its record', async () => {
    server.installCustomResources(karpenterCrds());
    server.addNode(node(NODE, { finalizers: ['karpenter.sh/termination'] }));
    let record = (await state.createNodeClaim(claim('general-x2k9p'))) as NodeClaimRecord;
    record = (await state.updateNodeClaim(markRegistered(launched(record), NODE, NOW))) as NodeClaimRecord;
    await writer.sync();

    // What `kubectl delete nodeclaim general-x2k9p` sends.
    await client.karpenterObjects().remove('nodeclaims', 'general-x2k9p');
    expect(server.getObject('nodeclaims', 'general-x2k9p')?.metadata.deletionTimestamp).toBeDefined();

    const report = await writer.sync();
    expect(report.terminated).toBe(1);
    expect((await state.getNodeClaim('general-x2k9p'))?.metadata.deletionTimestamp).toBeDefined();
    expect(server.getNode(NODE)?.metadata.deletionTimestamp).toBeDefined();
    expect(server.getObject('nodeclaims', 'general-x2k9p')).toBeDefined();

    await state.deleteNodeClaim('general-x2k9p');
    await writer.sync();
    expect(server.getObject('nodeclaims', 'general-x2k9p')).toBeUndefined();
  });
});
