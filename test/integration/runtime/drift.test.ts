// The drift function in-process against moto (EC2, SSM, DynamoDB, IAM, EKS) and the fake API server,
// on a fake clock: an AMI release rolls nodes within the budget (replacement registered before the
// old node drains), pins hold until changed, cron budgets block in their window, expired nodes are
// replaced, and another cluster's instance is never touched. Each scenario is its own moto account;
// a new release is a registered image plus the `recommended` parameter answered for that account
// only (the launcher's fault rules), so no other scenario or test file sees it.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeInstancesCommand,
  DescribeSubnetsCommand,
  type Instance,
  RegisterImageCommand,
  RunInstancesCommand,
} from '@aws-sdk/client-ec2';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as driftHandler } from '../../../lambdas/drift/handler';
import type { Node } from '../../../shared/apis/core/v1';
import { karpenterCrds } from '../../../shared/apis/v1/crds';
import type { Budget, EC2NodeClass, EC2NodeClassStatus, NodePool } from '../../../shared/apis/v1/types';
import { KUBE, TAG } from '../../../shared/contracts';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { driftDeps } from '../../../shared/runtime/deps/drift';
import { watcherDeps } from '../../../shared/runtime/deps/watcher';
import type { DriftReport } from '../../../shared/runtime/drift';
import { instanceTypeSource, type Runtime } from '../../../shared/runtime/environment';
import { NodeReconciler } from '../../../shared/runtime/nodes';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import type { ResolvedInstanceTypes } from '../../../shared/runtime/provision';
import type { WatcherDeps } from '../../../shared/runtime/watcher';
import { solve } from '../../../shared/scheduling';
import { fakeClock } from '../../providers/fakes';
import { pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { createCluster, createNetwork, injectFault, type MotoAccount, motoAccount } from '../helpers';
import { type FunctionRuntimes, functionRuntimes } from '../iam';
import { PINNED_RELEASE, SEED_K8S_VERSION, seedImageId } from '../moto/seed';

const DISCOVERY = { 'karpenter.sh/discovery': 'drift' };
const ROLE = 'KarpenterNodeRole-drift';
const RECOMMENDED = `/aws/service/eks/optimized-ami/${SEED_K8S_VERSION}/amazon-linux-2023/x86_64/standard/recommended/image_id`;
const NEW_RELEASE = 'v20241001';
const pinnedParameter = (release: string) =>
  `/aws/service/eks/optimized-ami/${SEED_K8S_VERSION}/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-${SEED_K8S_VERSION}-${release}/image_id`;

let tools: Powertools;

function nodeClassFor(alias: string): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      subnetSelectorTerms: [{ tags: DISCOVERY }],
      securityGroupSelectorTerms: [{ tags: DISCOVERY }],
      amiSelectorTerms: [{ alias }],
      role: ROLE,
    },
  };
}

function poolWith(budgets: Budget[], expireAfter = '720h'): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          expireAfter,
        },
      },
      disruption: { consolidateAfter: '0s', budgets },
    },
  };
}

const context = {
  getRemainingTimeInMillis: () => 60_000,
  awsRequestId: 'req',
  functionName: 'drift',
} as unknown as Context;
const amiEvent = {
  version: '0',
  id: 'evt-ami',
  'detail-type': 'EC2 AMI State Change',
  source: 'aws.ec2',
  time: new Date().toISOString(),
  region: 'us-west-2',
  resources: [],
  detail: { ImageId: 'ami-new', State: 'available' },
};
const scheduled = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };

// Each scenario deploys the stack's roles into a fresh account and launches through the real path.
vi.setConfig({ testTimeout: 120_000 });

class Scenario {
  readonly account: MotoAccount = motoAccount();
  api!: FakeApiServer;
  private newImageId: string | undefined;
  runtime!: Runtime;
  private runtimes!: FunctionRuntimes;
  clock = fakeClock(Date.now());
  private nodeCount = 0;
  private types: ResolvedInstanceTypes | undefined;
  private watcherDeps: WatcherDeps | undefined;
  drift!: (event: unknown) => Promise<DriftReport>;

