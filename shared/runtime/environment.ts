// Everything a handler needs, built once per cold start from the environment (shared/contracts ENV)
// and the bundled configuration document. Handlers stay thin and tests pass their own clients.

import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type _InstanceType, EC2Client, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { IAMClient } from '@aws-sdk/client-iam';
import { PricingClient } from '@aws-sdk/client-pricing';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { type Configuration, validateConfiguration } from '../apis/configuration';
import { parseDurationSeconds } from '../apis/duration';
import { formatProblem } from '../apis/problems';
import { resolveAMIFamily } from '../apis/v1/amifamily';
import type { EC2NodeClass } from '../apis/v1/types';
import { DETAIL_TYPE, ENV, requireEnv } from '../contracts';
import { catalogInstanceTypeFromEC2 } from '../instancetypes/ec2';
import { instanceTypeLabels } from '../instancetypes/labels';
import { resolveInstanceTypes } from '../instancetypes/resolve';
import type { CatalogInstanceType } from '../instancetypes/types';
import { type HttpKubeClient, kubeClientForCluster } from '../kube/client';
import { backfillRecord, withNodeCapacity } from '../nodeclaim/launch-record';
import { noticeDaemonSetFromDaemonSet, noticePodFromPod, splitNotice } from '../notice';
import type { PodsUnschedulableDetail } from '../notice/types';
import { errorCode } from '../providers/aws-errors';
import { type CapacityReservationProvider, withNodeClassReservations } from '../providers/capacityreservation';
import type { Clock, Sleep } from '../providers/clock';
import { realSleep, systemClock } from '../providers/clock';
import { dynamoApi } from '../providers/dynamo-port';
import { DynamoStateStore } from '../providers/dynamostate';
import { EventBridgePublisher, type EventPublisher, eventBridgeApi } from '../providers/eventbus';
import { InstanceTypeProvider } from '../providers/instancetype';
import { ec2Api, eksApi } from '../providers/ports';
import {
  applyPrices,
  describePrices,
  onDemandPriceLookup,
  PricingProvider,
  pricingApi,
  pricingEndpointRegion,
} from '../providers/pricing';
import type { FullStateStore } from '../providers/state';
import { ClaimInstances, type InstancesPort } from './instances';
import type { RebalanceAction } from './interruption';
import type { ClaimKnowledge } from './nodes';
import type { ResolvedInstanceTypes } from './provision';
import type { Telemetry } from './telemetry';
import type { NoticePublisher } from './watcher';

export interface RuntimeSettings {
  cluster: string;
  region: string;
  stateTable: string;
  noticeBus: string;
  configFile: string;
  rebalanceAction: RebalanceAction;
  kubeEndpoint?: string;
  /** Karpenter's isolatedVPC: no route to the Pricing API or IAM, so neither is ever called. */
  isolatedVPC?: boolean;
  /** Launch batches in flight at once (the Provisioner's launchConcurrency prop). */
  launchConcurrency?: number;
  /** 'cluster': NodePools and EC2NodeClasses are read from the API server (cluster-configuration.ts). */
  configurationSource?: 'bundled' | 'cluster';
  /** Feature gates the drift function reads (Karpenter's NodeRepair and SpotToSpotConsolidation). */
  nodeRepair?: boolean;
  spotToSpotConsolidation?: boolean;
}

