// Single-node consolidation by the drift function, in-process against moto (EC2, SSM, DynamoDB,
// IAM, EKS) and the fake API server, on a fake clock (the 15 s validation delay advances it): a node
// whose pods fit on a cheaper type is replaced, the new node registered before the old one drains;
// a node whose pods fit on another node is removed with nothing launched, never more than the
// Underutilized budget at once; a PodDisruptionBudget that allows no disruption and a
// karpenter.sh/do-not-disrupt pod block it; a WhenEmpty pool is never consolidated.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeInstancesCommand, type Instance } from '@aws-sdk/client-ec2';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as driftHandler } from '../../../lambdas/drift/handler';
import type { Node } from '../../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { KUBE, TAG } from '../../../shared/contracts';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { driftDeps } from '../../../shared/runtime/deps/drift';
import { watcherDeps } from '../../../shared/runtime/deps/watcher';
import type { DriftReport, DriftSession } from '../../../shared/runtime/drift';
import { instanceTypeSource, type Runtime } from '../../../shared/runtime/environment';
import { NodeReconciler } from '../../../shared/runtime/nodes';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import type { ResolvedInstanceTypes } from '../../../shared/runtime/provision';
import { solve } from '../../../shared/scheduling';
import { fakeClock } from '../../providers/fakes';
import { pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { createCluster, createNetwork, type MotoAccount, motoAccount } from '../helpers';
import { type FunctionRuntimes, functionRuntimes } from '../iam';
import { PINNED_RELEASE } from '../moto/seed';

const DISCOVERY = { 'karpenter.sh/discovery': 'consolidation' };
const ROLE = 'KarpenterNodeRole-consolidation';
const ALLOCATABLE = { 'm5.large': { cpu: '2', memory: '8Gi' }, 'm5.xlarge': { cpu: '4', memory: '16Gi' } } as const;
type Size = keyof typeof ALLOCATABLE;

let tools: Powertools;
// One node class and no reservations: every scenario's priced catalog is the same, resolved once for
// the file (resolving it against moto costs seconds per run).
let catalog: Promise<ResolvedInstanceTypes> | undefined;

// A pinned alias: no AMI release happens here, so nothing drifts and only consolidation acts.
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

function poolWith(policy: 'WhenEmpty' | 'WhenEmptyOrUnderutilized', nodes = '1'): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge'] },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        },
      },
      disruption: { consolidationPolicy: policy, consolidateAfter: '0s', budgets: [{ nodes }] },
    },
  };
}

const context = {
  getRemainingTimeInMillis: () => 60_000,
  awsRequestId: 'req',
  functionName: 'drift',
} as unknown as Context;
const scheduled = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };

// Each scenario deploys the stack's roles into a fresh account and launches through the real path.
vi.setConfig({ testTimeout: 120_000 });

class Scenario {
  readonly account: MotoAccount = motoAccount();
  api!: FakeApiServer;
  runtime!: Runtime;
  private runtimes!: FunctionRuntimes;
  clock = fakeClock(Date.now());
  drift!: () => Promise<DriftReport>;
  private index = 0;
  private session: Promise<DriftSession> | undefined;

  constructor(
    readonly cluster: string,
    private readonly nodePool: NodePool,
  ) {}

