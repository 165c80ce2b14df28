import { readFileSync } from 'node:fs';
import type { Context } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../lambdas/drift/handler';
import type { Node, Pod } from '../../shared/apis/core/v1';
import type { Budget, EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { KUBE, METRIC } from '../../shared/contracts';
import { launchHashTags } from '../../shared/disruption/hash';
import type { KarpenterObject } from '../../shared/kube/karpenter';
import type { ResolvedAMI } from '../../shared/launch/launchtemplate';
import { newNodeClaimRecord } from '../../shared/nodeclaim/record';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { type DriftDeps, parseDriftTrigger, REPLACEMENT_TIMEOUT_MS, runDrift } from '../../shared/runtime/drift';
import { powertools } from '../../shared/runtime/powertools';
import type { ClaimLauncher } from '../../shared/runtime/provision';
import { instanceType } from '../scheduling/helpers';
import { testNodePool } from '../support/nodepools';
import {
  boundPod,
  FakeInstances,
  FakeKube,
  RecordingLog,
  RecordingMetrics,
  START,
  type VirtualTime,
  virtualTime,
} from './fakes';

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [{ alias: 'al2023@latest' }] },
};

function pool(budgets: Budget[] = [{ nodes: '1' }], expireAfter = '720h'): NodePool {
  return testNodePool({ name: 'default', template: { expireAfter }, disruption: { consolidateAfter: '0s', budgets } });
}

const m5 = instanceType('m5.large', { cpu: 2, memoryGiB: 8, price: 0.096, zones: ['us-west-2a'] });
const amis = (id: string): ResolvedAMI[] => [
  { id, requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] },
];

let time: VirtualTime;
let kube: FakeKube;
let instances: FakeInstances;
let state: InMemoryStateStore;
let log: RecordingLog;
let resolvedAMI: string;
let launches: string[];
let failLaunch: boolean;

function ourNode(name: string, instanceId: string, labels: Record<string, string> = {}): Node {
  return {
    metadata: {
      name,
      labels: {
        [KUBE.registeredLabel]: 'true',
        [KUBE.initializedLabel]: 'true',
        'karpenter.sh/nodepool': 'default',
        ...labels,
      },
      finalizers: [KUBE.terminationFinalizer],
    } as Node['metadata'],
    spec: { providerID: `aws:///us-west-2a/${instanceId}` },
    status: { allocatable: { cpu: '2', memory: '8Gi', pods: '110' } },
  };
}

function addNode(
  name: string,
  instanceId: string,
  imageId: string,
  hoursOld: number,
  p: NodePool,
  pods: Pod[] = [],
): void {
  instances.add({
    instanceId,
    nodeClaimName: `default-${name}`,
    imageId,
    hashTags: launchHashTags(p, nodeClass),
    launchTime: START - hoursOld * 3600_000,
  });
  kube.putNode(ourNode(name, instanceId));
  for (const pod of pods) kube.putPod(pod);
}

const launcher: ClaimLauncher = {
  async launch(request) {
    if (failLaunch) throw new Error('InsufficientInstanceCapacity');
    launches.push(request.nodeClaimName);
    const id = `i-0e${launches.length}`;
    instances.add({
      instanceId: id,
      nodeClaimName: request.nodeClaimName,
      imageId: resolvedAMI,
      launchTime: time.clock(),
    });
    return { instanceId: id, instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'on-demand', existing: false };
  },
};

function deps(p: NodePool): DriftDeps {
  return {
    cluster: 'c1',
    nodePools: [p],
    nodeClasses: [nodeClass],
    session: async () => ({ nodeClasses: new Map([['default', { nodeClass, amis: amis(resolvedAMI) }]]), launcher }),
    instanceTypes: async () => ({ byNodePool: { default: [m5] }, priceSource: 'bundled' }),
    instances,
    kube,
    state,
    isEvictable: (pod) => pod.metadata.ownerReferences?.[0]?.kind !== 'DaemonSet',
    clock: time.clock,
    log,
    metrics: new RecordingMetrics(),
  };
}

