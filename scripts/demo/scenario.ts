// `npm run demo`: the whole system on the moto emulator and the in-repo fake API server. The real
// handlers run in-process as their events arrive: pending pods → watcher → notice → provision →
// instances → nodes join and are registered → a spot warning on the default bus → interruption →
// drained, terminated, replaced. The demo plays only what is not karpless: the kubelet (a Node for
// each new instance), the Deployment controller (an evicted pod comes back pending), kube-scheduler
// (pending pods bound to registered nodes) and Lambda's event-source mappings (queue → handler).

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeInstancesCommand,
  EC2Client,
  type Instance,
  ModifyInstanceAttributeCommand,
} from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';
import { EventBridgeClient, PutEventsCommand, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { IAMClient } from '@aws-sdk/client-iam';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { Template as CdkTemplate } from 'aws-cdk-lib/assertions';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { buildKarplessApp } from '../../infra/karpless-stack';
import { createHandler as driftHandler } from '../../lambdas/drift/handler';
import { createHandler as interruptionHandler } from '../../lambdas/interruption/handler';
import { createHandler as provisionHandler } from '../../lambdas/provision/handler';
import { createHandler as watcherHandler } from '../../lambdas/watcher/handler';
import type { Node, Pod } from '../../shared/apis/core/v1';
import { DETAIL_TYPE, ENV, EVENT_SOURCE, KUBE, METRICS_NAMESPACE } from '../../shared/contracts';
import { dynamoApi } from '../../shared/providers/dynamo-port';
import { DynamoStateStore } from '../../shared/providers/dynamostate';
import { bundledSnapshot } from '../../shared/providers/pricing';
import { driftDeps } from '../../shared/runtime/deps/drift';
import { interruptionDeps } from '../../shared/runtime/deps/interruption';
import { provisionDeps, provisionRetryQueue } from '../../shared/runtime/deps/provision';
import { watcherDeps } from '../../shared/runtime/deps/watcher';
import { buildRuntime, type Runtime } from '../../shared/runtime/environment';
import { once, type Powertools } from '../../shared/runtime/powertools';
import type { NodeClaimsLaunchedDetail } from '../../shared/runtime/provision';
import type { Telemetry } from '../../shared/runtime/telemetry';
import { FakeApiServer } from '../../test/support/kube/fake-apiserver';
import {
  type AwsEndpoint,
  createClusterResources,
  DEMO_ACCOUNT,
  DEMO_ZONES,
  type DeployedStack,
  deployStack,
  type Template,
} from './aws';
import { type RolloutResult, rollOutNewAMI } from './drift';
import { Timeline } from './timeline';

export const DEMO_CLUSTER = 'karpless-demo';
const MANIFESTS = 'examples/demo';

export interface DemoResult {
  timeline: Timeline;
  launched: NodeClaimsLaunchedDetail[];
  /** Instance id → state at the end. */
  instances: Map<string, Instance>;
  nodes: Node[];
  pods: Pod[];
  interruptedInstance: string;
  /** The AMI release rolled out by the drift function. */
  rollout: RolloutResult;
  stack: DeployedStack;
}

const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function silentPowertools(serviceName: string, timeline: Timeline): Powertools {
  const actor = serviceName.replace('karpless-', '') as 'watcher' | 'provision' | 'interruption' | 'drift';
  const telemetry: Telemetry = {
    log: {
      debug: () => undefined,
      info: () => undefined,
      warn: (message, fields) => timeline.add(actor, `warning: ${message} ${JSON.stringify(fields ?? {})}`),
      error: (message, fields) => timeline.add(actor, `error: ${message} ${JSON.stringify(fields ?? {})}`),
    },
    metrics: { record: () => undefined },
  };
  return {
    logger: new Logger({ serviceName, logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName, logger: QUIET }),
    telemetry,
  };
}

function lambdaContext(remainingMs: number): Context {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'demo',
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-west-2:${DEMO_ACCOUNT}:function:demo`,
    memoryLimitInMB: '512',
    awsRequestId: `demo-${Date.now()}`,
    logGroupName: 'demo',
    logStreamName: 'demo',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function pendingPod(name: string, cpu: string, memory: string, app = 'web'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      labels: { app },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-7d4f9`, controller: true }],
    },
    spec: { containers: [{ name: app, resources: { requests: { cpu, memory } } }] },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
    },
  };
}

