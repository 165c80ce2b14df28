// The functions under their own synthesized roles (moto's IAM enforcement plus the policy simulation
// of every call): the watcher's cold start and registration, launches into a RAM-shared subnet and
// security group, a custom ssmParameter AMI; and the harness itself: a statement removed from a role
// is found, and moto refuses an action the role lacks even without the simulation.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  EC2Client,
  type Instance,
  RunInstancesCommand,
} from '@aws-sdk/client-ec2';
import { CreateEventBusCommand, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { PutParameterCommand } from '@aws-sdk/client-ssm';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as provisionHandler } from '../../../lambdas/provision/handler';
import { createHandler as watcherHandler } from '../../../lambdas/watcher/handler';
import type { Pod } from '../../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { DETAIL_TYPE, EVENT_SOURCE, KUBE, TAG } from '../../../shared/contracts';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { provisionDeps } from '../../../shared/runtime/deps/provision';
import { watcherDeps } from '../../../shared/runtime/deps/watcher';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import { RecordingRetryQueue } from '../../runtime/fakes';
import { node, pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { createCluster, createNetwork, inAccount, type MotoAccount, motoAccount } from '../helpers';
import { seedImageId } from '../moto/seed';
import { assumeFunctionRole, type FunctionName, functionRoles, functionRuntimes, RAM_OWNER_TAG, takeDenials } from '.';

const CLUSTER = 'iam1';
const ROLE = `KarpenterNodeRole-${CLUSTER}`;
/** The account that shares its VPC's subnets and security groups through AWS RAM. */
const NETWORK_OWNER = '210987654321';

function nodeClass(
  amiSelectorTerms: EC2NodeClass['spec']['amiSelectorTerms'],
  amiFamily?: EC2NodeClass['spec']['amiFamily'],
): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
      amiSelectorTerms,
      ...(amiFamily ? { amiFamily } : {}),
      role: ROLE,
    },
  };
}

const nodePool: NodePool = {
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
      },
    },
  },
};

// Each test deploys a fresh account and runs functions end to end: minutes on a loaded 2-core machine.
vi.setConfig({ testTimeout: 180_000 });

let tools: Powertools;
const servers: FakeApiServer[] = [];

beforeAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('iam', CLUSTER);
});

afterEach(async () => {
  for (const api of servers.splice(0)) await api.stop();
});

function context(remainingMs: number): Context {
  return { getRemainingTimeInMillis: () => remainingMs, awsRequestId: 'req', functionName: 'fn' } as unknown as Context;
}

interface Cluster {
  account: MotoAccount;
  api: FakeApiServer;
  env: Record<string, string>;
  noticeQueue: string;
}

/** A fresh account with the cluster, its (RAM-shared, when asked) network, node role, table and bus. */
async function cluster(options: { nodeClass: EC2NodeClass; sharedNetwork?: boolean }): Promise<Cluster> {
  const account = motoAccount();
  const discovery = { 'karpenter.sh/discovery': CLUSTER };
  const tags = options.sharedNetwork ? { ...discovery, [RAM_OWNER_TAG]: NETWORK_OWNER } : discovery;
  await createNetwork(account, {
    subnets: [{ zone: 'us-west-2a', cidr: '10.0.1.0/24', tags }],
    securityGroups: [{ name: 'nodes', tags }],
  });
  await createCluster(account, CLUSTER, { serviceCIDR: '172.20.0.0/16' });
  await account.iam.send(
    new CreateRoleCommand({
      RoleName: ROLE,
      AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
    }),
  );
  await createStateTable(dynamoApi(account.dynamodb), 'karpless-state');
  await account.eventbridge.send(new CreateEventBusCommand({ Name: 'karpless' }));
  const queue = await account.sqs.send(new CreateQueueCommand({ QueueName: 'notices' }));
  const noticeQueue = queue.QueueUrl ?? '';
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
  const api = await FakeApiServer.start();
  servers.push(api);
  const configFile = join(mkdtempSync(join(tmpdir(), 'karpless-iam-')), 'karpless-config.json');
  writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [options.nodeClass] }));
  const env = {
    KARPLESS_CLUSTER_NAME: CLUSTER,
    KARPLESS_STATE_TABLE: 'karpless-state',
    KARPLESS_NOTICE_BUS: 'karpless',
    KARPLESS_CONFIG_FILE: configFile,
    KARPLESS_KUBE_ENDPOINT: api.url,
    AWS_REGION: account.region,
  };
  return { account, api, env, noticeQueue };
}

function pendingPod(name: string): Pod {
  const p = pod(name, { cpu: '500m', owner: { kind: 'ReplicaSet', name: 'web' } });
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  return p;
}

async function ourInstances(account: MotoAccount): Promise<Instance[]> {
  const out = await account.ec2.send(
    new DescribeInstancesCommand({ Filters: [{ Name: `tag:${TAG.clusterName}`, Values: [CLUSTER] }] }),
  );
  return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
}