  async start(): Promise<this> {
    await createNetwork(this.account, {
      subnets: [{ zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: DISCOVERY }],
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
    this.api = await FakeApiServer.start();
    const configFile = join(mkdtempSync(join(tmpdir(), 'karpless-consolidation-')), 'karpless-config.json');
    writeFileSync(configFile, JSON.stringify({ nodePools: [this.nodePool], nodeClasses: [nodeClass] }));
    // Each function under its own synthesized role (the IAM harness).
    this.runtimes = await functionRuntimes(this.account, {
      env: {
        KARPLESS_CLUSTER_NAME: this.cluster,
        KARPLESS_STATE_TABLE: `state-${this.cluster}`,
        KARPLESS_NOTICE_BUS: 'unused',
        KARPLESS_CONFIG_FILE: configFile,
        KARPLESS_KUBE_ENDPOINT: this.api.url,
        AWS_REGION: this.account.region,
      },
      clock: this.clock,
      // The validation delay passes on the fake clock instead of in real time.
      sleep: async (ms) => this.clock.advance(ms),
    });
    this.runtime = this.runtimes.drift;
    const runtime = this.runtime;
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
    return this;
  }

  /** Launches a node of `size` through the real launch path, registers it, and binds a pod of `cpu` to it. */
  async launchNode(size: Size, cpu: string, podOptions: Parameters<typeof pod>[1] = {}): Promise<Node> {
    this.session ??= driftDeps(this.runtime, tools.telemetry).then((deps) => deps.session());
    const types = await catalog;
    const only = { general: (types?.byNodePool.general ?? []).filter((t) => t.name === size) };
    const sizing = pod('sizing', { cpu: size === 'm5.xlarge' ? '3' : '1', owner: { kind: 'ReplicaSet', name: 'x' } });
    const claim = solve({ pods: [sizing], nodePools: [this.nodePool], instanceTypes: only }).nodeClaims[0];
    if (!claim) throw new Error(`no ${size} planned`);
    const i = this.index++;
    const launched = await (await this.session).launcher.launch({
      nodeClaimName: `general-n${i}`,
      nodePool: this.nodePool,
      claim,
    });
    const node = this.register(launched.instanceId, size);
    this.api.addPod({
      ...pod(`web-${i}`, {
        cpu,
        nodeName: node.metadata.name,
        owner: { kind: 'ReplicaSet', name: 'web' },
        ...podOptions,
      }),
      status: { phase: 'Running' },
    });
    // The pod was created on the real clock; consolidateAfter counts from it on the functions' clock.
    this.clock.advance(2 * 60_000);
    return node;
  }

  /** What the kubelet and the watcher's registration leave: a registered, initialized Node. */
  register(instanceId: string, size: Size): Node {
    const name = `ip-${instanceId}.internal`;
    return this.api.addNode({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          [KUBE.registeredLabel]: 'true',
          [KUBE.initializedLabel]: 'true',
          [TAG.nodePool]: 'general',
          'node.kubernetes.io/instance-type': size,
          'topology.kubernetes.io/zone': 'us-west-2a',
          'karpenter.sh/capacity-type': 'on-demand',
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/os': 'linux',
        },
        finalizers: [KUBE.terminationFinalizer],
      } as Node['metadata'],
      spec: { providerID: `aws:///us-west-2a/${instanceId}` },
      status: { allocatable: { ...ALLOCATABLE[size], pods: '29' } },
    });
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

  /** The watcher's termination flow, stepped until every deleting node is gone. */
  async terminate(): Promise<void> {
    const reconciler = new NodeReconciler(await watcherDeps(this.runtimes.watcher, tools.telemetry));
    for (let step = 0; step < 8 && this.deleting().length > 0; step++) await reconciler.reconcile(this.api.nodes());
  }

  deleting(): string[] {
    return this.api
      .nodes()
      .filter((n) => n.metadata.deletionTimestamp)
      .map((n) => n.metadata.name);
  }

  disrupting(): string[] {
    return this.api
      .nodes()
      .filter(
        (n) => n.metadata.deletionTimestamp || (n.spec?.taints ?? []).some((t) => t.key === KUBE.disruptedTaintKey),
      )
      .map((n) => n.metadata.name);
  }
}

const scenarios: Scenario[] = [];
async function scenario(cluster: string, nodePool: NodePool): Promise<Scenario> {
  const s = await new Scenario(cluster, nodePool).start();
  scenarios.push(s);
  return s;
}

beforeAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('itest-consolidation', 'consolidation');
});

afterAll(async () => {
  for (const s of scenarios) await s.api.stop();
});

