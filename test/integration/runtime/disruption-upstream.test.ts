// Karpenter's disruption decisions, checked end to end: the drift function in-process against moto
// (EC2, SSM, DynamoDB, IAM, EKS) and the fake API server, both on one fake clock. Each test is named
// after the upstream test it mirrors (kubernetes-sigs/karpenter, the path before the colon).
//
// Each test is its own moto account and cluster. The priced instance-type catalog is the same for all
// of them (one node class, no reservations), so it is resolved once for the file and handed to every
// run: resolving it costs seconds against moto, which is what made each scenario slow.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeInstancesCommand, type Instance } from '@aws-sdk/client-ec2';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler as driftHandler } from '../../../lambdas/drift/handler';
import type { Node, Pod } from '../../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool, NodePoolSpec } from '../../../shared/apis/v1/types';
import { KUBE, TAG } from '../../../shared/contracts';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { driftDeps } from '../../../shared/runtime/deps/drift';
import type { DriftReport, DriftSession } from '../../../shared/runtime/drift';
import { buildRuntime, instanceTypeSource, type Runtime } from '../../../shared/runtime/environment';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import type { ResolvedInstanceTypes } from '../../../shared/runtime/provision';
import { solve } from '../../../shared/scheduling';
import { fakeClock } from '../../providers/fakes';
import { pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { createCluster, createNetwork, type MotoAccount, motoAccount } from '../helpers';
import { type FunctionIdentity, functionClients, functionRuntimes } from '../iam';
import { PINNED_RELEASE } from '../moto/seed';

const DISCOVERY = { 'karpenter.sh/discovery': 'disruption-upstream' };
const ROLE = 'KarpenterNodeRole-disruption-upstream';
const ZONE = 'us-west-2a';
const DISRUPTION = 'pkg/controllers/disruption';
const HEALTH = 'pkg/controllers/node/health/suite_test.go';

let tools: Powertools;
let catalog: Promise<ResolvedInstanceTypes> | undefined;

// A pinned alias: no AMI release happens here, so only what a test changes drifts.
const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: DISCOVERY }],
    securityGroupSelectorTerms: [{ tags: DISCOVERY }],
    amiSelectorTerms: [{ alias: `al2023@${PINNED_RELEASE}` }],
    role: ROLE,
  },
};

interface PoolOptions {
  types?: string[];
  capacityTypes?: string[];
  disruption?: NodePoolSpec['disruption'];
  expireAfter?: string;
  /** Template labels: changing them changes the NodePool hash, so every node drifts. */
  labels?: Record<string, string>;
  extraRequirements?: NodePoolSpec['template']['spec']['requirements'];
}

function pool(options: PoolOptions = {}): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        ...(options.labels ? { metadata: { labels: options.labels } } : {}),
        spec: {
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: options.capacityTypes ?? ['on-demand'] },
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: options.types ?? ['m5.large'] },
            ...(options.extraRequirements ?? []),
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          ...(options.expireAfter ? { expireAfter: options.expireAfter } : {}),
        },
      },
      disruption: options.disruption ?? { consolidateAfter: 'Never', budgets: [{ nodes: '1' }] },
    },
  };
}

const context = {
  getRemainingTimeInMillis: () => 60_000,
  awsRequestId: 'req',
  functionName: 'drift',
} as unknown as Context;
const scheduled = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };

interface NodeOptions {
  type?: string;
  capacityType?: string;
  /** CPU requests of the pods bound to it (none: an empty node). */
  pods?: string[];
  podOptions?: Parameters<typeof pod>[1];
  /** Registered but not yet initialized (a startup taint not removed yet). */
  uninitialized?: boolean;
}