  constructor(
    readonly cluster: string,
    private nodePool: NodePool,
    private nodeClass: EC2NodeClass,
  ) {}

  async start(): Promise<this> {
    const account = this.account;
    await createNetwork(account, {
      subnets: [{ zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: DISCOVERY }],
      securityGroups: [{ name: 'nodes', tags: DISCOVERY }],
    });
    await account.iam.send(
      new CreateRoleCommand({
        RoleName: ROLE,
        AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
      }),
    );
    await createCluster(account, this.cluster);
    await createStateTable(dynamoApi(account.dynamodb), `state-${this.cluster}`);
    this.api = await FakeApiServer.start();
    await this.configure(this.nodePool, this.nodeClass);
    return this;
  }

  /** (Re)deploys the configuration: what `cdk deploy` of changed manifests does. */
  async configure(nodePool: NodePool, nodeClass: EC2NodeClass): Promise<void> {
    this.nodePool = nodePool;
    this.nodeClass = nodeClass;
    this.watcherDeps = undefined;
    const configFile = join(mkdtempSync(join(tmpdir(), 'karpless-drift-')), 'karpless-config.json');
    writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [nodeClass] }));
    // Each function under its own synthesized role (the IAM harness), as deployed for this configuration.
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
    });
    this.runtime = this.runtimes.drift;
    const handler = driftHandler(
      once(() => driftDeps(this.runtime, tools.telemetry)),
      tools,
    );
    this.drift = async (event) => {
      const result = await handler(event, context);
      if (!('trigger' in result)) throw new Error(`drift run failed: ${JSON.stringify(result)}`);
      return result;
    };
  }

  /** Launches one node through the real launch path and plays its kubelet: registered, with a 1.5-CPU pod. */
  async launchNode(): Promise<{ name: string; instanceId: string }> {
    const deps = await driftDeps(this.runtime, tools.telemetry);
    this.types ??= await instanceTypeSource(this.runtime, tools.telemetry)();
    const types = this.types;
    const index = this.nodeCount++;
    const workload = pod(`web-${index}`, { cpu: '1500m', owner: { kind: 'ReplicaSet', name: 'web' } });
    const plan = solve({ pods: [workload], nodePools: [this.nodePool], instanceTypes: types.byNodePool });
    const claim = plan.nodeClaims[0];
    if (!claim) throw new Error(`nothing planned: ${JSON.stringify(plan.unschedulable)}`);
    const launched = await (await deps.session()).launcher.launch({
      nodeClaimName: `general-n${index}`,
      nodePool: this.nodePool,
      claim,
    });
    return { name: this.register(launched.instanceId, launched.zone), instanceId: launched.instanceId, ...{} };
  }

  /** The kubelet of an instance registers; the watcher's registration is done (labels, finalizer). */
  register(instanceId: string, zone: string, withPod = true): string {
    const name = `ip-${instanceId}.internal`;
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true', [TAG.nodePool]: 'general' },
        finalizers: [KUBE.terminationFinalizer],
      } as Node['metadata'],
      spec: { providerID: `aws:///${zone}/${instanceId}` },
      status: { allocatable: { cpu: '2', memory: '8Gi', pods: '29' } },
    };
    this.api.addNode(node);
    if (withPod) {
      this.api.addPod({
        ...pod(`on-${instanceId}`, { cpu: '1500m', nodeName: name, owner: { kind: 'ReplicaSet', name: 'web' } }),
        status: { phase: 'Running' },
      });
    }
    return name;
  }

  /** Instances of this cluster that are running, by nodeclaim. */
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
    this.watcherDeps ??= await watcherDeps(this.runtimes.watcher, tools.telemetry);
    const reconciler = new NodeReconciler(this.watcherDeps);
    for (let step = 0; step < 8 && this.api.nodes().some((n) => n.metadata.deletionTimestamp); step++) {
      await reconciler.reconcile(this.api.nodes());
    }
  }

  /** The replacements of a report registered (each also gets the moved pod, as the ReplicaSet would). */
  async registerReplacements(): Promise<string[]> {
    const known = new Set(this.api.nodes().map((n) => n.spec?.providerID?.split('/').pop()));
    const fresh = (await this.running()).filter((i) => !known.has(i.InstanceId));
    return fresh.map((i) => this.register(i.InstanceId ?? '', i.Placement?.AvailabilityZone ?? ''));
  }

  disrupting(): Node[] {
    return this.api
      .nodes()
      .filter(
        (n) => n.metadata.deletionTimestamp || (n.spec?.taints ?? []).some((t) => t.key === KUBE.disruptedTaintKey),
      );
  }

  /** A newer AL2023 image, and `recommended` (and its own pinned name) pointing at it, for this account only. */
  async releaseNewAMI(): Promise<string> {
    if (this.newImageId) return this.newImageId;
    const newImageId = await releaseImage(this.account);
    this.newImageId = newImageId;
    return newImageId;
  }
}

