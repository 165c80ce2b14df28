// The gc run on fakes: failures stay local to the deletion or part that failed, every deletion is
// counted with its resource and reason, and the emptiness pass shares the budget ledger with drift.

import { describe, expect, it } from 'vitest';
import type { Node } from '../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { KUBE, METRIC, TAG } from '../../shared/contracts';
import { BUDGET_LEDGER_KEY } from '../../shared/disruption/types';
import { isEvictable } from '../../shared/kube/client';
import { markLaunched, type NodeClaimRecord, newNodeClaimRecord } from '../../shared/nodeclaim/record';
import type { ClusterInstanceProfile } from '../../shared/providers/instanceprofile-gc';
import type { ClusterLaunchTemplate } from '../../shared/providers/launchtemplate-gc';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { type GcDeps, runGarbageCollection } from '../../shared/runtime/gc';
import { FakeInstances, FakeKube, RecordingLog, RecordingMetrics } from './fakes';

const NOW = Date.parse('2026-12-03T07:00:00Z');
const HOUR = 3_600_000;

const nodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default' },
  spec: {
    template: {
      spec: { requirements: [], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
    },
    disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '0s', budgets: [{ nodes: '1' }] },
  },
} as NodePool;

const owned = (extra: Record<string, string>) => ({
  [TAG.clusterName]: 'c1',
  [TAG.clusterOwned('c1')]: 'owned',
  ...extra,
});

function ourNode(name: string, instanceId: string): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true' },
      finalizers: [KUBE.terminationFinalizer],
    },
    spec: { providerID: `aws:///us-west-2a/${instanceId}` },
  } as Node;
}

function setup() {
  const kube = new FakeKube(async () => {});
  const instances = new FakeInstances();
  const state = new InMemoryStateStore(() => NOW);
  const log = new RecordingLog();
  const metrics = new RecordingMetrics();
  const templates: ClusterLaunchTemplate[] = [];
  const deletedTemplates: string[] = [];
  const failingTemplates = new Set<string>();
  const profiles: ClusterInstanceProfile[] = [];
  const deletedProfiles: string[] = [];
  const deps: GcDeps = {
    cluster: 'c1',
    region: 'us-west-2',
    nodePools: [nodePool],
    nodeClasses: [{ metadata: { name: 'default' } } as EC2NodeClass],
    instances,
    kube,
    state,
    records: state,
    launchTemplates: {
      list: async () => templates,
      imageId: async () => undefined,
      delete: async (id) => {
        if (failingTemplates.has(id)) throw new Error(`UnauthorizedOperation: ${id}`);
        deletedTemplates.push(id);
      },
    },
    instanceProfiles: {
      list: async () => profiles,
      delete: async (p) => {
        deletedProfiles.push(p.name);
      },
    },
    isEvictable,
    clock: () => NOW,
    log,
    metrics,
  };
  return {
    deps,
    kube,
    instances,
    state,
    log,
    metrics,
    templates,
    deletedTemplates,
    failingTemplates,
    profiles,
    deletedProfiles,
  };
}