class Scenario {
  readonly account: MotoAccount = motoAccount();
  readonly clock = fakeClock(Date.now());
  api!: FakeApiServer;
  runtime!: Runtime;
  drift!: () => Promise<DriftReport>;
  /** Extra function environment (feature gates), read by the next configure(). */
  env: Record<string, string> = {};
  private index = 0;
  private session: Promise<DriftSession> | undefined;
  /** The drift function's synthesized role, assumed once: a NodePool change leaves its policy as it is. */
  private identity!: FunctionIdentity;

  constructor(
    readonly cluster: string,
    private nodePool: NodePool,
  ) {}

  async start(): Promise<this> {
    await createNetwork(this.account, {
      subnets: [{ zone: ZONE, cidr: '10.0.1.0/24', tags: DISCOVERY }],
      securityGroups: [{ name: 'nodes', tags: DISCOVERY }],
    });
    await this.account.iam.send(
      new CreateRoleCommand({
        RoleName: ROLE,
        AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
      }),
    );
    await createCluster(this.account, this.cluster);
    await createStateTable(dynamoApi(this.account.dynamodb), `state-${this.cluster}`);
    this.api = await FakeApiServer.start({ now: () => new Date(this.clock()) });
    const runtimes = await functionRuntimes(this.account, { env: this.functionEnv(this.configFile(this.nodePool)) });
    this.identity = runtimes.identities.drift;
    this.configure(this.nodePool);
    return this;
  }

  /** (Re)deploys the NodePool: what `cdk deploy` of a changed manifest does. */
  configure(nodePool: NodePool): void {
    this.nodePool = nodePool;
    // The drift function under its own synthesized role (the IAM harness).
    this.runtime = buildRuntime({
      env: this.functionEnv(this.configFile(nodePool)),
      clients: functionClients(this.account, this.identity),
      clock: this.clock,
      // Consolidation's 15 s validation delay passes on the fake clock.
      sleep: async (ms) => this.clock.advance(ms),
    });
    const runtime = this.runtime;
    this.session = undefined;
    catalog ??= instanceTypeSource(runtime, tools.telemetry)();
    const types = catalog;
    const handler = driftHandler(
      once(async () => ({ ...(await driftDeps(runtime, tools.telemetry)), instanceTypes: () => types })),
      tools,
    );
    this.drift = async () => {
      const result = await handler(scheduled, context);
      if (!('trigger' in result)) throw new Error(`drift run failed: ${JSON.stringify(result)}`);
      return result;
    };
  }