async function releaseImage(account: MotoAccount): Promise<string> {
  const image = await account.ec2.send(
    new RegisterImageCommand({
      Name: `amazon-eks-node-al2023-x86_64-standard-${SEED_K8S_VERSION}-${NEW_RELEASE}`,
      Architecture: 'x86_64',
      RootDeviceName: '/dev/xvda',
      VirtualizationType: 'hvm',
    }),
  );
  const newImageId = image.ImageId ?? '';
  for (const name of [RECOMMENDED, pinnedParameter(NEW_RELEASE)]) {
    await injectFault(account, {
      action: 'GetParameter',
      contains: name,
      status: 200,
      times: -1,
      body: JSON.stringify({
        Parameter: { Name: name, Type: 'String', Value: newImageId, Version: 2, DataType: 'aws:ec2:image' },
      }),
      ...{ content_type: 'application/x-amz-json-1.1' },
    } as Parameters<typeof injectFault>[1]);
  }
  return newImageId;
}

const scenarios: Scenario[] = [];
async function scenario(cluster: string, nodePool: NodePool, nodeClass: EC2NodeClass): Promise<Scenario> {
  const s = await new Scenario(cluster, nodePool, nodeClass).start();
  scenarios.push(s);
  return s;
}

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('itest-drift', 'drift');
});

afterAll(async () => {
  for (const s of scenarios) await s.api.stop();
});