export interface DemoOptions {
  aws: AwsEndpoint;
  timeline?: Timeline;
  /** Replicas of the web Deployment. */
  replicas?: number;
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const { aws } = options;
  const timeline = options.timeline ?? new Timeline();
  const clients = {
    ec2: new EC2Client(aws),
    eks: new EKSClient(aws),
    ssm: new SSMClient(aws),
    iam: new IAMClient(aws),
    dynamodb: new DynamoDBClient(aws),
    eventbridge: new EventBridgeClient(aws),
  };
  const sqs = new SQSClient(aws);
  const kube = await FakeApiServer.start();
  try {
    const network = await createClusterResources(aws, DEMO_CLUSTER);
    timeline.add(
      'aws',
      `VPC ${network.vpcId}, subnets ${network.subnets.map((s) => `${s.id} (${s.zone})`).join(', ')}, security group ${network.securityGroupId}, AMI ${network.imageId}, EKS cluster ${DEMO_CLUSTER}`,
    );

    const { stack, provisioner } = buildKarplessApp(
      { clusterName: DEMO_CLUSTER, manifests: [MANIFESTS] },
      { context: { 'aws:cdk:bundling-stacks': [] } },
    );
    const template = CdkTemplate.fromStack(stack).toJSON() as Template;
    timeline.add('stack', `synthesized ${stack.stackName}: ${Object.keys(template.Resources).length} resources`);
    const deployed = await deployStack(aws, stack.stackName, template);
    timeline.add(
      'stack',
      `${stack.stackName} CREATE_COMPLETE on moto's CloudFormation (${deployed.resources.size} resources)`,
    );
    for (const s of deployed.substitutions) timeline.add('stack', `${s.logicalId} (${s.type}) ${s.action}: ${s.why}`);

    const tableName = [...deployed.resources.values()].find((r) => r.type === 'AWS::DynamoDB::Table')?.physicalId ?? '';
    const busName = `karpless-${DEMO_CLUSTER}-notices`;
    const provisionQueue = await deployed.queueUrl(`karpless-${DEMO_CLUSTER}-provision.fifo`);
    const provisionDeadLetterQueue = await deployed.queueUrl(`karpless-${DEMO_CLUSTER}-provision-dlq.fifo`);
    const interruptionQueue = await deployed.queueUrl(`karpless-${DEMO_CLUSTER}-interruption`);
    // The demo's own window on decisions: NodeClaimsLaunched events into a queue it reads.
    const observer =
      (await sqs.send(new CreateQueueCommand({ QueueName: `${DEMO_CLUSTER}-decisions` }))).QueueUrl ?? '';
    const observerArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: observer, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn;
    await clients.eventbridge.send(
      new PutRuleCommand({
        Name: 'demo-decisions',
        EventBusName: busName,
        EventPattern: JSON.stringify({ source: [EVENT_SOURCE], 'detail-type': [DETAIL_TYPE.nodeClaimsLaunched] }),
      }),
    );
    await clients.eventbridge.send(
      new PutTargetsCommand({
        Rule: 'demo-decisions',
        EventBusName: busName,
        Targets: [{ Id: 'demo', Arn: observerArn }],
      }),
    );

    const env = {
      [ENV.clusterName]: DEMO_CLUSTER,
      [ENV.stateTable]: tableName,
      [ENV.noticeBus]: busName,
      [ENV.configFile]: provisioner.configurationFile,
      [ENV.kubeEndpoint]: kube.url,
      [ENV.rebalanceAction]: 'record',
      AWS_REGION: aws.region,
    };
    await seedPrices(clients.dynamodb, tableName, aws.region, timeline);
    const runtime = (): Runtime => buildRuntime({ env, clients });
    const watcherTools = silentPowertools('karpless-watcher', timeline);
    const provisionTools = silentPowertools('karpless-provision', timeline);
    const interruptionTools = silentPowertools('karpless-interruption', timeline);
    // Each function's cold start (configuration, clients, Kubernetes access) happens once, before
    // its first invocation, as Lambda's init phase does.
    const loadWatcher = once(async () => watcherDeps(runtime(), watcherTools.telemetry));
    const loadProvision = once(async () => provisionDeps(runtime(), provisionTools.telemetry));
    const loadInterruption = once(async () => interruptionDeps(runtime(), interruptionTools.telemetry));
    const coldStart = Date.now();
    await Promise.all([loadWatcher(), loadProvision(), loadInterruption()]);
    timeline.add(
      'demo',
      `functions initialised in ${Date.now() - coldStart} ms (configuration, clients, API server access)`,
    );
    const watch = watcherHandler(loadWatcher, watcherTools);
    const retryQueue = provisionRetryQueue(
      {
        AWS_REGION: aws.region,
        [ENV.provisionQueueUrl]: provisionQueue,
        [ENV.provisionDeadLetterQueueUrl]: provisionDeadLetterQueue,
      },
      sqs,
    );
    const provision = provisionHandler(loadProvision, provisionTools, () => retryQueue);
    const interrupt = interruptionHandler(loadInterruption, interruptionTools);

    const launched: NodeClaimsLaunchedDetail[] = [];
    const readDecisions = async () => {
      for (const message of await drain(sqs, observer)) {
        const detail = (JSON.parse(message.body) as { detail: NodeClaimsLaunchedDetail }).detail;
        launched.push(detail);
        for (const c of detail.nodeClaims) {
          timeline.add(
            'provision',
            `NodeClaim ${c.nodeClaimName}: ${c.instanceType} ${c.capacityType} in ${c.zone}, $${c.price.toFixed(4)}/hour, ${c.pods.length} pods → ${c.instanceId}${c.existing ? ' (already running)' : ''}`,
          );
        }
        for (const u of detail.unschedulable)
          timeline.add('provision', `unschedulable ${u.pod}: ${u.reasons.join('; ')}`);
        timeline.add('provision', `prices from ${detail.priceSource}`);
      }
    };
    const runWatcher = async (why: string) => {
      const report = await watch({}, lambdaContext(8_000));
      timeline.add('watcher', `${why}: ${JSON.stringify(report)}`);
    };
    const pumpProvision = async () => {
      const messages = await drain(sqs, provisionQueue, false);
      if (messages.length === 0) return;
      const out = await provision(sqsEvent(messages), lambdaContext(120_000));
      timeline.add('provision', `batch of ${messages.length} notice(s), ${out.batchItemFailures.length} failed`);
      await acknowledge(sqs, provisionQueue, messages, out.batchItemFailures);
      await readDecisions();
    };

    // 1. Pending pods appear.
    const replicas = options.replicas ?? 6;
    for (let i = 0; i < replicas; i++) kube.addPod(pendingPod(`web-${i}`, '1', '2Gi'));
    timeline.add('cluster', `${replicas} pending pods (web, 1 CPU / 2 GiB each), none fits an existing node`);

    // 2. watcher → notice → provision queue → provision.
    await runWatcher('pending pods noticed');
    await pumpProvision();

    // 3. The kubelets start, the watcher registers the nodes, the scheduler binds the pods.
    await joinNodes(clients.ec2, kube, timeline, network.securityGroupId);
    await runWatcher('nodes registered');
    schedulePods(kube, launched, timeline);

    // 4. A spot interruption warning for one of our instances, on the default bus.
    const victim =
      launched.flatMap((d) => d.nodeClaims).find((c) => c.capacityType === 'spot') ?? launched[0]?.nodeClaims[0];
    if (!victim) throw new Error('demo: nothing was launched');
    await clients.eventbridge.send(
      new PutEventsCommand({
        Entries: [
          {
            Source: 'aws.ec2',
            DetailType: 'EC2 Spot Instance Interruption Warning',
            Resources: [`arn:aws:ec2:${aws.region}:${DEMO_ACCOUNT}:instance/${victim.instanceId}`],
            Detail: JSON.stringify({ 'instance-id': victim.instanceId, 'instance-action': 'terminate' }),
          },
        ],
      }),
    );
    timeline.add(
      'aws',
      `EC2 Spot Instance Interruption Warning for ${victim.instanceId} (${victim.nodeClaimName}) on the default bus`,
    );
    const warnings = await drain(sqs, interruptionQueue, false);
    const out = await interrupt(sqsEvent(warnings), lambdaContext(20_000));
    timeline.add('interruption', `batch of ${warnings.length}, ${out.batchItemFailures.length} failed`);
    await acknowledge(sqs, interruptionQueue, warnings, out.batchItemFailures);
    recreateEvicted(kube, replicas, timeline);

    // 5. The replacement: notice → provision → a new instance → it joins.
    await runWatcher('evicted pods noticed again');
    await pumpProvision();
    await joinNodes(clients.ec2, kube, timeline, network.securityGroupId);
    await runWatcher('replacement registered');
    schedulePods(kube, launched, timeline);

    // 6. A second Deployment that needs a node of its own, then an AMI release that rolls the
    // nodes one by one (the NodePool's budget is 1 node).
    const api = { name: 'api', cpu: '6', memory: '12Gi' };
    for (let i = 0; i < 2; i++) kube.addPod(pendingPod(`api-${i}`, api.cpu, api.memory, api.name));
    timeline.add('cluster', `2 pending pods (api, ${api.cpu} CPU / ${api.memory} each)`);
    await runWatcher('api pods noticed');
    await pumpProvision();
    await joinNodes(clients.ec2, kube, timeline, network.securityGroupId);
    await runWatcher('api node registered');
    schedulePods(kube, launched, timeline);
    const driftTools = silentPowertools('karpless-drift', timeline);
    const drift = driftHandler(
      once(async () => driftDeps(runtime(), driftTools.telemetry)),
      driftTools,
    );
    const rollout = await rollOutNewAMI(
      {
        ec2: clients.ec2,
        kube,
        timeline,
        region: aws.region,
        drift: async (event) => {
          const report = await drift(event, lambdaContext(60_000));
          if (!('trigger' in report)) throw new Error(`demo: drift run failed: ${JSON.stringify(report)}`);
          return report;
        },
        joinNodes: () => joinNodes(clients.ec2, kube, timeline, network.securityGroupId),
        runWatcher,
        settlePods: () => {
          recreateEvicted(kube, replicas, timeline);
          recreateEvicted(kube, 2, timeline, api);
          schedulePods(kube, launched, timeline);
        },
      },
      network.imageId,
    );
    timeline.add(
      'demo',
      `${rollout.rolled.length} nodes rolled from ${rollout.from} to ${rollout.to}, at most ${rollout.maxDisrupting} at a time`,
    );

    const instances = await describeInstances(clients.ec2);
    const victimState = instances.get(victim.instanceId)?.State?.Name;
    timeline.add(
      'demo',
      `${victim.instanceId} is ${victimState}; ${[...instances.values()].filter((i) => i.State?.Name === 'running').length} instances running`,
    );
    return {
      timeline,
      launched,
      instances,
      nodes: kube.nodes(),
      pods: kube.pods(),
      interruptedInstance: victim.instanceId,
      rollout,
      stack: deployed,
    };
  } finally {
    await kube.stop();
    sqs.destroy();
    for (const c of Object.values(clients)) c.destroy();
  }
}

