// The termination path on moto (EC2, DynamoDB) and the fake API server, whose kubelet keeps evicted
// pods for their grace period, on a fake clock: each test is named after the Karpenter behaviour it
// mirrors (kubernetes-sigs/karpenter pkg/controllers/node/termination, aws/karpenter-provider-aws
// pkg/controllers/interruption). A "watcher pass" is what the watcher does for nodes on each poll:
// one reconcile of every Node, which steps every node being deleted.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeInstancesCommand, RunInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { KUBE, TAG } from '../../../shared/contracts';
import { newNodeClaimRecord } from '../../../shared/nodeclaim/record';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { interruptionDeps } from '../../../shared/runtime/deps/interruption';
import { watcherDeps } from '../../../shared/runtime/deps/watcher';
import { handleInterruption } from '../../../shared/runtime/interruption';
import { NodeReconciler } from '../../../shared/runtime/nodes';
import { powertools } from '../../../shared/runtime/powertools';
import { ensureTermination } from '../../../shared/runtime/termination';
import { SWEEP_AFTER_MS, sweepTerminations } from '../../../shared/runtime/termination-sweep';
import type { WatcherDeps } from '../../../shared/runtime/watcher';
import { node, pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { createCluster, createNetwork, type MotoAccount, motoAccount } from '../helpers';
import { type FunctionRuntimes, functionRuntimes } from '../iam';

const CLUSTER = 'term';
const EVENTS = join(import.meta.dirname, '../../fixtures/events');

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'KarpenterNodeRole-term',
  },
};

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      spec: {
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      },
    },
  },
};

let account: MotoAccount;
let api: FakeApiServer;
let runtimes: FunctionRuntimes;
let now = Date.parse('2026-12-01T00:00:00Z');
const clock = () => now;
// Fake time: a sleep moves the clock and lets I/O run, never waits.
const sleep = async (ms: number) => {
  now += ms;
  await new Promise((resolve) => setImmediate(resolve));
};
const tools = powertools('itest-termination', CLUSTER);
let seq = 0;

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  account = motoAccount();
  await createNetwork(account, {
    subnets: [{ zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroups: [{ name: 'nodes', tags: { 'karpenter.sh/discovery': CLUSTER } }],
  });
  await createCluster(account, CLUSTER, { serviceCIDR: '172.20.0.0/16' });
  await account.iam.send(
    new CreateRoleCommand({
      RoleName: 'KarpenterNodeRole-term',
      AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
    }),
  );
  await createStateTable(dynamoApi(account.dynamodb), 'term-state');
  api = await FakeApiServer.start({ now: () => new Date(now) });
  const dir = mkdtempSync(join(tmpdir(), 'karpless-termination-'));
  const configFile = join(dir, 'karpless-config.json');
  writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [nodeClass] }));
  runtimes = await functionRuntimes(account, {
    env: {
      KARPLESS_CLUSTER_NAME: CLUSTER,
      KARPLESS_STATE_TABLE: 'term-state',
      KARPLESS_NOTICE_BUS: 'default',
      KARPLESS_CONFIG_FILE: configFile,
      KARPLESS_KUBE_ENDPOINT: api.url,
      AWS_REGION: account.region,
    },
    clock,
    sleep,
  });
}, 120_000);

afterAll(async () => {
  await api?.stop();
});

let watcher: WatcherDeps;
beforeEach(async () => {
  watcher = await watcherDeps(runtimes.watcher, tools.telemetry);
});

interface Launched {
  instanceId: string;
  nodeName: string;
  claim: string;
}

