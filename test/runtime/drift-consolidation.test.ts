// Single-node consolidation in the drift run, on fakes: a cheaper replacement is launched first and
// the old node handed over only once it registered; a node whose pods fit elsewhere is handed over
// with nothing launched; PDBs, do-not-disrupt, WhenEmpty and the Underutilized budget stop it; a
// command that no longer holds after the validation delay is dropped; one method acts per run.

import { beforeEach, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import type { Budget, EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { KUBE } from '../../shared/contracts';
import { launchHashTags } from '../../shared/disruption/hash';
import { BUDGET_LEDGER_KEY } from '../../shared/disruption/types';
import type { ResolvedAMI } from '../../shared/launch/launchtemplate';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { type DriftDeps, REPLACEMENT_TIMEOUT_MS, runDrift } from '../../shared/runtime/drift';
import { CONSOLIDATION_VALIDATION_DELAY_MS } from '../../shared/runtime/drift-consolidation';
import type { ClaimLauncher } from '../../shared/runtime/provision';
import { instanceType } from '../scheduling/helpers';
import { testNodePool } from '../support/nodepools';
import { boundPod, FakeInstances, FakeKube, RecordingLog, RecordingMetrics, START, virtualTime } from './fakes';

const ZONE = 'us-west-2a';
const large = instanceType('m5.large', { cpu: 2, memoryGiB: 8, price: 0.096, zones: [ZONE] });
const xlarge = instanceType('m5.xlarge', { cpu: 4, memoryGiB: 16, price: 0.192, zones: [ZONE] });
const amis: ResolvedAMI[] = [
  { id: 'ami-1', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] },
];
const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [{ alias: 'al2023@latest' }] },
};

function pool(
  disruption: Partial<NonNullable<NodePool['spec']['disruption']>> = {},
  budgets: Budget[] = [{ nodes: '1' }],
): NodePool {
  return testNodePool({
    name: 'default',
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets, ...disruption },
  });
}

let time: ReturnType<typeof virtualTime>;
let kube: FakeKube;
let instances: FakeInstances;
let state: InMemoryStateStore;
let launched: { nodeClaimName: string; types: string[] }[];
/** Runs during the validation delay: what changes in the cluster meanwhile. */
let duringDelay: () => void;
let slept: number[];

function ourNode(name: string, instanceId: string, type: 'm5.large' | 'm5.xlarge'): Node {
  const cpu = type === 'm5.large' ? '2' : '4';
  return {
    metadata: {
      name,
      labels: {
        [KUBE.registeredLabel]: 'true',
        [KUBE.initializedLabel]: 'true',
        'karpenter.sh/nodepool': 'default',
        'node.kubernetes.io/instance-type': type,
        'topology.kubernetes.io/zone': ZONE,
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'karpenter.sh/capacity-type': 'on-demand',
      },
      finalizers: [KUBE.terminationFinalizer],
    } as Node['metadata'],
    spec: { providerID: `aws:///${ZONE}/${instanceId}` },
    status: { allocatable: { cpu, memory: type === 'm5.large' ? '8Gi' : '16Gi', pods: '110' } },
  };
}

function addNode(p: NodePool, name: string, instanceId: string, type: 'm5.large' | 'm5.xlarge', pods: Pod[]): void {
  instances.add({
    instanceId,
    nodeClaimName: `default-${name}`,
    instanceType: type,
    imageId: 'ami-1',
    hashTags: launchHashTags(p, nodeClass),
    launchTime: START - 3600_000,
  });
  kube.putNode(ourNode(name, instanceId, type));
  for (const pod of pods) kube.putPod(pod);
}

const launcher: ClaimLauncher = {
  async launch(request) {
    const types = request.claim.instanceTypes.map((t) => t.name);
    launched.push({ nodeClaimName: request.nodeClaimName, types });
    const id = `i-0ee${launched.length}`;
    instances.add({
      instanceId: id,
      nodeClaimName: request.nodeClaimName,
      instanceType: types[0] ?? '',
      imageId: 'ami-1',
      launchTime: time.clock(),
    });
    return { instanceId: id, instanceType: types[0] ?? '', zone: ZONE, capacityType: 'on-demand', existing: false };
  },
};