  private configFile(nodePool: NodePool): string {
    const configFile = join(mkdtempSync(join(tmpdir(), 'karpless-disruption-')), 'karpless-config.json');
    writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [nodeClass] }));
    return configFile;
  }

  private functionEnv(configFile: string): NodeJS.ProcessEnv {
    return {
      KARPLESS_CLUSTER_NAME: this.cluster,
      KARPLESS_STATE_TABLE: `state-${this.cluster}`,
      KARPLESS_NOTICE_BUS: 'unused',
      KARPLESS_CONFIG_FILE: configFile,
      KARPLESS_KUBE_ENDPOINT: this.api.url,
      AWS_REGION: this.account.region,
      ...this.env,
    };
  }

  /** Launches one node through the real launch path and plays its kubelet and the watcher's registration. */
  async launchNode(options: NodeOptions = {}): Promise<Node> {
    this.session ??= driftDeps(this.runtime, tools.telemetry).then((deps) => deps.session());
    const types = (await catalog)?.byNodePool.general ?? [];
    const type = options.type ?? 'm5.large';
    const capacityType = options.capacityType ?? 'on-demand';
    const only = {
      general: types
        .filter((t) => t.name === type)
        .map((t) => ({ ...t, offerings: t.offerings.filter((o) => o.capacityType === capacityType) })),
    };
    const sizing = pod('sizing', { cpu: '100m', owner: { kind: 'ReplicaSet', name: 'x' } });
    const claim = solve({ pods: [sizing], nodePools: [this.nodePool], instanceTypes: only }).nodeClaims[0];
    if (!claim) throw new Error(`no ${capacityType} ${type} planned`);
    const i = this.index++;
    const launched = await (await this.session).launcher.launch({
      nodeClaimName: `general-n${i}`,
      nodePool: this.nodePool,
      claim,
    });
    const node = this.register(launched, !options.uninitialized);
    for (const [p, cpu] of (options.pods ?? []).entries()) {
      this.api.addPod({
        ...pod(`web-${i}-${p}`, {
          cpu,
          nodeName: node.metadata.name,
          owner: { kind: 'ReplicaSet', name: 'web' },
          ...options.podOptions,
        }),
        status: { phase: 'Running' },
      });
    }
    this.clock.advance(60_000);
    return node;
  }

  register(
    launched: { instanceId: string; instanceType: string; zone: string; capacityType: string },
    initialized: boolean,
  ): Node {
    const name = `ip-${launched.instanceId}.internal`;
    const cpu = launched.instanceType.endsWith('.2xlarge')
      ? '8'
      : launched.instanceType.endsWith('.xlarge')
        ? '4'
        : '2';
    const node = this.api.addNode({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          [KUBE.registeredLabel]: 'true',
          ...(initialized ? { [KUBE.initializedLabel]: 'true' } : {}),
          [TAG.nodePool]: 'general',
          'node.kubernetes.io/instance-type': launched.instanceType,
          'topology.kubernetes.io/zone': launched.zone,
          'karpenter.sh/capacity-type': launched.capacityType,
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/os': 'linux',
        },
        finalizers: [KUBE.terminationFinalizer],
      } as Node['metadata'],
      spec: { providerID: `aws:///${launched.zone}/${launched.instanceId}` },
      status: { allocatable: { cpu, memory: '8Gi', pods: '29' } },
    });
    this.api.markNodeReady(name, initialized);
    return node;
  }

  /** Registers every running instance that has no Node yet (the replacements of a report). */
  async registerReplacements(initialized: boolean): Promise<string[]> {
    const known = new Set(this.api.nodes().map((n) => n.spec?.providerID?.split('/').pop()));
    const fresh = (await this.running()).filter((i) => !known.has(i.InstanceId));
    return fresh.map(
      (i) =>
        this.register(
          {
            instanceId: i.InstanceId ?? '',
            instanceType: i.InstanceType ?? '',
            zone: i.Placement?.AvailabilityZone ?? ZONE,
            capacityType: i.InstanceLifecycle === 'spot' ? 'spot' : 'on-demand',
          },
          initialized,
        ).metadata.name,
    );
  }

  async running(): Promise<Instance[]> {
    const out = await this.account.ec2.send(
      new DescribeInstancesCommand({
        Filters: [
          { Name: `tag:${TAG.clusterName}`, Values: [this.cluster] },
          { Name: 'instance-state-name', Values: ['pending', 'running'] },
        ],
      }),
    );
    return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
  }

  tainted(): string[] {
    return this.api
      .nodes()
      .filter((n) => (n.spec?.taints ?? []).some((t) => t.key === KUBE.disruptedTaintKey))
      .map((n) => n.metadata.name);
  }

  podsOn(name: string): Pod[] {
    return this.api.pods().filter((p) => p.spec.nodeName === name);
  }
}

const scenarios: Scenario[] = [];
async function scenario(cluster: string, nodePool: NodePool): Promise<Scenario> {
  const s = await new Scenario(cluster, nodePool).start();
  scenarios.push(s);
  return s;
}

// The catalog is resolved here, once, so that no test pays for it: about 15 s against an idle moto,
// past a minute on a loaded 2-core machine.
beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('itest-disruption-upstream', 'drift');
  await (await scenario('catalog', pool())).launchNode();
}, 240_000);

afterAll(async () => {
  for (const s of scenarios) await s.api.stop();
});

const drifted = (options: PoolOptions) => pool({ ...options, labels: { ...options.labels, rollout: '2' } });

