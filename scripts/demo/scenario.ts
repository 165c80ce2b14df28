// `npm run demo`: the whole system on the moto emulator and the in-repo fake API server. The real
// handlers run in-process as their events arrive: pending pods → watcher → notice → provision →
// instances → nodes join and are registered → a spot warning on the default bus → interruption →
// drained, terminated, its pods' replacements planned → an AMI release rolled out by drift → gc. The
// demo plays only what is not karpless (cluster.ts): the kubelet (a Node with its instance type's
// capacity for each new instance), the Deployment controller (an evicted pod is replaced at once),
// kube-scheduler (a pod binds only where it fits), Lambda's event-source mappings (queue → handler)
// and the schedules (it invokes the watcher, drift and gc where their schedules would). After each
// step that can launch, it measures the vCPU launched against the vCPU the pods request.

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client, type Instance } from '@aws-sdk/client-ec2';
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
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { createHandler as driftHandler } from '../../lambdas/drift/handler';
import { createHandler as gcHandler } from '../../lambdas/gc/handler';
import { createHandler as interruptionHandler } from '../../lambdas/interruption/handler';
import { createHandler as provisionHandler } from '../../lambdas/provision/handler';
import { createHandler as watcherHandler } from '../../lambdas/watcher/handler';
import type { Node, Pod } from '../../shared/apis/core/v1';
import { karpenterCrds } from '../../shared/apis/v1/crds';
import { DETAIL_TYPE, ENV, EVENT_SOURCE, METRICS_NAMESPACE } from '../../shared/contracts';
import type { NodeClaimRecord } from '../../shared/nodeclaim/record';
import { dynamoApi } from '../../shared/providers/dynamo-port';
import { DynamoStateStore } from '../../shared/providers/dynamostate';
import { bundledSnapshot } from '../../shared/providers/pricing';
import { driftDeps } from '../../shared/runtime/deps/drift';
import { gcDeps } from '../../shared/runtime/deps/gc';
import { interruptionDeps } from '../../shared/runtime/deps/interruption';
import { provisionDeps, provisionRetryQueue } from '../../shared/runtime/deps/provision';
import { watcherDeps } from '../../shared/runtime/deps/watcher';
import { type AwsClients, buildRuntime, type Runtime } from '../../shared/runtime/environment';
import type { GcReport } from '../../shared/runtime/gc';
import { once, type Powertools } from '../../shared/runtime/powertools';
import type { NodeClaimsLaunchedDetail } from '../../shared/runtime/provision';
import type { Telemetry } from '../../shared/runtime/telemetry';
import { FakeApiServer } from '../../test/support/kube/fake-apiserver';
import type { StoredObject } from '../../test/support/kube/store';
import { type AwsEndpoint, DEMO_ACCOUNT, DEMO_ZONES, type DeployedStack, type Template } from './aws';
import {
  type App,
  type CapacityStep,
  DEMO_CLUSTER,
  Deployments,
  describeClaims,
  describeInstances,
  describeStep,
  joinNodes,
  measureCapacity,
  startScheduler,
} from './cluster';
import { type RolloutResult, rollOutNewAMI } from './drift';
import { type DemoVpc, deployDemoStack } from './stack';
import { Timeline } from './timeline';

export { DEMO_CLUSTER };

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
  /** With `vpc`: where each function was deployed and the VPC endpoints they need. */
  vpc?: DemoVpc;
  /** Launched against requested vCPU after each step that can launch. */
  capacity: CapacityStep[];
  gc: GcReport | { error: string };
  /** The NodeClaim records in the state table at the end. */
  claims: NodeClaimRecord[];
  /** The NodeClaim objects the watcher mirrored into the cluster, as at the end. */
  nodeClaimObjects: StoredObject[];
  /** The still running fake API server, when the demo was asked to keep it; the caller stops it. */
  apiServer?: FakeApiServer;
}

const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Seconds one pod of the interrupted node takes to stop (a preStop hook): the drain waits for it. */
export const DEMO_POD_GRACE_SECONDS = 3;

/**
 * Gives one pod on the instance's node a grace period and puts its deletion on the timeline: when the
 * kubelet starts stopping it, when it is gone, and when the Node goes (only after the instance did).
 * Returns the function that stops listening.
 */