function deps(p: NodePool): DriftDeps {
  return {
    cluster: 'c1',
    nodePools: [p],
    nodeClasses: [nodeClass],
    session: async () => ({ nodeClasses: new Map([['default', { nodeClass, amis }]]), launcher }),
    instanceTypes: async () => ({ byNodePool: { default: [large, xlarge] }, priceSource: 'bundled' }),
    instances,
    kube,
    state,
    isEvictable: (pod) => pod.metadata.ownerReferences?.[0]?.kind !== 'DaemonSet',
    clock: time.clock,
    sleep: async (ms) => {
      slept.push(ms);
      duringDelay();
      time.advance(ms);
    },
    log: new RecordingLog(),
    metrics: new RecordingMetrics(),
  };
}

const web = (name: string, node: string, extra: Partial<Pod['metadata']> = {}) => boundPod(name, node, extra);
const schedule = { kind: 'schedule' } as const;
const deleting = () =>
  [...kube.nodes.values()].filter((n) => 'deletionTimestamp' in n.metadata).map((n) => n.metadata.name);

beforeEach(() => {
  time = virtualTime();
  kube = new FakeKube(time.sleep);
  instances = new FakeInstances();
  state = new InMemoryStateStore(time.clock);
  launched = [];
  slept = [];
  duringDelay = () => {};
});