/** What the kubelet and the watcher do: the replacement's Node registers. */
function registerReplacements(): void {
  for (const [i, claim] of launches.entries()) {
    const instance = [...instances.instances.values()].find((x) => x.nodeClaimName === claim);
    if (instance && !kube.nodes.has(`new-${i}`)) kube.putNode(ourNode(`new-${i}`, instance.instanceId));
  }
}

/** What the watcher's termination flow ends with: node and drain record gone. */
async function finishDrains(): Promise<void> {
  for (const drain of await state.drains()) {
    kube.nodes.delete(drain.nodeName);
    await state.deleteDrain(drain.nodeName);
  }
}

const web = (name: string, node: string) => boundPod(name, node);

beforeEach(() => {
  time = virtualTime();
  kube = new FakeKube(time.sleep);
  instances = new FakeInstances();
  state = new InMemoryStateStore(time.clock);
  log = new RecordingLog();
  resolvedAMI = 'ami-new';
  launches = [];
  failLaunch = false;
});

describe('runDrift', () => {
  it('rolls drifted nodes one at a time in a 1-node budget: replacement first, drain after it is Initialized', async () => {
    const p = pool();
    addNode('a', 'i-0a', 'ami-old', 5, p, [
      {
        ...web('a1', 'a'),
        spec: { ...web('a1', 'a').spec, containers: [{ name: 'c', resources: { requests: { cpu: '1500m' } } }] },
      },
    ]);
    // b and c hold pods too: upstream takes empty drifted nodes first, and this test is about replacements.
    const big = (name: string, node: string) => ({
      ...web(name, node),
      spec: { ...web(name, node).spec, containers: [{ name: 'c', resources: { requests: { cpu: '1500m' } } }] },
    });
    addNode('b', 'i-0b', 'ami-old', 4, p, [big('b1', 'b')]);
    addNode('c', 'i-0c', 'ami-old', 3, p, [big('c1', 'c')]);

    const first = await runDrift(deps(p), { kind: 'ami', imageId: 'ami-new', state: 'available' });
    expect(first.started.map((s) => [s.node, s.reason])).toEqual([['a', 'Drifted']]);
    expect(first.started[0]?.detail).toMatch(/^AMIDrift: node runs ami-old/);
    expect(first.blocked.map((b) => b.node)).toEqual(['b', 'c']);
    expect(launches).toHaveLength(1);
    expect(kube.nodes.get('a')?.spec?.taints).toContainEqual({ key: KUBE.disruptedTaintKey, effect: 'NoSchedule' });
    expect(kube.nodes.get('a')?.metadata).not.toHaveProperty('deletionTimestamp');

    // Redelivered, and the replacement not registered yet: nothing new, nothing drained.
    const again = await runDrift(deps(p), { kind: 'schedule' });
    expect(again).toMatchObject({ started: [], draining: [], waiting: ['a'] });
    expect(launches).toHaveLength(1);

    registerReplacements();
    const handed = await runDrift(deps(p), { kind: 'schedule' });
    expect(handed.draining).toEqual(['a']);
    expect(handed.started).toEqual([]);
    expect(kube.nodes.get('a')?.metadata).toHaveProperty('deletionTimestamp');
    expect(await state.getDrain('a')).toMatchObject({ reason: 'Drifted', phase: 'cordoned' });

    await finishDrains();
    const next = await runDrift(deps(p), { kind: 'schedule' });
    expect(next.finished).toEqual(['a']);
    expect(next.started.map((s) => s.node)).toEqual(['b']);
    expect(next.blocked.map((b) => b.node)).toEqual(['c']);
    expect(await state.disruptions('default', 'disrupting')).toEqual(['b']);
  });

  it('metrics.go: publishes eligible nodes and allowed disruptions per pool and reason, and each decision by reason', async () => {
    const p = pool([
      { nodes: '2', reasons: ['Drifted'] },
      { nodes: '0', reasons: ['Underutilized', 'Empty'] },
    ]);
    const big = (name: string, node: string) => ({
      ...web(name, node),
      spec: { ...web(name, node).spec, containers: [{ name: 'c', resources: { requests: { cpu: '1500m' } } }] },
    });
    for (const n of ['a', 'b', 'c']) addNode(n, `i-0${n}`, 'ami-old', 5, p, [big(`${n}1`, n)]);
    const d = deps(p);
    const report = await runDrift(d, { kind: 'schedule' });
    expect(report.started.map((x) => x.node)).toHaveLength(2);
    const metrics = d.metrics as RecordingMetrics;
    const gauge = (name: string, reason: string) =>
      metrics.points.filter((x) => x.name === name && x.dimensions?.reason === reason).map((x) => x.value);
    expect(gauge(METRIC.eligibleNodes, 'Drifted')).toEqual([3]);
    expect(gauge(METRIC.eligibleNodes, 'Expired')).toEqual([0]);
    // Two of 2 started: none left for drift; a zero budget for consolidation.
    expect(gauge(METRIC.allowedDisruptions, 'Drifted')).toEqual([0]);
    expect(gauge(METRIC.allowedDisruptions, 'Underutilized')).toEqual([0]);
    expect(gauge(METRIC.allowedDisruptions, 'Expired')).toEqual([]);
    expect(
      metrics.sum(METRIC.disruptionDecisions, { nodePool: 'default', reason: 'Drifted', decision: 'replace' }),
    ).toBe(2);
  });

  it('counts a node being deleted against the budget, but not one whose instance is already gone (helpers.go BuildDisruptionBudgetMapping)', async () => {
    const p = pool();
    addNode('a', 'i-0a', 'ami-old', 5, p);
    addNode('d', 'i-0d', 'ami-new', 5, p);
    const deleting = kube.nodes.get('d');
    if (deleting)
      (deleting.metadata as { deletionTimestamp?: string }).deletionTimestamp = new Date(START).toISOString();
    // An instance already terminated: upstream leaves a claim with InstanceTerminating out of the count.
    const gone = ourNode('x', 'i-0dead');
    (gone.metadata as { deletionTimestamp?: string }).deletionTimestamp = new Date(START).toISOString();
    kube.putNode(gone);
    const report = await runDrift(deps(p), { kind: 'schedule' });
    expect(report.started).toEqual([]);
    expect(report.blocked.map((b) => [b.node, b.message])).toEqual([
      ['a', 'NodePool/default budgets[0] (nodes: 1) blocks: 1 of 2 node(s) at once, 1 already disrupting'],
    ]);
  });

  it('leaves a pinned AMI alone when nothing resolves differently', async () => {
    const p = pool();
    resolvedAMI = 'ami-pinned';
    // A pod on it: an empty node would be emptiness's to delete.
    addNode('a', 'i-0a', 'ami-pinned', 5, p, [web('a1', 'a')]);
    const report = await runDrift(deps(p), { kind: 'ami', imageId: 'ami-newer', state: 'available' });
    expect(report).toMatchObject({ candidates: 0, started: [], blocked: [] });
  });

  it('replaces an expired node whatever the budget, and drains it even when its replacement never registers', async () => {
    const p = pool([{ nodes: '0' }], '24h');
    p.spec.template.spec.terminationGracePeriod = '1h';
    addNode('old', 'i-0a', 'ami-new', 25, p, [web('o1', 'old')]);
    const report = await runDrift(deps(p), { kind: 'schedule' });
    expect(report.started.map((s) => [s.node, s.reason, s.replacements.length])).toEqual([['old', 'Expired', 1]]);
    time.advance(REPLACEMENT_TIMEOUT_MS + 1);
    const later = await runDrift(deps(p), { kind: 'schedule' });
    expect(later.draining).toEqual(['old']);
    // terminationGracePeriod bounds the drain from the moment it starts.
    expect(await state.getDrain('old')).toMatchObject({ reason: 'Expired', deadline: time.clock() + 3600_000 });
  });

  it('expires and drains by the NodeClaim record: its expireAfter and terminationGracePeriod, not today’s NodePool', async () => {
    // Prepare: launched 3 h ago with expireAfter 2h and terminationGracePeriod 10m; today the pool says 720h / 1h.
    const launchedWith = pool([{ nodes: '0' }], '2h');
    const today = pool([{ nodes: '0' }], '720h');
    today.spec.template.spec.terminationGracePeriod = '1h';
    addNode('old', 'i-0a', 'ami-new', 3, launchedWith, [web('o1', 'old')]);
    await state.createNodeClaim(
      newNodeClaimRecord({
        name: 'default-old',
        labels: { 'karpenter.sh/nodepool': 'default' },
        annotations: launchHashTags(launchedWith, nodeClass),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [],
          resources: { requests: {} },
          taints: [],
          startupTaints: [],
          expireAfter: '2h',
          terminationGracePeriod: '10m',
        },
        now: START - 3 * 3600_000,
      }),
    );
    // Act
    const report = await runDrift({ ...deps(today), nodeClaims: state }, { kind: 'schedule' });
    time.advance(REPLACEMENT_TIMEOUT_MS + 1);
    const later = await runDrift({ ...deps(today), nodeClaims: state }, { kind: 'schedule' });
    // Assess
    expect(report.started.map((s) => [s.node, s.reason])).toEqual([['old', 'Expired']]);
    expect(later.draining).toEqual(['old']);
    expect(await state.getDrain('old')).toMatchObject({ reason: 'Expired', deadline: time.clock() + 10 * 60_000 });
  });

  it('abandons a drift whose replacement never registers: taint removed, slot given back', async () => {
    const p = pool();
    addNode('a', 'i-0a', 'ami-old', 5, p, [web('a1', 'a')]);
    await runDrift(deps(p), { kind: 'schedule' });
    time.advance(REPLACEMENT_TIMEOUT_MS + 1);
    const later = await runDrift(deps(p), { kind: 'schedule' });
    expect(later.abandoned.map((a) => a.node)).toEqual(['a']);
    expect(kube.nodes.get('a')?.spec?.taints ?? []).not.toContainEqual({
      key: KUBE.disruptedTaintKey,
      effect: 'NoSchedule',
    });
    expect(await state.disruptions('default', 'disrupting')).toEqual([]);
    expect(await state.disruptionRecords()).toEqual([]);
    // Started again later: a new replacement, not the one that never registered.
    const again = await runDrift(deps(p), { kind: 'schedule' });
    expect(again.started.map((x) => x.node)).toEqual(['a']);
    expect(launches).toHaveLength(2);
    expect(launches[1]).not.toBe(launches[0]);
  });

  it('undoes the start when the replacement cannot launch, so the next run tries again', async () => {
    const p = pool();
    addNode('a', 'i-0a', 'ami-old', 5, p, [web('a1', 'a')]);
    failLaunch = true;
    const report = await runDrift(deps(p), { kind: 'schedule' });
    expect(report.abandoned).toEqual([{ node: 'a', why: 'InsufficientInstanceCapacity' }]);
    expect(await state.disruptionRecords()).toEqual([]);
    expect(await state.disruptions('default', 'disrupting')).toEqual([]);
    expect(kube.nodes.get('a')?.spec?.taints ?? []).toEqual([]);
    failLaunch = false;
    expect((await runDrift(deps(p), { kind: 'schedule' })).started.map((s) => s.node)).toEqual(['a']);
  });

  it('never touches nodes whose instance is not this cluster’s', async () => {
    const p = pool([{ nodes: '100%' }]);
    kube.putNode(ourNode('foreign', 'i-0ff'));
    const report = await runDrift(deps(p), { kind: 'schedule' });
    expect(report.candidates).toBe(0);
    expect(kube.callsTo('patchNode')).toEqual([]);
  });
});