async function takesItsGracePeriod(kube: FakeApiServer, timeline: Timeline, instanceId: string): Promise<() => void> {
  const node = kube.nodes().find((n) => n.spec?.providerID?.endsWith(`/${instanceId}`));
  const pod = kube.pods().find((p) => node && p.spec.nodeName === node.metadata.name);
  if (!node || !pod) return () => undefined;
  const namespace = pod.metadata.namespace ?? 'default';
  const name = pod.metadata.name;
  kube.updatePod(namespace, name, (p) => {
    p.spec.terminationGracePeriodSeconds = DEMO_POD_GRACE_SECONDS;
  });
  const nodeName = node.metadata.name;
  return kube.store.subscribe((change) => {
    if (change.resource === 'nodes' && change.type === 'DELETED' && change.object.metadata.name === nodeName) {
      timeline.add('kubelet', `node ${nodeName} gone: its instance terminated after the drain, the finalizer removed`);
      return;
    }
    if (change.resource !== 'pods' || change.object.metadata.name !== name) return;
    if (
      change.type === 'MODIFIED' &&
      change.object.metadata.deletionTimestamp &&
      !change.previous?.metadata.deletionTimestamp
    ) {
      timeline.add(
        'kubelet',
        `pod ${namespace}/${name} Terminating: its ${DEMO_POD_GRACE_SECONDS} s grace period runs; the drain waits for it before TerminateInstances`,
      );
    }
    if (change.type === 'DELETED') timeline.add('kubelet', `pod ${namespace}/${name} gone after its grace period`);
  });
}

