// Everything a handler needs, built once per cold start from the environment (shared/contracts ENV)
// and the bundled configuration document. Handlers stay thin and tests pass their own clients.

import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { IAMClient } from '@aws-sdk/client-iam';
import { PricingClient } from '@aws-sdk/client-pricing';
import { SSMClient } from '@aws-sdk/client-ssm';
import { buildConfiguration, type Configuration } from '../apis/config';
import { parseDurationSeconds } from '../apis/duration';
import { formatProblem } from '../apis/problems';
import { DETAIL_TYPE, ENV, requireEnv } from '../contracts';
import { resolveInstanceTypes } from '../instancetypes/resolve';
import { parseInterruption } from '../interruption';
import { isEvictable, kubeClientForCluster } from '../kube/client';
import type { KubeClient } from '../kube/types';
import { registrationLabels, requirementLabels } from '../nodeclaim';
import { noticeDaemonSetFromDaemonSet, noticePodFromPod, splitNotice } from '../notice';
import type { PodsUnschedulableDetail } from '../notice/types';
import { AMIProvider } from '../providers/ami';
import { CapacityReservationProvider, withNodeClassReservations } from '../providers/capacityreservation';
import type { Clock, Sleep } from '../providers/clock';
import { realSleep, systemClock } from '../providers/clock';
import { type Cluster, ClusterProvider } from '../providers/cluster';
import { dynamoApi } from '../providers/dynamo-port';
import { DynamoStateStore } from '../providers/dynamostate';
import { EventBridgePublisher, type EventPublisher, eventBridgeApi } from '../providers/eventbus';
import { InstanceLauncher } from '../providers/instance';
import { InstanceProfileProvider } from '../providers/instanceprofile';
import { InstanceTypeProvider } from '../providers/instancetype';
import { LaunchTemplateProvider } from '../providers/launchtemplate';
import { PlacementGroupProvider } from '../providers/placementgroup';
import { ec2Api, eksApi, iamApi, ssmApi } from '../providers/ports';
import { applyPrices, describePrices, onDemandPriceLookup, PricingProvider, pricingApi } from '../providers/pricing';
import { SecurityGroupProvider } from '../providers/securitygroup';
import type { FullStateStore } from '../providers/state';
import { SubnetProvider } from '../providers/subnet';
import { StateUnavailableOfferings } from '../providers/unavailableofferings';
import { ClaimInstances, type InstancesPort } from './instances';
import type { InterruptionDeps, RebalanceAction } from './interruption';
import { AwsClaimLauncher } from './launcher';
import type { ClaimKnowledge } from './nodes';
import type { ProvisionDeps, ResolvedInstanceTypes } from './provision';
import type { Telemetry } from './telemetry';
import type { NoticePublisher, WatcherDeps } from './watcher';

export interface RuntimeSettings {
  cluster: string;
  region: string;
  stateTable: string;
  noticeBus: string;
  configFile: string;
  rebalanceAction: RebalanceAction;
  kubeEndpoint?: string;
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
  const kubeEndpoint = env[ENV.kubeEndpoint];
  return kubeEndpoint ? { ...settings, kubeEndpoint } : settings;
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
  const result = buildConfiguration(
    objects.map((object) => ({ file: path, line: 1, object })),
    { strictReferences: true },
  );
  const errors = result.problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) throw new Error(`configuration ${path}:\n${errors.map(formatProblem).join('\n')}`);
  return result.config;
}

/** SDK clients; tests pass an endpoint (moto) and credentials. */
export interface AwsClients {
  ec2: EC2Client;
  eks: EKSClient;
  ssm: SSMClient;
  iam: IAMClient;
  dynamodb: DynamoDBClient;
  eventbridge: EventBridgeClient;
  pricing?: PricingClient;
}

