// The gc function in-process against moto (EC2, IAM, DynamoDB) and the fake API server, on a clock
// the test moves forward: registration timeout, lost Nodes, Nodes without instance, leaked launch
// templates and instance profiles, emptiness within a 1-node budget. Each test gets its own moto
// account and API server, so nothing of one test is another's cluster state.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateLaunchTemplateCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2';
import {
  AddRoleToInstanceProfileCommand,
  CreateInstanceProfileCommand,
  CreateRoleCommand,
  ListInstanceProfilesCommand,
  ListInstanceProfilesForRoleCommand,
} from '@aws-sdk/client-iam';
import type { Context } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as gcHandler } from '../../../lambdas/gc/handler';
import { createHandler as watcherHandler } from '../../../lambdas/watcher/handler';
import type { EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { KUBE, REGISTRATION_TTL_MS, TAG } from '../../../shared/contracts';
import { EMPTY_SINCE_ANNOTATION } from '../../../shared/disruption/emptiness';
import { LAUNCH_BATCH_TAG } from '../../../shared/launch/request';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { gcDeps } from '../../../shared/runtime/deps/gc';
import { watcherDeps } from '../../../shared/runtime/deps/watcher';
import type { Runtime } from '../../../shared/runtime/environment';
import type { GcReport } from '../../../shared/runtime/gc';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import { daemonSet, node, pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { type MotoAccount, motoAccount } from '../helpers';
import { functionRuntimes } from '../iam';
import { deleteUninstallResource } from '../support/uninstall';

const CLUSTER = 'c1';
const MIN = 60_000;

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'KarpenterNodeRole-c1',
  },
};

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      spec: {
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      },
    },
    disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '1m', budgets: [{ nodes: '1' }] },
  },
};

let tools: Powertools;

interface Cluster {
  account: MotoAccount;
  api: FakeApiServer;
  runtime: Runtime;
  /** Moves the functions' clock (not moto's) forward. */
  advance(ms: number): void;
  gc(): Promise<GcReport>;
  watch(ms: number): Promise<unknown>;
  /** CloudFormation's Delete of the uninstall resource; resolves to the response body it would get. */
  destroy(): Promise<Record<string, unknown>>;
}

// Each test deploys the stack's roles into a fresh account (synth, five roles): allow for a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const clusters: Cluster[] = [];

function context(remainingMs: number): Context {
  return { getRemainingTimeInMillis: () => remainingMs, awsRequestId: 'req', functionName: 'fn' } as unknown as Context;
}

async function cluster(pool: NodePool = nodePool): Promise<Cluster> {
  const account = motoAccount();
  await createStateTable(dynamoApi(account.dynamodb), 'karpless-state');
  const api = await FakeApiServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'karpless-gc-'));
  const configFile = join(dir, 'karpless-config.json');
  writeFileSync(configFile, JSON.stringify({ nodePools: [pool], nodeClasses: [nodeClass] }));
  let offset = 0;
  const runtimes = await functionRuntimes(account, {
    env: {
      KARPLESS_CLUSTER_NAME: CLUSTER,
      KARPLESS_STATE_TABLE: 'karpless-state',
      KARPLESS_NOTICE_BUS: 'karpless',
      KARPLESS_CONFIG_FILE: configFile,
      KARPLESS_KUBE_ENDPOINT: api.url,
      AWS_REGION: account.region,
    },
    clock: () => Date.now() + offset,
  });
  const gc = gcHandler(
    once(() => gcDeps(runtimes.gc, tools.telemetry)),
    tools,
  );
  const watcher = watcherHandler(
    once(() => watcherDeps(runtimes.watcher, tools.telemetry)),
    tools,
  );
  const created: Cluster = {
    account,
    api,
    runtime: runtimes.gc,
    advance: (ms) => {
      offset += ms;
    },
    gc: () => gc({}, context(60_000)),
    watch: (ms) => watcher({}, context(ms + 5_000)),
    destroy: () => deleteUninstallResource(runtimes.gc, { cluster: CLUSTER, accountId: account.accountId }),
  };
  clusters.push(created);
  return created;
}