/** A 'true'/'false' environment variable (unset or empty: undefined), or an error naming it. */
function flagEnv(env: NodeJS.ProcessEnv, key: string): boolean | undefined {
  const value = env[key];
  if (value === undefined || value === '') return undefined;
  if (value !== 'true' && value !== 'false') {
    throw new Error(`environment variable ${key} is "${value}": use "true" or "false"`);
  }
  return value === 'true';
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): RuntimeSettings {
  const rebalance = env[ENV.rebalanceAction] || 'record';
  if (rebalance !== 'record' && rebalance !== 'act') {
    throw new Error(`environment variable ${ENV.rebalanceAction} is "${rebalance}": use "record" or "act"`);
  }
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (!region)
    throw new Error('environment variable AWS_REGION is not set: Lambda sets it; set it when running by hand');
  const settings: RuntimeSettings = {
    cluster: requireEnv(ENV.clusterName, env),
    region,
    stateTable: requireEnv(ENV.stateTable, env),
    noticeBus: requireEnv(ENV.noticeBus, env),
    configFile: requireEnv(ENV.configFile, env),
    rebalanceAction: rebalance,
  };
  const isolated = env[ENV.isolatedVPC];
  if (isolated !== undefined && isolated !== 'true' && isolated !== 'false') {
    throw new Error(`environment variable ${ENV.isolatedVPC} is "${isolated}": use "true" or "false"`);
  }
  const kubeEndpoint = env[ENV.kubeEndpoint];
  const concurrency = env[ENV.launchConcurrency];
  if (
    concurrency !== undefined &&
    concurrency !== '' &&
    !(Number.isInteger(Number(concurrency)) && Number(concurrency) > 0)
  ) {
    throw new Error(
      `environment variable ${ENV.launchConcurrency} is "${concurrency}": use a whole number of at least 1`,
    );
  }
  const source = env[ENV.configurationSource];
  if (source !== undefined && source !== '' && source !== 'bundled' && source !== 'cluster') {
    throw new Error(`environment variable ${ENV.configurationSource} is "${source}": use "bundled" or "cluster"`);
  }
  return {
    ...settings,
    ...(source === 'cluster' ? { configurationSource: 'cluster' as const } : {}),
    ...(kubeEndpoint ? { kubeEndpoint } : {}),
    ...(isolated === 'true' ? { isolatedVPC: true } : {}),
    ...(concurrency ? { launchConcurrency: Number(concurrency) } : {}),
    ...(flagEnv(env, ENV.nodeRepair) ? { nodeRepair: true } : {}),
    ...(flagEnv(env, ENV.spotToSpotConsolidation) ? { spotToSpotConsolidation: true } : {}),
  };
}

/**
 * The bundled configuration ({nodePools, nodeClasses}, validated at synth) read and validated
 * again: a document edited by hand fails the cold start naming the object and field.
 */
