// An EC2NodeClass deleted while claims use it, as Karpenter's nodeclass termination controller
// handles it: the watcher's status pass puts `karpenter.k8s.aws/termination` on the classes it serves
// (configuration from the cluster), `kubectl delete ec2nodeclass` then only marks the class, which
// stays while any claim record names it (WaitingOnNodeClaimTermination every ten minutes), its
// NodePools say NodeClassTerminating and get no launches, and the finalizer goes with the last claim.
// Against the fake API server with Karpenter's CRDs, a real kubectl and a fake clock.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Configuration } from '../../shared/apis/configuration';
import { karpenterCrds } from '../../shared/apis/v1/crds';
import { HttpKubeClient } from '../../shared/kube/client';
import type { KarpenterObject } from '../../shared/kube/karpenter';
import { markLaunched, type NodeClaimRecord, newNodeClaimRecord } from '../../shared/nodeclaim/record';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { ClusterConfigurationSource } from '../../shared/runtime/cluster-configuration';
import { ClusterStatusWriter } from '../../shared/runtime/cluster-status';
import {
  NODECLASS_TERMINATION_FINALIZER,
  type NodeClassResources,
  NodeClassTermination,
  nodeClassCleanup,
  nodeClassFinalizerActions,
  WAITING_EVENT_INTERVAL_MS,
  waitingOnNodeClaimsMessage,
} from '../../shared/runtime/nodeclass-termination';
import { FakeApiServer, testTls } from '../support/kube/fake-apiserver';
import { findKubectl, Kubectl, writeKubeconfig } from '../support/kube/kubectl';
import { testNodeClass, testNodePool } from '../support/nodepools';

const START = Date.parse('2026-12-04T12:00:00Z');

function record(name: string, nodeClass = 'default'): NodeClaimRecord {
  const created = newNodeClaimRecord({
    name,
    labels: { 'karpenter.sh/nodepool': 'general', 'karpenter.k8s.aws/ec2nodeclass': nodeClass },
    annotations: {},
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass },
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
      resources: { requests: { cpu: '1' } },
      taints: [],
      startupTaints: [],
      expireAfter: '720h',
    },
    now: START - 5 * 60_000,
  });
  return markLaunched(created, {
    providerID: `aws:///us-west-2a/i-${name}`,
    imageID: 'ami-0123',
    capacity: { cpu: '2', memory: '8Gi', pods: '29' },
    allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' },
    labels: { 'node.kubernetes.io/instance-type': 'm5.large' },
    now: START - 4 * 60_000,
  });
}

const nodeClassObject = (name: string, metadata: Partial<KarpenterObject['metadata']> = {}): KarpenterObject => {
  const built = testNodeClass({ name, discovery: 'demo', role: 'KarpenterNodeRole-demo' });
  return { ...built, metadata: { ...built.metadata, ...metadata } } as unknown as KarpenterObject;
};

const nodePoolObject = testNodePool({
  template: { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] },
});

describe('nodeClassFinalizerActions', () => {
  const deleting = { deletionTimestamp: '2026-12-04T12:00:00Z', finalizers: [NODECLASS_TERMINATION_FINALIZER] };

  it('adds the finalizer to live classes, waits on classes named by records, releases the others', () => {
    const actions = nodeClassFinalizerActions(
      [
        nodeClassObject('fresh'),
        nodeClassObject('held', { finalizers: [NODECLASS_TERMINATION_FINALIZER] }),
        nodeClassObject('busy', deleting),
        nodeClassObject('idle', deleting),
        nodeClassObject('foreign', { deletionTimestamp: deleting.deletionTimestamp, finalizers: ['example.com/x'] }),
      ],
      [record('b-2', 'busy'), record('b-1', 'busy'), record('other', 'held')],
    );
    expect(actions.map((a) => [a.kind, a.nodeClass.metadata.name, 'nodeClaims' in a ? a.nodeClaims : []])).toEqual([
      ['add', 'fresh', []],
      ['wait', 'busy', ['b-1', 'b-2']],
      ['release', 'idle', []],
    ]);
  });

  it('names five claims and counts the rest, as upstream does', () => {
    expect(waitingOnNodeClaimsMessage(['a', 'b'])).toBe('Waiting on NodeClaim termination for a, b');
    expect(waitingOnNodeClaimsMessage(['a', 'b', 'c', 'd', 'e', 'f', 'g'])).toBe(
      'Waiting on NodeClaim termination for a, b, c, d, e and 2 other(s)',
    );
  });
});

const ours = (nodeClass: string, extra: Record<string, string> = {}) => ({
  'kubernetes.io/cluster/demo': 'owned',
  'eks:eks-cluster-name': 'demo',
  'karpenter.k8s.aws/ec2nodeclass': nodeClass,
  'topology.kubernetes.io/region': 'us-west-2',
  ...extra,
});