/** An instance of ours with its registered Node (our finalizer on it) and, optionally, its claim's record. */
async function launched(terminationGracePeriod?: string): Promise<Launched> {
  const claim = `general-t${++seq}`;
  const out = await account.ec2.send(
    new RunInstancesCommand({
      ImageId: 'ami-12c6146b',
      MinCount: 1,
      MaxCount: 1,
      TagSpecifications: [
        {
          ResourceType: 'instance',
          Tags: [
            { Key: TAG.clusterName, Value: CLUSTER },
            { Key: TAG.clusterOwned(CLUSTER), Value: 'owned' },
            { Key: TAG.nodeClaim, Value: claim },
            { Key: TAG.nodePool, Value: 'general' },
          ],
        },
      ],
    }),
  );
  const instanceId = out.Instances?.[0]?.InstanceId ?? '';
  const nodeName = `ip-10-0-1-${seq}.us-west-2.compute.internal`;
  const record = newNodeClaimRecord({
    name: claim,
    labels: { 'karpenter.sh/nodepool': 'general' },
    annotations: {},
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [],
      resources: { requests: {} },
      taints: [],
      startupTaints: [],
      expireAfter: '720h',
      ...(terminationGracePeriod ? { terminationGracePeriod } : {}),
    },
    now,
  });
  record.status.providerID = `aws:///us-west-2a/${instanceId}`;
  record.status.nodeName = nodeName;
  await runtimes.watcher.state.createNodeClaim(record);
  api.addNode(
    node(nodeName, {
      providerID: `aws:///us-west-2a/${instanceId}`,
      labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true', 'karpenter.sh/nodepool': 'general' },
      finalizers: [KUBE.terminationFinalizer],
    }),
  );
  api.markNodeReady(nodeName);
  return { instanceId, nodeName, claim };
}

function running(
  name: string,
  nodeName: string,
  options: { grace?: number; labels?: Record<string, string>; owner?: string; critical?: boolean } = {},
): Pod {
  const p = pod(name, {
    nodeName,
    owner: { kind: options.owner ?? 'ReplicaSet', name: `${name}-rs` },
    ...(options.labels ? { labels: options.labels } : {}),
  });
  p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  if (options.grace !== undefined) p.spec.terminationGracePeriodSeconds = options.grace;
  if (options.critical) p.spec.priorityClassName = 'system-cluster-critical';
  return api.addPod(p);
}

async function instanceState(id: string): Promise<string | undefined> {
  const out = await account.ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
  return out.Reservations?.[0]?.Instances?.[0]?.State?.Name;
}

/** What the watcher does for nodes on one poll: every Node reconciled once. */
async function watcherPass(): Promise<void> {
  await new NodeReconciler(watcher).reconcile(api.nodes());
}

/** The watcher's sweep for abandoned terminations, on the Nodes as the watch sees them. */
async function sweepPass() {
  return sweepTerminations(watcher, new Map(api.nodes().map((n) => [n.metadata.name, n])));
}

/** Watcher passes every `stepMs` of fake time until `until` returns true or `maxMs` passes. */
async function passUntil(until: () => boolean | Promise<boolean>, stepMs: number, maxMs: number): Promise<number> {
  const start = now;
  while (now - start <= maxMs) {
    await watcherPass();
    if (await until()) return now - start;
    now += stepMs;
  }
  throw new Error(`not done after ${maxMs} ms of fake time`);
}

const evictedNames = () => api.requestsTo('POST', /\/eviction$/).map((r) => r.path.split('/')[6] ?? '');

