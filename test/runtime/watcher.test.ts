import { beforeEach, describe, expect, it } from 'vitest';
import type { Node, Pod, Workload } from '../../shared/apis/core/v1';
import type { NodePool } from '../../shared/apis/v1/types';
import { KUBE, METRIC } from '../../shared/contracts';
import { backfillRecord } from '../../shared/nodeclaim/launch-record';
import { CONDITION, condition, isConditionTrue, markLaunched, newNodeClaimRecord } from '../../shared/nodeclaim/record';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { DO_NOT_SYNC_TAINTS_LABEL } from '../../shared/runtime/registration';
import { runWatcher, type WatcherDeps } from '../../shared/runtime/watcher';
import { NO_DEADLINE } from '../../shared/termination/plan';
import {
  boundPod,
  FakeInstances,
  FakeKube,
  FakeState,
  kubeletNode,
  pendingPod,
  RecordingLog,
  RecordingMetrics,
  START,
  type VirtualTime,
  virtualTime,
} from './fakes';

interface Published {
  at: number;
  pods: string[];
  daemonSets: number;
}

let time: VirtualTime;
let kube: FakeKube;
let state: FakeState;
let instances: FakeInstances;
let published: Published[];
let log: RecordingLog;
let metrics: RecordingMetrics;
let records: InMemoryStateStore;

const POOL: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default' },
  spec: {
    template: {
      spec: {
        requirements: [],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        startupTaints: [{ key: 'example.com/agent-not-ready', effect: 'NoSchedule' }],
      },
    },
  },
};

function deps(overrides: Partial<WatcherDeps> = {}): WatcherDeps {
  return {
    kube,
    instances,
    state,
    notices: {
      async publish(batch: { pods: Pod[]; daemonSets: Workload[] }) {
        published.push({
          at: time.clock(),
          pods: batch.pods.map((p) => p.metadata.name).sort(),
          daemonSets: batch.daemonSets.length,
        });
        return 1;
      },
    },
    records,
    claims: {
      backfill: async (instance) => backfillRecord({ instance, nodePool: POOL, now: time.clock() }),
      terminationGracePeriodMs: () => 60_000,
    },
    isEvictable: (pod) => pod.metadata.ownerReferences?.[0]?.kind !== 'DaemonSet',
    clock: time.clock,
    sleep: time.sleep,
    log,
    metrics,
    ...overrides,
  };
}

function schedule(ms: number, action: () => void): Promise<void> {
  return time.sleep(ms).then(action);
}

beforeEach(() => {
  time = virtualTime();
  kube = new FakeKube(time.sleep);
  state = new FakeState(time.clock);
  instances = new FakeInstances();
  published = [];
  log = new RecordingLog();
  metrics = new RecordingMetrics();
  records = new InMemoryStateStore(time.clock);
});