function silentPowertools(serviceName: string, timeline: Timeline): Powertools {
  const actor = serviceName.replace('karpless-', '') as 'watcher' | 'provision' | 'interruption' | 'drift' | 'gc';
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

export interface DemoOptions {
  aws: AwsEndpoint;
  timeline?: Timeline;
  /** Replicas of the web Deployment. */
  replicas?: number;
  /** The stack synthesized for a private cluster, every function in the VPC: `npm run demo -- --vpc`. */
  vpc?: boolean;
  /** Leave the fake API server running at the end (result.apiServer): `npm run demo -- --keep`. */
  keepApiServer?: boolean;
  /**
   * The clients each function runs with (default: the demo's own, moto's root user). The demo test
   * gives each function its own role from the deployed template (test/integration/iam).
   */
  asFunction?: (
    fn: DemoFunction,
    stack: { template: Template; tableName: string; busName: string },
  ) => Promise<FunctionClients>;
}

export type DemoFunction = 'watcher' | 'provision' | 'interruption' | 'drift' | 'gc';
/** A function's AWS clients: the runtime's, and SQS for the provision function's retry queue. */
export type FunctionClients = AwsClients & { sqs?: SQSClient };

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
  // The cluster has Karpenter's CRDs, as after `kubectl apply -f infra/kubernetes/crds/`.
  kube.installCustomResources(karpenterCrds());
  const deployments = new Deployments(kube, timeline);
  const scheduler = startScheduler(kube, timeline);
  const steps: CapacityStep[] = [];
  // The cluster's controllers react on their own; the demo waits for them before its next step.
  const settle = async () => {
    await deployments.settled();
    await scheduler.settled();
  };
  const measure = async (step: string) => {
    const measured = await measureCapacity(clients.ec2, kube, step);
    steps.push(measured);
    timeline.add('demo', describeStep(measured));
  };
  try {
    const { network, provisioner, template, deployed, vpc } = await deployDemoStack(aws, timeline, {
      vpc: options.vpc === true,
    });
    // The same NodePools and EC2NodeClasses applied to the cluster, as `kubectl apply -f` would: the
    // watcher writes their status, and NodeClaims are owned by their NodePool.
    for (const nodePool of provisioner.configuration.nodePools) kube.putObject('nodepools', nodePool);
    for (const nodeClass of provisioner.configuration.nodeClasses) kube.putObject('ec2nodeclasses', nodeClass);

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
    const records = new DynamoStateStore(dynamoApi(clients.dynamodb), tableName);
    const showClaims = async (when: string) => {
      const claims = await records.nodeClaims();
      timeline.add('demo', `NodeClaim records ${when}: ${claims.length}`);
      for (const line of describeClaims(claims)) timeline.add('demo', `  ${line}`);
      return claims;
    };
    const functionClients = new Map<DemoFunction, Promise<FunctionClients>>();
    const clientsOf = (fn: DemoFunction): Promise<FunctionClients> => {
      let found = functionClients.get(fn);
      if (!found) {
        found = options.asFunction
          ? options.asFunction(fn, { template, tableName, busName })
          : Promise.resolve(clients);
        functionClients.set(fn, found);
      }
      return found;
    };
    const runtime = async (fn: DemoFunction): Promise<Runtime> => buildRuntime({ env, clients: await clientsOf(fn) });
    const watcherTools = silentPowertools('karpless-watcher', timeline);
    const provisionTools = silentPowertools('karpless-provision', timeline);
    const interruptionTools = silentPowertools('karpless-interruption', timeline);
    // Each function's cold start (configuration, clients, Kubernetes access) happens once, before
    // its first invocation, as Lambda's init phase does.
    const loadWatcher = once(async () => watcherDeps(await runtime('watcher'), watcherTools.telemetry));
    const loadProvision = once(async () => provisionDeps(await runtime('provision'), provisionTools.telemetry));
    const loadInterruption = once(async () =>
      interruptionDeps(await runtime('interruption'), interruptionTools.telemetry),
    );
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
      (await clientsOf('provision')).sqs ?? sqs,
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

    // 1. A Deployment's pods appear; kube-scheduler finds no node and marks them Unschedulable.
    const web: App = { name: 'web', cpu: '1', memory: '1536Mi' };
    const api: App = { name: 'api', cpu: '6', memory: '12Gi' };
    // Fits nowhere: the NodePool allows amd64 only. karpless says why on the pod, as Karpenter does.
    const armBatch: App = {
      name: 'arm-batch',
      cpu: '100m',
      memory: '128Mi',
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
    };
    const replicas = options.replicas ?? 7;
    deployments.apply(web, replicas);
    await settle();

    // 2. watcher → notice → provision queue → provision → the kubelets start, the watcher registers
    // the nodes, and kube-scheduler binds the pods as soon as a node takes them.
    await runWatcher('pending pods noticed');
    await pumpProvision();
    await measure('web pods planned');
    const settleNodes = async (why: string) => {
      await joinNodes(clients.ec2, kube, timeline, network.securityGroupId);
      await runWatcher(why);
      await settle();
    };
    await settleNodes('nodes registered');
    await showClaims('after the first decision');

    // 3. A spot interruption warning for one of our instances, on the default bus.
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
    const graceful = await takesItsGracePeriod(kube, timeline, victim.instanceId);
    const warnings = await drain(sqs, interruptionQueue, false);
    const out = await interrupt(sqsEvent(warnings), lambdaContext(20_000));
    timeline.add('interruption', `batch of ${warnings.length}, ${out.batchItemFailures.length} failed`);
    await acknowledge(sqs, interruptionQueue, warnings, out.batchItemFailures);
    // The evicted pods are gone; their Deployment made new ones, which no node takes.
    await settle();

    // 4. The replacement pods, planned once: watcher → notice → provision → a new instance → it joins.
    await runWatcher('replacement pods noticed');
    await pumpProvision();
    await measure('interruption replaced');
    await settleNodes('replacement registered');
    // The watcher finishes what the interruption's head start left: the Node goes once its instance did.
    graceful();

    // 5. A second Deployment whose pods need more than the nodes have left, and a pod that fits nowhere.
    deployments.apply(api, 2);
    deployments.apply(armBatch, 1);
    await settle();
    await runWatcher('api pods noticed');
    await pumpProvision();
    await measure('api pods planned');
    await settleNodes('api nodes registered');
    for (const pod of kube.pods().filter((p) => p.metadata.labels?.app === armBatch.name)) {
      for (const event of kube.eventsFor('Pod', pod.metadata.name)) {
        timeline.add('watcher', `${event.type} ${event.reason} on pod ${pod.metadata.name}: ${event.message}`);
      }
    }
    await showClaims('before the AMI release');

    // 6. An AMI release rolls the nodes one by one (the NodePool's budget is 1 node).
    const driftTools = silentPowertools('karpless-drift', timeline);
    const drift = driftHandler(
      once(async () => driftDeps(await runtime('drift'), driftTools.telemetry)),
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
        settlePods: async (round) => {
          await settle();
          await measure(`drift run ${round}`);
        },
      },
      network.imageId,
    );
    timeline.add(
      'demo',
      `${rollout.rolled.length} nodes rolled from ${rollout.from} to ${rollout.to}, at most ${rollout.maxDisrupting} at a time`,
    );

    // 7. One garbage collection run, as its schedule would make every few minutes.
    const gcTools = silentPowertools('karpless-gc', timeline);
    const gc = gcHandler(
      once(async () => gcDeps(await runtime('gc'), gcTools.telemetry)),
      gcTools,
    );
    const collected = await gc({}, lambdaContext(60_000));
    timeline.add('gc', describeGc(collected));

    await measure('end');
    const claims = await showClaims('at the end');
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
      ...(vpc ? { vpc } : {}),
      capacity: steps,
      gc: collected,
      claims,
      nodeClaimObjects: kube.listObjects('nodeclaims'),
      ...(options.keepApiServer ? { apiServer: kube } : {}),
    };
  } finally {
    scheduler.stop();
    deployments.stop();
    if (!options.keepApiServer) await kube.stop();
    sqs.destroy();
    for (const c of Object.values(clients)) c.destroy();
  }
}

function describeGc(report: GcReport | { error: string }): string {
  if ('error' in report) return `run failed: ${report.error}`;
  const deleted = report.deleted.map((d) => `${d.resource} ${d.id} (${d.reason})`);
  const failed = report.failed.map((f) => `${f.resource} ${f.id} failed: ${f.error}`);
  const all = [...deleted, ...failed];
  return all.length > 0 ? `deleted ${all.join('; ')}` : 'nothing to collect';
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
