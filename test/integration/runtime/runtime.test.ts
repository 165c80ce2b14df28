// The three handlers in-process against moto (EC2, SQS, EventBridge, DynamoDB) and the fake API
// server: pending pods → watcher → notice on the bus → provision → tagged instance → the test plays
// the kubelet → the watcher registers the node; redelivery, interruptions, node deletion.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeInstancesCommand, type Instance, RunInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateEventBusCommand, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler as interruptionHandler } from '../../../lambdas/interruption/handler';
import { createHandler as provisionHandler } from '../../../lambdas/provision/handler';
import { createHandler as watcherHandler } from '../../../lambdas/watcher/handler';
import type { Pod } from '../../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { DETAIL_TYPE, EVENT_SOURCE, KUBE, TAG } from '../../../shared/contracts';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { KARPENTER_LEASE, KarpenterRunningError } from '../../../shared/runtime/coexistence';
import { runningKarpenterGuard } from '../../../shared/runtime/deps/coexistence';
import { interruptionDeps } from '../../../shared/runtime/deps/interruption';
import { provisionDeps } from '../../../shared/runtime/deps/provision';
import { watcherDeps } from '../../../shared/runtime/deps/watcher';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import { RecordingRetryQueue } from '../../runtime/fakes';
import { node, pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { createCluster, createNetwork, type MotoAccount, motoAccount } from '../helpers';
import { type FunctionRuntimes, functionRuntimes } from '../iam';

const CLUSTER = 'c1';

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
      metadata: { labels: { team: 'platform' } },
      spec: {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'c5.large', 'm5.xlarge'] },
        ],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      },
    },
  },
};

let account: MotoAccount;
let api: FakeApiServer;
let runtimes: FunctionRuntimes;
let noticeQueue: string;
let tools: Powertools;

function context(remainingMs: number): Context {
  return { getRemainingTimeInMillis: () => remainingMs, awsRequestId: 'req', functionName: 'fn' } as unknown as Context;
}

async function receiveAll(queueUrl: string): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const page = await account.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!page.Messages?.length) return out;
    out.push(...page.Messages);
  }
}

function sqsEvent(bodies: string[]): SQSEvent {
  return { Records: bodies.map((body, i) => ({ messageId: `m${i}`, body })) } as unknown as SQSEvent;
}

const PRESEEDED_CLAIMS = new Set(['general-spot1', 'general-kp7x2']);

async function ourInstances(): Promise<Instance[]> {
  const out = await account.ec2.send(
    new DescribeInstancesCommand({ Filters: [{ Name: `tag:${TAG.clusterName}`, Values: [CLUSTER] }] }),
  );
  // Tests that start instances of their own (registeredNodeOfOurs) name their claims in this set; the
  // file's tests run in random order, so those are left out wherever they come first.
  return (out.Reservations ?? [])
    .flatMap((r) => r.Instances ?? [])
    .filter((i) => !(i.Tags ?? []).some((t) => t.Key === TAG.nodeClaim && PRESEEDED_CLAIMS.has(t.Value ?? '')));
}

function pendingPod(name: string, cpu = '500m'): Pod {
  const p = pod(name, { cpu, owner: { kind: 'ReplicaSet', name: 'web' } });
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  return p;
}

/** An instance tagged as one of ours (as Karpenter tags it too) and its registered Node with our finalizer. */
async function registeredNodeOfOurs(nodeClaim: string, nodeName: string): Promise<string> {
  const launched = await account.ec2.send(
    new RunInstancesCommand({
      ImageId: 'ami-12c6146b',
      MinCount: 1,
      MaxCount: 1,
      TagSpecifications: [
        {
          ResourceType: 'instance',
          Tags: [
            { Key: TAG.clusterName, Value: CLUSTER },
            { Key: TAG.clusterOwned(CLUSTER), Value: 'owned' },
            { Key: TAG.nodeClaim, Value: nodeClaim },
            { Key: TAG.nodePool, Value: 'general' },
          ],
        },
      ],
    }),
  );
  const instanceId = launched.Instances?.[0]?.InstanceId ?? '';
  api.addNode(
    node(nodeName, {
      providerID: `aws:///us-west-2a/${instanceId}`,
      labels: { [KUBE.registeredLabel]: 'true', [TAG.nodePool]: 'general' },
      finalizers: [KUBE.terminationFinalizer],
    }),
  );
  return instanceId;
}