async function launch(c: Cluster, tags: Record<string, string>, instanceType?: string): Promise<string> {
  const out = await c.account.ec2.send(
    new RunInstancesCommand({
      ImageId: 'ami-12c6146b',
      ...(instanceType ? { InstanceType: instanceType as 'm5.large' } : {}),
      MinCount: 1,
      MaxCount: 1,
      TagSpecifications: [
        { ResourceType: 'instance', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
      ],
    }),
  );
  return out.Instances?.[0]?.InstanceId ?? '';
}

const ourTags = (claim: string, cluster = CLUSTER) => ({
  [TAG.clusterName]: cluster,
  [TAG.clusterOwned(cluster)]: 'owned',
  [TAG.nodeClaim]: claim,
  [TAG.nodePool]: 'general',
  [TAG.nodeClass]: 'default',
});

async function stateOf(c: Cluster, instanceId: string): Promise<string | undefined> {
  const out = await c.account.ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
  return out.Reservations?.[0]?.Instances?.[0]?.State?.Name;
}

function registeredNode(name: string, instanceId: string, labels: Record<string, string> = {}) {
  return node(name, {
    providerID: `aws:///us-west-2a/${instanceId}`,
    labels: { [KUBE.registeredLabel]: 'true', [TAG.nodePool]: 'general', ...labels },
    finalizers: [KUBE.terminationFinalizer],
  });
}

const GONE = ['shutting-down', 'terminated'];

beforeAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('itest-gc', CLUSTER);
});

afterEach(async () => {
  for (const c of clusters.splice(0)) await c.api.stop();
});