describe('drift on moto and the fake API server', () => {
  it('rolls an al2023@latest pool onto a new AMI one node at a time (1-node budget), new node registered first', async () => {
    const s = await scenario('roll', poolWith([{ nodes: '1' }]), nodeClassFor('al2023@latest'));
    const old = [await s.launchNode(), await s.launchNode(), await s.launchNode()];
    const oldIds = new Set(old.map((o) => o.instanceId));
    // Another cluster's instance and node in the same account: never touched.
    const foreign = await s.account.ec2.send(
      new RunInstancesCommand({
        ImageId: seedImageId(`amazon-eks-node-al2023-x86_64-standard-${SEED_K8S_VERSION}-${PINNED_RELEASE}`),
        MinCount: 1,
        MaxCount: 1,
        TagSpecifications: [
          {
            ResourceType: 'instance',
            Tags: [
              { Key: TAG.clusterName, Value: 'other' },
              { Key: TAG.nodeClaim, Value: 'x' },
            ],
          },
        ],
      }),
    );
    const foreignId = foreign.Instances?.[0]?.InstanceId ?? '';
    const foreignNode = s.register(foreignId, 'us-west-2a');

    expect((await s.drift(scheduled)).candidates).toBe(0);
    const ami = await s.releaseNewAMI();

    const replaced: string[] = [];
    for (let round = 0; round < 3; round++) {
      const report = await s.drift(amiEvent);
      expect(report.started.length + report.finished.length).toBeGreaterThan(0);
      expect(s.disrupting().length).toBeLessThanOrEqual(1);
      const started = report.started[0];
      expect(started?.detail).toContain(`now resolves ${ami}`);
      expect(report.blocked.every((b) => b.message.includes('budgets[0] (nodes: 1) blocks'))).toBe(true);
      expect(report.blocked).toHaveLength(2 - round);
      // The old node keeps running until its replacement registered.
      expect((await s.drift(scheduled)).waiting).toEqual([started?.node]);
      expect(s.api.getNode(started?.node ?? '')?.metadata.deletionTimestamp).toBeUndefined();
      const fresh = await s.registerReplacements();
      expect(fresh).toHaveLength(1);
      const handed = await s.drift(scheduled);
      expect(handed.draining).toEqual([started?.node]);
      expect(s.api.getNode(fresh[0] ?? '')?.metadata.labels?.[KUBE.registeredLabel]).toBe('true');
      expect(s.disrupting().map((n) => n.metadata.name)).toEqual([started?.node]);
      await s.terminate();
      expect(s.api.getNode(started?.node ?? '')).toBeUndefined();
      replaced.push(started?.node ?? '');
    }
    expect(new Set(replaced).size).toBe(3);
    const running = await s.running();
    expect(running).toHaveLength(3);
    expect(running.every((i) => i.ImageId === ami && !oldIds.has(i.InstanceId ?? ''))).toBe(true);
    expect((await s.drift(scheduled)).finished).toHaveLength(1);
    expect((await s.drift(scheduled)).candidates).toBe(0);
    const other = await s.account.ec2.send(new DescribeInstancesCommand({ InstanceIds: [foreignId] }));
    expect(other.Reservations?.[0]?.Instances?.[0]?.State?.Name).toBe('running');
    expect(s.api.getNode(foreignNode)?.spec?.taints ?? []).toEqual([]);
  });

  it('leaves a pinned alias alone when an AMI is released, and rolls when the pin changes', async () => {
    const s = await scenario('pinned', poolWith([{ nodes: '100%' }]), nodeClassFor(`al2023@${PINNED_RELEASE}`));
    const node = await s.launchNode();
    const ami = await s.releaseNewAMI();
    expect(await s.drift(amiEvent)).toMatchObject({ candidates: 0, started: [] });
    await s.configure(poolWith([{ nodes: '100%' }]), nodeClassFor(`al2023@${NEW_RELEASE}`));
    const report = await s.drift(scheduled);
    expect(report.started.map((x) => x.node)).toEqual([node.name]);
    expect(report.started[0]?.detail).toContain(`now resolves ${ami}`);
  });

  it('blocks drift while a cron budget window is open, and allows it after', async () => {
    const hour = new Date().getUTCHours();
    const budgets: Budget[] = [
      { nodes: '100%' },
      { nodes: '0', schedule: `0 ${(hour + 23) % 24} * * *`, duration: '3h', reasons: ['Drifted'] },
    ];
    const s = await scenario('window', poolWith(budgets), nodeClassFor('al2023@latest'));
    await s.launchNode();
    await s.releaseNewAMI();
    const inWindow = await s.drift(amiEvent);
    expect(inWindow.started).toEqual([]);
    expect(inWindow.blocked[0]?.message).toMatch(
      /budgets\[1\] \(nodes: 0, schedule "0 \d+ \* \* \*" for 3h, reasons Drifted\) blocks/,
    );
    s.clock.advance(3 * 3600_000);
    expect((await s.drift(scheduled)).started).toHaveLength(1);
  });

  // Two real launches through moto (the node, then its replacement) and four drift runs, each
  // re-resolving the node class: about 100 moto calls. Measured at 76 s with the machine at load 23
  // (launch 21 s, each drift run 2-20 s, termination 15 s): past the integration default of 60 s,
  // with nothing waiting on a clock (the runtime's clock is fake here). This bound is what it costs.
  it('replaces expired nodes even with a zero budget', { timeout: 180_000 }, async () => {
    const s = await scenario('expiry', poolWith([{ nodes: '0' }], '1h'), nodeClassFor(`al2023@${PINNED_RELEASE}`));
    const node = await s.launchNode();
    expect((await s.drift(scheduled)).candidates).toBe(0);
    s.clock.advance(61 * 60_000);
    const report = await s.drift(scheduled);
    expect(report.started).toMatchObject([{ node: node.name, reason: 'Expired' }]);
    await s.registerReplacements();
    expect((await s.drift(scheduled)).draining).toEqual([node.name]);
    await s.terminate();
    expect(s.api.getNode(node.name)).toBeUndefined();
  });
  it("writes each EC2NodeClass's status as Karpenter's nodeclass controller does, and an unknown one is not Ready", async () => {
    const s = await scenario('status', poolWith([{ nodes: '1' }]), nodeClassFor('al2023@latest'));
    // The first launch creates the managed instance profile; until then InstanceProfileReady is Unknown.
    await s.launchNode();
    s.api.installCustomResources(karpenterCrds());
    const applied: EC2NodeClass = { ...nodeClassFor('al2023@latest'), metadata: { name: 'default', generation: 2 } };
    s.api.putObject('ec2nodeclasses', applied);
    s.api.putObject('ec2nodeclasses', { ...nodeClassFor('al2023@latest'), metadata: { name: 'legacy' } });
    await s.drift(scheduled);

    const status = (name: string) => s.api.getObject('ec2nodeclasses', name)?.status as EC2NodeClassStatus;
    const conditions = (name: string) =>
      Object.fromEntries((status(name).conditions ?? []).map((c) => [c.type, [c.status, c.reason]]));
    expect(conditions('default')).toEqual({
      ValidationSucceeded: ['True', 'ValidationSucceeded'],
      AMIsReady: ['True', 'AMIsReady'],
      SubnetsReady: ['True', 'SubnetsReady'],
      SecurityGroupsReady: ['True', 'SecurityGroupsReady'],
      InstanceProfileReady: ['True', 'InstanceProfileReady'],
      Ready: ['True', 'Ready'],
    });
    expect(status('default').conditions?.every((c) => c.observedGeneration === 2)).toBe(true);
    const [subnet] = await s.account.ec2
      .send(new DescribeSubnetsCommand({ Filters: [{ Name: 'tag:karpenter.sh/discovery', Values: ['drift'] }] }))
      .then((o) => o.Subnets ?? []);
    expect(status('default').subnets).toEqual([
      { id: subnet?.SubnetId, zone: 'us-west-2a', zoneID: subnet?.AvailabilityZoneId },
    ]);
    expect(status('default').securityGroups?.map((g) => g.name)).toEqual(['nodes']);
    // The AMIs are those launches use: the launched node's image is one of them.
    const [launched] = await s.running();
    expect(status('default').amis?.map((a) => a.id)).toContain(launched?.ImageId);
    expect(status('default').instanceProfile).toMatch(/^status_/);
    expect(conditions('legacy')).toEqual({
      ValidationSucceeded: ['True', 'ValidationSucceeded'],
      Ready: ['False', 'NotInConfiguration'],
    });

    // Nothing changed: the next run writes nothing and the transition times stay.
    const before = JSON.stringify(status('default'));
    const patches = () =>
      s.api.requests.filter((r) => r.method === 'PATCH' && r.path.includes('ec2nodeclasses')).length;
    const written = patches();
    s.clock.advance(5 * 60_000);
    await s.drift(scheduled);
    expect(patches()).toBe(written);
    expect(JSON.stringify(status('default'))).toBe(before);
  });
});