describe('watcher batching', () => {
  it('puts one notice with every provisionable pod once the set has been stable for 1 s', async () => {
    kube.putPod(pendingPod('a'));
    kube.putPod(pendingPod('b'));
    kube.putPod(boundPod('running', 'node-1'));
    kube.putPod({
      ...pendingPod('ds'),
      metadata: {
        ...pendingPod('ds').metadata,
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', controller: true }],
      },
    });
    kube.daemonSets = [
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent' },
        spec: { template: { spec: { containers: [] } } },
      },
    ];

    const report = await time.run(runWatcher(deps(), { stopAt: START + 30_000 }));

    expect(published).toHaveLength(1);
    expect(published[0]?.pods).toEqual(['a', 'b']);
    expect(published[0]?.daemonSets).toBe(1);
    expect(published[0]!.at - START).toBeGreaterThanOrEqual(1_000);
    expect(published[0]!.at - START).toBeLessThan(1_500);
    expect(report).toMatchObject({ noticesPut: 1, podsNoticed: 2 });
    expect(metrics.sum(METRIC.noticesPut)).toBe(1);
  });

  it('waits while pods keep arriving, but no longer than 10 s', async () => {
    const arrivals = Array.from({ length: 30 }, (_, i) =>
      schedule(500 * (i + 1), () => kube.putPod(pendingPod(`p${i}`))),
    );
    await time.run(Promise.all([runWatcher(deps(), { stopAt: START + 20_000 }), ...arrivals]));

    expect(published.length).toBeGreaterThanOrEqual(2);
    // The first pod arrived at 0.5 s; the max window closes 10 s later although pods still arrive.
    expect(published[0]!.at - START).toBeGreaterThanOrEqual(10_500);
    expect(published[0]!.at - START).toBeLessThan(11_000);
    expect(published.at(-1)?.pods).toHaveLength(30);
  });

  it('puts a new notice with the whole pending set when a new pod appears, not for known ones', async () => {
    kube.putPod(pendingPod('a'));
    const later = schedule(5_000, () => kube.putPod(pendingPod('b')));
    const update = schedule(8_000, () =>
      kube.putPod({ ...pendingPod('a'), metadata: { ...pendingPod('a').metadata, labels: { app: 'x' } } }),
    );
    const gone = schedule(9_000, () => kube.removePod('default', 'b'));
    await time.run(Promise.all([runWatcher(deps(), { stopAt: START + 20_000 }), later, update, gone]));

    expect(published.map((p) => p.pods)).toEqual([['a'], ['a', 'b']]);
  });

  it('ignores pods that stop being pending', async () => {
    kube.putPod(pendingPod('a'));
    const bound = schedule(300, () => kube.putPod(boundPod('a', 'node-1')));
    await time.run(Promise.all([runWatcher(deps(), { stopAt: START + 5_000 }), bound]));
    expect(published).toEqual([]);
  });

  it('lists again when the watch expires and keeps going', async () => {
    const expire = schedule(2_000, () => kube.expireWatches());
    const added = schedule(3_000, () => kube.putPod(pendingPod('late')));
    const report = await time.run(Promise.all([runWatcher(deps(), { stopAt: START + 10_000 }), expire, added]));
    expect(report[0].podLists).toBe(2);
    expect(published.map((p) => p.pods)).toEqual([['late']]);
  });

  it('retries a notice that could not be put', async () => {
    kube.putPod(pendingPod('a'));
    let failures = 1;
    const notices = {
      async publish(batch: { pods: Pod[] }) {
        if (failures-- > 0) throw new Error('PutEvents: ThrottlingException');
        published.push({ at: time.clock(), pods: batch.pods.map((p) => p.metadata.name), daemonSets: 0 });
        return 1;
      },
    };
    await time.run(runWatcher(deps({ notices }), { stopAt: START + 10_000 }));
    expect(published.map((p) => p.pods)).toEqual([['a']]);
    expect(log.messages()).toContain('putting the notice failed, will retry');
  });

  it('recovers from an API server error by listing again', async () => {
    kube.failNext.set('listPods', new Error('500 InternalError'));
    kube.putPod(pendingPod('a'));
    await time.run(runWatcher(deps(), { stopAt: START + 10_000 }));
    expect(published.map((p) => p.pods)).toEqual([['a']]);
    expect(log.messages()).toContain('list or watch failed, retrying');
  });
});