export function awsClients(region: string): AwsClients {
  const config = { region, maxAttempts: 5 };
  return {
    ec2: new EC2Client(config),
    eks: new EKSClient(config),
    ssm: new SSMClient(config),
    iam: new IAMClient(config),
    dynamodb: new DynamoDBClient(config),
    eventbridge: new EventBridgeClient(config),
    // The Pricing API answers in a few regions only (Karpenter's endpoint choice).
    pricing: new PricingClient({ ...config, region: region.startsWith('ap-') ? 'ap-south-1' : 'us-east-1' }),
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
  const clients = options.clients ?? awsClients(settings.region);
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

export async function kubeClient(runtime: Runtime): Promise<KubeClient> {
  const credentials = runtime.clients.ec2.config.credentials;
  return kubeClientForCluster({
    eks: eksApi(runtime.clients.eks),
    clusterName: runtime.settings.cluster,
    region: runtime.settings.region,
    credentials: async () => credentials(),
    ...(runtime.settings.kubeEndpoint ? { endpointOverride: runtime.settings.kubeEndpoint } : {}),
  });
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

/** Instance types per NodePool with live prices (bundled → Pricing API and spot history, cached). */
function instanceTypeSource(
  runtime: Runtime,
  telemetry: Telemetry,
  reservations?: CapacityReservationProvider,
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
        resolved = resolveInstanceTypes(catalog, nodeClass);
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

export function provisionDeps(runtime: Runtime, telemetry: Telemetry): ProvisionDeps {
  const { clients, settings, clock } = runtime;
  const ec2 = ec2Api(clients.ec2);
  const clusterProvider = new ClusterProvider(eksApi(clients.eks));
  let cluster: Promise<Cluster> | undefined;
  // One provider for planning, readiness and launch, so launches count down what planning offered.
  const reservations = new CapacityReservationProvider(ec2, { clock });
  const launcher = new InstanceLauncher({
    ec2,
    launchTemplates: new LaunchTemplateProvider(ec2, clock),
    unavailable: new StateUnavailableOfferings(runtime.state, clock),
    clusterName: settings.cluster,
    region: settings.region,
    reservations,
  });
  return {
    ...telemetry,
    cluster: settings.cluster,
    nodePools: runtime.config.nodePools,
    instanceTypes: instanceTypeSource(runtime, telemetry, reservations),
    instances: runtime.instances,
    state: runtime.state,
    launcher: new AwsClaimLauncher({
      nodeClasses: runtime.config.nodeClasses,
      cluster: () => {
        cluster ??= clusterProvider.describe(settings.cluster).catch((error: unknown) => {
          cluster = undefined;
          throw error;
        });
        return cluster;
      },
      resolver: {
        subnets: new SubnetProvider(ec2),
        securityGroups: new SecurityGroupProvider(ec2),
        amis: new AMIProvider(ec2, ssmApi(clients.ssm), clock),
        instanceProfiles: new InstanceProfileProvider(iamApi(clients.iam), {
          clusterName: settings.cluster,
          region: settings.region,
        }),
        capacityReservations: reservations,
        placementGroups: new PlacementGroupProvider(ec2, { clock }),
      },
      launcher,
      clock,
    }),
    events: {
      nodeClaimsLaunched: (detail) => runtime.events.publish([{ detailType: DETAIL_TYPE.nodeClaimsLaunched, detail }]),
    },
    clock,
  };
}

/** What registration and deletion need to know of NodePools. */
export function claimKnowledge(
  runtime: Runtime,
  types: () => Promise<ResolvedInstanceTypes>,
): ClaimKnowledge & {
  prepare(): Promise<void>;
} {
  let byNodePool: ResolvedInstanceTypes['byNodePool'] = {};
  return {
    async prepare() {
      byNodePool = (await types()).byNodePool;
    },
    registrationLabels(instance) {
      const pool = nodePoolOf(runtime, instance.nodePool);
      const type = byNodePool[instance.nodePool]?.find((t) => t.name === instance.instanceType);
      const claimLabels = pool
        ? {
            ...requirementLabels(pool.spec.template.spec.requirements),
            ...(pool.spec.template.metadata?.labels ?? {}),
            'karpenter.sh/nodepool': instance.nodePool,
            'karpenter.k8s.aws/ec2nodeclass': instance.nodeClass,
          }
        : { 'karpenter.sh/nodepool': instance.nodePool };
      const launched = {
        instanceType: type ?? { labels: { 'node.kubernetes.io/instance-type': instance.instanceType } },
        zone: instance.zone,
        capacityType: instance.capacityType,
        ...(instance.reservation ? { reservation: instance.reservation } : {}),
      };
      return registrationLabels({ labels: claimLabels }, launched as Parameters<typeof registrationLabels>[1]);
    },
    startupTaints(nodePool) {
      return nodePoolOf(runtime, nodePool)?.spec.template.spec.startupTaints ?? [];
    },
    terminationGracePeriodMs(nodePool) {
      const grace = nodePoolOf(runtime, nodePool)?.spec.template.spec.terminationGracePeriod;
      const seconds = grace ? parseDurationSeconds(grace) : undefined;
      return seconds === undefined ? undefined : seconds * 1000;
    },
  };
}

export async function watcherDeps(runtime: Runtime, telemetry: Telemetry): Promise<WatcherDeps> {
  const kube = await kubeClient(runtime);
  const claims = claimKnowledge(runtime, instanceTypeSource(runtime, telemetry));
  await claims.prepare();
  return {
    ...telemetry,
    kube,
    instances: runtime.instances,
    state: runtime.state,
    notices: noticePublisher(runtime),
    claims,
    isEvictable,
    clock: runtime.clock,
    sleep: runtime.sleep,
  };
}

export async function interruptionDeps(
  runtime: Runtime,
  telemetry: Telemetry,
): Promise<Omit<InterruptionDeps, 'invocationDeadline'>> {
  return {
    ...telemetry,
    cluster: runtime.settings.cluster,
    kube: await kubeClient(runtime),
    instances: runtime.instances,
    state: runtime.state,
    parse(body) {
      const result = parseInterruption(body);
      if (!result.ok) throw new Error(result.error);
      return result.message;
    },
    notices: noticePublisher(runtime),
    rebalanceAction: runtime.settings.rebalanceAction,
    isEvictable,
    clock: runtime.clock,
    sleep: runtime.sleep,
  };
}