/** Pending pod → the watcher's notice → the provision function; returns its batch failures. */
async function launch(c: Cluster, without?: { function: FunctionName; sid: string }) {
  const runtimes = await functionRuntimes(c.account, { env: c.env, ...(without ? { without } : {}) });
  c.api.addPod(pendingPod('web-1'));
  await watcherHandler(
    once(() => watcherDeps(runtimes.watcher, tools.telemetry)),
    tools,
  )({}, context(8_000));
  const received = await c.account.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: c.noticeQueue, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
  );
  const bodies = (received.Messages ?? []).map((m) => m.Body ?? '');
  expect(bodies.length).toBeGreaterThan(0);
  const event = { Records: bodies.map((body, i) => ({ messageId: `m${i}`, body })) } as unknown as SQSEvent;
  const provision = provisionHandler(
    once(async () => provisionDeps(runtimes.provision, tools.telemetry)),
    tools,
    () => new RecordingRetryQueue(),
  );
  return (await provision(event, context(60_000))).batchItemFailures;
}

describe('functions under their synthesized roles', () => {
  it('the watcher starts and registers a node with its instance type’s labels', async () => {
    const c = await cluster({ nodeClass: nodeClass([{ alias: 'al2023@latest' }]) });
    const runtimes = await functionRuntimes(c.account, { env: c.env });
    const launched = await c.account.ec2.send(
      new RunInstancesCommand({
        ImageId: 'ami-12c6146b',
        InstanceType: 'm5.large',
        MinCount: 1,
        MaxCount: 1,
        TagSpecifications: [
          {
            ResourceType: 'instance',
            Tags: [
              { Key: TAG.clusterName, Value: CLUSTER },
              { Key: TAG.clusterOwned(CLUSTER), Value: 'owned' },
              { Key: TAG.nodePool, Value: 'general' },
              { Key: TAG.nodeClass, Value: 'default' },
              { Key: TAG.nodeClaim, Value: 'general-abcde' },
            ],
          },
        ],
      }),
    );
    const instance = launched.Instances?.[0];
    const name = 'ip-10-0-1-40.us-west-2.compute.internal';
    c.api.addNode(
      node(name, {
        providerID: `aws:///us-west-2a/${instance?.InstanceId}`,
        taints: [{ key: KUBE.unregisteredTaintKey, effect: 'NoExecute' }],
      }),
    );
    await watcherHandler(
      once(() => watcherDeps(runtimes.watcher, tools.telemetry)),
      tools,
    )({}, context(10_000));
    expect(c.api.getNode(name)?.metadata.labels).toMatchObject({
      [KUBE.registeredLabel]: 'true',
      'node.kubernetes.io/instance-type': 'm5.large',
      'karpenter.k8s.aws/instance-cpu': '2',
      'karpenter.k8s.aws/instance-family': 'm5',
      'kubernetes.io/arch': 'amd64',
    });
  });

  it('launches into a subnet and security group another account shares through RAM', async () => {
    const c = await cluster({ nodeClass: nodeClass([{ alias: 'al2023@latest' }]), sharedNetwork: true });
    expect(await launch(c)).toEqual([]);
    expect(await ourInstances(c.account)).toHaveLength(1);
  });

  it('launches with a custom ssmParameter AMI term', async () => {
    const c = await cluster({ nodeClass: nodeClass([{ ssmParameter: '/team/eks/node-ami' }], 'AL2023') });
    const image = seedImageId(`amazon-eks-node-al2023-x86_64-standard-1.31-v20240917`);
    await c.account.ssm.send(
      new PutParameterCommand({ Name: '/team/eks/node-ami', Value: image, Type: 'String', DataType: 'aws:ec2:image' }),
    );
    expect(await launch(c)).toEqual([]);
    expect((await ourInstances(c.account)).map((i) => i.ImageId)).toEqual([image]);
  });
});

describe('the IAM harness', () => {
  it('finds the calls a statement removed from a role allowed', async () => {
    const c = await cluster({ nodeClass: nodeClass([{ alias: 'al2023@latest' }]) });
    const failures = await launch(c, { function: 'provision', sid: 'AllowScopedEC2InstanceActionsWithTags' });
    const denials = takeDenials();
    expect(failures).toHaveLength(1);
    expect(await ourInstances(c.account)).toEqual([]);
    // The statement also allows creating the tagged launch template, the first call that needs it.
    expect(denials.map((d) => [d.function, d.request.action, d.request.resource])).toContainEqual([
      'provision',
      'ec2:CreateLaunchTemplate',
      `arn:aws:ec2:us-west-2:${c.account.accountId}:launch-template/*`,
    ]);
  });

  it('has moto refuse an action the role does not grant, without the simulation', async () => {
    const c = await cluster({ nodeClass: nodeClass([{ alias: 'al2023@latest' }]) });
    const roles = await functionRoles(c.account, c.env);
    const gc = await assumeFunctionRole(c.account, roles.gc);
    const ec2 = inAccount(
      new EC2Client({ endpoint: c.account.endpoint, region: c.account.region, credentials: gc.credentials }),
      c.account.accountId,
    );
    await expect(ec2.send(new DescribeInstancesCommand({}))).resolves.toBeDefined();
    await expect(ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large'] }))).rejects.toThrow(
      /not authorized|UnauthorizedOperation|AccessDenied/i,
    );
  });
});