/**
 * moto prices every spot offering at $0.00001, which would make the demo's plan meaningless: the
 * demo puts a price snapshot in the state table as the pricing refresh would have (on-demand from the
 * bundled table, spot at about a third of it, a little different per zone).
 */
async function seedPrices(dynamodb: DynamoDBClient, table: string, region: string, timeline: Timeline): Promise<void> {
  const bundled = bundledSnapshot(region);
  const spot: Record<string, number> = {};
  for (const [type, price] of Object.entries(bundled.onDemand)) {
    DEMO_ZONES.forEach((zone, i) => {
      spot[`${type}:${zone}`] = Math.round(price * (0.3 + 0.03 * i) * 10_000) / 10_000;
    });
  }
  const store = new DynamoStateStore(dynamoApi(dynamodb), table);
  await store.putPrices(region, {
    source: 'bundled+demo-spot',
    fetchedAt: Date.now(),
    onDemand: bundled.onDemand,
    spot,
  });
  timeline.add(
    'demo',
    `price snapshot seeded: ${Object.keys(bundled.onDemand).length} on-demand prices (bundled), spot at 30-36% of on-demand (moto's spot prices are a placeholder)`,
  );
}

interface QueueMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: Record<string, string>;
}

/** Everything in the queue now; deleted at once unless the caller acknowledges it itself. */
async function drain(sqs: SQSClient, queueUrl: string, remove = true): Promise<QueueMessage[]> {
  const out: QueueMessage[] = [];
  for (;;) {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        AttributeNames: ['All'],
        VisibilityTimeout: 60,
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return out;
    for (const m of messages) {
      out.push({
        messageId: m.MessageId ?? '',
        receiptHandle: m.ReceiptHandle ?? '',
        body: m.Body ?? '',
        attributes: (m.Attributes ?? {}) as Record<string, string>,
      });
      if (remove) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    }
  }
}