describe('runGarbageCollection', () => {
  it('keeps going past a failed deletion, reports it, and counts every deletion by resource and reason', async () => {
    // Prepare
    const t = setup();
    t.instances.add({ instanceId: 'i-0a', nodeClaimName: 'default-a', launchTime: NOW - HOUR });
    const template = (id: string) => ({
      id,
      name: id,
      tags: owned({ [TAG.nodePool]: 'gone', [TAG.nodeClass]: 'default' }),
      createdAt: NOW - HOUR,
    });
    t.templates.push(template('lt-1'), template('lt-2'), template('lt-3'));
    t.failingTemplates.add('lt-2');
    t.profiles.push({
      name: 'c1_old',
      path: '/karpenter/us-west-2/c1/old/',
      tags: owned({ [TAG.nodeClass]: 'old', 'topology.kubernetes.io/region': 'us-west-2' }),
      roles: ['NodeRole'],
    });
    // Act
    const report = await runGarbageCollection(t.deps);
    // Assess
    expect(t.instances.terminated).toEqual(['i-0a']);
    expect(t.deletedTemplates).toEqual(['lt-1', 'lt-3']);
    expect(t.deletedProfiles).toEqual(['c1_old']);
    expect(report.failed).toEqual([{ resource: 'launch-template', id: 'lt-2', error: 'UnauthorizedOperation: lt-2' }]);
    expect(t.metrics.sum(METRIC.garbageCollected, { resource: 'instance', reason: 'RegistrationTimeout' })).toBe(1);
    expect(t.metrics.sum(METRIC.garbageCollected, { resource: 'launch-template', reason: 'NotInConfiguration' })).toBe(
      2,
    );
    expect(t.metrics.sum(METRIC.garbageCollected, { resource: 'instance-profile', reason: 'NodeClassRemoved' })).toBe(
      1,
    );
    const logged = t.log.lines.filter((l) => l.message === 'garbage collected').map((l) => l.fields?.reason);
    expect(logged).toEqual(['RegistrationTimeout', 'NotInConfiguration', 'NotInConfiguration', 'NodeClassRemoved']);
  });

  it('still collects templates and profiles when listing nodes fails', async () => {
    const t = setup();
    t.kube.failNext.set('listNodes', new Error('connect ECONNREFUSED'));
    t.templates.push({
      id: 'lt-1',
      name: 'lt-1',
      tags: owned({ [TAG.nodePool]: 'gone', [TAG.nodeClass]: 'x' }),
      createdAt: NOW - HOUR,
    });
    const report = await runGarbageCollection(t.deps);
    expect(report.failed).toEqual([{ resource: 'nodes', id: '*', error: 'connect ECONNREFUSED' }]);
    expect(t.deletedTemplates).toEqual(['lt-1']);
  });

  it('counts a node another disruption holds against the Empty budget, and frees an Empty slot once its Node is gone', async () => {
    const t = setup();
    for (const [name, id] of [
      ['a', 'i-0a'],
      ['b', 'i-0b'],
      ['drifting', 'i-0c'],
    ] as const) {
      t.instances.add({ instanceId: id, nodeClaimName: `default-${name}`, launchTime: NOW - HOUR });
      t.kube.putNode(ourNode(name, id));
    }
    await t.state.putDisruption({
      nodeName: 'drifting',
      instanceId: 'i-0c',
      nodePool: 'default',
      reason: 'Drifted',
      detail: 'AMIDrift',
      replacements: ['default-new'],
      phase: 'replacing',
      startedAt: NOW,
      expiresAt: NOW + HOUR,
    });
    // The drifting node holds the one slot: nothing empty may go.
    const blocked = await runGarbageCollection(t.deps);
    expect(blocked.emptiness.disrupted).toEqual([]);
    expect(blocked.emptiness.blocked.map((b) => b.node).sort()).toEqual(['a', 'b']);

    await t.state.deleteDisruption('drifting');
    const first = await runGarbageCollection(t.deps);
    expect(first.emptiness.disrupted.map((d) => d.node)).toEqual(['a']);
    expect(await t.state.disruptions('default', BUDGET_LEDGER_KEY)).toEqual(['a']);
    expect(t.metrics.sum(METRIC.disruptions, { reason: 'Empty' })).toBe(1);

    // The termination flow finished: drain record gone, Node gone.
    await t.state.deleteDrain('a');
    t.kube.nodes.delete('a');
    const second = await runGarbageCollection(t.deps);
    expect(second.emptiness.finished).toEqual(['a']);
    expect(second.emptiness.disrupted.map((d) => d.node)).toEqual(['b']);
    expect(await t.state.disruptions('default', BUDGET_LEDGER_KEY)).toEqual(['b']);
  });

  it('does not remove an empty node whose nominated pods have not bound yet', async () => {
    const t = setup();
    t.instances.add({ instanceId: 'i-0a', nodeClaimName: 'default-a', launchTime: NOW - HOUR });
    t.kube.putNode(ourNode('a', 'i-0a'));
    await t.state.nominate({ nodeClaimName: 'default-a', nodePool: 'default', podUids: ['u1'], expiresAt: NOW + HOUR });
    const report = await runGarbageCollection(t.deps);
    expect(report.emptiness.disrupted).toEqual([]);
    expect(report.emptiness.marked).toEqual([]);
  });
});

