// Names shared by the CDK stack (infra/), the Lambdas (lambdas/) and the core: environment
// variables, event sources and detail-types, tag keys, the state table's key schema and metric
// names. Both sides import them from here so a rename cannot split the deployment.

/** Environment variables every function reads through requireEnv() at cold start. */
export const ENV = {
  /** EKS cluster name; also the value of the eks:eks-cluster-name tag on everything we launch. */
  clusterName: 'KARPLESS_CLUSTER_NAME',
  /** Name of the DynamoDB state table (nominations, ICE cache, idempotency, drains, prices, budgets). */
  stateTable: 'KARPLESS_STATE_TABLE',
  /** Name of the custom EventBridge bus that carries PodsUnschedulable and NodeClaimsLaunched. */
  noticeBus: 'KARPLESS_NOTICE_BUS',
  /** Path of the validated configuration document bundled beside the handler. */
  configFile: 'KARPLESS_CONFIG_FILE',
  /** 'record' (the upstream default) or 'act': what a rebalance recommendation does. */
  rebalanceAction: 'KARPLESS_REBALANCE_ACTION',
  /** The provision function's queue, where a failed batch's records get their backoff delay. */
  provisionQueueUrl: 'KARPLESS_PROVISION_QUEUE_URL',
  /** Where a provision record goes, with its reason, after its last attempt. */
  provisionDeadLetterQueueUrl: 'KARPLESS_PROVISION_DLQ_URL',
  /** Optional API server endpoint override (the demo's fake API server); normally from DescribeCluster. */
  kubeEndpoint: 'KARPLESS_KUBE_ENDPOINT',
  /** 'true' in an isolated VPC (Karpenter's isolatedVPC): no Pricing API and no IAM calls. */
  isolatedVPC: 'KARPLESS_ISOLATED_VPC',
  /** Optional: launch batches (CreateFleet calls) the provision function keeps in flight at once. */
  launchConcurrency: 'KARPLESS_LAUNCH_CONCURRENCY',
  /** 'bundled' (the default) or 'cluster': NodePools and EC2NodeClasses read from the API server. */
  configurationSource: 'KARPLESS_CONFIGURATION_SOURCE',
  /** 'true': Karpenter's NodeRepair feature gate (the Provisioner's nodeRepair prop). */
  nodeRepair: 'KARPLESS_NODE_REPAIR',
  /** 'true': Karpenter's SpotToSpotConsolidation feature gate (the Provisioner's spotToSpotConsolidation prop). */
  spotToSpotConsolidation: 'KARPLESS_SPOT_TO_SPOT_CONSOLIDATION',
} as const;

/**
 * Launch batches the provision function keeps in flight by default: each CreateFleet takes about a
 * second, and EC2's token buckets pace them beyond a handful.
 */
export const DEFAULT_LAUNCH_CONCURRENCY = 4;

/** File name of the configuration document inside each bundle. */
export const CONFIG_FILE_NAME = 'karpless-config.json';

/** EventBridge source of every event karpless puts. */
export const EVENT_SOURCE = 'karpless';

export const DETAIL_TYPE = {
  podsUnschedulable: 'PodsUnschedulable',
  nodeClaimsLaunched: 'NodeClaimsLaunched',
} as const;

/** Interruption event kinds routed to the interruption queue (reference §6), by source and detail-type. */
export const INTERRUPTION_RULES = [
  { id: 'SpotInterruption', source: 'aws.ec2', detailTypes: ['EC2 Spot Instance Interruption Warning'] },
  { id: 'Rebalance', source: 'aws.ec2', detailTypes: ['EC2 Instance Rebalance Recommendation'] },
  { id: 'InstanceStateChange', source: 'aws.ec2', detailTypes: ['EC2 Instance State-change Notification'] },
  { id: 'ScheduledChange', source: 'aws.health', detailTypes: ['AWS Health Event'] },
  {
    id: 'CapacityReservationInterruption',
    source: 'aws.ec2',
    // AWS documents the warning under both names.
    detailTypes: [
      'EC2 Capacity Reservation Instance Interruption Warning',
      'EC2 Interruptible Capacity Reservation Instance Interruption Warning',
    ],
  },
] as const;

export const AMI_STATE_CHANGE = { source: 'aws.ec2', detailType: 'EC2 AMI State Change' } as const;