/** The event Lambda's SQS event-source mapping would deliver. */
function sqsEvent(messages: readonly QueueMessage[]): SQSEvent {
  return {
    Records: messages.map(
      (m): SQSRecord => ({
        messageId: m.messageId,
        receiptHandle: m.receiptHandle,
        body: m.body,
        attributes: {
          ApproximateReceiveCount: m.attributes.ApproximateReceiveCount ?? '1',
          SentTimestamp: m.attributes.SentTimestamp ?? String(Date.now()),
          SenderId: 'demo',
          ApproximateFirstReceiveTimestamp: String(Date.now()),
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-west-2:123456789012:demo',
        awsRegion: 'us-west-2',
      }),
    ),
  };
}

/** What the event-source mapping does with a partial batch response: delete all but the failures. */
async function acknowledge(
  sqs: SQSClient,
  queueUrl: string,
  messages: readonly QueueMessage[],
  failures: readonly { itemIdentifier: string }[],
): Promise<void> {
  const failed = new Set(failures.map((f) => f.itemIdentifier));
  for (const m of messages) {
    if (!failed.has(m.messageId))
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.receiptHandle }));
  }
}

async function describeInstances(ec2: EC2Client): Promise<Map<string, Instance>> {
  const out = await ec2.send(
    new DescribeInstancesCommand({ Filters: [{ Name: 'tag:eks:eks-cluster-name', Values: [DEMO_CLUSTER] }] }),
  );
  const instances = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
  return new Map(instances.map((i) => [i.InstanceId ?? '', i]));
}