describe('runGarbageCollection: NodeClaim records', () => {
  const MINUTE = 60_000;
  function record(name: string, createdAgoMs: number, instanceId?: string): NodeClaimRecord {
    const fresh = newNodeClaimRecord({
      name,
      labels: { 'karpenter.sh/nodepool': 'default' },
      annotations: {},
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [],
        resources: { requests: {} },
        taints: [],
        startupTaints: [],
        expireAfter: '720h',
      },
      now: NOW - createdAgoMs,
    });
    if (!instanceId) return fresh;
    return markLaunched(fresh, {
      providerID: `aws:///us-west-2a/${instanceId}`,
      imageID: 'ami-1',
      capacity: {},
      allocatable: {},
      labels: {},
      now: NOW - createdAgoMs,
    });
  }

  it('deletes a record whose instance never appeared within the registration TTL, and records of gone instances', async () => {
    const t = setup();
    await t.state.createNodeClaim(record('never', 16 * MINUTE));
    await t.state.createNodeClaim(record('launching', 5 * MINUTE));
    await t.state.createNodeClaim(record('unrecorded', 30 * MINUTE));
    t.instances.add({ instanceId: 'i-0a1', nodeClaimName: 'unrecorded', launchTime: NOW - 30 * MINUTE });
    t.kube.putNode(ourNode('n-live', 'i-0a1'));
    await t.state.createNodeClaim(record('terminated', HOUR, 'i-0d2'));
    t.instances.add({ instanceId: 'i-0d2', nodeClaimName: 'terminated', state: 'terminated' });
    await t.state.createNodeClaim(record('vanished', HOUR, 'i-0e3'));

    const report = await runGarbageCollection(t.deps);

    expect((await t.state.nodeClaims()).map((r) => r.metadata.name)).toEqual(['launching', 'unrecorded']);
    expect(report.deleted.filter((v) => v.resource === 'nodeclaim').map((v) => [v.id, v.reason])).toEqual([
      ['never', 'NeverLaunched'],
      ['terminated', 'InstanceGone'],
      ['vanished', 'InstanceGone'],
    ]);
    expect(t.metrics.sum(METRIC.garbageCollected, { resource: 'nodeclaim', reason: 'InstanceGone' })).toBe(2);
  });

  it('writes once the record of a registered instance launched before records, from its tags and its Node', async () => {
    const t = setup();
    t.instances.add({
      instanceId: 'i-0b4',
      nodeClaimName: 'default-old',
      instanceType: 'm5.large',
      launchTime: NOW - HOUR,
    });
    const node = ourNode('n-old', 'i-0b4');
    node.status = { capacity: { cpu: '2', memory: '8Gi' }, allocatable: { cpu: '1930m', memory: '7Gi' } };
    t.kube.putNode(node);
    t.instances.add({ instanceId: 'i-0c5', nodeClaimName: 'default-new', launchTime: NOW - MINUTE });

    await runGarbageCollection(t.deps);
    await runGarbageCollection(t.deps);

    const records = await t.state.nodeClaims();
    // The instance without a Node is left to the watcher, which writes its record when it registers it.
    expect(records.map((r) => r.metadata.name)).toEqual(['default-old']);
    const [old] = records;
    expect(old?.status).toMatchObject({
      providerID: 'aws:///us-west-2a/i-0b4',
      nodeName: 'n-old',
      capacity: { cpu: '2', memory: '8Gi' },
    });
    expect(old?.metadata.labels).toMatchObject({
      'karpenter.sh/nodepool': 'default',
      'node.kubernetes.io/instance-type': 'm5.large',
    });
    expect(old?.metadata.creationTimestamp).toBe(new Date(NOW - HOUR).toISOString());
    expect(old?.status.conditions.filter((c) => c.status === 'True').map((c) => c.type)).toEqual([
      'Launched',
      'Registered',
      'Initialized',
    ]);
    expect(t.log.lines.filter((l) => l.message === 'nodeclaim record written from the instance tags')).toHaveLength(1);
  });
});