describe('consolidation by the drift function on moto and the fake API server', () => {
  it('replaces a node whose pods fit on a cheaper type: new node registered before the old one drains', async () => {
    const s = await scenario('replace', poolWith('WhenEmptyOrUnderutilized'));
    const big = await s.launchNode('m5.xlarge', '500m');
    const bigId = big.spec?.providerID?.split('/').pop() ?? '';

    const first = await s.drift();
    expect(first.consolidation).toMatchObject({
      started: true,
      command: { kind: 'replace', method: 'single', nodes: [big.metadata.name], replacement: 'm5.large' },
    });
    expect(first.started).toMatchObject([{ node: big.metadata.name, reason: 'Underutilized' }]);
    const replacement = (await s.running()).find((i) => i.InstanceId !== bigId);
    expect(replacement?.InstanceType).toBe('m5.large');
    expect(s.disrupting()).toEqual([big.metadata.name]);
    expect(s.deleting()).toEqual([]);

    // Until the replacement registers the old node keeps running, and nothing else starts.
    const waiting = await s.drift();
    expect(waiting.waiting).toEqual([big.metadata.name]);
    expect(waiting.started).toEqual([]);
    expect(s.deleting()).toEqual([]);

    const small = s.register(replacement?.InstanceId ?? '', 'm5.large');
    const handed = await s.drift();
    expect(handed.draining).toEqual([big.metadata.name]);
    expect(s.deleting()).toEqual([big.metadata.name]);
    expect(s.api.getNode(small.metadata.name)?.metadata.labels?.[KUBE.registeredLabel]).toBe('true');

    await s.terminate();
    expect(s.api.getNode(big.metadata.name)).toBeUndefined();
    expect((await s.running()).map((i) => i.InstanceId)).toEqual([replacement?.InstanceId]);
    expect((await s.drift()).finished).toEqual([big.metadata.name]);
  });

  it('removes a node whose pods fit on another node, nothing launched, never more than the budget at once', async () => {
    const s = await scenario('delete', poolWith('WhenEmptyOrUnderutilized'));
    for (let i = 0; i < 3; i++) await s.launchNode('m5.large', '500m');
    const first = await s.drift();
    expect(first.consolidation).toMatchObject({ started: true, command: { kind: 'delete' } });
    expect(first.draining).toEqual(first.consolidation?.command?.nodes);
    expect(s.deleting()).toEqual(first.draining);
    expect(await s.running()).toHaveLength(3);

    // The 1-node Underutilized budget is used while that node drains.
    const blocked = await s.drift();
    expect(blocked.consolidation?.command).toBeUndefined();
    expect(blocked.consolidation?.considered.map((c) => c.outcome)).toContainEqual(
      expect.stringMatching(/budgets\[0\] \(nodes: 1\) blocks/),
    );
    expect(s.disrupting()).toHaveLength(1);

    await s.terminate();
    expect(await s.running()).toHaveLength(2);
    const next = await s.drift();
    expect(next.finished).toEqual(first.draining);
    expect(next.consolidation?.command?.kind).toBe('delete');
    expect(s.disrupting()).toHaveLength(1);
  });

  it('is blocked by a PodDisruptionBudget that allows no disruption and by a do-not-disrupt pod', async () => {
    const s = await scenario('blocked', poolWith('WhenEmptyOrUnderutilized', '100%'));
    await s.launchNode('m5.large', '500m', { labels: { app: 'guarded' } });
    await s.launchNode('m5.large', '500m', { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } });
    s.api.addPodDisruptionBudget({
      namespace: 'default',
      name: 'guarded',
      selector: { matchLabels: { app: 'guarded' } },
      maxUnavailable: 0,
    });
    const report = await s.drift();
    expect(report.consolidation?.command).toBeUndefined();
    const outcomes = report.consolidation?.considered.map((c) => c.outcome) ?? [];
    expect(outcomes).toContainEqual(
      expect.stringContaining('PodDisruptionBudget default/guarded prevents evicting pod default/web-0'),
    );
    expect(outcomes).toContainEqual(
      expect.stringContaining(`pod default/web-1 has the "${KUBE.doNotDisruptAnnotation}" annotation`),
    );
    expect(s.disrupting()).toEqual([]);
    expect(await s.running()).toHaveLength(2);
  });

  it('never consolidates a WhenEmpty pool', async () => {
    const s = await scenario('whenempty', poolWith('WhenEmpty', '100%'));
    await s.launchNode('m5.xlarge', '500m');
    await s.launchNode('m5.large', '500m');
    const report = await s.drift();
    expect(report.consolidation?.started).toBe(false);
    expect(report.consolidation?.command).toBeUndefined();
    expect(report.consolidation?.considered.map((c) => c.outcome)).toEqual([
      'NodePool "general" has consolidation policy WhenEmpty, but node is not empty',
      'NodePool "general" has consolidation policy WhenEmpty, but node is not empty',
    ]);
    expect(report.started).toEqual([]);
    expect(s.disrupting()).toEqual([]);
    expect(await s.running()).toHaveLength(2);
  });
});