describe('drift handler', () => {
  const context = {
    getRemainingTimeInMillis: () => 60_000,
    awsRequestId: 'req',
    functionName: 'fn',
  } as unknown as Context;
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const tools = powertools('test', 'c1');

  it('runs on an AMI State Change event and reports what it did', async () => {
    const p = pool();
    addNode('a', 'i-0a', 'ami-old', 5, p, [web('a1', 'a')]);
    const event = JSON.parse(readFileSync('test/fixtures/events/ami-state-change-available.json', 'utf8'));
    const result = await createHandler(async () => deps(p), tools)(event, context);
    expect(result).toMatchObject({ trigger: 'ami', started: [{ node: 'a', reason: 'Drifted' }] });
  });

  it('ignores other events and fails the invocation of a run that failed', async () => {
    const handler = createHandler(async () => {
      throw new Error('EKS cluster c1: DescribeCluster failed');
    }, tools);
    expect(
      await handler({ source: 'aws.ec2', 'detail-type': 'EC2 Spot Instance Interruption Warning' }, context),
    ).toEqual({
      ignored: 'not an AMI State Change or scheduled event',
    });
    await expect(handler({ source: 'aws.events', 'detail-type': 'Scheduled Event' }, context)).rejects.toThrow(
      'EKS cluster c1: DescribeCluster failed',
    );
  });
});