const watch = (ms: number) =>
  watcherHandler(
    once(() => watcherDeps(runtimes.watcher, tools.telemetry)),
    tools,
  )({}, context(ms + 5_000));
const provisionFn = () =>
  provisionHandler(
    once(async () => provisionDeps(runtimes.provision, tools.telemetry)),
    tools,
    () => new RecordingRetryQueue(),
  );
const interruptionFn = () =>
  interruptionHandler(
    once(() => interruptionDeps(runtimes.interruption, tools.telemetry)),
    tools,
  );

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('itest', CLUSTER);
  account = motoAccount();
  await createNetwork(account, {
    subnets: [{ zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroups: [{ name: 'nodes', tags: { 'karpenter.sh/discovery': CLUSTER } }],
  });
  await createCluster(account, CLUSTER, { serviceCIDR: '172.20.0.0/16' });
  await account.iam.send(
    new CreateRoleCommand({
      RoleName: 'KarpenterNodeRole-c1',
      AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
    }),
  );
  await createStateTable(dynamoApi(account.dynamodb), 'karpless-state');
  await account.eventbridge.send(new CreateEventBusCommand({ Name: 'karpless' }));
  const queue = await account.sqs.send(new CreateQueueCommand({ QueueName: 'notices' }));
  noticeQueue = queue.QueueUrl ?? '';
  const arn = await account.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: noticeQueue, AttributeNames: ['QueueArn'] }),
  );
  await account.eventbridge.send(
    new PutRuleCommand({
      Name: 'notices',
      EventBusName: 'karpless',
      EventPattern: JSON.stringify({ source: [EVENT_SOURCE], 'detail-type': [DETAIL_TYPE.podsUnschedulable] }),
    }),
  );
  await account.eventbridge.send(
    new PutTargetsCommand({
      Rule: 'notices',
      EventBusName: 'karpless',
      Targets: [{ Id: 'q', Arn: arn.Attributes?.QueueArn ?? '' }],
    }),
  );
  api = await FakeApiServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'karpless-runtime-'));
  const configFile = join(dir, 'karpless-config.json');
  writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [nodeClass] }));
  runtimes = await functionRuntimes(account, {
    env: {
      KARPLESS_CLUSTER_NAME: CLUSTER,
      KARPLESS_STATE_TABLE: 'karpless-state',
      KARPLESS_NOTICE_BUS: 'karpless',
      KARPLESS_CONFIG_FILE: configFile,
      KARPLESS_KUBE_ENDPOINT: api.url,
      AWS_REGION: account.region,
    },
  });
});

afterAll(async () => {
  await api?.stop();
});