describe('termination on moto and the fake API server (fake clock)', () => {
  it('should not delete nodes until all pods are deleted, nor while a VolumeAttachment remains (grace 300 s); the finalizer stays until EC2 reports the instance gone', async () => {
    const n = await launched();
    running('slow', n.nodeName, { grace: 300 });
    api.addVolumeAttachment('csi-slow', n.nodeName, 'pv-slow');
    api.deleteNode(n.nodeName); // kubectl delete node
    const t0 = now;
    await watcherPass();
    expect(api.getPod('default', 'slow')?.metadata.deletionTimestamp).toBe(new Date(t0 + 300_000).toISOString());
    // Every minute until the pod's grace ends: no TerminateInstances.
    for (let i = 1; i <= 4; i++) {
      now = t0 + i * 60_000;
      await watcherPass();
      expect(await instanceState(n.instanceId)).toBe('running');
    }
    now = t0 + 300_000;
    await watcherPass();
    expect(api.getPod('default', 'slow')).toBeUndefined();
    // The pod is gone, its volume is not detached yet.
    now += 10_000;
    await watcherPass();
    expect(await instanceState(n.instanceId)).toBe('running');
    expect(api.eventsFor('Node', n.nodeName).map((e) => e.reason)).toContain('AwaitingVolumeDetachment');
    api.deleteVolumeAttachment('csi-slow');
    now += 10_000;
    await watcherPass();
    expect(['shutting-down', 'terminated']).toContain(await instanceState(n.instanceId));
    // TerminateInstances went out in this pass; the finalizer comes off once EC2 is asked again.
    expect(api.getNode(n.nodeName)?.metadata.finalizers).toContain(KUBE.terminationFinalizer);
    now += 5_000;
    await watcherPass();
    expect(api.getNode(n.nodeName)).toBeUndefined();
    expect(await runtimes.watcher.state.getNodeClaim(n.claim)).toBeUndefined();
    expect(await runtimes.watcher.state.getDrain(n.nodeName)).toBeUndefined();
  }, 180_000);

  it('should evict pods in order (non-critical, DaemonSet, critical, critical DaemonSet), each wave once the one before is gone', async () => {
    const n = await launched();
    running('web', n.nodeName, { grace: 20 });
    running('agent', n.nodeName, { grace: 20, owner: 'DaemonSet' });
    running('coredns', n.nodeName, { grace: 20, critical: true });
    running('kube-proxy', n.nodeName, { grace: 20, owner: 'DaemonSet', critical: true });
    const tolerant = running('tolerant', n.nodeName, { owner: 'DaemonSet' });
    api.updatePod('default', tolerant.metadata.name, (p) => {
      p.spec.tolerations = [{ operator: 'Exists' }];
    });
    const before = evictedNames().length;
    api.deleteNode(n.nodeName);
    await passUntil(async () => (await instanceState(n.instanceId)) !== 'running', 10_000, 300_000);
    expect(evictedNames().slice(before)).toEqual(['web', 'agent', 'coredns', 'kube-proxy']);
  }, 180_000);

  it('should preemptively delete pods to satisfy their terminationGracePeriodSeconds: TGP 10m, a PDB allowing 0, the pod deleted at T+8 min and the instance terminated after it is gone', async () => {
    const n = await launched('10m');
    running('guarded', n.nodeName, { grace: 120, labels: { app: 'guarded' } });
    api.addPodDisruptionBudget({
      namespace: 'default',
      name: 'guarded',
      selector: { matchLabels: { app: 'guarded' } },
      maxUnavailable: 0,
    });
    api.deleteNode(n.nodeName);
    const t0 = now;
    const deletedAfter = await passUntil(
      () => api.requestsTo('DELETE', '/api/v1/namespaces/default/pods/guarded').length > 0,
      30_000,
      10 * 60_000,
    );
    expect(deletedAfter).toBe(8 * 60_000);
    expect(api.requestsTo('DELETE', '/api/v1/namespaces/default/pods/guarded')[0]?.body).toMatchObject({
      gracePeriodSeconds: 120,
    });
    expect(api.eventsFor('Node', n.nodeName).map((e) => e.reason)).toEqual(
      expect.arrayContaining(['FailedDraining', 'TerminationGracePeriodExpiring']),
    );
    // Still stopping: the instance waits for it.
    now = t0 + 9 * 60_000;
    await watcherPass();
    expect(await instanceState(n.instanceId)).toBe('running');
    now = t0 + 10 * 60_000;
    await watcherPass();
    expect(api.getPod('default', 'guarded')).toBeUndefined();
    expect(['shutting-down', 'terminated']).toContain(await instanceState(n.instanceId));
    api.removePodDisruptionBudget('default', 'guarded');
  }, 180_000);

  it('acknowledges a scheduled change at once and drains a maxUnavailable:1 PDB to the end across invocations', async () => {
    const n = await launched();
    const labels = { app: 'api' };
    running('api-1', n.nodeName, { labels });
    running('api-2', n.nodeName, { labels });
    api.addPodDisruptionBudget({
      namespace: 'default',
      name: 'api',
      selector: { matchLabels: labels },
      maxUnavailable: 1,
      expectedPods: 2,
    });
    const event = JSON.parse(readFileSync(join(EVENTS, 'health-scheduled-change.json'), 'utf8'));
    event.id = `sc-${n.instanceId}`;
    event.time = new Date(now).toISOString();
    event.resources = [n.instanceId];
    event.detail.affectedEntities = [{ entityValue: n.instanceId }];
    const deps = await interruptionDeps(runtimes.interruption, tools.telemetry);
    const outcome = await handleInterruption({ ...deps, invocationDeadline: now + 20_000 }, JSON.stringify(event));
    expect(outcome).toMatchObject({ status: 'handled', kind: 'ScheduledChange', evicted: 1 });
    expect(api.getNode(n.nodeName)?.metadata.deletionTimestamp).toBeDefined();
    // The second pod may leave only once the first one's replacement is Ready, about 4 minutes on.
    const t0 = now;
    for (let i = 0; i < 8; i++) {
      now += 30_000;
      await watcherPass();
    }
    expect(api.getPod('default', 'api-2')).toBeDefined();
    expect(await instanceState(n.instanceId)).toBe('running');
    running('api-3', 'another-node', { labels });
    expect(now - t0).toBe(4 * 60_000);
    await passUntil(() => api.getNode(n.nodeName) === undefined, 30_000, 5 * 60_000);
    expect(api.getPod('default', 'api-2')).toBeUndefined();
    expect(['shutting-down', 'terminated']).toContain(await instanceState(n.instanceId));
    api.removePodDisruptionBudget('default', 'api');
  }, 180_000);

  it('drains a node whose instance is stopping once a PDB that blocked for 5 minutes allows it', async () => {
    const n = await launched();
    running('db', n.nodeName, { labels: { app: 'db' } });
    api.addPodDisruptionBudget({
      namespace: 'default',
      name: 'db',
      selector: { matchLabels: { app: 'db' } },
      maxUnavailable: 0,
    });
    const event = JSON.parse(readFileSync(join(EVENTS, 'instance-state-change-stopping.json'), 'utf8'));
    event.id = `stop-${n.instanceId}`;
    event.time = new Date(now).toISOString();
    event.detail['instance-id'] = n.instanceId;
    const deps = await interruptionDeps(runtimes.interruption, tools.telemetry);
    const outcome = await handleInterruption({ ...deps, invocationDeadline: now + 20_000 }, JSON.stringify(event));
    // Handled (not failed into the DLQ): the watcher carries the drain on.
    expect(outcome).toMatchObject({ status: 'handled', kind: 'InstanceStateChange', evicted: 0 });
    expect(api.eventsFor('Node', n.nodeName).map((e) => e.reason)).toEqual(
      expect.arrayContaining(['InstanceStopping', 'FailedDraining']),
    );
    for (let i = 0; i < 10; i++) {
      now += 30_000;
      await watcherPass();
    }
    expect(api.getPod('default', 'db')).toBeDefined();
    expect(await instanceState(n.instanceId)).toBe('running');
    api.removePodDisruptionBudget('default', 'db');
    await passUntil(() => api.getNode(n.nodeName) === undefined, 10_000, 2 * 60_000);
    expect(api.getPod('default', 'db')).toBeUndefined();
    expect(['shutting-down', 'terminated']).toContain(await instanceState(n.instanceId));
  }, 180_000);

  it('terminates 12 nodes deleted at once with batched DescribeInstances and TerminateInstances calls (aws/karpenter-provider-aws pkg/batcher)', async () => {
    const nodes: Launched[] = [];
    for (let i = 0; i < 12; i++) nodes.push(await launched());
    for (const n of nodes) api.deleteNode(n.nodeName);
    const before = runtimes.watcher.instances.batchedCalls;
    const states = async () => Promise.all(nodes.map((n) => instanceState(n.instanceId)));
    const terminating = await passUntil(
      async () => (await states()).every((s) => s === 'shutting-down' || s === 'terminated'),
      5_000,
      60_000,
    );
    const finishing = await passUntil(() => nodes.every((n) => api.getNode(n.nodeName) === undefined), 5_000, 60_000);
    const passes = terminating / 5_000 + 1 + finishing / 5_000 + 1;
    const after = runtimes.watcher.instances.batchedCalls;
    // Stepped one node at a time, each node's pass makes one or two DescribeInstances (12 to 24 a
    // pass). The pass reads all twelve instances in one call, and each instance is terminated once;
    // how many TerminateInstances calls merge depends on how the drains' turns overlap, which the
    // unit tests of instance-batches.ts hold without timing.
    expect(after.describe - before.describe).toBeLessThanOrEqual(passes);
    expect(after.terminate - before.terminate).toBeLessThanOrEqual(nodes.length);
    for (const n of nodes) expect(api.getNode(n.nodeName)).toBeUndefined();
  }, 180_000);
});