describe('nodeClassCleanup', () => {
  const context = { cluster: 'demo', region: 'us-west-2' };
  const profiles = [
    { name: 'demo_1', path: '/karpenter/us-west-2/demo/u1/', tags: ours('default'), roles: ['R'] },
    { name: 'demo_2', path: '/karpenter/us-west-2/demo/u2/', tags: ours('other'), roles: ['R'] },
    {
      name: 'demo_3',
      path: '/karpenter/us-east-1/demo/u1/',
      tags: ours('default', { 'topology.kubernetes.io/region': 'us-east-1' }),
      roles: [],
    },
    {
      name: 'other_1',
      path: '/karpenter/us-west-2/other/u1/',
      tags: { ...ours('default'), 'eks:eks-cluster-name': 'x' },
      roles: [],
    },
  ];
  const templates = [
    { id: 'lt-1', name: 'karpenter.k8s.aws/1', tags: ours('default') },
    { id: 'lt-2', name: 'karpenter.k8s.aws/2', tags: ours('other') },
  ];

  it("picks the cluster's profiles of the class in this region and its templates, by the class's name", () => {
    const cleanup = nodeClassCleanup(nodeClassObject('default'), context, { profiles, templates });
    expect(cleanup.profiles.map((p) => p.name)).toEqual(['demo_1']);
    expect(cleanup.templates.map((t) => t.id)).toEqual(['lt-1']);
  });

  it('deletes no profile of a class that names its own spec.instanceProfile', () => {
    const byo = nodeClassObject('default');
    byo.spec = { ...(byo.spec as object), role: undefined, instanceProfile: 'demo_1' };
    const cleanup = nodeClassCleanup(byo, context, { profiles, templates });
    expect(cleanup.profiles).toEqual([]);
    expect(cleanup.templates.map((t) => t.id)).toEqual(['lt-1']);
  });
});