describe('runtime against moto and the fake API server', () => {
  it('turns pending pods into a registered node; a batch delivered three times launches once', async () => {
    api.addPod(pendingPod('web-1'));
    api.addPod(pendingPod('web-2'));
    await watch(5_000);
    const notices = await receiveAll(noticeQueue);
    expect(notices.length).toBeGreaterThan(0);
    const bodies = notices.map((m) => m.Body ?? '');

    const provision = provisionFn();
    for (let i = 0; i < 3; i++)
      expect((await provision(sqsEvent(bodies), context(60_000))).batchItemFailures).toEqual([]);
    const instances = await ourInstances();
    expect(instances).toHaveLength(1);
    const instance = instances[0]!;
    const tags = Object.fromEntries((instance.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags[TAG.nodePool]).toBe('general');
    expect(tags[TAG.nodeClaim]).toMatch(/^general-/);

    // The kubelet of the new instance registers its Node with the unregistered taint.
    api.addNode(
      node('ip-10-0-1-10.us-west-2.compute.internal', {
        providerID: `aws:///${instance.Placement?.AvailabilityZone}/${instance.InstanceId}`,
        taints: [{ key: KUBE.unregisteredTaintKey, effect: 'NoExecute' }],
      }),
    );
    await watch(5_000);
    const registered = api.getNode('ip-10-0-1-10.us-west-2.compute.internal')!;
    expect(registered.metadata.labels).toMatchObject({
      [KUBE.registeredLabel]: 'true',
      'node.kubernetes.io/instance-type': instance.InstanceType,
      'karpenter.sh/nodepool': 'general',
      team: 'platform',
    });
    expect(registered.spec?.taints ?? []).toEqual([]);
    expect(registered.metadata.finalizers).toContain(KUBE.terminationFinalizer);
    // The claim's record, written by the launch and moved to Registered by the watcher.
    const record = await runtimes.watcher.state.getNodeClaim(tags[TAG.nodeClaim] ?? '');
    expect(record?.status).toMatchObject({
      providerID: `aws:///${instance.Placement?.AvailabilityZone}/${instance.InstanceId}`,
      nodeName: 'ip-10-0-1-10.us-west-2.compute.internal',
    });
    expect(record?.status.conditions.filter((c) => c.status === 'True').map((c) => c.type)).toEqual([
      'Launched',
      'Registered',
    ]);
    // Three handlers, two watcher runs and a loaded machine: more than the default minute.
  }, 180_000);

  it('drains and terminates our spot-interrupted node, ignores another cluster’s, fails only a malformed record', async () => {
    const run = (tags: Record<string, string>) =>
      account.ec2.send(
        new RunInstancesCommand({
          ImageId: 'ami-12c6146b',
          MinCount: 1,
          MaxCount: 1,
          TagSpecifications: [
            { ResourceType: 'instance', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
          ],
        }),
      );
    // Tagged as every launched instance is (the owned tag is what the roles' deletion is scoped by).
    const ours = await run({
      [TAG.clusterName]: CLUSTER,
      [TAG.clusterOwned(CLUSTER)]: 'owned',
      [TAG.nodeClaim]: 'general-spot1',
      [TAG.nodePool]: 'general',
    });
    const instance = ours.Instances?.[0];
    const nodeName = 'ip-10-0-1-20.us-west-2.compute.internal';
    api.addNode(
      node(nodeName, {
        providerID: `aws:///us-west-2a/${instance?.InstanceId}`,
        labels: { [KUBE.registeredLabel]: 'true' },
        finalizers: [KUBE.terminationFinalizer],
      }),
    );
    api.addPod({
      ...pod('bound-1', { nodeName, owner: { kind: 'ReplicaSet', name: 'web' } }),
      status: { phase: 'Running' },
    });
    const other = await run({ [TAG.clusterName]: 'other', [TAG.clusterOwned('other')]: 'owned', [TAG.nodeClaim]: 'x' });
    const otherId = other.Instances?.[0]?.InstanceId ?? '';
    const spot = (id: string) =>
      JSON.stringify({
        version: '0',
        id: `evt-${id}`,
        'detail-type': 'EC2 Spot Instance Interruption Warning',
        source: 'aws.ec2',
        account: account.accountId,
        time: new Date().toISOString(),
        region: account.region,
        resources: [`arn:aws:ec2:${account.region}:instance/${id}`],
        detail: { 'instance-id': id, 'instance-action': 'terminate' },
      });
    const response = await interruptionFn()(
      sqsEvent([spot(instance?.InstanceId ?? ''), '{"broken', spot(otherId)]),
      context(120_000),
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    expect(api.getNode(nodeName)).toBeUndefined();
    expect(api.getPod('default', 'bound-1')).toBeUndefined();
    const ourState = await account.ec2.send(
      new DescribeInstancesCommand({ InstanceIds: [instance?.InstanceId ?? ''] }),
    );
    expect(['shutting-down', 'terminated']).toContain(ourState.Reservations?.[0]?.Instances?.[0]?.State?.Name);
    const otherState = await account.ec2.send(new DescribeInstancesCommand({ InstanceIds: [otherId] }));
    expect(otherState.Reservations?.[0]?.Instances?.[0]?.State?.Name).toBe('running');
    // Nothing is planned ahead for the evicted pod: its controller's new pod is noticed like any other.
    const notices = (await receiveAll(noticeQueue)).map((m) => JSON.parse(m.Body ?? '{}'));
    expect(notices.flatMap((e) => e.detail.pods.map((p: { name: string }) => p.name))).not.toContain('bound-1');
  });

  it('finishes a `kubectl delete node`: cordoned, drained, instance terminated, finalizer removed', async () => {
    const nodeName = 'ip-10-0-1-30.us-west-2.compute.internal';
    const instanceId = await registeredNodeOfOurs('general-spot1', nodeName);
    api.addPod({
      ...pod('deleted-node-pod', { nodeName, owner: { kind: 'ReplicaSet', name: 'web' } }),
      status: { phase: 'Running' },
    });
    // What `kubectl delete node` does: the API server sets deletionTimestamp and keeps the Node
    // while our finalizer is on it.
    api.deleteNode(nodeName);
    expect(api.getNode(nodeName)?.metadata.deletionTimestamp).toBeDefined();

    await watch(8_000);

    expect(api.getPod('default', 'deleted-node-pod')).toBeUndefined();
    expect(api.getNode(nodeName)).toBeUndefined();
    const state = await account.ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    expect(['shutting-down', 'terminated']).toContain(state.Reservations?.[0]?.Instances?.[0]?.State?.Name);
  });
});

describe('beside a running Karpenter (its leader-election Lease held)', () => {
  const karpenterLease = (renewedMsAgo: number) =>
    api.putLease({
      metadata: { name: KARPENTER_LEASE, namespace: 'karpenter' },
      spec: {
        holderIdentity: 'karpenter-5f7d8-x2x9p_0c1d',
        leaseDurationSeconds: 15,
        renewTime: new Date(Date.now() - renewedMsAgo).toISOString(),
      },
    });
  const guarded = (runtime: 'watcher' | 'provision') =>
    runningKarpenterGuard(async () => runtimes[runtime], tools.telemetry);

  it('acts on nothing while Karpenter runs, and takes over once it is stopped', async () => {
    const nodeName = 'ip-10-0-1-77.us-west-2.compute.internal';
    const instanceId = await registeredNodeOfOurs('general-kp7x2', nodeName);
    api.deleteNode(nodeName);
    karpenterLease(3_000);
    const watcher = watcherHandler(
      once(() => watcherDeps(runtimes.watcher, tools.telemetry)),
      tools,
      guarded('watcher'),
    );
    const provision = provisionHandler(
      once(async () => provisionDeps(runtimes.provision, tools.telemetry)),
      tools,
      () => new RecordingRetryQueue(),
      guarded('provision'),
    );

    // Both would act (finish the deleted Node, plan a notice): both refuse, as failed runs.
    await expect(watcher({}, context(8_000))).rejects.toBeInstanceOf(KarpenterRunningError);
    const response = await provision(sqsEvent(['{}']), context(60_000));
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
    expect(api.getNode(nodeName)?.metadata.finalizers).toEqual([KUBE.terminationFinalizer]);
    const held = await account.ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    expect(held.Reservations?.[0]?.Instances?.[0]?.State?.Name).toBe('running');

    // Karpenter scaled to zero: its Lease is no longer renewed.
    karpenterLease(10 * 60_000);
    // The termination may take more than one run on a loaded machine (the run ends near its deadline,
    // which is wall-clock time); the schedule runs the watcher every minute.
    for (let run = 0; run < 4 && api.getNode(nodeName); run++) await watcher({}, context(8_000));
    expect(api.getNode(nodeName)).toBeUndefined();
    const gone = await account.ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    expect(['shutting-down', 'terminated']).toContain(gone.Reservations?.[0]?.Instances?.[0]?.State?.Name);
  });
});