describe('gc function against moto and the fake API server', () => {
  it('terminates an instance that never registers after 15 minutes, not before, and never another cluster’s', async () => {
    // Prepare
    const c = await cluster();
    const ours = await launch(c, ourTags('general-aaaaa'));
    const theirs = await launch(c, ourTags('general-bbbbb', 'c2'));
    // Act: short of the registration TTL (moto reports launch times truncated to the second, so a
    // margin of a few seconds keeps this from racing the clock)
    c.advance(REGISTRATION_TTL_MS - 10_000);
    const early = await c.gc();
    // Assess
    expect(early.deleted).toEqual([]);
    expect(await stateOf(c, ours)).toBe('running');
    // Act: past it
    c.advance(20_000);
    const late = await c.gc();
    // Assess
    expect(late.deleted.map((v) => [v.resource, v.id, v.reason])).toEqual([['instance', ours, 'RegistrationTimeout']]);
    expect(GONE).toContain(await stateOf(c, ours));
    expect(await stateOf(c, theirs)).toBe('running');
  });

  it('terminates an instance a launch batch started and no claim was tagged on, after 15 minutes, and never another cluster’s', async () => {
    // The launcher died between CreateFleet and tagging, and no later attempt adopted the instance:
    // it carries the batch's tag and no karpenter.sh/nodeclaim, so only this query finds it.
    const c = await cluster();
    const { [TAG.nodeClaim]: _ours, ...untagged } = ourTags('unused');
    const { [TAG.nodeClaim]: _theirs, ...theirUntagged } = ourTags('unused', 'c2');
    const ours = await launch(c, { ...untagged, [LAUNCH_BATCH_TAG]: 'batch-1' });
    const theirs = await launch(c, { ...theirUntagged, [LAUNCH_BATCH_TAG]: 'batch-1' });
    c.advance(REGISTRATION_TTL_MS - 10_000);
    expect((await c.gc()).deleted).toEqual([]);
    c.advance(20_000);
    const late = await c.gc();
    expect(late.deleted.map((v) => [v.resource, v.id, v.reason])).toEqual([['instance', ours, 'Unclaimed']]);
    expect(GONE).toContain(await stateOf(c, ours));
    expect(await stateOf(c, theirs)).toBe('running');
  });

  it('terminates a registered instance whose Node is gone, at once', async () => {
    const c = await cluster();
    const id = await launch(c, ourTags('general-ccccc'));
    const name = 'ip-10-0-1-40.us-west-2.compute.internal';
    c.api.addNode(registeredNode(name, id));
    expect((await c.gc()).deleted).toEqual([]);
    // The registered instance launched with tags only got its NodeClaim record from that run.
    expect((await c.runtime.state.getNodeClaim('general-ccccc'))?.status.nodeName).toBe(name);
    // The Node disappears without the termination flow (finalizer stripped, then deleted).
    c.api.updateNode(name, (n) => {
      n.metadata.finalizers = [];
    });
    c.api.deleteNode(name);
    expect(c.api.getNode(name)).toBeUndefined();
    const report = await c.gc();
    // The instance goes, and with it the claim's record.
    expect(report.deleted.map((v) => [v.resource, v.id, v.reason])).toEqual([
      ['instance', id, 'NodeGone'],
      ['nodeclaim', 'general-ccccc', 'InstanceGone'],
    ]);
    expect(GONE).toContain(await stateOf(c, id));
    expect(await c.runtime.state.getNodeClaim('general-ccccc')).toBeUndefined();
  });

  it('deletes a Node whose instance is gone, finalizer and all, and leaves a Node whose instance runs', async () => {
    const c = await cluster();
    const dead = await launch(c, ourTags('general-ddddd'));
    const alive = await launch(c, ourTags('general-eeeee'));
    await c.account.ec2.send(new TerminateInstancesCommand({ InstanceIds: [dead] }));
    c.api.addNode(registeredNode('dead-node', dead));
    c.api.addNode(registeredNode('alive-node', alive));
    const report = await c.gc();
    expect(report.deleted.map((v) => [v.resource, v.id, v.reason])).toEqual([['node', 'dead-node', 'InstanceGone']]);
    expect(c.api.getNode('dead-node')).toBeUndefined();
    expect(c.api.getNode('alive-node')).toBeDefined();
    expect(await stateOf(c, alive)).toBe('running');
  });

  it('removes orphaned launch templates and instance profiles, keeps current ones and another cluster’s', async () => {
    const c = await cluster();
    const lt = async (name: string, tags: Record<string, string>, imageId = 'ami-12c6146b') =>
      c.account.ec2.send(
        new CreateLaunchTemplateCommand({
          LaunchTemplateName: name,
          LaunchTemplateData: { ImageId: imageId },
          TagSpecifications: [
            { ResourceType: 'launch-template', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
          ],
        }),
      );
    const owned = (cluster: string, pool: string, cls: string) => ({
      [TAG.clusterName]: cluster,
      [TAG.clusterOwned(cluster)]: 'owned',
      [TAG.nodePool]: pool,
      [TAG.nodeClass]: cls,
    });
    await lt('karpenter.k8s.aws/1', owned(CLUSTER, 'general', 'default'));
    await lt('karpenter.k8s.aws/2', owned(CLUSTER, 'removed', 'default'));
    await lt('karpenter.k8s.aws/3', owned('c2', 'removed', 'default'));
    // A current pair's template for an AMI no instance runs any more (the previous release).
    await lt('karpenter.k8s.aws/4', owned(CLUSTER, 'general', 'default'), 'ami-0123456789abcdef0');
    // A node of ours runs ami-12c6146b, so the current template for it stays.
    await launch(c, ourTags('general-lllll'));
    await c.account.iam.send(
      new CreateRoleCommand({
        RoleName: 'NodeRole',
        AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
      }),
    );
    const profile = async (name: string, cluster: string, cls: string) => {
      await c.account.iam.send(
        new CreateInstanceProfileCommand({
          InstanceProfileName: name,
          Path: `/karpenter/us-west-2/${cluster}/${cls}/`,
          Tags: Object.entries({
            [TAG.clusterName]: cluster,
            [TAG.clusterOwned(cluster)]: 'owned',
            [TAG.nodeClass]: cls,
            'topology.kubernetes.io/region': 'us-west-2',
          }).map(([Key, Value]) => ({ Key, Value })),
        }),
      );
      await c.account.iam.send(
        new AddRoleToInstanceProfileCommand({ InstanceProfileName: name, RoleName: 'NodeRole' }),
      );
    };
    await profile('c1_current', CLUSTER, 'default');
    await profile('c1_removed', CLUSTER, 'removed');
    await profile('c2_removed', 'c2', 'removed');

    // Young templates are protected (a provision run on the previous configuration may still use them).
    const first = await c.gc();
    expect(first.deleted.map((v) => [v.resource, v.id, v.reason])).toEqual([
      ['instance-profile', 'c1_removed', 'NodeClassRemoved'],
    ]);
    c.advance(11 * MIN);
    const second = await c.gc();
    expect(second.deleted.map((v) => [v.resource, v.reason]).sort()).toEqual([
      ['launch-template', 'NotInConfiguration'],
      ['launch-template', 'Unused'],
    ]);
    expect(second.failed).toEqual([]);
    const templates = await c.account.ec2.send(new DescribeLaunchTemplatesCommand({}));
    expect((templates.LaunchTemplates ?? []).map((t) => t.LaunchTemplateName).sort()).toEqual([
      'karpenter.k8s.aws/1',
      'karpenter.k8s.aws/3',
    ]);
    const profiles = await c.account.iam.send(new ListInstanceProfilesCommand({}));
    expect((profiles.InstanceProfiles ?? []).map((p) => p.InstanceProfileName).sort()).toEqual([
      'c1_current',
      'c2_removed',
    ]);
  });

  it('cdk destroy: removes the node role from every instance profile of the cluster, deletes them and the launch templates, and reports what still runs', async () => {
    const c = await cluster();
    const tags = (cluster: string) =>
      Object.entries({
        [TAG.clusterName]: cluster,
        [TAG.clusterOwned(cluster)]: 'owned',
        [TAG.nodePool]: 'general',
        [TAG.nodeClass]: 'default',
        'topology.kubernetes.io/region': 'us-west-2',
      }).map(([Key, Value]) => ({ Key, Value }));
    for (const [name, cluster] of [
      ['karpenter.k8s.aws/ours', CLUSTER],
      ['karpenter.k8s.aws/theirs', 'c2'],
    ] as const) {
      await c.account.ec2.send(
        new CreateLaunchTemplateCommand({
          LaunchTemplateName: name,
          LaunchTemplateData: { ImageId: 'ami-12c6146b' },
          TagSpecifications: [{ ResourceType: 'launch-template', Tags: tags(cluster) }],
        }),
      );
    }
    await c.account.iam.send(
      new CreateRoleCommand({
        RoleName: 'KarpenterNodeRole-c1',
        AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
      }),
    );
    for (const [name, cluster] of [
      ['c1_default', CLUSTER],
      ['c2_default', 'c2'],
    ] as const) {
      await c.account.iam.send(
        new CreateInstanceProfileCommand({
          InstanceProfileName: name,
          Path: `/karpenter/us-west-2/${cluster}/default/`,
          Tags: tags(cluster),
        }),
      );
      await c.account.iam.send(
        new AddRoleToInstanceProfileCommand({ InstanceProfileName: name, RoleName: 'KarpenterNodeRole-c1' }),
      );
    }
    const running = await launch(c, ourTags('general-ddddd'));
    // The cluster may be gone by the time the stack is destroyed: the uninstall never needs it.
    await c.api.stop();

    const response = await c.destroy();

    expect(response).toMatchObject({
      Status: 'SUCCESS',
      RequestId: 'delete-ProvisionerUninstall',
      LogicalResourceId: 'ProvisionerUninstall',
      PhysicalResourceId: 'Karpless-c1/ProvisionerUninstall',
      Data: { StillRunning: running, Failed: '0' },
    });
    expect(response.Reason).toContain(`still running: ${running}`);
    const profiles = await c.account.iam.send(new ListInstanceProfilesCommand({}));
    expect((profiles.InstanceProfiles ?? []).map((p) => p.InstanceProfileName)).toEqual(['c2_default']);
    const ofRole = await c.account.iam.send(
      new ListInstanceProfilesForRoleCommand({ RoleName: 'KarpenterNodeRole-c1' }),
    );
    expect((ofRole.InstanceProfiles ?? []).map((p) => p.InstanceProfileName)).toEqual(['c2_default']);
    const templates = await c.account.ec2.send(new DescribeLaunchTemplatesCommand({}));
    expect((templates.LaunchTemplates ?? []).map((t) => t.LaunchTemplateName)).toEqual(['karpenter.k8s.aws/theirs']);
    // Nothing is terminated: a running node may carry workloads.
    expect(await stateOf(c, running)).toBe('running');
  });

  it('removes empty nodes after consolidateAfter, not before, never more than the budget at once', async () => {
    const c = await cluster();
    c.api.addDaemonSet(daemonSet('agent'));
    const names: string[] = [];
    for (const [i, claim] of ['general-fffff', 'general-ggggg', 'general-hhhhh'].entries()) {
      const id = await launch(c, ourTags(claim));
      const name = `ip-10-0-2-${i}.us-west-2.compute.internal`;
      c.api.addNode(registeredNode(name, id, { [KUBE.initializedLabel]: 'true' }));
      c.api.addPod({
        ...pod(`agent-${i}`, { namespace: 'kube-system', nodeName: name, owner: { kind: 'DaemonSet', name: 'agent' } }),
        status: { phase: 'Running' },
      });
      names.push(name);
    }
    // A fourth node runs a workload: never empty.
    const busyId = await launch(c, ourTags('general-iiiii'));
    c.api.addNode(registeredNode('busy', busyId, { [KUBE.initializedLabel]: 'true' }));
    c.api.addPod({
      ...pod('web', { nodeName: 'busy', owner: { kind: 'ReplicaSet', name: 'web' } }),
      status: { phase: 'Running' },
    });
    const deleting = () =>
      c.api
        .nodes()
        .filter((n) => n.metadata.deletionTimestamp !== undefined)
        .map((n) => n.metadata.name);

    const first = await c.gc();
    expect(first.emptiness.marked.sort()).toEqual([...names].sort());
    expect(c.api.getNode(names[0] ?? '')?.metadata.annotations?.[EMPTY_SINCE_ANNOTATION]).toBeDefined();
    c.advance(30_000);
    expect((await c.gc()).emptiness.disrupted).toEqual([]);
    expect(deleting()).toEqual([]);

    c.advance(31_000);
    const due = await c.gc();
    expect(due.emptiness.disrupted).toHaveLength(1);
    expect(due.emptiness.blocked).toHaveLength(2);
    expect(deleting()).toHaveLength(1);
    // Still draining: the budget stays used up.
    expect((await c.gc()).emptiness.disrupted).toEqual([]);
    expect(deleting()).toHaveLength(1);

    // The watcher's termination flow drains it and terminates its instance; the next gc run frees
    // the slot and hands over the next empty node.
    await c.watch(8_000);
    expect(c.api.nodes().map((n) => n.metadata.name)).toHaveLength(3);
    const next = await c.gc();
    expect(next.emptiness.finished).toHaveLength(1);
    expect(next.emptiness.disrupted).toHaveLength(1);
    expect(deleting()).toHaveLength(1);
    expect(c.api.getNode('busy')?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('leaves an underutilized node alone: single-node consolidation is the drift function’s', async () => {
    const consolidating: NodePool = {
      ...nodePool,
      spec: {
        ...nodePool.spec,
        template: {
          spec: {
            ...nodePool.spec.template.spec,
            requirements: [
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
            ],
          },
        },
        disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s' },
      },
    };
    const c = await cluster(consolidating);
    for (const [i, claim] of ['general-jjjjj', 'general-kkkkk'].entries()) {
      const id = await launch(c, ourTags(claim), 'm5.large');
      const name = `ip-10-0-3-${i}.us-west-2.compute.internal`;
      const n = registeredNode(name, id, { [KUBE.initializedLabel]: 'true' });
      n.status = { allocatable: { cpu: '2', memory: '8Gi', pods: '110' } };
      c.api.addNode(n);
      c.api.addPod({
        ...pod(`web-${i}`, { nodeName: name, cpu: '500m', owner: { kind: 'ReplicaSet', name: 'web' } }),
        status: { phase: 'Running' },
      });
    }
    const deleting = () =>
      c.api
        .nodes()
        .filter((n) => n.metadata.deletionTimestamp !== undefined)
        .map((n) => n.metadata.name);

    // Either node's pod fits on the other, so the drift function would delete one; gc does not.
    const report = await c.gc();
    expect(report.failed).toEqual([]);
    expect(report.emptiness.disrupted).toEqual([]);
    expect(deleting()).toEqual([]);
    expect(await c.runtime.state.disruptionRecords()).toEqual([]);
    expect(c.api.nodes().every((n) => (n.spec?.taints ?? []).length === 0)).toBe(true);
  });
});