describe('watcher run outcome', () => {
  it('reports nothing failed when it listed, noticed and registered', async () => {
    kube.putPod(pendingPod('a'));
    const report = await time.run(runWatcher(deps(), { stopAt: START + 10_000 }));
    expect(report.failed).toEqual([]);
  });

  it('reports a failed run when the pods can never be listed (RBAC denied, API server unreachable)', async () => {
    class DeniedKube extends FakeKube {
      override async listPods(): Promise<never> {
        throw new Error('403 Forbidden: pods is forbidden');
      }
    }
    const denied = new DeniedKube(time.sleep);
    const report = await time.run(runWatcher(deps({ kube: denied }), { stopAt: START + 5_000 }));
    expect(report.podLists).toBe(0);
    expect(report.failed).toEqual(['pending pods were never listed']);
  });

  it('reports a failed run when pending pods never went out in a notice', async () => {
    kube.putPod(pendingPod('a'));
    kube.putPod(pendingPod('b'));
    const notices = {
      async publish(): Promise<number> {
        throw new Error('PutEvents: AccessDeniedException');
      },
    };
    const report = await time.run(runWatcher(deps({ notices }), { stopAt: START + 5_000 }));
    expect(report.noticesPut).toBe(0);
    expect(report.failed).toEqual(['2 pending pod(s) were never put in a notice']);
  });

  it('counts a registration that failed in the RegistrationFailures metric and keeps the run going', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc', instanceType: 'c5.large' });
    kube.putNode(kubeletNode('ip-10-0-0-1', 'i-0abc'));
    kube.failNext.set('patchNode', new Error('403 Forbidden: nodes is forbidden'));
    const report = await time.run(runWatcher(deps(), { stopAt: START + 5_000 }));
    expect(report.registrationFailures).toBe(1);
    expect(metrics.sum(METRIC.registrationFailures)).toBe(1);
    // The next pass registers it: a failure the run recovered from is not a failed run.
    expect(report.registered).toBe(1);
    expect(report.failed).toEqual([]);
  });
});

describe('watcher registration', () => {
  it('registers a node of ours: claim and type labels, registered, finalizer, unregistered taint gone', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc', instanceType: 'c5.large' });
    const appear = schedule(2_000, () => kube.putNode(kubeletNode('ip-10-0-0-1', 'i-0abc')));
    await time.run(Promise.all([runWatcher(deps(), { stopAt: START + 10_000 }), appear]));

    const node = kube.nodes.get('ip-10-0-0-1')!;
    expect(node.metadata.labels).toMatchObject({
      'karpenter.sh/nodepool': 'default',
      'node.kubernetes.io/instance-type': 'c5.large',
      [KUBE.registeredLabel]: 'true',
    });
    expect((node.metadata as { finalizers?: string[] }).finalizers).toEqual([KUBE.terminationFinalizer]);
    // The node booted without karpenter.sh/do-not-sync-taints: the claim's startup taint is synced on.
    expect(node.spec?.taints ?? []).toEqual([{ key: 'example.com/agent-not-ready', effect: 'NoSchedule' }]);
    expect(metrics.sum(METRIC.registrations)).toBe(1);
    // A tags-only instance got its record, once, and it says Registered with the node's name.
    const record = await records.getNodeClaim('default-abc');
    expect(record?.status).toMatchObject({ providerID: 'aws:///us-west-2a/i-0abc', nodeName: 'ip-10-0-0-1' });
    expect(isConditionTrue(record!, CONDITION.launched)).toBe(true);
    expect(isConditionTrue(record!, CONDITION.registered)).toBe(true);
    expect(log.lines.filter((l) => l.message === 'nodeclaim record written from the instance tags')).toHaveLength(1);
    expect(log.lines.find((l) => l.message === 'node registered')?.fields).toMatchObject({
      nodeclaim: 'default-abc',
      instanceId: 'i-0abc',
    });
  });

  it('leaves nodes that are not ours untouched', async () => {
    kube.putNode(kubeletNode('other', 'i-0def'));
    kube.putNode({ metadata: { name: 'fargate' }, spec: { providerID: 'fargate://x' } });
    await time.run(runWatcher(deps(), { stopAt: START + 5_000 }));
    expect(kube.callsTo('patchNode')).toEqual([]);
  });

  it('initializes once Ready with the startup taints gone, and releases the nomination', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc' });
    await state.nominate({
      nodeClaimName: 'default-abc',
      nodePool: 'default',
      podUids: ['u1'],
      expiresAt: START + 900_000,
    });
    const node = kubeletNode('n1', 'i-0abc');
    node.spec!.taints!.push({ key: 'example.com/agent-not-ready', effect: 'NoSchedule' });
    kube.putNode(node);
    const ready = schedule(3_000, () => {
      const current = structuredClone(kube.nodes.get('n1')!) as Node & { status: { conditions?: unknown[] } };
      current.status.conditions = [{ type: 'Ready', status: 'True' }];
      kube.putNode(current);
    });
    const agent = schedule(5_000, () => {
      const current = structuredClone(kube.nodes.get('n1')!);
      current.spec!.taints = [];
      kube.putNode(current);
    });
    await time.run(Promise.all([runWatcher(deps(), { stopAt: START + 4_500 }), ready]));
    expect(kube.nodes.get('n1')?.metadata.labels?.[KUBE.initializedLabel]).toBeUndefined();
    expect(state.nominationsByClaim.has('default-abc')).toBe(true);

    await time.run(Promise.all([runWatcher(deps(), { stopAt: START + 10_000 }), agent]));
    expect(kube.nodes.get('n1')?.metadata.labels?.[KUBE.initializedLabel]).toBe('true');
    expect(state.nominationsByClaim.has('default-abc')).toBe(false);
  });
});