describe('parseDriftTrigger', () => {
  it('reads AMI State Change and scheduled events, and nothing else', () => {
    expect(
      parseDriftTrigger({
        source: 'aws.ec2',
        'detail-type': 'EC2 AMI State Change',
        detail: { ImageId: 'ami-1', State: 'available' },
      }),
    ).toEqual({ kind: 'ami', imageId: 'ami-1', state: 'available' });
    expect(parseDriftTrigger({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} })).toEqual({
      kind: 'schedule',
    });
    expect(
      parseDriftTrigger({ source: 'aws.ec2', 'detail-type': 'EC2 Spot Instance Interruption Warning' }),
    ).toBeUndefined();
    expect(parseDriftTrigger(null)).toBeUndefined();
  });

  it('events.go: DisruptionBlocked names the PDB; DisruptionLaunching, DisruptionWaitingReadiness and DisruptionTerminating follow the command, on the Node and its NodeClaim object', async () => {
    const p = pool([{ nodes: '100%' }]);
    const guarded = web('g1', 'g');
    guarded.metadata.labels = { app: 'guarded' };
    guarded.spec.containers = [{ name: 'c', resources: { requests: { cpu: '1500m' } } }];
    addNode('g', 'i-0f', 'ami-old', 5, p, [guarded]);
    const big = web('a1', 'a');
    big.spec.containers = [{ name: 'c', resources: { requests: { cpu: '1500m' } } }];
    addNode('a', 'i-0a', 'ami-old', 5, p, [big]);
    kube.pdbs = [
      {
        metadata: { name: 'guard', namespace: 'default' },
        spec: { selector: { matchLabels: { app: 'guarded' } } },
        status: { disruptionsAllowed: 0 },
      } as (typeof kube.pdbs)[number],
    ];
    // Karpenter's CRDs installed: the NodeClaim objects exist (only a's), and get the events too.
    const objects: DriftDeps['nodeClaimObjects'] = {
      get: async (_resource, name) =>
        name === 'default-a' ? ({ metadata: { name, uid: `uid-${name}` } } as KarpenterObject) : undefined,
    };
    const withObjects = () => ({ ...deps(p), nodeClaimObjects: objects });
    await runDrift(withObjects(), { kind: 'schedule' });
    await runDrift(withObjects(), { kind: 'schedule' });
    registerReplacements();
    await runDrift(withObjects(), { kind: 'schedule' });
    const onClaims = kube.events
      .filter((e) => e.involvedObject.kind === 'NodeClaim')
      .map((e) => [e.involvedObject.name, e.involvedObject.uid, e.reason]);
    expect(onClaims).toEqual([
      ['default-a', 'uid-default-a', 'DisruptionLaunching'],
      ['default-a', 'uid-default-a', 'DisruptionWaitingReadiness'],
      ['default-a', 'uid-default-a', 'DisruptionTerminating'],
    ]);
    const seen = kube.events.map((e) => [e.involvedObject.name, e.reason]);
    expect(kube.events.find((e) => e.involvedObject.name === 'g')).toMatchObject({
      reason: 'DisruptionBlocked',
      message: 'AMIDrift, but PodDisruptionBudget default/guard prevents evicting pod default/g1',
    });
    expect(seen).toEqual(
      expect.arrayContaining([
        ['a', 'DisruptionLaunching'],
        ['a', 'DisruptionWaitingReadiness'],
        ['a', 'DisruptionTerminating'],
      ]),
    );
  });
});
