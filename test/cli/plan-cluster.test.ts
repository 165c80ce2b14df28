// `karpless plan --from-cluster` is the provision function's decision: on one fake cluster (Karpenter's
// CRDs, a NodePool and EC2NodeClass applied, a launched and registered NodeClaim with a pod on its
// node, a DaemonSet, pending pods, one of which fits nowhere) the command prints exactly the claims,
// placements on the existing node and unschedulable pods that `provision` launches and reports.
// Also: the kubeconfig is read as kubectl reads it, and without the CRDs --manifests is required.

import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJSON } from '../../cli/commands/plan';
import { instanceTypesByNodePool } from '../../cli/commands/plan';
import { kubeconfigConnection, kubeconfigPath, planFromCluster } from '../../cli/commands/plan-cluster';
import type { Pod } from '../../shared/apis/core/v1';
import { karpenterCrds } from '../../shared/apis/v1/crds';
import { loadBuiltInCatalog } from '../../shared/instancetypes/catalog';
import { HttpKubeClient } from '../../shared/kube/client';
import { mirroredNodeClaim } from '../../shared/nodeclaim/mirror';
import { markLaunched, markRegistered, newNodeClaimRecord } from '../../shared/nodeclaim/record';
import {
  noticeDaemonSetFromDaemonSet,
  noticePodFromPod,
  podFromNoticeDaemonSet,
  podFromNoticePod,
} from '../../shared/notice/convert';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { ClusterConfigurationSource } from '../../shared/runtime/cluster-configuration';
import { isProvisionable } from '../../shared/runtime/pending';
import { type NodeClaimsLaunchedDetail, provision } from '../../shared/runtime/provision';
import { FakeInstances, RecordingLog, RecordingMetrics, recordingLauncher } from '../runtime/fakes';
import { inFlightClaim } from '../support/claims';
import { daemonSet, node, pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';
import { kubeconfigText } from '../support/kube/kubectl';
import { testNodeClass, testNodePool } from '../support/nodepools';
import { inProcess } from './run';

const NOW = Date.parse('2026-12-04T10:00:00Z');
const NODE = 'ip-10-0-1-17.ec2.internal';
const INSTANCE = 'i-0123456789abcdef0';

const nodeClass = testNodeClass({ discovery: 'c1', role: 'KarpenterNodeRole-c1' });

const nodePool = testNodePool({
  template: {
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5', 'c5'] },
    ],
  },
});
nodePool.spec.limits = { cpu: '64' };

const labels = {
  'karpenter.sh/nodepool': 'general',
  'karpenter.k8s.aws/ec2nodeclass': 'default',
  'node.kubernetes.io/instance-type': 'm5.large',
  'topology.kubernetes.io/zone': 'us-east-1a',
  'karpenter.sh/capacity-type': 'on-demand',
};

/** The launched, registered claim as its record (state table) and as its instance (EC2). */
function launchedClaim() {
  const created = newNodeClaimRecord({
    name: 'general-x2k9p',
    labels: { 'karpenter.sh/nodepool': 'general', 'karpenter.k8s.aws/ec2nodeclass': 'default' },
    annotations: {},
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }],
      resources: { requests: { cpu: '500m' } },
      taints: [],
      startupTaints: [],
      expireAfter: '720h',
    },
    now: NOW - 3_600_000,
  });
  const launched = markLaunched(created, {
    providerID: `aws:///us-east-1a/${INSTANCE}`,
    imageID: 'ami-1',
    capacity: { cpu: '2', memory: '7934Mi', pods: '29' },
    allocatable: { cpu: '1930m', memory: '7134Mi', pods: '29' },
    labels,
    now: NOW - 3_500_000,
  });
  return markRegistered(launched, NODE, NOW - 3_400_000);
}

function pending(name: string, cpu: string, change: (p: Pod) => void = () => undefined): Pod {
  const p = pod(name, { cpu, owner: { kind: 'ReplicaSet', name: 'web' } });
  p.spec.containers[0]!.resources = { requests: { cpu, memory: '256Mi' } };
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  change(p);
  return p;
}

let server: FakeApiServer;
let kube: HttpKubeClient;