export function loadBundledConfiguration(path: string): Configuration {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`configuration ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const value = document as Partial<Configuration> | null;
  if (!value || !Array.isArray(value.nodePools) || !Array.isArray(value.nodeClasses)) {
    throw new Error(`configuration ${path}: expected {"nodePools": [...], "nodeClasses": [...]}`);
  }
  const objects = [...value.nodeClasses, ...value.nodePools] as unknown as Record<string, unknown>[];
  // userData was checked at synth, and the provision path renders it again at launch.
  const result = validateConfiguration(
    objects.map((object) => ({ file: path, line: 1, object })),
    { strictReferences: true },
    () => [],
  );
  const errors = result.problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) throw new Error(`configuration ${path}:\n${errors.map(formatProblem).join('\n')}`);
  return result.config;
}

/** SDK clients; tests pass an endpoint (moto) and credentials. */
export interface AwsClients {
  ec2: EC2Client;
  eks: EKSClient;
  /** Only the launching functions read SSM and IAM; deps/launch-path.ts builds them when not given. */
  ssm?: SSMClient;
  iam?: IAMClient;
  dynamodb: DynamoDBClient;
  eventbridge: EventBridgeClient;
  pricing?: PricingClient;
}

/**
 * Connect and per-request timeouts of every AWS client. Without them a call a network blocks (a
 * function in a VPC with no route or endpoint for the service) hangs until the function times out
 * and names nothing; with them it fails in seconds naming the service, and the SDK retries.
 */
export const CLIENT_TIMEOUTS = { connectionTimeoutMs: 3_000, requestTimeoutMs: 20_000 } as const;

/** Client settings every function uses. */
export function clientConfig(
  region: string,
  timeouts: { connectionTimeoutMs: number; requestTimeoutMs: number } = CLIENT_TIMEOUTS,
): {
  region: string;
  maxAttempts: number;
  requestHandler: { connectionTimeout: number; requestTimeout: number; throwOnRequestTimeout: boolean };
} {
  return {
    region,
    maxAttempts: 5,
    requestHandler: {
      connectionTimeout: timeouts.connectionTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      // Without it the SDK only logs a warning when the request timeout passes, and keeps waiting.
      throwOnRequestTimeout: true,
    },
  };
}

/**
 * The clients every function needs; a function that needs more builds them in its deps module. In an
 * isolated VPC there is no Pricing client: on-demand prices stay the bundled ones.
 */
export function awsClients(region: string, isolatedVPC = false): AwsClients {
  const config = clientConfig(region);
  return {
    ec2: new EC2Client(config),
    eks: new EKSClient(config),
    dynamodb: new DynamoDBClient(config),
    eventbridge: new EventBridgeClient(config),
    // The Pricing API answers in a few regions only (Karpenter's endpoint choice).
    ...(isolatedVPC ? {} : { pricing: new PricingClient({ ...config, region: pricingEndpointRegion(region) }) }),
  };
}

export function instancesPort(ec2: EC2Client): InstancesPort {
  return {
    describeInstances: (input) => ec2Api(ec2).describeInstances(input),
    terminateInstances: (input) => ec2.send(new TerminateInstancesCommand(input)),
  };
}

/** Common pieces of every function. */
export interface Runtime {
  settings: RuntimeSettings;
  config: Configuration;
  clients: AwsClients;
  state: FullStateStore;
  events: EventPublisher;
  instances: ClaimInstances;
  clock: Clock;
  sleep: Sleep;
}

export interface RuntimeOptions {
  env?: NodeJS.ProcessEnv;
  clients?: AwsClients;
  clock?: Clock;
  sleep?: Sleep;
}

export function buildRuntime(options: RuntimeOptions = {}): Runtime {
  const settings = readSettings(options.env);
  const clients = options.clients ?? awsClients(settings.region, settings.isolatedVPC);
  const clock = options.clock ?? systemClock;
  return {
    settings,
    config: loadBundledConfiguration(settings.configFile),
    clients,
    state: new DynamoStateStore(dynamoApi(clients.dynamodb), settings.stateTable, { clock }),
    events: new EventBridgePublisher(eventBridgeApi(clients.eventbridge), { busName: settings.noticeBus }),
    instances: new ClaimInstances(instancesPort(clients.ec2), settings.cluster),
    clock,
    sleep: options.sleep ?? realSleep,
  };
}

const kubeClients = new WeakMap<Runtime, Promise<HttpKubeClient>>();

/**
 * The runtime's one Kubernetes client: the deps and the Karpenter guard of a function share it, so a
 * cold start describes the cluster once and keeps one connection pool. A failed build is not kept.
 */
export function kubeClient(runtime: Runtime): Promise<HttpKubeClient> {
  let client = kubeClients.get(runtime);
  if (!client) {
    const credentials = runtime.clients.ec2.config.credentials;
    client = kubeClientForCluster({
      eks: eksApi(runtime.clients.eks),
      clusterName: runtime.settings.cluster,
      region: runtime.settings.region,
      credentials: async () => credentials(),
      ...(runtime.settings.kubeEndpoint ? { endpointOverride: runtime.settings.kubeEndpoint } : {}),
    });
    client.catch(() => kubeClients.delete(runtime));
    kubeClients.set(runtime, client);
  }
  return client;
}

/** PodsUnschedulable notices on the bus, split under PutEvents' 256 KB. */
export function noticePublisher(runtime: Runtime): NoticePublisher {
  return {
    async publish({ pods, daemonSets, observedAt }) {
      const detail: PodsUnschedulableDetail = {
        cluster: runtime.settings.cluster,
        observedAt,
        pods: pods.map(noticePodFromPod),
        daemonSets: daemonSets.map(noticeDaemonSetFromDaemonSet),
      };
      const parts = splitNotice(detail);
      await runtime.events.publish(parts.map((part) => ({ detailType: DETAIL_TYPE.podsUnschedulable, detail: part })));
      return parts.length;
    },
  };
}

function nodePoolOf(runtime: Runtime, name: string) {
  return runtime.config.nodePools.find((p) => p.metadata.name === name);
}

/**
 * Instance types per NodePool with live prices (bundled → Pricing API and spot history, cached).
 * With `reservations`, each node class's capacity reservations become reserved offerings; with
 * `zones`, offerings stay in the zones where the node class resolves a subnet (a claim pinned to a
 * zone without one could never launch).
 */
export function instanceTypeSource(
  runtime: Runtime,
  telemetry: Telemetry,
  reservations?: Pick<CapacityReservationProvider, 'list'>,
  zones?: (nodeClass: EC2NodeClass) => Promise<readonly string[]>,
): () => Promise<ResolvedInstanceTypes> {
  const pricing = new PricingProvider({
    region: runtime.settings.region,
    ...(runtime.clients.pricing ? { pricing: pricingApi(runtime.clients.pricing) } : {}),
    ec2: ec2Api(runtime.clients.ec2),
    store: runtime.state,
    clock: runtime.clock,
  });
  // A type gets an on-demand offering only with a price: read from the latest snapshot.
  let onDemand: (instanceType: string) => number | undefined = () => undefined;
  const types = new InstanceTypeProvider(ec2Api(runtime.clients.ec2), {
    region: runtime.settings.region,
    clock: runtime.clock,
    onDemandPrice: (instanceType) => onDemand(instanceType),
  });
  return async () => {
    const snapshot = await pricing.snapshot();
    onDemand = onDemandPriceLookup(snapshot);
    telemetry.log.info('prices', { prices: describePrices(snapshot) });
    const catalog = applyPrices(await types.catalog(), snapshot);
    const byNodePool: Record<string, ReturnType<typeof resolveInstanceTypes>> = {};
    const byClass = new Map<string, ReturnType<typeof resolveInstanceTypes>>();
    for (const pool of runtime.config.nodePools) {
      const ref = pool.spec.template.spec.nodeClassRef.name;
      const nodeClass = runtime.config.nodeClasses.find((c) => c.metadata.name === ref);
      if (!nodeClass) continue;
      let resolved = byClass.get(ref);
      if (!resolved) {
        resolved = resolveInstanceTypes(catalog, nodeClass, zones ? { zones: await zones(nodeClass) } : {});
        if (reservations) {
          const reserved = await withNodeClassReservations(resolved, nodeClass, reservations);
          if (reserved.error)
            telemetry.log.warn('capacity reservations', { nodeClass: ref, error: String(reserved.error) });
          resolved = reserved.types;
        }
        byClass.set(ref, resolved);
      }
      byNodePool[pool.metadata.name] = resolved;
    }
    return { byNodePool, priceSource: snapshot.source };
  };
}

/** The labels of one instance type as a node of that node class carries them; undefined for an unknown type. */
export type InstanceTypeLabels = (
  instanceType: string,
  nodeClass: EC2NodeClass | undefined,
) => Promise<Record<string, string> | undefined>;

/**
 * Instance-type labels described one type at a time, when a node of that type registers (cached for
 * the cold start: a type's description does not change). Registration needs nothing else of the
 * catalog, no offerings and no prices, so the watcher calls DescribeInstanceTypes only and never
 * refreshes the price snapshot the launching functions share.
 */
export function instanceTypeLabelSource(runtime: Runtime): InstanceTypeLabels {
  const ec2 = ec2Api(runtime.clients.ec2);
  const described = new Map<string, Promise<Omit<CatalogInstanceType, 'offerings'> | undefined>>();
  const describe = (name: string) =>
    ec2.describeInstanceTypes({ InstanceTypes: [name as _InstanceType] }).then(
      (out) => {
        const info = out.InstanceTypes?.[0];
        return info ? catalogInstanceTypeFromEC2(info) : undefined;
      },
      (error: unknown) => {
        if (errorCode(error) === 'InvalidInstanceType') return undefined;
        throw error;
      },
    );
  return async (name, nodeClass) => {
    let info = described.get(name);
    if (!info) {
      info = describe(name);
      described.set(name, info);
      // A failed describe (throttling) is asked again at the next registration.
      info.catch(() => described.delete(name));
    }
    const base = await info;
    if (!base) return undefined;
    const family = (nodeClass && resolveAMIFamily(nodeClass)) ?? 'Custom';
    return instanceTypeLabels({ ...base, offerings: [] }, runtime.settings.region, family);
  };
}

/** What registration and deletion need to know of NodePools. */
export function claimKnowledge(
  runtime: Runtime,
  typeLabels: InstanceTypeLabels = instanceTypeLabelSource(runtime),
): ClaimKnowledge {
  return {
    async backfill(instance, node, adopted) {
      const pool = nodePoolOf(runtime, instance.nodePool);
      const nodeClass = runtime.config.nodeClasses.find((c) => c.metadata.name === instance.nodeClass);
      const labels = await typeLabels(instance.instanceType, nodeClass);
      const record = backfillRecord({
        instance,
        ...(pool ? { nodePool: pool } : {}),
        ...(adopted ? { adopted } : {}),
        ...(labels ? { instanceType: { labels } } : {}),
        now: runtime.clock(),
      });
      return withNodeCapacity(record, node);
    },
    terminationGracePeriodMs(nodePool) {
      const grace = nodePoolOf(runtime, nodePool)?.spec.template.spec.terminationGracePeriod;
      const seconds = grace ? parseDurationSeconds(grace) : undefined;
      return seconds === undefined ? undefined : seconds * 1000;
    },
  };
}