describe('disruption decisions as upstream makes them, on moto and the fake API server', () => {
  it(`${DISRUPTION}/suite_test.go: should not consider candidates that have PDB-blocked pods scheduled without a terminationGracePeriod set for eventual disruption`, async () => {
    const s = await scenario('pdb', pool());
    const blocked = await s.launchNode({ pods: ['500m'], podOptions: { labels: { app: 'guarded' } } });
    const free = await s.launchNode({ pods: ['500m'] });
    s.api.addPodDisruptionBudget({
      namespace: 'default',
      name: 'guarded',
      selector: { matchLabels: { app: 'guarded' } },
      maxUnavailable: 0,
    });
    s.configure(drifted({}));
    const report = await s.drift();
    // The blocked node is older, so it would come first; it is no candidate and the other one goes.
    expect(report.started.map((x) => x.node)).toEqual([free.metadata.name]);
    expect(report.excluded).toEqual([
      {
        nodeName: blocked.metadata.name,
        reason: expect.stringContaining('PodDisruptionBudget default/guarded prevents evicting pod default/web-0-0'),
      },
    ]);
    expect(s.tainted()).toEqual([free.metadata.name]);
    expect(s.api.eventsFor('Node', blocked.metadata.name).map((e) => e.reason)).toContain('DisruptionBlocked');
  });

  it(`${DISRUPTION}/queue_test.go: should keep nodes tainted when replacements haven't finished initialization, and should untaint nodes when a command times out`, async () => {
    const s = await scenario('notready', pool());
    const old = await s.launchNode({ pods: ['1500m'] });
    s.configure(drifted({}));
    expect((await s.drift()).started.map((x) => x.node)).toEqual([old.metadata.name]);
    // The replacement registers but never becomes Ready (a broken AMI release): not Initialized.
    const [replacement] = await s.registerReplacements(false);
    s.clock.advance(5 * 60_000);
    const waiting = await s.drift();
    expect(waiting.waiting).toEqual([old.metadata.name]);
    expect(waiting.draining).toEqual([]);
    expect(s.tainted()).toEqual([old.metadata.name]);
    expect(s.api.getNode(old.metadata.name)?.metadata.deletionTimestamp).toBeUndefined();
    expect(s.api.eventsFor('Node', old.metadata.name).map((e) => e.reason)).toContain('DisruptionWaitingReadiness');

    s.clock.advance(6 * 60_000);
    const timedOut = await s.drift();
    expect(timedOut.abandoned.map((a) => a.node)).toEqual([old.metadata.name]);
    expect(s.tainted()).toEqual([]);
    expect(s.api.getNode(old.metadata.name)?.metadata.deletionTimestamp).toBeUndefined();
    expect(s.podsOn(old.metadata.name)).toHaveLength(1);
    expect(replacement).toBeDefined();
  });

  // Fifteen launches through the real launch path: about 6 s idle, more than a minute at load 25.
  it(`${DISRUPTION}/suite_test.go: should not consider nodes that are not initialized as part of disruption count (10% of 10 initialized nodes, 5 uninitialized: 1 at a time)`, {
    timeout: 180_000,
  }, async () => {
    const s = await scenario(
      'uninit',
      pool({ disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '10%' }] } }),
    );
    for (let i = 0; i < 10; i++) await s.launchNode({ pods: ['500m'] });
    for (let i = 0; i < 5; i++) await s.launchNode({ pods: ['500m'], uninitialized: true });
    s.configure(drifted({ disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '10%' }] } }));
    const report = await s.drift();
    expect(report.candidates).toBe(10);
    expect(report.started).toHaveLength(1);
    expect(report.blocked).toHaveLength(9);
    expect(report.blocked[0]?.message).toContain('budgets[0] (nodes: 10%) blocks: 1 of 10 node(s) at once');
    expect(s.tainted()).toHaveLength(1);
  });

  it(`${DISRUPTION}/suite_test.go: should consider not ready nodes to the disruption count (one NotReady node uses a budget of 1)`, async () => {
    const s = await scenario('notreadybudget', pool());
    const sick = await s.launchNode({ pods: ['500m'] });
    await s.launchNode({ pods: ['500m'] });
    await s.launchNode({ pods: ['500m'] });
    s.api.markNodeReady(sick.metadata.name, false);
    s.configure(drifted({}));
    const report = await s.drift();
    expect(report.started).toEqual([]);
    expect(s.tainted()).toEqual([]);
    expect(report.blocked.map((b) => b.message)).toContainEqual(
      expect.stringContaining('budgets[0] (nodes: 1) blocks: 1 of 3 node(s) at once, 1 already disrupting'),
    );
  });

  it(`${DISRUPTION}/drift_test.go: should drift empty nodes before non-empty nodes`, async () => {
    const s = await scenario('emptyfirst', pool());
    const busy = await s.launchNode({ pods: ['500m'] });
    const empty = await s.launchNode();
    s.configure(drifted({}));
    const report = await s.drift();
    expect(report.started.map((x) => x.node)).toEqual([empty.metadata.name]);
    expect(report.blocked.map((b) => b.node)).toEqual([busy.metadata.name]);
    // Nothing to move: the empty node goes to the termination flow at once.
    expect(report.draining).toEqual([empty.metadata.name]);
  });

  it('pkg/controllers/nodeclaim/disruption/drift_test.go: NodeRequirement Drift > should return drifted if a new node requirement is added', async () => {
    const s = await scenario('newkey', pool());
    const node = await s.launchNode({ pods: ['500m'] });
    expect((await s.drift()).candidates).toBe(0);
    s.configure(pool({ extraRequirements: [{ key: 'example.com/team', operator: 'In', values: ['payments'] }] }));
    const report = await s.drift();
    expect(report.started).toMatchObject([{ node: node.metadata.name, reason: 'Drifted' }]);
    expect(report.started[0]?.detail).toMatch(/^RequirementsDrift: .*example\.com\/team/);
    // The claim says so too, as upstream's Drifted condition (mirrored onto NodeClaim objects).
    const claim = await s.runtime.state.getNodeClaim('general-n0');
    expect(claim?.status.conditions.find((c) => c.type === 'Drifted')).toMatchObject({
      status: 'True',
      reason: 'RequirementsDrifted',
    });
  });

  it('pkg/controllers/nodeclaim/disruption/drift_test.go: NodePool Static Drift > should detect drift on changes to the static fields > ExpireAfter (a shortened expireAfter drifts the nodes within budget instead of expiring them all)', async () => {
    const s = await scenario('expireafter', pool({ expireAfter: '720h' }));
    for (let i = 0; i < 3; i++) await s.launchNode({ pods: ['500m'] });
    s.clock.advance(2 * 3600_000);
    s.configure(pool({ expireAfter: '1h' }));
    const report = await s.drift();
    expect(report.started).toHaveLength(1);
    expect(report.started[0]).toMatchObject({ reason: 'Drifted', detail: expect.stringMatching(/^NodePoolDrift/) });
    expect(report.blocked).toHaveLength(2);
    expect(report.blocked.every((b) => b.reason === 'Drifted')).toBe(true);
    expect(s.tainted()).toHaveLength(1);
  });

  it(`${DISRUPTION}/consolidation_test.go: Multi-NodeClaim > can merge 3 nodes into 1 (four m5.large with one 1200m pod each: one multi-node command)`, async () => {
    const types = ['m5.large', 'm5.xlarge', 'm5.2xlarge'];
    const s = await scenario(
      'multi',
      pool({ types, disruption: { consolidateAfter: '0s', budgets: [{ nodes: '100%' }] } }),
    );
    const nodes: Node[] = [];
    for (let i = 0; i < 4; i++) nodes.push(await s.launchNode({ pods: ['1200m'] }));
    const report = await s.drift();
    const command = report.consolidation?.command;
    expect(report.consolidation?.started).toBe(true);
    expect(command).toMatchObject({ kind: 'replace', method: 'multi' });
    expect(command?.nodes.length).toBeGreaterThanOrEqual(3);
    expect(report.started.every((x) => x.reason === 'Underutilized')).toBe(true);
    expect(report.started.map((x) => x.node).sort()).toEqual([...(command?.nodes ?? [])].sort());
    // One replacement for all of them.
    expect(new Set(report.started.flatMap((x) => x.replacements)).size).toBe(1);
    expect(await s.running()).toHaveLength(5);
  });

  it(`${DISRUPTION}/consolidation_test.go: Replace > can replace node > if the candidate is on-demand node (its replacement is pinned to spot)`, async () => {
    const s = await scenario(
      'spotpin',
      pool({
        types: ['m5.large', 'm5.xlarge'],
        capacityTypes: ['spot', 'on-demand'],
        disruption: { consolidateAfter: '0s', budgets: [{ nodes: '100%' }] },
      }),
    );
    const node = await s.launchNode({ type: 'm5.xlarge', pods: ['500m'] });
    const report = await s.drift();
    expect(report.consolidation).toMatchObject({
      started: true,
      command: { kind: 'replace', method: 'single', nodes: [node.metadata.name], replacementCapacityTypes: ['spot'] },
    });
    const replacement = (await s.running()).find((i) => !node.metadata.name.includes(i.InstanceId ?? '-'));
    expect(replacement?.InstanceLifecycle).toBe('spot');
  });

  it('pkg/controllers/nodeclaim/disruption/consolidation_test.go: should remove the status condition from the nodeClaim when lastPodEvent is too recent (a pod deleted a minute ago holds consolidateAfter: 30m)', async () => {
    const disruption = { consolidateAfter: '30m', budgets: [{ nodes: '100%' }] };
    const s = await scenario('podevent', pool({ types: ['m5.large', 'm5.xlarge'], disruption }));
    const node = await s.launchNode({ type: 'm5.xlarge', pods: ['500m', '500m'] });
    // The first run sees the pods as they are; nothing is consolidatable 30 minutes after launch yet.
    expect((await s.drift()).consolidation?.started).toBe(false);
    s.clock.advance(2 * 3600_000);
    const [gone] = s.podsOn(node.metadata.name);
    s.api.deletePod('default', gone?.metadata.name ?? '');
    s.clock.advance(60_000);
    const held = await s.drift();
    expect(held.consolidation?.started).toBe(false);
    expect(held.consolidation?.considered).toContainEqual({
      nodeName: node.metadata.name,
      outcome: expect.stringContaining('not consolidatable until'),
    });
    expect(s.tainted()).toEqual([]);
    s.clock.advance(30 * 60_000);
    const after = await s.drift();
    expect(after.consolidation).toMatchObject({ started: true, command: { nodes: [node.metadata.name] } });
  });
  it(`${DISRUPTION}/emptiness_test.go: can delete multiple empty nodes (emptiness goes before multi-node consolidation, within the Empty budget)`, async () => {
    const disruption = { consolidationPolicy: 'WhenEmpty' as const, consolidateAfter: '5m', budgets: [{ nodes: '2' }] };
    const s = await scenario('empty', pool({ disruption }));
    const empty = [await s.launchNode(), await s.launchNode(), await s.launchNode()];
    const busy = await s.launchNode({ pods: ['500m'] });
    // Launched minutes ago: the claims are not Consolidatable yet.
    expect((await s.drift()).consolidation?.command).toBeUndefined();
    s.clock.advance(10 * 60_000);
    const report = await s.drift();
    expect(report.consolidation).toMatchObject({ started: true, command: { kind: 'delete', method: 'empty' } });
    expect(report.started).toHaveLength(2);
    expect(report.started.every((x) => x.reason === 'Empty' && x.replacements.length === 0)).toBe(true);
    expect(report.draining).toEqual(report.started.map((x) => x.node));
    const deleting = s.api
      .nodes()
      .filter((n) => n.metadata.deletionTimestamp)
      .map((n) => n.metadata.name);
    expect(deleting.sort()).toEqual(report.draining.sort());
    expect(empty.map((n) => n.metadata.name)).toEqual(expect.arrayContaining(deleting));
    expect(s.api.getNode(busy.metadata.name)?.metadata.deletionTimestamp).toBeUndefined();
  });

  it(`${HEALTH}: Forceful termination > should ignore node disruption budgets and do-not-disrupt (after 30 minutes NotReady; only with nodeRepair)`, async () => {
    const s = await scenario('repair', pool({ disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '0' }] } }));
    const sick = await s.launchNode({
      pods: ['500m'],
      podOptions: { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } },
    });
    await s.launchNode({ pods: ['500m'] });
    const name = sick.metadata.name;
    s.api.markNodeReady(name, false);
    const since = s.clock();
    s.env = { KARPLESS_NODE_REPAIR: 'true' };
    s.configure(pool({ disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '0' }] } }));
    s.clock.advance(29 * 60_000);
    const early = await s.drift();
    expect(early.repair).toEqual({
      repaired: [],
      blocked: [],
      waiting: [{ node: name, condition: 'Ready=False', dueAt: new Date(since + 30 * 60_000).toISOString() }],
      failed: [],
    });
    s.clock.advance(2 * 60_000);
    // The gate off (upstream's default): nothing is repaired, however long the node is NotReady.
    s.env = {};
    s.configure(pool({ disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '0' }] } }));
    expect((await s.drift()).repair).toBeUndefined();
    expect(s.api.getNode(name)?.metadata.deletionTimestamp).toBeUndefined();
    s.env = { KARPLESS_NODE_REPAIR: 'true' };
    s.configure(pool({ disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '0' }] } }));
    const report = await s.drift();
    expect(report.repair?.repaired).toEqual([
      { node: name, nodePool: 'general', condition: 'Ready=False', since: new Date(since).toISOString() },
    ]);
    // Deleted through the termination path (our finalizer holds it), with a deadline of now: the
    // drain deletes its pods at once, do-not-disrupt and the zero budget notwithstanding.
    expect(s.api.getNode(name)?.metadata.deletionTimestamp).toBeDefined();
    expect(await s.runtime.state.getDrain(name)).toMatchObject({ reason: 'Unhealthy', deadline: s.clock() });
    expect(s.api.eventsFor('Node', name).map((e) => e.reason)).toContain('DisruptionTerminating');
    expect(report.started).toEqual([]);
  });

  it(`${HEALTH}: Forceful termination > should ignore unhealthy nodes if more then 20% of the nodes are unhealthy in a nodepool`, async () => {
    const s = await scenario('repair-blocked', pool());
    const nodes = [await s.launchNode(), await s.launchNode()];
    for (const n of nodes) s.api.markNodeReady(n.metadata.name, false);
    s.env = { KARPLESS_NODE_REPAIR: 'true' };
    s.configure(pool());
    s.clock.advance(40 * 60_000);
    const report = await s.drift();
    expect(report.repair?.repaired).toEqual([]);
    expect(report.repair?.blocked.map((b) => b.message)).toEqual([
      'more than 20% nodes are unhealthy in the nodepool general (2 of 2)',
      'more than 20% nodes are unhealthy in the nodepool general (2 of 2)',
    ]);
    for (const n of nodes) {
      expect(s.api.getNode(n.metadata.name)?.metadata.deletionTimestamp).toBeUndefined();
      expect(s.api.eventsFor('Node', n.metadata.name)).toContainEqual(
        expect.objectContaining({ type: 'Warning', reason: 'NodeRepairBlocked' }),
      );
    }
  });
});