/** Tag keys on every instance, volume, network interface and launch template we create. */
export const TAG = {
  clusterName: 'eks:eks-cluster-name',
  clusterOwned: (cluster: string) => `kubernetes.io/cluster/${cluster}`,
  nodePool: 'karpenter.sh/nodepool',
  nodeClass: 'karpenter.k8s.aws/ec2nodeclass',
  nodeClaim: 'karpenter.sh/nodeclaim',
} as const;

/**
 * The state table: one table, string partition key `pk`, string sort key `sk`, TTL attribute
 * `expiresAt` (epoch seconds). Item kinds are told apart by the pk prefix (see shared/providers/state.ts).
 */
export const STATE_TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAt',
} as const;

/** CloudWatch namespace and metric names (Embedded Metric Format), shared with the dashboard. */
export const METRICS_NAMESPACE = 'Karpless';
export const METRIC = {
  decisionLatency: 'DecisionLatency',
  podsPerDecision: 'PodsPerDecision',
  launches: 'NodeClaimsLaunched',
  capacityErrors: 'CapacityErrors',
  interruptions: 'Interruptions',
  registrations: 'NodesRegistered',
  drains: 'NodesDrained',
  /** Pods evicted or deleted by a drain (dimension reason: what the node is leaving for). */
  podsDrained: 'PodsDrained',
  /** Nodes whose instance EC2 reports gone and whose finalizer came off (dimension reason). */
  nodesTerminated: 'NodesTerminated',
  /** Nodes handed to termination by a disruption (dimensions nodePool, reason: Drifted, Expired, …). */
  disruptions: 'NodesDisrupted',
  /** Disruption commands started (dimensions nodePool, reason, decision: delete or replace). */
  disruptionDecisions: 'DisruptionDecisions',
  /** Per drift run: candidates before budgets (dimensions nodePool, reason). */
  eligibleNodes: 'DisruptionEligibleNodes',
  /** Per drift run: nodes the budgets let start disrupting now (dimensions nodePool, reason). */
  allowedDisruptions: 'AllowedDisruptions',
  /** Deletions by the gc function (dimensions resource: instance, node, launch-template, instance-profile; reason). */
  garbageCollected: 'GarbageCollected',
  unschedulablePods: 'UnschedulablePods',
  noticesPut: 'NoticesPut',
  /** A node of ours the watcher failed to register; the next pass retries it. */
  registrationFailures: 'RegistrationFailures',
  /** An action a run decided on and failed (a deletion, a disruption step); the next run retries it. */
  actionFailures: 'ActionFailures',
} as const;

/**
 * The Powertools service name of each function: with `cluster`, the dimensions of every metric it
 * puts without its own, so the alarms (infra/observability.ts) can name the exact metric.
 */
export const SERVICE = {
  watcher: 'karpless-watcher',
  provision: 'karpless-provision',
  interruption: 'karpless-interruption',
  drift: 'karpless-drift',
  gc: 'karpless-gc',
  /** The stack's network check at deploy (Custom::KarplessPreflight), not a scheduled function. */
  preflight: 'karpless-preflight',
} as const;

/** Kubernetes names karpless writes on Nodes (Karpenter's own). */
export const KUBE = {
  unregisteredTaintKey: 'karpenter.sh/unregistered',
  disruptedTaintKey: 'karpenter.sh/disrupted',
  registeredLabel: 'karpenter.sh/registered',
  initializedLabel: 'karpenter.sh/initialized',
  terminationFinalizer: 'karpenter.sh/termination',
  doNotDisruptAnnotation: 'karpenter.sh/do-not-disrupt',
  /** The RBAC group the functions' role is mapped to by its EKS access entry. */
  rbacGroup: 'karpless:provisioner',
  /** The provision function's group: it only reads (pods, nodes, volumes), it never writes. */
  readerRbacGroup: 'karpless:provision-reader',
} as const;

/** Nominations live until a claim's node must have registered (Karpenter's registration TTL). */
export const REGISTRATION_TTL_MS = 15 * 60 * 1000;

/** Reads a required environment variable or fails the cold start naming it. */
export function requireEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new Error(
      `environment variable ${name} is not set: the Provisioner construct sets it; set it when running a handler by hand`,
    );
  }
  return value;
}
