// Karpenter's node termination tests (kubernetes-sigs/karpenter
// pkg/controllers/node/termination/suite_test.go and terminator/suite_test.go), translated where they
// can be expressed against karpless's termination path: each test is named after the upstream It it
// mirrors. They run one step at a time on a fake clock against the fake API server (whose kubelet
// keeps evicted pods for their grace period), an in-memory record store and fake EC2 instances.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import { karpenterCrds } from '../../shared/apis/v1/crds';
import { KUBE, METRIC } from '../../shared/contracts';
import { HttpKubeClient } from '../../shared/kube/client';
import { newNodeClaimRecord } from '../../shared/nodeclaim/record';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import type { DrainRecord } from '../../shared/providers/state';
import {
  beginTermination,
  EXCLUDE_FROM_LOAD_BALANCERS,
  stepTermination,
  type TerminationDeps,
} from '../../shared/runtime/termination';
import { FakeInstances, RecordingLog, RecordingMetrics, START } from '../runtime/fakes';
import { node, pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';

const UPSTREAM = 'kubernetes-sigs/karpenter pkg/controllers/node/termination/suite_test.go';
const NODE = 'ip-10-0-0-1.ec2.internal';
const INSTANCE = 'i-0abc';
const CLAIM = 'default-abc';

let now: number;
let server: FakeApiServer;
let kube: HttpKubeClient;
let store: InMemoryStateStore;
let instances: FakeInstances;
let metrics: RecordingMetrics;
let deps: TerminationDeps;

beforeEach(async () => {
  now = START;
  const clock = () => now;
  server = await FakeApiServer.start({ now: () => new Date(now) });
  kube = new HttpKubeClient({ endpoint: server.url, token: async () => 't', now: clock });
  store = new InMemoryStateStore(clock);
  instances = new FakeInstances();
  instances.add({ instanceId: INSTANCE, nodeClaimName: CLAIM });
  metrics = new RecordingMetrics();
  deps = { kube, instances, state: store, records: store, clock, log: new RecordingLog(), metrics };
  server.addNode(node(NODE, { providerID: `aws:///us-west-2a/${INSTANCE}`, finalizers: [KUBE.terminationFinalizer] }));
  server.markNodeReady(NODE);
});

afterEach(async () => {
  kube.close();
  await server.stop();
});

async function claim(terminationGracePeriod?: string): Promise<void> {
  await store.createNodeClaim(
    newNodeClaimRecord({
      name: CLAIM,
      labels: { 'karpenter.sh/nodepool': 'default' },
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
      now: START,
    }),
  );
}

function app(name: string, options: { grace?: number; owner?: string; critical?: boolean } = {}): Pod {
  const p = pod(name, { nodeName: NODE, owner: { kind: options.owner ?? 'ReplicaSet', name: `${name}-owner` } });
  p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  if (options.grace !== undefined) p.spec.terminationGracePeriodSeconds = options.grace;
  if (options.critical) p.spec.priorityClassName = 'system-cluster-critical';
  return p;
}

async function begin(): Promise<DrainRecord> {
  return beginTermination(deps, { nodeName: NODE, instanceId: INSTANCE, nodeClaimName: CLAIM, reason: 'deletion' });
}

/** One reconcile: one step, on the record as stored (what the next invocation reads). */
async function step(): Promise<{ finished: boolean }> {
  const record = await store.getDrain(NODE);
  if (!record) throw new Error('no drain record');
  return stepTermination(deps, record);
}

const evictions = () => server.requestsTo('POST', /\/eviction$/).map((r) => r.path.split('/')[6] ?? '');
const nodeOf = (): Node | undefined => server.getNode(NODE);

describe(`${UPSTREAM}: Termination`, () => {
  it('should delete nodes', async () => {
    await claim();
    await begin();
    expect(nodeOf()?.metadata.deletionTimestamp).toBeDefined();
    await step();
    await step();
    expect(nodeOf()).toBeUndefined();
    expect(await store.getNodeClaim(CLAIM)).toBeUndefined();
    expect(metrics.points.filter((p) => p.name === METRIC.nodesTerminated)).toHaveLength(1);
  });

  it('should delete nodeclaims associated with nodes (marked for deletion first)', async () => {
    await claim();
    server.addPod(app('web', { grace: 30 }));
    await begin();
    expect((await store.getNodeClaim(CLAIM))?.metadata.deletionTimestamp).toBe(new Date(START).toISOString());
  });

  it('should exclude nodes from load balancers when terminating', async () => {
    await claim();
    server.addPod(app('web', { grace: 30 }));
    await begin();
    await step();
    expect(nodeOf()?.metadata.labels?.[EXCLUDE_FROM_LOAD_BALANCERS]).toBe('karpenter');
    expect(nodeOf()?.spec?.taints).toContainEqual({ key: KUBE.disruptedTaintKey, effect: 'NoSchedule' });
  });

  it('should not evict pods that tolerate karpenter disruption taint with equal operator', async () => {
    await claim();
    const tolerant = app('tolerant');
    tolerant.spec.tolerations = [{ key: KUBE.disruptedTaintKey, operator: 'Equal', value: '', effect: 'NoSchedule' }];
    server.addPod(tolerant);
    server.addPod(app('web'));
    await begin();
    await step();
    expect(evictions()).toEqual(['web']);
  });

  it('should evict pods that tolerate the node.kubernetes.io/unschedulable taint', async () => {
    await claim();
    const p = app('web');
    p.spec.tolerations = [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }];
    server.addPod(p);
    await begin();
    await step();
    expect(evictions()).toEqual(['web']);
  });

  it('should delete nodes with terminal pods', async () => {
    await claim();
    server.addPod({ ...app('done'), status: { phase: 'Succeeded' } });
    server.addPod({ ...app('failed'), status: { phase: 'Failed' } });
    await begin();
    await step();
    await step();
    expect(evictions()).toEqual([]);
    expect(nodeOf()).toBeUndefined();
  });

  it('should not evict static pods', async () => {
    await claim();
    server.addPod(app('mirror', { owner: 'Node' }));
    await begin();
    await step();
    await step();
    expect(evictions()).toEqual([]);
    expect(nodeOf()).toBeUndefined();
  });

  it('should evict non-critical pods first', async () => {
    await claim();
    server.addPod(app('critical', { critical: true }));
    server.addPod(app('web'));
    await begin();
    await step();
    expect(evictions()).toEqual(['web']);
    await step();
    expect(evictions()).toEqual(['web', 'critical']);
  });

  it('should evict pods in order and wait until pods are fully deleted', async () => {
    await claim();
    server.addPod(app('web', { grace: 60 }));
    server.addPod(app('agent', { owner: 'DaemonSet', grace: 60 }));
    server.addPod(app('dns', { critical: true, grace: 60 }));
    server.addPod(app('node-critical-agent', { owner: 'DaemonSet', critical: true, grace: 60 }));
    await begin();
    const order: string[][] = [];
    for (let i = 0; i < 4; i++) {
      await step();
      order.push(evictions());
      // Still terminating: the next wave waits.
      await step();
      expect(evictions()).toEqual(order[i]);
      now += 60_000;
    }
    expect(order.at(-1)).toEqual(['web', 'agent', 'dns', 'node-critical-agent']);
    expect(order.map((o) => o.length)).toEqual([1, 2, 3, 4]);
  });

  it('should not delete nodes until all pods are deleted', async () => {
    await claim();
    server.addPod(app('web', { grace: 300 }));
    await begin();
    await step();
    now += 299_000;
    await step();
    expect(instances.terminated).toEqual([]);
    expect(nodeOf()).toBeDefined();
    now += 1_000;
    await step();
    expect(instances.terminated).toEqual([INSTANCE]);
  });

  it('should fail to evict pods that violate a PDB', async () => {
    await claim();
    const guarded = app('web');
    guarded.metadata.labels = { app: 'web' };
    server.addPod(guarded);
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'web',
      selector: { matchLabels: { app: 'web' } },
      maxUnavailable: 0,
    });
    await begin();
    await step();
    expect(server.getPod('default', 'web')).toBeDefined();
    expect(server.eventsFor('Node', NODE).map((e) => e.reason)).toContain('FailedDraining');
    // Backoff: the refused pod is not asked again within the second that follows.
    await step();
    expect(evictions()).toEqual(['web']);
    now += 1_000;
    await step();
    expect(evictions()).toEqual(['web', 'web']);
  });

  it('should return a NodeDrainError event when two PDBs refer to the same pod (the rest of the wave still evicted)', async () => {
    await claim();
    const guarded = app('web');
    guarded.metadata.labels = { app: 'web', tier: 'front' };
    server.addPod(guarded);
    server.addPod(app('other'));
    // Both allow a disruption: Kubernetes refuses the eviction all the same.
    const budget = (name: string, matchLabels: Record<string, string>) =>
      server.addPodDisruptionBudget({ namespace: 'default', name, selector: { matchLabels }, maxUnavailable: 1 });
    budget('by-app', { app: 'web' });
    budget('by-tier', { tier: 'front' });
    await begin();
    await step();
    expect(server.getPod('default', 'web')?.metadata.deletionTimestamp).toBeUndefined();
    expect(server.getPod('default', 'other')).toBeUndefined();
    const failed = server.eventsFor('Node', NODE).filter((e) => e.reason === 'FailedDraining');
    expect(failed.map((e) => e.message)).toEqual([
      'Failed to drain node, Pod default/web: eviction does not support multiple PDBs',
    ]);
    expect(nodeOf()).toBeDefined();
    expect(instances.terminated).toEqual([]);
    // One budget goes: the pod is evicted on the next try, and the node drains.
    server.removePodDisruptionBudget('default', 'by-tier');
    now += 1_000;
    await step();
    expect(server.getPod('default', 'web')).toBeUndefined();
    expect(evictions().sort()).toEqual(['other', 'web', 'web']);
  });

  it('should succeed with an evicted event when there are no PDBs (a PDB selecting no pods)', async () => {
    await claim();
    server.addPod(app('web'));
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'nothing',
      selector: { matchLabels: { app: 'absent' } },
      maxUnavailable: 0,
    });
    await begin();
    await step();
    expect(evictions()).toEqual(['web']);
    expect(server.eventsFor('Pod', 'web').map((e) => [e.reason, e.message])).toEqual([
      ['Evicted', 'Evicted pod: Forceful Termination'],
    ]);
    expect(server.eventsFor('Node', NODE).map((e) => e.reason)).not.toContain('FailedDraining');
  });

  it('should not race if deleting nodes in parallel (a Node deleted twice)', async () => {
    await claim('10m');
    server.addPod(app('web', { grace: 30 }));
    const first = await begin();
    now += 20_000;
    // kubectl delete node again, and a second function beginning the same termination.
    server.deleteNode(NODE);
    const second = await begin();
    expect(second).toEqual(first);
    expect((await store.getNodeClaim(CLAIM))?.metadata.deletionTimestamp).toBe(new Date(START).toISOString());
    await Promise.all([step(), step()]);
    expect(new Set(evictions())).toEqual(new Set(['web']));
    now += 30_000;
    await step();
    await step();
    expect(nodeOf()).toBeUndefined();
    expect(instances.terminated).toEqual([INSTANCE]);
    expect(await store.getDrain(NODE)).toBeUndefined();
    expect(await store.getNodeClaim(CLAIM)).toBeUndefined();
  });

  it('should delete nodes with no underlying instance even if not fully drained', async () => {
    await claim();
    server.addPod(app('web', { grace: 300 }));
    server.holdPod('default', 'web');
    await begin();
    await step();
    server.markNodeReady(NODE, false);
    instances.instances.delete(INSTANCE);
    await step();
    expect(nodeOf()).toBeUndefined();
  });

  it('should not delete nodes with no underlying instance if the node is still Ready', async () => {
    await claim();
    server.addPod(app('web', { grace: 300 }));
    server.holdPod('default', 'web');
    await begin();
    await step();
    instances.instances.delete(INSTANCE);
    await step();
    expect(nodeOf()).toBeDefined();
  });

  it('should not wait for pods that are stuck terminating (deletionTimestamp + 1 minute)', async () => {
    await claim();
    server.addPod(app('web', { grace: 30 }));
    server.holdPod('default', 'web');
    await begin();
    await step();
    now += 30_000 + 60_000;
    await step();
    expect(instances.terminated).toEqual([]);
    now += 1;
    await step();
    expect(instances.terminated).toEqual([INSTANCE]);
  });

  it('should preemptively delete pods to satisfy their terminationGracePeriodSeconds', async () => {
    await claim('10m');
    const p = app('web', { grace: 120 });
    p.metadata.annotations = { [KUBE.doNotDisruptAnnotation]: 'true' };
    server.addPod(p);
    await begin();
    await step();
    expect(server.getPod('default', 'web')?.metadata.deletionTimestamp).toBeUndefined();
    now = START + 8 * 60_000;
    await step();
    const deletion = server.requestsTo('DELETE', '/api/v1/namespaces/default/pods/web')[0];
    expect(deletion?.body).toMatchObject({ gracePeriodSeconds: 120 });
    expect(server.getPod('default', 'web')?.metadata.deletionTimestamp).toBe(new Date(START + 600_000).toISOString());
    expect(server.eventsFor('Node', NODE).map((e) => e.reason)).toContain('TerminationGracePeriodExpiring');
    expect(server.eventsFor('Pod', 'web').map((e) => e.reason)).toContain('Disrupted');
  });

  it('should preemptively delete pods to satisfy their terminationGracePeriodSeconds (TerminationGracePeriodExpiring on the NodeClaim too)', async () => {
    await claim('10m');
    server.installCustomResources(karpenterCrds());
    const objects = kube.karpenterObjects();
    const created = await objects.create('nodeclaims', {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: CLAIM },
      spec: {},
    });
    deps = { ...deps, nodeClaimObjects: objects };
    const p = app('web', { grace: 120 });
    p.metadata.annotations = { [KUBE.doNotDisruptAnnotation]: 'true' };
    server.addPod(p);
    await begin();
    await step();
    now = START + 8 * 60_000;
    await step();
    const expiring = server.eventsFor('NodeClaim', CLAIM).filter((e) => e.reason === 'TerminationGracePeriodExpiring');
    expect(expiring).toEqual([
      expect.objectContaining({
        type: 'Warning',
        message: `All pods will be deleted by ${new Date(START + 600_000).toISOString()}`,
      }),
    ]);
    const stored = server.store
      .list('events')
      .find(
        (e) =>
          (e as { reason?: string }).reason === 'TerminationGracePeriodExpiring' &&
          (e as { involvedObject?: { kind?: string } }).involvedObject?.kind === 'NodeClaim',
      ) as { involvedObject?: { uid?: string; apiVersion?: string } } | undefined;
    expect(stored?.involvedObject).toMatchObject({ apiVersion: 'karpenter.sh/v1', uid: created?.metadata.uid });
  });

  it('should not gate past-deadline pods behind graceful eviction of earlier tiers', async () => {
    await claim('300s');
    // Fits in the 300 s left: evicted gracefully, in the first wave; a budget holds it there.
    const web = app('web', { grace: 30 });
    web.metadata.labels = { app: 'web' };
    server.addPod(web);
    server.addPodDisruptionBudget({
      namespace: 'default',
      name: 'web',
      selector: { matchLabels: { app: 'web' } },
      maxUnavailable: 0,
    });
    // Critical, in a later wave, and its 600 s outlast the deadline: deleted at once all the same.
    server.addPod(app('critical', { grace: 600, critical: true }));
    await begin();
    await step();
    expect(evictions()).toEqual(['web']);
    expect(server.getPod('default', 'web')?.metadata.deletionTimestamp).toBeUndefined();
    expect(server.requestsTo('DELETE', '/api/v1/namespaces/default/pods/critical')[0]?.body).toMatchObject({
      gracePeriodSeconds: 300,
    });
    expect(server.getPod('default', 'critical')?.metadata.deletionTimestamp).toBeDefined();
  });

  it("should only delete pods when their terminationGracePeriodSeconds is less than the node's remaining terminationGracePeriod", async () => {
    await claim('10m');
    const p = app('web', { grace: 900 });
    p.metadata.annotations = { [KUBE.doNotDisruptAnnotation]: 'true' };
    server.addPod(p);
    await begin();
    // Its grace outlasts the node's: deleted at once, with what the node has left.
    await step();
    expect(server.requestsTo('DELETE', '/api/v1/namespaces/default/pods/web')[0]?.body).toMatchObject({
      gracePeriodSeconds: 600,
    });
  });
});