/** The kubelet of each new running instance: a Node with its providerID and the unregistered taint, Ready. */
async function joinNodes(
  ec2: EC2Client,
  kube: FakeApiServer,
  timeline: Timeline,
  securityGroupId: string,
): Promise<void> {
  const known = new Set(kube.nodes().map((n) => n.spec?.providerID));
  for (const instance of (await describeInstances(ec2)).values()) {
    const zone = instance.Placement?.AvailabilityZone ?? '';
    const providerID = `aws:///${zone}/${instance.InstanceId}`;
    if (instance.State?.Name !== 'running' || known.has(providerID)) continue;
    // moto drops the launch template's security groups (the instance gets a default group); EC2
    // would not, and the drift step compares them (SecurityGroupDrift), so the demo puts them back.
    await ec2.send(new ModifyInstanceAttributeCommand({ InstanceId: instance.InstanceId, Groups: [securityGroupId] }));
    const name = instance.PrivateDnsName ?? instance.InstanceId ?? '';
    kube.addNode({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'node.kubernetes.io/instance-type': instance.InstanceType ?? '',
          'topology.kubernetes.io/zone': zone,
        },
      },
      spec: { providerID, taints: [{ key: KUBE.unregisteredTaintKey, effect: 'NoExecute' }] },
    });
    kube.markNodeReady(name);
    timeline.add('kubelet', `node ${name} joined (${providerID}), tainted ${KUBE.unregisteredTaintKey}:NoExecute`);
  }
}