// What the Node watch cannot see: a function that died between two steps of a termination. The
// watcher's sweep resumes or finishes it; nothing stays cordoned with a running instance.
describe('abandoned terminations, resumed by the watcher’s sweep (fake clock)', () => {
  it('resumes a drain whose Node delete never happened (its function died after the drain record) and terminates the instance', async () => {
    const n = await launched();
    running('web', n.nodeName, { grace: 20 });
    // The interruption function wrote the drain record and died before deleting the Node.
    await ensureTermination(watcher, {
      nodeName: n.nodeName,
      instanceId: n.instanceId,
      nodeClaimName: n.claim,
      reason: 'SpotInterruption',
    });
    // Left to the function that began it for a minute.
    expect(await sweepPass()).toEqual({ resumed: 0, begun: 0, finished: 0 });
    expect(api.getNode(n.nodeName)?.metadata.deletionTimestamp).toBeUndefined();
    now += SWEEP_AFTER_MS;
    expect(await sweepPass()).toMatchObject({ resumed: 1 });
    expect(api.getNode(n.nodeName)?.metadata.deletionTimestamp).toBeDefined();
    // From here the Node is being deleted: the reconciler steps it, the sweep leaves it alone.
    expect(await sweepPass()).toEqual({ resumed: 0, begun: 0, finished: 0 });
    await watcherPass();
    expect(api.getPod('default', 'web')?.metadata.deletionTimestamp).toBeDefined();
    await passUntil(() => api.getNode(n.nodeName) === undefined, 10_000, 2 * 60_000);
    expect(['shutting-down', 'terminated']).toContain(await instanceState(n.instanceId));
    expect(await runtimes.watcher.state.getDrain(n.nodeName)).toBeUndefined();
    expect(await runtimes.watcher.state.getNodeClaim(n.claim)).toBeUndefined();
  }, 180_000);

  it('finishes a termination whose Node is already gone while its instance still runs', async () => {
    const n = await launched();
    await ensureTermination(watcher, {
      nodeName: n.nodeName,
      instanceId: n.instanceId,
      nodeClaimName: n.claim,
      reason: 'Drifted',
    });
    // Someone removed the finalizer and the Node went; no watch event will ever name it again.
    api.deleteNode(n.nodeName, { force: true });
    expect(api.getNode(n.nodeName)).toBeUndefined();
    expect(await instanceState(n.instanceId)).toBe('running');
    now += SWEEP_AFTER_MS;
    expect(await sweepPass()).toEqual({ resumed: 1, begun: 0, finished: 0 });
    expect(['shutting-down', 'terminated']).toContain(await instanceState(n.instanceId));
    now += 5_000;
    expect(await sweepPass()).toEqual({ resumed: 1, begun: 0, finished: 1 });
    expect(await runtimes.watcher.state.getDrain(n.nodeName)).toBeUndefined();
    expect(await runtimes.watcher.state.getNodeClaim(n.claim)).toBeUndefined();
    expect(await sweepPass()).toEqual({ resumed: 0, begun: 0, finished: 0 });
  }, 180_000);

  it('begins the termination of a NodeClaim marked for deletion that has no drain record (its function died in between)', async () => {
    const n = await launched();
    running('web', n.nodeName, { grace: 20 });
    await runtimes.watcher.state.markNodeClaimForDeletion(n.claim);
    now += SWEEP_AFTER_MS;
    expect(await sweepPass()).toMatchObject({ begun: 1, resumed: 1 });
    const drain = await runtimes.watcher.state.getDrain(n.nodeName);
    expect(drain).toMatchObject({ instanceId: n.instanceId, nodeClaimName: n.claim, reason: 'deletion' });
    expect(api.getNode(n.nodeName)?.metadata.deletionTimestamp).toBeDefined();
    await passUntil(() => api.getNode(n.nodeName) === undefined, 10_000, 2 * 60_000);
    expect(api.getPod('default', 'web')).toBeUndefined();
    expect(['shutting-down', 'terminated']).toContain(await instanceState(n.instanceId));
    expect(await runtimes.watcher.state.getNodeClaim(n.claim)).toBeUndefined();
  }, 180_000);

  it('finishes the termination of an instance EC2 no longer knows, its Node gone', async () => {
    const n = await launched();
    await ensureTermination(watcher, {
      nodeName: 'ip-10-0-9-9.us-west-2.compute.internal',
      instanceId: 'i-0123456789abcdef0',
      reason: 'deletion',
    });
    now += SWEEP_AFTER_MS;
    expect(await sweepPass()).toMatchObject({ finished: 1 });
    expect(await runtimes.watcher.state.getDrain('ip-10-0-9-9.us-west-2.compute.internal')).toBeUndefined();
    // Nothing else touched.
    expect(await instanceState(n.instanceId)).toBe('running');
    expect(api.getNode(n.nodeName)?.metadata.deletionTimestamp).toBeUndefined();
  }, 180_000);
});