describe('watcher registration from the NodeClaim record', () => {
  async function storedRecord(options: { gpu?: boolean } = {}): Promise<void> {
    const record = newNodeClaimRecord({
      name: 'default-xyz',
      labels: { 'karpenter.sh/nodepool': 'default', 'karpenter.k8s.aws/ec2nodeclass': 'default', team: 'b' },
      annotations: { 'karpenter.sh/nodepool-hash': '42', 'example.com/owner': 'team-b' },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [{ key: 'team', operator: 'In', values: ['b'] }],
        resources: { requests: { cpu: '1', ...(options.gpu ? { 'nvidia.com/gpu': '1' } : {}) } },
        taints: [{ key: 'dedicated', value: 'b', effect: 'NoSchedule' }],
        startupTaints: [{ key: 'example.com/cni', effect: 'NoSchedule' }],
        expireAfter: '720h',
      },
      now: START,
    });
    const launched = markLaunched(record, {
      providerID: 'aws:///us-west-2a/i-0abc',
      imageID: 'ami-1',
      capacity: { cpu: '2' },
      allocatable: { cpu: '1930m' },
      labels: { 'node.kubernetes.io/instance-type': 'g5.xlarge', 'topology.kubernetes.io/zone': 'us-west-2a' },
      now: START,
    });
    await records.createNodeClaim(launched);
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-xyz', instanceType: 'g5.xlarge' });
  }

  it('labels the node with the narrowed requirement value (team=b), annotates it and syncs its taints', async () => {
    await storedRecord();
    kube.putNode(kubeletNode('n1', 'i-0abc'));
    await time.run(runWatcher(deps(), { stopAt: START + 5_000 }));
    const node = kube.nodes.get('n1')!;
    expect(node.metadata.labels).toMatchObject({
      team: 'b',
      'node.kubernetes.io/instance-type': 'g5.xlarge',
      'topology.kubernetes.io/zone': 'us-west-2a',
      [KUBE.registeredLabel]: 'true',
    });
    expect(node.metadata.annotations).toMatchObject({
      'karpenter.sh/nodepool-hash': '42',
      'example.com/owner': 'team-b',
    });
    expect(node.spec?.taints).toEqual([
      { key: 'dedicated', value: 'b', effect: 'NoSchedule' },
      { key: 'example.com/cni', effect: 'NoSchedule' },
    ]);
    expect(log.lines.some((l) => l.message === 'nodeclaim record written from the instance tags')).toBe(false);
    expect((await records.getNodeClaim('default-xyz'))?.status.nodeName).toBe('n1');
  });

  it('leaves the taints of a node that booted with them (karpenter.sh/do-not-sync-taints)', async () => {
    await storedRecord();
    const booted = kubeletNode('n1', 'i-0abc');
    booted.metadata.labels = { ...booted.metadata.labels, [DO_NOT_SYNC_TAINTS_LABEL]: 'true' };
    booted.spec!.taints!.push({ key: 'dedicated', value: 'b', effect: 'NoSchedule' });
    kube.putNode(booted);
    await time.run(runWatcher(deps(), { stopAt: START + 5_000 }));
    expect(kube.nodes.get('n1')?.spec?.taints).toEqual([{ key: 'dedicated', value: 'b', effect: 'NoSchedule' }]);
  });

  it('initializes only once the GPU the pods requested is in allocatable, and records Initialized', async () => {
    await storedRecord({ gpu: true });
    const booted = kubeletNode('n1', 'i-0abc');
    booted.metadata.labels = { ...booted.metadata.labels, [DO_NOT_SYNC_TAINTS_LABEL]: 'true' };
    Object.assign(booted, {
      status: { allocatable: { cpu: '4', 'nvidia.com/gpu': '0' }, conditions: [{ type: 'Ready', status: 'True' }] },
    });
    kube.putNode(booted);
    await time.run(runWatcher(deps(), { stopAt: START + 5_000 }));
    expect(kube.nodes.get('n1')?.metadata.labels?.[KUBE.initializedLabel]).toBeUndefined();
    expect(isConditionTrue((await records.getNodeClaim('default-xyz'))!, CONDITION.initialized)).toBe(false);

    const plugin = schedule(2_000, () => {
      const current = structuredClone(kube.nodes.get('n1')!);
      current.status = { ...current.status, allocatable: { cpu: '4', 'nvidia.com/gpu': '1' } };
      kube.putNode(current);
    });
    await time.run(Promise.all([runWatcher(deps(), { stopAt: START + 10_000 }), plugin]));
    expect(kube.nodes.get('n1')?.metadata.labels?.[KUBE.initializedLabel]).toBe('true');
    const record = (await records.getNodeClaim('default-xyz'))!;
    expect(condition(record, CONDITION.initialized)).toMatchObject({ status: 'True', reason: 'Initialized' });
  });
});