describe('consolidation in the drift run', () => {
  it('replaces an underutilized node by a cheaper one, and drains it only after the replacement is Initialized', async () => {
    const p = pool();
    addNode(p, 'big', 'i-0b16', 'm5.xlarge', [web('w1', 'big')]);

    const first = await runDrift(deps(p), schedule);
    expect(first.consolidation).toMatchObject({
      started: true,
      command: { kind: 'replace', method: 'single', nodes: ['big'], replacement: 'm5.large' },
    });
    expect(first.started).toMatchObject([{ node: 'big', reason: 'Underutilized' }]);
    expect(slept).toEqual([CONSOLIDATION_VALIDATION_DELAY_MS]);
    // Only strictly cheaper types may be launched.
    expect(launched.map((l) => l.types)).toEqual([['m5.large']]);
    expect(kube.nodes.get('big')?.spec?.taints).toContainEqual({ key: KUBE.disruptedTaintKey, effect: 'NoSchedule' });
    expect(deleting()).toEqual([]);
    expect(await state.disruptions('default', BUDGET_LEDGER_KEY)).toEqual(['big']);

    // Not registered yet: the old node keeps running, nothing else is consolidated.
    const waiting = await runDrift(deps(p), schedule);
    expect(waiting.waiting).toEqual(['big']);
    expect(waiting.consolidation?.started).toBe(false);
    expect(launched).toHaveLength(1);
    expect(deleting()).toEqual([]);

    kube.putNode(ourNode('small', 'i-0ee1', 'm5.large'));
    const handed = await runDrift(deps(p), schedule);
    expect(handed.draining).toEqual(['big']);
    expect(deleting()).toEqual(['big']);
    expect(await state.getDrain('big')).toMatchObject({ reason: 'Underutilized' });
  });

  it('abandons a replacement that never registers, and does not start the same node again in that run', async () => {
    const p = pool();
    addNode(p, 'big', 'i-0b16', 'm5.xlarge', [web('w1', 'big')]);
    await runDrift(deps(p), schedule);
    time.advance(REPLACEMENT_TIMEOUT_MS + 1);
    const later = await runDrift(deps(p), schedule);
    expect(later.abandoned.map((a) => a.node)).toEqual(['big']);
    expect(later.consolidation?.dropped).toMatch(/abandoned in this run/);
    expect(launched).toHaveLength(1);
    expect(kube.nodes.get('big')?.spec?.taints ?? []).toEqual([]);
    expect(await state.disruptions('default', BUDGET_LEDGER_KEY)).toEqual([]);
  });

  it('hands a node whose pods fit on another node to termination, with nothing launched', async () => {
    const p = pool();
    addNode(p, 'a', 'i-0a', 'm5.large', [web('a1', 'a')]);
    addNode(p, 'b', 'i-0b', 'm5.large', [web('b1', 'b')]);
    const report = await runDrift(deps(p), schedule);
    expect(report.consolidation?.command?.kind).toBe('delete');
    expect(report.consolidation?.started).toBe(true);
    expect(launched).toEqual([]);
    expect(report.draining).toHaveLength(1);
    expect(deleting()).toEqual(report.draining);
    // The other node's pod has nowhere left to go: one action, and no second one after it.
    const again = await runDrift(deps(p), schedule);
    expect(again.consolidation?.command).toBeUndefined();
    expect(deleting()).toHaveLength(1);
  });

  it('is kept from a node by a PDB that allows no disruption, and by a do-not-disrupt pod', async () => {
    const p = pool();
    addNode(p, 'a', 'i-0a', 'm5.large', [web('a1', 'a')]);
    addNode(p, 'b', 'i-0b', 'm5.large', [web('b1', 'b', { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } })]);
    kube.pdbs = [
      {
        metadata: { name: 'web', namespace: 'default' },
        spec: { selector: { matchLabels: { app: 'web' } } },
        status: { disruptionsAllowed: 0 },
      } as (typeof kube.pdbs)[number],
    ];
    const report = await runDrift(deps(p), schedule);
    expect(report.consolidation?.command).toBeUndefined();
    expect(report.consolidation?.considered).toEqual(
      expect.arrayContaining([
        { nodeName: 'a', outcome: 'PodDisruptionBudget default/web prevents evicting pod default/a1' },
        { nodeName: 'b', outcome: expect.stringContaining(KUBE.doNotDisruptAnnotation) },
      ]),
    );
    expect(deleting()).toEqual([]);
    expect(kube.callsTo('patchNode')).toEqual([]);
  });

  it('never consolidates a WhenEmpty pool, and takes no slot an Underutilized budget of 0 forbids', async () => {
    const whenEmpty = pool({ consolidationPolicy: 'WhenEmpty' });
    addNode(whenEmpty, 'big', 'i-0b16', 'm5.xlarge', [web('w1', 'big')]);
    const report = await runDrift(deps(whenEmpty), schedule);
    expect(report.consolidation).toMatchObject({
      started: false,
      considered: [
        { nodeName: 'big', outcome: 'NodePool "default" has consolidation policy WhenEmpty, but node is not empty' },
      ],
    });
    expect(report.consolidation?.command).toBeUndefined();

    const closed = pool({}, [{ nodes: '100%' }, { nodes: '0', reasons: ['Underutilized'] }]);
    const blocked = await runDrift(deps(closed), schedule);
    expect(blocked.consolidation?.command).toBeUndefined();
    expect(blocked.consolidation?.considered[0]?.outcome).toMatch(/budgets\[1\].*blocks/);
    expect(launched).toEqual([]);
    expect(await state.disruptionRecords()).toEqual([]);
  });

  it('drops the command when the node stops being a candidate during the validation delay', async () => {
    const p = pool();
    addNode(p, 'big', 'i-0b16', 'm5.xlarge', [web('w1', 'big')]);
    duringDelay = () => {
      const pod = kube.pods.get('default/w1');
      if (pod)
        kube.putPod({ ...pod, metadata: { ...pod.metadata, annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } } });
    };
    const report = await runDrift(deps(p), schedule);
    expect(report.consolidation).toMatchObject({
      started: false,
      command: { kind: 'replace', nodes: ['big'] },
      dropped: expect.stringContaining('no longer a candidate'),
    });
    expect(launched).toEqual([]);
    expect(await state.disruptionRecords()).toEqual([]);
    expect(kube.callsTo('patchNode')).toEqual([]);
  });

  it('looks for no consolidation in a run that started a drift', async () => {
    const p = pool({}, [{ nodes: '100%' }]);
    addNode(p, 'big', 'i-0b16', 'm5.xlarge', [web('w1', 'big')]);
    addNode(p, 'drifted', 'i-0d', 'm5.large', [web('d1', 'drifted')]);
    const old = instances.instances.get('i-0d');
    if (old) old.imageId = 'ami-0';
    const report = await runDrift(deps(p), schedule);
    expect(report.started.map((s) => [s.node, s.reason])).toEqual([['drifted', 'Drifted']]);
    expect(report.consolidation?.skipped).toMatch(/drift or expiration started/);
    // The next run, with the drifted node still draining, consolidates within the remaining budget.
    const next = await runDrift(deps(p), schedule);
    expect(deleting()).toContain('drifted');
    expect(next.started.map((s) => [s.node, s.reason])).toEqual([['big', 'Underutilized']]);
    expect((await state.disruptions('default', BUDGET_LEDGER_KEY)).sort()).toEqual(['big', 'drifted']);
  });
});
