// SDK clients bound to a fresh moto account, so every test sees an empty region of its own even when
// files run in parallel against the one server; plus fault injection, small fixtures, and the
// provision fixture (moto + the fake API server + the provision and watcher functions).

import { randomInt } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type CreateFleetCommandInput,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeInstancesCommand,
  EC2Client,
  type Instance,
  type Tag,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2';
import { CreateClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { CreateEventBusCommand, EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { CreateRoleCommand, IAMClient } from '@aws-sdk/client-iam';
import { PricingClient } from '@aws-sdk/client-pricing';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { inject } from 'vitest';
import { createHandler as provisionHandler } from '../../lambdas/provision/handler';
import type { Node, Pod } from '../../shared/apis/core/v1';
import type { NodePool, Taint } from '../../shared/apis/v1/types';
import { DETAIL_TYPE, EVENT_SOURCE, KUBE, TAG } from '../../shared/contracts';
import { noticePodFromPod } from '../../shared/notice';
import type { Clock } from '../../shared/providers/clock';
import { createStateTable, dynamoApi } from '../../shared/providers/dynamo-port';
import { beforeActing } from '../../shared/runtime/deps/configuration';
import { provisionDeps } from '../../shared/runtime/deps/provision';
import { watcherDeps } from '../../shared/runtime/deps/watcher';
import type { Runtime } from '../../shared/runtime/environment';
import { NodeReconciler } from '../../shared/runtime/nodes';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';
import type { RuntimeLog } from '../../shared/runtime/telemetry';
import { RecordingRetryQueue } from '../runtime/fakes';
import { node, pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';
import { type SchedulingPass, StandInScheduler } from '../support/kube/scheduler';
import { testNodeClass } from '../support/nodepools';
import { type FunctionRuntimes, functionRuntimes } from './iam';
import { SEED_K8S_VERSION } from './moto/seed';

export const REGION = 'us-west-2';
export const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };

interface BuildStack {
  add(
    middleware: (next: (args: { request: unknown }) => unknown) => (args: { request: unknown }) => unknown,
    options: { step: 'build'; name: string },
  ): void;
}

/** Sends every request of the client into the given moto account (x-moto-account-id). */
export function inAccount<T extends { middlewareStack: unknown }>(client: T, accountId: string): T {
  (client.middlewareStack as BuildStack).add(
    (next) => (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) request.headers['x-moto-account-id'] = accountId;
      return next(args);
    },
    { step: 'build', name: 'motoAccount' },
  );
  return client;
}

/**
 * A fresh moto account and its root clients ("testing" keys: the root user, allowed everything while
 * moto enforces IAM): for seeding and checking. Functions never run with these: build their runtimes
 * with functionRuntimes (./iam), which gives each function its own synthesized role.
 */
export interface MotoAccount {
  endpoint: string;
  accountId: string;
  region: string;
  ec2: EC2Client;
  ssm: SSMClient;
  eks: EKSClient;
  iam: IAMClient;
  dynamodb: DynamoDBClient;
  eventbridge: EventBridgeClient;
  sqs: SQSClient;
  /** moto answers GetProducts with HTTP 500: this client exercises the fallback to bundled prices. */
  pricing: PricingClient;
  /** Environment for a child `karpless` process talking to this account. */
  env: Record<string, string>;
}

export function randomAccountId(): string {
  return String(randomInt(100_000_000_000, 999_999_999_999));
}

/** moto's account for requests without the header: what a child `karpless` process talks to. */
export const DEFAULT_ACCOUNT_ID = '123456789012';

/**
 * Clients for a brand-new moto account (or the given one) of the project's moto server (or the one at
 * `endpoint`, e.g. the demo's own). Pass maxAttempts 1 to see throttling
 * errors unretried.
 */
export function motoAccount(
  options: { maxAttempts?: number; accountId?: string; endpoint?: string } = {},
): MotoAccount {
  const endpoint = options.endpoint ?? inject('motoEndpoint');
  const accountId = options.accountId ?? randomAccountId();
  const config = {
    endpoint,
    region: REGION,
    credentials: CREDENTIALS,
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  };
  return {
    endpoint,
    accountId,
    region: REGION,
    ec2: inAccount(new EC2Client(config), accountId),
    ssm: inAccount(new SSMClient(config), accountId),
    eks: inAccount(new EKSClient(config), accountId),
    iam: inAccount(new IAMClient(config), accountId),
    dynamodb: inAccount(new DynamoDBClient(config), accountId),
    eventbridge: inAccount(new EventBridgeClient(config), accountId),
    sqs: inAccount(new SQSClient(config), accountId),
    pricing: inAccount(new PricingClient(config), accountId),
    env: {
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: REGION,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  };
}

export interface FaultRule {
  action: string;
  /** Substring of the request body that must appear (e.g. an instance type). */
  contains?: string;
  status: number;
  body: string;
  times?: number;
}

/** Makes the next matching request of this account fail (or answer) with a canned response. */
export async function injectFault(account: MotoAccount, rule: FaultRule): Promise<void> {
  const response = await fetch(`${account.endpoint}/_fault`, {
    method: 'POST',
    body: JSON.stringify({ ...rule, account: account.accountId }),
  });
  if (!response.ok) throw new Error(`fault injection failed: ${response.status}`);
}

export async function clearFaults(account: MotoAccount): Promise<void> {
  await fetch(`${account.endpoint}/_fault?account=${account.accountId}`, { method: 'DELETE' });
}

/** An EC2 query-protocol error body, as EC2 returns for a failed call. */
export function ec2ErrorBody(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>${code}</Code><Message>${message}</Message></Error></Errors><RequestID>fault</RequestID></Response>`;
}

/** A CreateFleet answer with no instances and one per-override error, as EC2 returns for ICE. */
export function createFleetErrorBody(
  errors: { instanceType: string; zone: string; subnetId?: string; code: string; message: string }[],
): string {
  const items = errors
    .map(
      (e) =>
        `<item><launchTemplateAndOverrides><launchTemplateSpecification><version>$Latest</version></launchTemplateSpecification><overrides><instanceType>${e.instanceType}</instanceType><availabilityZone>${e.zone}</availabilityZone>${e.subnetId ? `<subnetId>${e.subnetId}</subnetId>` : ''}</overrides></launchTemplateAndOverrides><lifecycle>on-demand</lifecycle><errorCode>${e.code}</errorCode><errorMessage>${e.message}</errorMessage></item>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><CreateFleetResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>fault</requestId><fleetId>fleet-00000000-0000-0000-0000-000000000000</fleetId><errorSet>${items}</errorSet><fleetInstanceSet/></CreateFleetResponse>`;
}

function tagSpec(resourceType: 'vpc' | 'subnet' | 'security-group', tags: Record<string, string>) {
  const list: Tag[] = Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
  return list.length > 0 ? [{ ResourceType: resourceType, Tags: list }] : undefined;
}

export interface Network {
  vpcId: string;
  subnets: { id: string; zone: string; cidr: string }[];
  securityGroups: { id: string; name: string }[];
}

/**
 * A VPC with the given subnets (cidr, zone, tags) and security groups (name, tags). Subnet sizes
 * differ on purpose so "the subnet with most free IPs" is observable.
 */
export async function createNetwork(
  account: MotoAccount,
  spec: {
    subnets: { zone: string; cidr: string; tags?: Record<string, string> }[];
    securityGroups?: { name: string; tags?: Record<string, string> }[];
  },
): Promise<Network> {
  const vpc = await account.ec2.send(new CreateVpcCommand({ CidrBlock: '10.0.0.0/16' }));
  const vpcId = vpc.Vpc?.VpcId ?? '';
  const subnets: Network['subnets'] = [];
  for (const s of spec.subnets) {
    const created = await account.ec2.send(
      new CreateSubnetCommand({
        VpcId: vpcId,
        CidrBlock: s.cidr,
        AvailabilityZone: s.zone,
        TagSpecifications: tagSpec('subnet', s.tags ?? {}),
      }),
    );
    subnets.push({ id: created.Subnet?.SubnetId ?? '', zone: s.zone, cidr: s.cidr });
  }
  const securityGroups: Network['securityGroups'] = [];
  for (const g of spec.securityGroups ?? []) {
    const created = await account.ec2.send(
      new CreateSecurityGroupCommand({
        GroupName: g.name,
        Description: g.name,
        VpcId: vpcId,
        TagSpecifications: tagSpec('security-group', g.tags ?? {}),
      }),
    );
    securityGroups.push({ id: created.GroupId ?? '', name: g.name });
  }
  return { vpcId, subnets, securityGroups };
}

export async function createCluster(
  account: MotoAccount,
  name: string,
  options: { serviceCIDR?: string; ipFamily?: 'ipv4' | 'ipv6'; version?: string } = {},
): Promise<{ arn: string; endpoint: string }> {
  const created = await account.eks.send(
    new CreateClusterCommand({
      name,
      version: options.version ?? SEED_K8S_VERSION,
      roleArn: `arn:aws:iam::${account.accountId}:role/eks-cluster`,
      resourcesVpcConfig: { subnetIds: [] },
      kubernetesNetworkConfig: {
        ...(options.serviceCIDR ? { serviceIpv4Cidr: options.serviceCIDR } : {}),
        ...(options.ipFamily ? { ipFamily: options.ipFamily } : {}),
      },
    }),
  );
  return { arn: created.cluster?.arn ?? '', endpoint: created.cluster?.endpoint ?? '' };
}

/** What a provision fixture is built from: the configuration and the node class's subnets. */
export interface ProvisionFixtureOptions {
  cluster: string;
  nodePools: NodePool[];
  /** Subnets, tagged for the node class unless `tagged: false`; default one in us-west-2a. */
  subnets?: { zone: string; cidr: string; tagged?: boolean }[];
  /** `cluster`: NodePools and EC2NodeClasses read from the fake API server before each batch, as deployed with it. */
  configuration?: 'cluster';
  /** The runtime's clock (default: the system's); the configuration read from the cluster is kept for a TTL of it. */
  clock?: Clock;
  /** Where the provision function logs (default: Powertools, silent unless DEBUG_LOG). */
  log?: RuntimeLog;
}

/**
 * One moto account and one fake API server with everything the provision and watcher functions need
 * (network, EKS cluster, node role, state table, notice bus, configuration file), the provision
 * handler warm across calls as a Lambda instance is, every CreateFleet request recorded, and the
 * parts of a cluster that are not karpless played by hand: a kubelet joining a Node, one watcher
 * registration pass, one pass of the stand-in kube-scheduler.
 */
export class ProvisionFixture {
  /** Every CreateFleet request sent since the last reset(). */
  fleets: CreateFleetCommandInput[] = [];
  private notices = 0;
  private reconciler: NodeReconciler | undefined;

  private constructor(
    readonly options: ProvisionFixtureOptions,
    readonly account: MotoAccount,
    readonly api: FakeApiServer,
    /** Every function's runtime, each under its own synthesized role. */
    readonly runtimes: FunctionRuntimes,
    private readonly handler: ReturnType<typeof provisionHandler>,
    private readonly tools: Powertools,
  ) {}

  /** The provision function's runtime (its role's clients). */
  get runtime(): Runtime {
    return this.runtimes.provision;
  }

  static async start(options: ProvisionFixtureOptions): Promise<ProvisionFixture> {
    const { cluster } = options;
    process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    const tools = powertools('itest', cluster);
    const account = motoAccount();
    const discovery = { 'karpenter.sh/discovery': cluster };
    await createNetwork(account, {
      subnets: (options.subnets ?? [{ zone: 'us-west-2a', cidr: '10.0.1.0/24' }]).map((s) => ({
        zone: s.zone,
        cidr: s.cidr,
        ...(s.tagged === false ? {} : { tags: discovery }),
      })),
      securityGroups: [{ name: 'nodes', tags: discovery }],
    });
    await createCluster(account, cluster, { serviceCIDR: '172.20.0.0/16' });
    const role = `KarpenterNodeRole-${cluster}`;
    await account.iam.send(
      new CreateRoleCommand({
        RoleName: role,
        AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
      }),
    );
    await createStateTable(dynamoApi(account.dynamodb), 'karpless-state');
    await account.eventbridge.send(new CreateEventBusCommand({ Name: 'karpless' }));
    const api = await FakeApiServer.start();
    const nodeClass = testNodeClass({ discovery: cluster, role });
    const configFile = join(mkdtempSync(join(tmpdir(), `karpless-${cluster}-`)), 'karpless-config.json');
    writeFileSync(configFile, JSON.stringify({ nodePools: options.nodePools, nodeClasses: [nodeClass] }));
    // Each function under its own synthesized role (the IAM harness): a call its role does not allow fails the test.
    const runtimes = await functionRuntimes(account, {
      env: {
        KARPLESS_CLUSTER_NAME: cluster,
        KARPLESS_STATE_TABLE: 'karpless-state',
        KARPLESS_NOTICE_BUS: 'karpless',
        KARPLESS_CONFIG_FILE: configFile,
        KARPLESS_KUBE_ENDPOINT: api.url,
        AWS_REGION: account.region,
        ...(options.configuration ? { KARPLESS_CONFIGURATION_SOURCE: options.configuration } : {}),
      },
      ...(options.clock ? { clock: options.clock } : {}),
    });
    const runtime = runtimes.provision;
    const handler = provisionHandler(
      once(async () =>
        provisionDeps(runtime, options.log ? { ...tools.telemetry, log: options.log } : tools.telemetry),
      ),
      tools,
      () => new RecordingRetryQueue(),
      // As deployed: the Karpenter check, then the configuration read from the cluster.
      options.configuration ? beforeActing(async () => runtime, tools.telemetry) : undefined,
    );
    const fixture = new ProvisionFixture(options, account, api, runtimes, handler, tools);
    runtime.clients.ec2.middlewareStack.add(
      (next, ctx) => async (args) => {
        if (ctx.commandName === 'CreateFleetCommand') {
          fixture.fleets.push(structuredClone(args.input as CreateFleetCommandInput));
        }
        return next(args);
      },
      { step: 'initialize', name: 'recordCreateFleet' },
    );
    return fixture;
  }

  async stop(): Promise<void> {
    await this.api.stop();
  }

  /** A clean slate for the next case: no claims in flight, no faults, no recorded fleets. */
  async reset(): Promise<void> {
    this.fleets = [];
    this.api.clearFaults();
    await clearFaults(this.account);
    const ids = (await this.liveInstances()).flatMap((i) => (i.InstanceId ? [i.InstanceId] : []));
    if (ids.length > 0) await this.account.ec2.send(new TerminateInstancesCommand({ InstanceIds: ids }));
  }

  /** A PodsUnschedulable notice as the watcher puts it, at a new observation time each (new claim names). */
  notice(pods: Pod[]): string {
    this.notices++;
    return JSON.stringify({
      version: '0',
      source: EVENT_SOURCE,
      'detail-type': DETAIL_TYPE.podsUnschedulable,
      detail: {
        cluster: this.options.cluster,
        observedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, this.notices)).toISOString(),
        pods: pods.map(noticePodFromPod),
        daemonSets: [],
      },
    });
  }

  /** Delivers the bodies to the provision handler as one SQS batch (message ids m0, m1, … or `${prefix}-0`, …). */
  provision(bodies: string[], prefix?: string): Promise<SQSBatchResponse> {
    const context = {
      getRemainingTimeInMillis: () => 60_000,
      awsRequestId: 'req',
      functionName: 'fn',
    } as unknown as Context;
    const messageId = (i: number) => (prefix ? `${prefix}-${i}` : `m${i}`);
    const event = { Records: bodies.map((body, i) => ({ messageId: messageId(i), body })) } as unknown as SQSEvent;
    return this.handler(event, context) as Promise<SQSBatchResponse>;
  }

  /** A pod the kube-scheduler marked Unschedulable, put in the fake cluster. */
  pendingPod(name: string, cpu = '500m', change: (pod: Pod) => void = () => undefined): Pod {
    const p = pod(name, { cpu, owner: { kind: 'ReplicaSet', name: 'web' } });
    p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
    change(p);
    return this.api.addPod(p);
  }

  /** Our pending and running instances. */
  async liveInstances(): Promise<Instance[]> {
    const out = await this.account.ec2.send(
      new DescribeInstancesCommand({
        Filters: [
          { Name: `tag:${TAG.clusterName}`, Values: [this.options.cluster] },
          { Name: 'instance-state-name', Values: ['pending', 'running'] },
        ],
      }),
    );
    return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
  }

  /** The live instance of the claim the CreateFleet request launched. */
  async instanceOf(fleet: CreateFleetCommandInput): Promise<Instance> {
    const claim = fleet.TagSpecifications?.[0]?.Tags?.find((t) => t.Key === TAG.nodeClaim)?.Value;
    const found = (await this.liveInstances()).find((i) =>
      i.Tags?.some((t) => t.Key === TAG.nodeClaim && t.Value === claim),
    );
    if (!found) throw new Error(`no live instance of NodeClaim ${claim}`);
    return found;
  }

  /** The kubelet of the instance: a Ready Node with its providerID, the unregistered taint and the given allocatable. */
  joinNode(instance: Instance, allocatable: Record<string, string>, taints: Taint[] = []): Node {
    const name = instance.PrivateDnsName || `ip-${instance.InstanceId}.us-west-2.compute.internal`;
    const joined = node(name, {
      providerID: `aws:///${instance.Placement?.AvailabilityZone}/${instance.InstanceId}`,
      taints: [{ key: KUBE.unregisteredTaintKey, effect: 'NoExecute' }, ...taints],
    });
    joined.status = { capacity: allocatable, allocatable };
    this.api.addNode(joined);
    return this.api.markNodeReady(name);
  }

  /** One registration pass of the watcher over every Node (no batching loop, no wall clock). */
  async register(): Promise<void> {
    this.reconciler ??= new NodeReconciler(await watcherDeps(this.runtimes.watcher, this.tools.telemetry));
    await this.reconciler.reconcile(this.api.nodes());
  }

  /** One pass of the stand-in kube-scheduler: binds every pending pod some node takes. */
  schedule(): SchedulingPass {
    return new StandInScheduler(this.api).schedule();
  }
}

/** The availability zones of a CreateFleet request's overrides. */
export function fleetZones(fleet: CreateFleetCommandInput): Set<string> {
  return new Set(
    (fleet.LaunchTemplateConfigs ?? []).flatMap((c) => (c.Overrides ?? []).map((o) => o.AvailabilityZone ?? '')),
  );
}

/** A DynamoDB error body (JSON protocol), as DynamoDB answers a failed call. */
export function dynamoErrorBody(type: string, message: string): string {
  return JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message });
}