describe('watcher deletion', () => {
  function deletingNode(): Node {
    const node = kubeletNode('n1', 'i-0abc');
    node.spec!.taints = [];
    node.metadata.labels = { 'karpenter.sh/nodepool': 'default', [KUBE.registeredLabel]: 'true' };
    Object.assign(node.metadata, {
      finalizers: [KUBE.terminationFinalizer],
      deletionTimestamp: new Date(START).toISOString(),
    });
    return node;
  }

  it('cordons, taints, drains, terminates and removes the finalizer', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc' });
    kube.putNode(deletingNode());
    kube.putPod(boundPod('web-1', 'n1'));
    kube.putPod(
      boundPod('agent', 'n1', {
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', controller: true }],
      }),
    );

    const report = await time.run(runWatcher(deps(), { stopAt: START + 20_000 }));

    const patches = kube.callsTo('patchNode').map((args) => args[1]);
    // Karpenter's Terminator.Taint: the disrupted taint and the load-balancer exclusion, no cordon.
    expect(patches[0]).toEqual({
      metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'karpenter' } },
      spec: { taints: [{ key: KUBE.disruptedTaintKey, effect: 'NoSchedule' }] },
    });
    // The DaemonSet pod does not tolerate the taint: evicted in its own wave, after the app pod.
    expect(kube.callsTo('evictPod').map((a) => a[1])).toEqual(['web-1', 'agent']);
    expect(instances.terminated).toEqual(['i-0abc']);
    expect(kube.nodes.has('n1')).toBe(false);
    expect(state.drainRecords.size).toBe(0);
    expect(report.drained).toBe(1);
    expect(metrics.sum(METRIC.drains, { reason: 'deletion' })).toBe(1);
  });

  it('resumes a termination whose Node was never deleted (its function died after the drain record), once the Nodes are listed', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc' });
    const node = kubeletNode('n1', 'i-0abc');
    node.spec!.taints = [];
    node.metadata.labels = { 'karpenter.sh/nodepool': 'default', [KUBE.registeredLabel]: 'true' };
    node.metadata.finalizers = [KUBE.terminationFinalizer];
    kube.putNode(node);
    kube.putPod(boundPod('web-1', 'n1'));
    await state.putDrain({
      nodeName: 'n1',
      instanceId: 'i-0abc',
      reason: 'SpotInterruption',
      phase: 'cordoned',
      startedAt: START - 5 * 60_000,
      deadline: NO_DEADLINE,
      expiresAt: START + 60 * 60_000,
    });

    const report = await time.run(runWatcher(deps(), { stopAt: START + 20_000 }));

    expect(kube.callsTo('deleteNode').map((a) => a[0])).toContain('n1');
    expect(kube.callsTo('evictPod').map((a) => a[1])).toEqual(['web-1']);
    expect(instances.terminated).toEqual(['i-0abc']);
    expect(kube.nodes.has('n1')).toBe(false);
    expect(state.drainRecords.size).toBe(0);
    expect(report.drained).toBe(1);
    expect(log.lines.some((l) => l.message === 'resuming an abandoned termination')).toBe(true);
  });

  it('respects a PodDisruptionBudget and resumes the drain in the next invocation', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc' });
    kube.putNode(deletingNode());
    kube.putPod(boundPod('web-1', 'n1'));
    kube.evictionAnswers.set('default/web-1', Array(100).fill({ kind: 'blocked', message: 'pdb' }));
    // The grace period (60 s) is not over: the drain waits on the budget.
    await time.run(runWatcher(deps(), { stopAt: START + 10_000 }));
    expect(instances.terminated).toEqual([]);
    expect(state.drainRecords.get('n1')?.phase).toBe('draining');

    kube.evictionAnswers.clear();
    // The refused pod is retried after its backoff (at most 10 s), the finalizer removed once EC2 says shutting-down.
    await time.run(runWatcher(deps(), { stopAt: time.clock() + 20_000 }));
    expect(instances.terminated).toEqual(['i-0abc']);
    expect(kube.nodes.has('n1')).toBe(false);
  });

  it('drains a `kubectl delete node` by the terminationGracePeriod of its NodeClaim record, not today’s NodePool', async () => {
    // Prepare: the claim launched with terminationGracePeriod 20s; today's NodePool says 60 s.
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc' });
    await records.createNodeClaim(
      newNodeClaimRecord({
        name: 'default-abc',
        labels: { 'karpenter.sh/nodepool': 'default' },
        annotations: {},
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [],
          resources: { requests: {} },
          taints: [],
          startupTaints: [],
          expireAfter: '720h',
          terminationGracePeriod: '20s',
        },
        now: START,
      }),
    );
    kube.putNode(deletingNode());
    kube.putPod(boundPod('batch', 'n1', { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } }));
    // Act
    await time.run(runWatcher(deps(), { stopAt: START + 30_000 }));
    // Assess: the pod's 30 s grace outlasts the record's 20 s, so the do-not-disrupt pod was deleted at
    // once with the 20 s the node had left (never evicted), and the instance went after it.
    expect(kube.callsTo('evictPod')).toEqual([]);
    expect(kube.callsTo('deletePod').map((a) => [a[1], a[2]])).toEqual([['batch', 20]]);
    expect(instances.terminated).toEqual(['i-0abc']);
  });

  it('holds do-not-disrupt pods until deadline minus their grace, then deletes them with what is left', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc' });
    kube.putNode(deletingNode());
    kube.putPod(boundPod('batch', 'n1', { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } }));
    // Deadline START + 60 s (the pool's grace); the pod's own grace is the API default, 30 s.
    await time.run(runWatcher(deps(), { stopAt: START + 25_000 }));
    expect(kube.callsTo('evictPod')).toEqual([]);
    expect(kube.callsTo('deletePod')).toEqual([]);
    await time.run(runWatcher(deps(), { stopAt: START + 70_000 }));
    expect(kube.callsTo('evictPod')).toEqual([]);
    const [deletion] = kube.callsTo('deletePod');
    expect(deletion?.[1]).toBe('batch');
    expect(deletion?.[2]).toBeGreaterThan(25);
    expect(deletion?.[2]).toBeLessThanOrEqual(30);
    expect(instances.terminated).toEqual(['i-0abc']);
    expect(kube.events.map((e) => e.reason)).toContain('TerminationGracePeriodExpiring');
  });
});