beforeAll(async () => {
  server = await FakeApiServer.start({ now: () => new Date(NOW) });
  kube = new HttpKubeClient({ endpoint: server.url, token: async () => 't', now: () => NOW });
  server.installCustomResources(karpenterCrds());
  server.putObject('ec2nodeclasses', nodeClass);
  server.putObject('nodepools', nodePool);
  server.putObject('nodeclaims', mirroredNodeClaim(launchedClaim()) as never);
  const joined = node(NODE, {
    labels: { ...labels, 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true' },
    providerID: `aws:///us-east-1a/${INSTANCE}`,
  });
  joined.status = {
    capacity: { cpu: '2', memory: '7934Mi', pods: '29' },
    allocatable: { cpu: '1930m', memory: '7134Mi', pods: '29' },
  };
  server.addNode(joined);
  server.markNodeReady(NODE);
  server.addPod(pod('running-1', { cpu: '500m', nodeName: NODE, phase: 'Running' }));
  server.addDaemonSet(daemonSet('node-agent'));
  server.addPod(pending('small-1', '500m'));
  for (let i = 0; i < 4; i++) server.addPod(pending(`web-${i}`, '1500m'));
  server.addPod(
    pending('on-mars', '100m', (p) => {
      p.spec.nodeSelector = { 'topology.kubernetes.io/zone': 'mars-1a' };
    }),
  );
});

afterAll(async () => {
  kube?.close();
  await server?.stop();
});

/** The provision function on the same cluster, as deployed with the configuration read from the cluster. */
async function provisionDecision(): Promise<NodeClaimsLaunchedDetail> {
  const log = new RecordingLog();
  const config = await new ClusterConfigurationSource({
    karpenter: kube.karpenterObjects(),
    bundled: { nodePools: [], nodeClasses: [] },
    log,
    clock: () => NOW,
  }).current();
  const types = instanceTypesByNodePool(loadBuiltInCatalog(), config.config.nodePools, config.config.nodeClasses);
  const instances = new FakeInstances();
  instances.add({
    instanceId: INSTANCE,
    nodeClaimName: 'general-x2k9p',
    nodePool: 'general',
    nodeClass: 'default',
    zone: 'us-east-1a',
    launchTime: NOW - 3_500_000,
  });
  const records = new InMemoryStateStore(() => NOW);
  await records.createNodeClaim(launchedClaim());
  const state = new InMemoryStateStore(() => NOW);
  const events: NodeClaimsLaunchedDetail[] = [];
  // The batch the watcher would put: its provisionable pods and DaemonSets through the notice.
  const pods = (await kube.listPods()).items.filter((p) => !p.spec.nodeName && isProvisionable(p));
  const daemonSets = (await kube.listDaemonSets()).items;
  await provision(
    {
      cluster: 'c1',
      nodePools: config.config.nodePools,
      instanceTypes: async () => ({ byNodePool: types.instanceTypes, priceSource: 'catalog' }),
      instances,
      kube,
      state,
      records,
      launcher: recordingLauncher(instances),
      events: { nodeClaimsLaunched: async (detail) => void events.push(detail) },
      clock: () => NOW,
      log,
      metrics: new RecordingMetrics(),
    },
    {
      pods: pods.map((p) => podFromNoticePod(noticePodFromPod(p))),
      daemonSets: daemonSets.map((d) => podFromNoticeDaemonSet(noticeDaemonSetFromDaemonSet(d))),
      observedAt: new Date(NOW).toISOString(),
    },
  );
  expect(events).toHaveLength(1);
  return events[0]!;
}

describe('karpless plan --from-cluster', () => {
  it("equals the provision function's decision on the same cluster", async () => {
    const run = await inProcess(['plan', '--from-cluster', '--kube-endpoint', server.url, '--json']);
    expect(run.stderr).toMatch(/note: 6 pending pods, 1 NodeClaim, 1 NodePool \(from the cluster\)/);
    expect(run.stderr).toMatch(
      /note: the state table is not read: claims in flight not yet mirrored .* --state-table NAME/,
    );
    expect(run.code).toBe(0);
    const plan = JSON.parse(run.stdout) as PlanJSON;
    const decision = await provisionDecision();

    const sorted = (pods: string[]) => [...pods].sort();
    expect(
      plan.nodeClaims.map((c) => ({
        nodePool: c.nodePool,
        type: c.offering.instanceType,
        zone: c.offering.zone,
        capacity: c.offering.capacityType,
        pods: sorted(c.pods),
      })),
    ).toEqual(
      decision.nodeClaims.map((c) => ({
        nodePool: c.nodePool,
        type: c.instanceType,
        zone: c.zone,
        capacity: c.capacityType,
        pods: sorted(c.pods),
      })),
    );
    expect(plan.nodeClaims.length).toBeGreaterThan(0);
    // The pod that fits on the registered node goes there in both.
    expect(plan.existingNodes.flatMap((n) => n.pods)).toEqual(decision.inFlight.flatMap((c) => c.pods));
    expect(decision.inFlight.flatMap((c) => c.pods)).toEqual(['default/small-1']);
    expect(plan.unschedulable).toEqual(decision.unschedulable);
    expect(plan.unschedulable.map((u) => u.pod)).toEqual(['default/on-mars']);
  });

  it('with the state table, counts its in-flight claims and their nominated pods as the function does', async () => {
    const webs = (await kube.listPods()).items.filter((p) => p.metadata.name.startsWith('web-'));
    // A claim launched a moment ago for two of the web pods, its node not registered yet: recorded and
    // nominated in the state table, not mirrored as a NodeClaim object yet.
    const state = new InMemoryStateStore(() => NOW);
    await state.createNodeClaim(launchedClaim());
    await state.createNodeClaim(inFlightClaim(NOW));
    const nominated = webs.slice(0, 2).map((p) => p.metadata.uid as string);
    await state.nominate({
      nodeClaimName: 'general-inflight',
      nodePool: 'general',
      podUids: nominated,
      expiresAt: NOW + 600_000,
    });

    const catalog = loadBuiltInCatalog();
    const without = await planFromCluster({ kube, catalog, now: NOW });
    const withTable = await planFromCluster({ kube, catalog, now: NOW, state });
    const planned = (plan: typeof without) =>
      plan.decision.result.nodeClaims.flatMap((c) => c.pods.map((p) => p.metadata.name)).sort();
    expect(without.decision.alreadyNominated).toBe(0);
    expect(planned(without)).toEqual(['web-0', 'web-1', 'web-2', 'web-3']);
    // The nominated pods wait for their claim, as in the provision function: only the others are planned.
    expect(withTable.decision.alreadyNominated).toBe(2);
    expect(planned(withTable)).toEqual(['web-2', 'web-3']);
    expect(withTable.read.stateTable).toEqual({ records: 2, nominations: 1 });
  });

  it('reads the API server, CA and token of the kubeconfig context, as kubectl does', () => {
    const file = `${process.env.TMPDIR ?? '/tmp'}/karpless-plan-cluster-kubeconfig-${process.pid}`;
    writeFileSync(file, kubeconfigText('https://example.invalid:6443', { token: 'secret', ca: 'PEM' }));
    const connection = kubeconfigConnection(file);
    expect(connection).toMatchObject({ endpoint: 'https://example.invalid:6443', ca: 'PEM' });
    expect(kubeconfigPath(undefined, { KUBECONFIG: `${file}:/other` })).toBe(file);
    expect(() => kubeconfigConnection(file, 'nope')).toThrow(/no context "nope"/);
  });

  it('needs --manifests on a cluster without the CRDs, and refuses --pods', async () => {
    const bare = await FakeApiServer.start();
    try {
      const run = await inProcess(['plan', '--from-cluster', '--kube-endpoint', bare.url]);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/no NodePool and EC2NodeClass CRDs .*pass --manifests/);
      const withManifests = await inProcess([
        'plan',
        '--from-cluster',
        '--kube-endpoint',
        bare.url,
        '--manifests',
        'examples/manifests',
      ]);
      expect(withManifests.code).toBe(0);
      expect(withManifests.stdout).toMatch(/Nothing to launch: no pending pods/);
    } finally {
      await bare.stop();
    }
    const clash = await inProcess(['plan', '--from-cluster', '--pods', 'x.yaml']);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(/--pods cannot be combined with --from-cluster/);
    const alone = await inProcess(['plan', '--state-table', 't', '--manifests', 'examples/manifests']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--state-table goes with --from-cluster/);
  });
});