describe('EC2NodeClass deletion on the fake API server', () => {
  let now: number;
  let server: FakeApiServer;
  let client: HttpKubeClient;
  let state: InMemoryStateStore;
  let warnings: string[];
  const writer = (termination: boolean) =>
    new ClusterStatusWriter({
      karpenter: client.karpenterObjects(),
      records: state,
      kube: client,
      log: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} },
      clock: () => now,
      recorder: client.eventRecorder(() => now),
      ...(termination
        ? {
            nodeClassTermination: new NodeClassTermination({
              karpenter: client.karpenterObjects(),
              recorder: client.eventRecorder(() => now),
              log: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} },
              clock: () => now,
            }),
          }
        : {}),
    });
  const finalizers = () => server.getObject('ec2nodeclasses', 'default')?.metadata.finalizers;

  beforeEach(async () => {
    now = START;
    server = await FakeApiServer.start({ now: () => new Date(now), tls: testTls() });
    client = new HttpKubeClient({ endpoint: server.url, token: async () => 't', ca: server.ca ?? '' });
    state = new InMemoryStateStore(() => now);
    warnings = [];
    server.installCustomResources(karpenterCrds());
    server.putObject('ec2nodeclasses', nodeClassObject('default') as never);
    server.putObject('nodepools', nodePoolObject as never);
  });
  afterEach(async () => {
    client.close();
    await server.stop();
  });

  it('adds no finalizer where the configuration is bundled (the objects are not what karpless serves)', async () => {
    await writer(false).sync();
    expect(finalizers()).toBeUndefined();
  });

  it('keeps a deleted class until no claim names it, refusing launches and saying why meanwhile', async () => {
    await state.createNodeClaim(record('general-a1b2c'));
    await state.createNodeClaim(record('general-x2k9p'));
    const status = writer(true);
    await status.sync();
    expect(finalizers()).toEqual([NODECLASS_TERMINATION_FINALIZER]);

    const binary = findKubectl();
    if (!binary) throw new Error('no kubectl: set $KUBECTL or install Debian kubernetes-client (.ci/run does)');
    const kubectl = new Kubectl(binary, writeKubeconfig(server.url, { ca: server.ca ?? '' }));
    await kubectl.ok('delete', 'ec2nodeclass', 'default', '--wait=false');
    now += 10_000;
    await status.sync();
    // Held by the finalizer while claims use it; the event names them.
    expect(server.getObject('ec2nodeclasses', 'default')?.metadata.deletionTimestamp).toBeDefined();
    expect(server.eventsFor('EC2NodeClass', 'default')).toEqual([
      expect.objectContaining({
        type: 'Normal',
        reason: 'WaitingOnNodeClaimTermination',
        message: 'Waiting on NodeClaim termination for general-a1b2c, general-x2k9p',
      }),
    ]);
    const pool = server.getObject('nodepools', 'general')?.status as { conditions: Record<string, string>[] };
    expect(pool.conditions.find((c) => c.type === 'NodeClassReady')).toMatchObject({
      status: 'False',
      reason: 'NodeClassTerminating',
      message: 'NodeClass is Terminating',
    });
    expect(pool.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False' });

    // The configuration the functions read serves no NodePool of the class, and says why once.
    const bundled: Configuration = { nodePools: [], nodeClasses: [] };
    const source = new ClusterConfigurationSource({
      karpenter: client.karpenterObjects(),
      bundled,
      log: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} },
      clock: () => now,
    });
    expect((await source.current()).config).toEqual({ nodePools: [], nodeClasses: [] });
    expect(warnings.filter((w) => /EC2NodeClass default is being deleted: nothing is launched/.test(w))).toHaveLength(
      1,
    );

    // `kubectl delete nodeclaim` takes one claim down the one termination path; the class still waits.
    await status.sync();
    await kubectl.ok('delete', 'nodeclaim', 'general-a1b2c', '--wait=false');
    await status.sync();
    expect((await state.getNodeClaim('general-a1b2c'))?.metadata.deletionTimestamp).toBeDefined();
    await state.deleteNodeClaim('general-a1b2c');
    now += WAITING_EVENT_INTERVAL_MS;
    await status.sync();
    expect(server.getObject('ec2nodeclasses', 'default')).toBeDefined();
    expect(server.eventsFor('EC2NodeClass', 'default').map((e) => e.message)).toContain(
      'Waiting on NodeClaim termination for general-x2k9p',
    );

    // The last claim gone (its termination finished), the finalizer goes and the class with it.
    await state.deleteNodeClaim('general-x2k9p');
    await status.sync();
    expect(server.getObject('ec2nodeclasses', 'default')).toBeUndefined();
  });

  it("keeps the finalizer while the class's launch templates cannot be deleted, and releases once they can", async () => {
    let refuse = true;
    const deleted: string[] = [];
    const resources: NodeClassResources = {
      cluster: 'demo',
      region: 'us-west-2',
      instanceProfiles: {
        list: async () => [
          { name: 'demo_1', path: '/karpenter/us-west-2/demo/u/', tags: ours('default'), roles: ['R'] },
        ],
        delete: async (p) => void deleted.push(p.name),
      },
      launchTemplates: {
        list: async () => [{ id: 'lt-1', name: 'karpenter.k8s.aws/1', tags: ours('default') }],
        delete: async (id) => {
          if (refuse) throw Object.assign(new Error('not authorized'), { name: 'UnauthorizedOperation' });
          deleted.push(id);
        },
      },
    };
    const termination = new NodeClassTermination({
      karpenter: client.karpenterObjects(),
      resources,
      log: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} },
      clock: () => now,
    });
    const classes = async () => (await client.karpenterObjects().list('ec2nodeclasses')).items;
    await termination.reconcile(await classes(), []);
    await client.karpenterObjects().remove('ec2nodeclasses', 'default');

    const refused = await termination.reconcile(await classes(), []);
    expect(refused).toMatchObject({ failed: ['default'], released: [] });
    expect(finalizers()).toEqual([NODECLASS_TERMINATION_FINALIZER]);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^EC2NodeClass\/default is being deleted but its instance profiles or launch templates could not be deleted/,
      ),
    );

    refuse = false;
    expect(await termination.reconcile(await classes(), [])).toMatchObject({ failed: [], released: ['default'] });
    // The retry deletes again the profile the refused pass deleted: deleting what is gone is no error.
    expect(deleted).toEqual(['demo_1', 'demo_1', 'lt-1']);
    expect(server.getObject('ec2nodeclasses', 'default')).toBeUndefined();
  });

  it('publishes the waiting event every ten minutes, not every pass', async () => {
    await state.createNodeClaim(record('general-a1b2c'));
    const status = writer(true);
    await status.sync();
    await client.karpenterObjects().remove('ec2nodeclasses', 'default');
    for (let pass = 0; pass < 30; pass++) {
      now += 10_000;
      await status.sync();
    }
    // 300 s of passes: the first pass published, none since.
    const events = server.listObjects('events') as unknown as { reason: string; count?: number }[];
    expect(events.filter((e) => e.reason === 'WaitingOnNodeClaimTermination').map((e) => e.count ?? 1)).toEqual([1]);
    now += WAITING_EVENT_INTERVAL_MS;
    await status.sync();
    const again = server.listObjects('events') as unknown as { reason: string; count?: number }[];
    expect(again.filter((e) => e.reason === 'WaitingOnNodeClaimTermination').map((e) => e.count ?? 1)).toEqual([2]);
  });
});