/** kube-scheduler: each pending pod to the registered node of the claim karpless planned it for. */
function schedulePods(kube: FakeApiServer, launched: readonly NodeClaimsLaunchedDetail[], timeline: Timeline): void {
  // A node being deleted or disrupted (karpenter.sh/disrupted:NoSchedule) takes no new pod.
  const schedulable = (n: Node) =>
    !n.spec?.unschedulable &&
    !n.metadata.deletionTimestamp &&
    !(n.spec?.taints ?? []).some((t) => t.key === KUBE.disruptedTaintKey || t.key === KUBE.unregisteredTaintKey);
  const nodeOfClaim = new Map<string, string>();
  for (const node of kube.nodes()) {
    const claim =
      node.metadata.labels?.['karpenter.sh/nodeclaim'] ?? node.metadata.annotations?.['karpenter.sh/nodeclaim'];
    if (claim && schedulable(node)) nodeOfClaim.set(claim, node.metadata.name);
  }
  const registeredNodes = kube
    .nodes()
    .filter((n) => n.metadata.labels?.[KUBE.registeredLabel] === 'true' && schedulable(n));
  let bound = 0;
  for (const pod of kube.pods().filter((p) => !p.spec.nodeName)) {
    const key = `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
    const claim = launched
      .flatMap((d) => d.nodeClaims)
      .filter((c) => c.pods.includes(key))
      .at(-1)?.nodeClaimName;
    const target =
      (claim && nodeOfClaim.get(claim)) ?? registeredNodes[bound % Math.max(1, registeredNodes.length)]?.metadata.name;
    if (!target) continue;
    kube.bindPod(pod.metadata.namespace ?? 'default', pod.metadata.name, target);
    bound++;
  }
  if (bound > 0) timeline.add('cluster', `kube-scheduler bound ${bound} pending pods to registered nodes`);
}

/** The Deployment controller: evicted pods come back as new pending pods. */
function recreateEvicted(
  kube: FakeApiServer,
  replicas: number,
  timeline: Timeline,
  app: { name: string; cpu: string; memory: string } = { name: 'web', cpu: '1', memory: '2Gi' },
): void {
  const pods = kube.pods().filter((p) => p.metadata.labels?.app === app.name);
  const missing = replicas - pods.length;
  const taken = new Set(pods.map((p) => p.metadata.name));
  for (let i = 0, made = 0; made < missing; i++) {
    if (taken.has(`${app.name}-r${i}`)) continue;
    kube.addPod(pendingPod(`${app.name}-r${i}`, app.cpu, app.memory, app.name));
    made++;
  }
  if (missing > 0) timeline.add('cluster', `Deployment ${app.name} recreated ${missing} evicted pods, pending`);
}