describe(`${UPSTREAM}: VolumeAttachments`, () => {
  beforeEach(async () => {
    await claim('10m');
  });

  it('should wait for volume attachments', async () => {
    server.addVolumeAttachment('va-1', NODE, 'pv-1');
    await begin();
    await step();
    await step();
    expect(instances.terminated).toEqual([]);
    expect(server.eventsFor('Node', NODE).map((e) => e.reason)).toContain('AwaitingVolumeDetachment');
    server.deleteVolumeAttachment('va-1');
    await step();
    expect(instances.terminated).toEqual([INSTANCE]);
  });

  it('should only wait for volume attachments associated with this node', async () => {
    server.addVolumeAttachment('va-other', 'another-node', 'pv-2');
    await begin();
    await step();
    expect(instances.terminated).toEqual([INSTANCE]);
  });

  it('should only wait for volume attachments associated with drainable pods', async () => {
    server.addVolumeAttachment('va-drainable', NODE, 'foo');
    server.addVolumeAttachment('va-staying', NODE, 'bar');
    server.addPersistentVolumeClaim({ metadata: { name: 'data', namespace: 'default' }, spec: { volumeName: 'bar' } });
    // Tolerates the disrupted taint: the drain leaves it, and its volume with it.
    const staying = app('staying');
    staying.spec.tolerations = [{ key: KUBE.disruptedTaintKey, operator: 'Exists' }];
    staying.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }];
    server.addPod(staying);
    await begin();
    await step();
    await step();
    expect(instances.terminated).toEqual([]);
    const awaiting = server.eventsFor('Node', NODE).filter((e) => e.reason === 'AwaitingVolumeDetachment');
    expect(awaiting.map((e) => e.message)).toEqual(['Awaiting deletion of bound volumeattachments (va-drainable)']);
    server.deleteVolumeAttachment('va-drainable');
    await step();
    expect(instances.terminated).toEqual([INSTANCE]);
    expect(evictions()).toEqual([]);
  });

  it('should only wait for volume attachments associated with drainable pods (a static pod’s ephemeral volume)', async () => {
    server.addVolumeAttachment('va-mirror', NODE, 'scratch-pv');
    server.addPersistentVolumeClaim({
      metadata: { name: 'mirror-scratch', namespace: 'default' },
      spec: { volumeName: 'scratch-pv' },
    });
    const mirror = app('mirror', { owner: 'Node' });
    mirror.spec.volumes = [{ name: 'scratch', ephemeral: { volumeClaimTemplate: {} } }];
    server.addPod(mirror);
    await begin();
    await step();
    expect(instances.terminated).toEqual([INSTANCE]);
  });

  it("should wait for volume attachments until the nodeclaim's termination grace period expires", async () => {
    server.addVolumeAttachment('va-1', NODE, 'pv-1');
    await begin();
    await step();
    expect(instances.terminated).toEqual([]);
    now = START + 600_000;
    await step();
    expect(instances.terminated).toEqual([INSTANCE]);
  });
});

describe(`${UPSTREAM}: instance termination`, () => {
  it('should not remove the finalizer until the instance is shutting-down or terminated', async () => {
    await claim();
    await begin();
    await step();
    expect(instances.terminated).toEqual([INSTANCE]);
    expect(nodeOf()?.metadata.finalizers).toContain(KUBE.terminationFinalizer);
    await step();
    expect(nodeOf()).toBeUndefined();
  });
});
