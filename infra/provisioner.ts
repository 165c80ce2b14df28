// The Provisioner construct: everything karpless deploys for one cluster. The watcher lists pending
// pods and registers nodes; the provision function turns notices into instances; the interruption
// function drains what AWS is about to take away; the drift function replaces drifted and expired
// nodes within their NodePools' disruption budgets and consolidates underutilized ones; the gc function removes what nothing uses any
// more (unregistered or orphaned instances, dead Nodes, leaked launch templates and instance
// profiles) and empty nodes past consolidateAfter. Manifests are validated while this constructs, so
// a bad NodePool fails `cdk synth`, never a Lambda at night.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Aws, CfnOutput, CustomResource, Duration, Fn, RemovalPolicy, Token } from 'aws-cdk-lib';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { type IRole, ManagedPolicy, Policy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { Configuration } from '../shared/apis/config';
import { resolveAMIFamily } from '../shared/apis/v1/amifamily';
import { DEFAULT_LAUNCH_CONCURRENCY, ENV, KUBE, STATE_TABLE } from '../shared/contracts';
import { PROVISION_RETRY } from '../shared/runtime/provision-retry';
import { loadDeployConfiguration } from './configuration';
import { KarplessFunction } from './function';
import {
  clusterDiscovery,
  instanceProfileCleanup,
  launchStatements,
  NODE_ROLE_MANAGED_POLICIES,
  regionalReads,
  scopedDeletion,
  scopedInstanceTagging,
} from './iam';
import { FunctionNetwork, type FunctionNetworkProps, NetworkPreflight, vpcEndpointServices } from './network';
import { Observability } from './observability';
import { EventQueues } from './queues';

export type RebalanceAction = 'record' | 'act';

export interface ProvisionerProps {
  /** Name of the EKS cluster the nodes join; tagged as eks:eks-cluster-name on everything launched. */
  readonly clusterName: string;
  /** Karpenter v1 NodePool and EC2NodeClass manifests: file or directory paths, or a loaded configuration. */
  readonly manifests: readonly string[] | Configuration;
  /**
   * The role nodes run as, passed to EC2 through instance profiles: an imported role, or the name
   * or ARN of a role that exists already (a Karpenter user's `KarpenterNodeRole-<cluster>`), which is
   * used as it is: never created, changed or deleted by the stack.
   * @default - one role per distinct `spec.role` of the EC2NodeClasses, created with the four managed
   * policies nodes need (EKS worker, CNI, ECR pull, SSM)
   */
  readonly nodeRole?: IRole | string;
  /**
   * Whether to create an EKS access entry for each node role: EC2_WINDOWS when a Windows
   * EC2NodeClass uses the role (that entry also admits the role's Linux nodes), EC2_LINUX otherwise.
   * EKS allows one access entry per principal: turn this off when the cluster has one for the role
   * already, as it does for a Karpenter user's node role.
   * @default true
   */
  readonly nodeAccessEntries?: boolean;
  /**
   * What an EC2 rebalance recommendation does: 'record' (Karpenter's default: log and count) or 'act'
   * (drain and replace the node early).
   * @default 'record'
   */
  readonly rebalanceAction?: RebalanceAction;
  /**
   * How often the watcher runs; each run watches until shortly before its timeout.
   * @default Duration.minutes(1)
   */
  readonly watcherInterval?: Duration;
  /**
   * How often the drift function re-resolves every EC2NodeClass (AMIs, subnets, security groups)
   * and moves drifted and expired nodes through their budgeted replacement, then looks for one
   * consolidation command (multi-node, else single-node; replacement first, or none when the pods
   * fit elsewhere), re-validated 15 s later. An `EC2 AMI State Change` event of the account also
   * starts a run; AWS's own AMI releases raise no event, so this schedule is what notices them.
   * Once a minute keeps a pool converging about as fast as Karpenter's disruption loop.
   * @default Duration.minutes(1)
   */
  readonly driftInterval?: Duration;
  /**
   * Karpenter's NodeRepair feature gate: each drift run forcefully terminates a node whose Ready
   * condition has been False or Unknown for 30 minutes (AcceleratedHardwareReady False: 10; the node
   * monitoring agent's other conditions: 30), unless more than 20% of its NodePool is unhealthy
   * (then a NodeRepairBlocked event). Its pods, drained, get a replacement from the provision function.
   * `-c nodeRepair=true` with the CDK app.
   * @default false
   */
  readonly nodeRepair?: boolean;
  /**
   * Karpenter's SpotToSpotConsolidation feature gate: a spot node may be consolidated onto a cheaper
   * spot one (single-node: only with 15 cheaper types). `-c spotToSpotConsolidation=true`.
   * @default false
   */
  readonly spotToSpotConsolidation?: boolean;
  /**
   * How often the gc function runs: it terminates instances that did not register within 15
   * minutes or lost their Node, deletes Nodes whose instance is gone, launch templates and instance
   * profiles the configuration no longer has, and hands nodes empty past `consolidateAfter` to the
   * termination flow within their NodePool's budgets. Karpenter's garbage collection interval.
   * @default Duration.minutes(2)
   */
  readonly gcInterval?: Duration;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /**
   * Launch batches (one CreateFleet each, for up to 500 identical NodeClaims) the provision function
   * keeps in flight at once. EC2's own token buckets pace the calls whatever this says (CreateFleet
   * 200 requests then 5/s, 1,000 instances then 2/s per account and region, by default); raise it
   * with an account whose EC2 limits were raised.
   * @default 4
   */
  readonly launchConcurrency?: number;
  /**
   * Reserve a concurrency of 1 for the watcher, drift and gc functions, so that no two runs of one
   * of them overlap. Lambda keeps 10 of an account's concurrency unreserved: an account whose quota
   * is 10 (new accounts often are) cannot reserve any, and the deploy fails with
   * "decreases account's UnreservedConcurrentExecution below its minimum value". Pass false there
   * (`-c reservedConcurrency=false`): each schedule's interval is then the only spacing between
   * runs (no run outlasts its interval; drift budgets and deletions stay safe, but two overlapping
   * watcher runs may put a notice twice, which the provision function's nominations absorb).
   * @default true
   */
  readonly reservedConcurrency?: boolean;
  /**
   * IAM principals besides karpless's own functions that may put events on the notice bus (role or
   * user ARNs, `*` wildcards allowed), e.g. a CI role that replays notices. Everyone else is denied
   * by the bus's resource policy, whatever their identity policy says.
   * @default - none: only karpless's functions
   */
  readonly noticeProducers?: readonly string[];
  /**
   * Run the functions in a VPC: needed when the cluster's API server endpoint is private, or public
   * but restricted by `publicAccessCidrs`. The functions then reach AWS through the VPC: the stack
   * output `VpcEndpoints` lists the endpoints they call, which the VPC needs unless it routes to a NAT.
   * @default - the functions run outside any VPC and reach the cluster's public endpoint
   */
  readonly vpc?: FunctionNetworkProps;
  /**
   * Karpenter's isolatedVPC: the VPC has no route to the internet, so the Pricing API and IAM (which
   * have no endpoint in most regions) are never called. On-demand prices come from the bundled table
   * and every EC2NodeClass must name its `spec.instanceProfile`.
   * @default false
   */
  readonly isolatedVPC?: boolean;
  /**
   * Where the functions read NodePools and EC2NodeClasses: `bundled` (the manifests given at synth,
   * changed by `cdk deploy`) or `cluster` (the objects on the API server, changed by `kubectl apply`,
   * Argo CD or Flux, read again within seconds; Karpenter's CRDs in infra/kubernetes/crds/ must be
   * applied). With `cluster` the bundled manifests still serve while the CRDs are missing, seed the
   * last valid version of each object, and decide the node roles and SSM parameters the functions
   * may use: an EC2NodeClass applied later that names another role needs it in `nodeRole` or a deploy.
   * @default 'bundled'
   */
  readonly configuration?: 'bundled' | 'cluster';
  /**
   * Actions for every alarm (DLQ depth, function errors, queue age), e.g. an SNS topic action.
   * @default - alarms without actions
   */
  readonly alarmActions?: readonly IAlarmAction[];
  /**
   * The folder holding `<function>/handler.ts`.
   * @default - the lambdas/ folder of this repository
   */
  readonly lambdasDir?: string;
}

/** The id of the launching functions' instance-tagging policy (a child of the function's construct). */
export const INSTANCE_TAGGING_POLICY = 'InstanceTagging';

/** The configuration prop, checked at synth (a JavaScript caller or a context value may pass anything). */
function configurationSource(value: unknown): 'bundled' | 'cluster' {
  if (value === undefined || value === 'bundled') return 'bundled';
  if (value === 'cluster') return 'cluster';
  throw new Error(`Provisioner configuration is ${JSON.stringify(value)}: use "bundled" or "cluster"`);
}

/** The launchConcurrency prop, checked at synth: a bad value fails `cdk synth`, not a launch. */
function launchConcurrency(value: number | undefined): number {
  const chosen = value ?? DEFAULT_LAUNCH_CONCURRENCY;
  if (!Number.isInteger(chosen) || chosen < 1) {
    throw new Error(`Provisioner launchConcurrency is ${value}: use a whole number of at least 1`);
  }
  return chosen;
}

const LAMBDAS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'lambdas');

// The interruption function acts and records a drain; the watcher finishes it on its next run. A short
// timeout keeps 6× visibility × 2 receives inside the queue's 5-minute retention.
const INTERRUPTION_TIMEOUT = Duration.seconds(20);
const PROVISION_TIMEOUT = Duration.minutes(2);
const WATCHER_TIMEOUT = Duration.seconds(60);
const DRIFT_TIMEOUT = Duration.minutes(2);
const GC_TIMEOUT = Duration.seconds(90);

/** The EC2 describes of the launch path (node-class resolution, instance types, prices, fleet). */
const LAUNCH_READS = [
  'DescribeAvailabilityZones',
  'DescribeCapacityReservations',
  'DescribeImages',
  'DescribeInstances',
  'DescribeInstanceTypeOfferings',
  'DescribeInstanceTypes',
  'DescribeLaunchTemplates',
  'DescribePlacementGroups',
  'DescribeSecurityGroups',
  'DescribeSpotPriceHistory',
  'DescribeSubnets',
];

/** An IAM role or user ARN as aws:PrincipalArn carries it, wildcards allowed. */
const PRINCIPAL_ARN = /^arn:aws[a-z-]*:iam::(\d{12}|\*):(role|user|root|\*)/;

/** EKS: 1–100 characters, a letter or digit first, then letters, digits, hyphens and underscores. */
const CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/;

export class Provisioner extends Construct {
  readonly clusterName: string;
  readonly configuration: Configuration;
  /** The configuration document bundled with every function (written at synth). */
  readonly configurationFile: string;
  readonly table: Table;
  readonly queues: EventQueues;
  readonly watcher: KarplessFunction;
  readonly provision: KarplessFunction;
  readonly interruption: KarplessFunction;
  readonly drift: KarplessFunction;
  readonly gc: KarplessFunction;
  readonly nodeRoles: IRole[];
  readonly observability: Observability;
  /** The functions' VPC placement, when they run in one. */
  readonly network: FunctionNetwork | undefined;
  /** The deploy-time check of that VPC, its subnets and security groups, when the functions run in one. */
  readonly preflight: NetworkPreflight | undefined;

  constructor(scope: Construct, id: string, props: ProvisionerProps) {
    super(scope, id);
    const { clusterName } = props;
    this.clusterName = clusterName;
    if (!Token.isUnresolved(clusterName) && !CLUSTER_NAME.test(clusterName)) {
      throw new Error(
        `clusterName '${clusterName}' is not an EKS cluster name: 1-100 letters, digits, hyphens and underscores, starting with a letter or digit`,
      );
    }
    this.configuration = isConfiguration(props.manifests) ? props.manifests : loadDeployConfiguration(props.manifests);
    const configurationFile = writeConfigurationDocument(this.configuration);
    this.configurationFile = configurationFile;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    const lambdasDir = props.lambdasDir ?? LAMBDAS_DIR;

    this.table = new Table(this, 'StateTable', {
      partitionKey: { name: STATE_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: STATE_TABLE.sortKey, type: AttributeType.STRING },
      timeToLiveAttribute: STATE_TABLE.ttlAttribute,
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.queues = new EventQueues(this, 'Events', {
      clusterName,
      interruptionConsumerTimeout: INTERRUPTION_TIMEOUT,
      provisionConsumerTimeout: PROVISION_TIMEOUT,
      interruptionMaxReceiveCount: 2,
      // The handler moves a record to the DLQ itself, with its reason, on this attempt; the redrive
      // policy is the fallback for a run that died (timeout, crash) before it could.
      provisionMaxReceiveCount: PROVISION_RETRY.maxAttempts,
    });
    this.nodeRoles = this.nodeRolesFor(props);
    const isolated = props.isolatedVPC ?? false;
    if (isolated) this.requireInstanceProfiles();
    this.network = props.vpc ? new FunctionNetwork(this, 'Network', props.vpc) : undefined;
    this.preflight = props.vpc
      ? new NetworkPreflight(this, {
          clusterName,
          network: props.vpc,
          entry: join(lambdasDir, 'preflight', 'handler.ts'),
          configurationFile,
          logRetention,
        })
      : undefined;
    if (this.preflight) this.network?.node.addDependency(this.preflight.resource);

    const environment = {
      [ENV.clusterName]: clusterName,
      [ENV.stateTable]: this.table.tableName,
      [ENV.noticeBus]: this.queues.noticeBus.eventBusName,
      ...(isolated ? { [ENV.isolatedVPC]: 'true' } : {}),
      ...(configurationSource(props.configuration) === 'cluster' ? { [ENV.configurationSource]: 'cluster' } : {}),
    };
    const reserve = props.reservedConcurrency ?? true;
    const fn = (fnId: string, timeout: Duration, memorySizeMiB: number, extra: Record<string, string> = {}) =>
      new KarplessFunction(this, fnId, {
        entry: join(lambdasDir, fnId.toLowerCase(), 'handler.ts'),
        configurationFile,
        timeout,
        memorySizeMiB,
        environment: { ...environment, ...extra },
        logRetention,
        ...(this.network ? { network: this.network } : {}),
        // Two watchers at once would put every notice twice; two drift runs would race for the same
        // budget slots (the ledger keeps them within budget, but one run at a time keeps it simple).
        // Two gc runs would delete the same leftovers twice and race for emptiness budget slots.
        ...(reserve && (fnId === 'Watcher' || fnId === 'Drift' || fnId === 'Gc') ? { reservedConcurrency: 1 } : {}),
      });
    this.watcher = fn('Watcher', WATCHER_TIMEOUT, 512);
    this.provision = fn('Provision', PROVISION_TIMEOUT, 1024, {
      [ENV.provisionQueueUrl]: this.queues.provisionQueue.queueUrl,
      [ENV.provisionDeadLetterQueueUrl]: this.queues.provisionDeadLetterQueue.queueUrl,
      [ENV.launchConcurrency]: String(launchConcurrency(props.launchConcurrency)),
    });
    this.interruption = fn('Interruption', INTERRUPTION_TIMEOUT, 512, {
      [ENV.rebalanceAction]: props.rebalanceAction ?? 'record',
    });
    this.drift = fn('Drift', DRIFT_TIMEOUT, 1024, {
      ...(props.nodeRepair ? { [ENV.nodeRepair]: 'true' } : {}),
      ...(props.spotToSpotConsolidation ? { [ENV.spotToSpotConsolidation]: 'true' } : {}),
    });
    this.gc = fn('Gc', GC_TIMEOUT, 512);
    // A wrong VPC, subnet or security group fails the deploy at the preflight, before any function.
    for (const f of this.functions()) if (this.preflight) f.node.addDependency(this.preflight.resource);

    this.grantPermissions(clusterName, {
      nodeClassDeletion: configurationSource(props.configuration) === 'cluster',
      isolated,
    });
    for (const arn of props.noticeProducers ?? []) {
      if (!Token.isUnresolved(arn) && !PRINCIPAL_ARN.test(arn)) {
        throw new Error(
          `noticeProducers: '${arn}' is not an IAM principal ARN: give arn:aws:iam::ACCOUNT:role/NAME (or user/NAME; * wildcards allowed)`,
        );
      }
    }
    this.queues.restrictNoticeProducers([
      ...this.functions().flatMap((f) => (f.function.role ? [f.function.role.roleArn] : [])),
      ...(props.noticeProducers ?? []),
    ]);
    this.wireEvents(props.watcherInterval ?? Duration.minutes(1));
    this.wireDrift(props.driftInterval ?? Duration.minutes(1));
    this.wireGc(props.gcInterval ?? Duration.minutes(2));
    this.createAccessEntries(clusterName, props.nodeAccessEntries ?? true, props.nodeRole !== undefined);
    this.uninstallOnDestroy(clusterName);

    this.observability = new Observability(this, 'Observability', {
      clusterName,
      functions: {
        Watcher: this.watcher.function,
        Provision: this.provision.function,
        Interruption: this.interruption.function,
        Drift: this.drift.function,
        Gc: this.gc.function,
      },
      queues: { Provision: this.queues.provisionQueue, Interruption: this.queues.interruptionQueue },
      deadLetterQueues: {
        Provision: this.queues.provisionDeadLetterQueue,
        Interruption: this.queues.interruptionDeadLetterQueue,
      },
      alarmActions: props.alarmActions ?? [],
      maxMessageAge: Duration.minutes(2),
      watcherInterval: props.watcherInterval ?? Duration.minutes(1),
    });

    new CfnOutput(this, 'StateTableName', { value: this.table.tableName });
    new CfnOutput(this, 'NoticeBusName', { value: this.queues.noticeBus.eventBusName });
    new CfnOutput(this, 'InterruptionQueueUrl', { value: this.queues.interruptionQueue.queueUrl });
    new CfnOutput(this, 'ProvisionQueueUrl', { value: this.queues.provisionQueue.queueUrl });
    if (this.network) {
      const endpoints = vpcEndpointServices(isolated);
      new CfnOutput(this, 'VpcEndpoints', {
        description: 'What the functions call from the VPC: interface endpoints, gateway endpoints, and what needs NAT',
        value: Fn.join(' ', [
          `interface: ${endpoints.interface.join(',')};`,
          `gateway: ${endpoints.gateway.join(',')};`,
          `nat: ${endpoints.nat.length > 0 ? endpoints.nat.join(',') : 'none'}`,
        ]),
      });
    }
  }

  /** isolatedVPC has no IAM endpoint to create instance profiles through: each node class names its own. */
  private requireInstanceProfiles(): void {
    const missing = this.configuration.nodeClasses.filter((c) => !c.spec.instanceProfile);
    if (missing.length > 0) {
      throw new Error(
        `isolatedVPC: EC2NodeClass/${missing.map((c) => c.metadata.name).join(', EC2NodeClass/')} has no spec.instanceProfile: in an isolated VPC karpless cannot reach IAM to create one; create the profile and name it there, as Karpenter requires`,
      );
    }
  }

  private functions(): KarplessFunction[] {
    return [this.watcher, this.provision, this.interruption, this.drift, this.gc];
  }

  private nodeRolesFor(props: ProvisionerProps): IRole[] {
    const named = specRoles(this.configuration.nodeClasses);
    if (typeof props.nodeRole === 'string') return [importedRole(this, 'NodeRole', props.nodeRole)];
    if (props.nodeRole) return [props.nodeRole];
    const withProfile = this.configuration.nodeClasses.filter((c) => c.spec.instanceProfile && !c.spec.role);
    if (withProfile.length > 0) {
      throw new Error(
        `EC2NodeClass/${withProfile[0]?.metadata.name}: spec.instanceProfile is set, so karpless cannot tell which role its nodes run as: pass the Provisioner's nodeRole prop`,
      );
    }
    return named.map((roleName, i) => {
      const id = i === 0 ? 'NodeRole' : `NodeRole${i + 1}`;
      // A role given by ARN exists already (Karpenter accepts either): use it, create nothing.
      if (roleName.startsWith('arn:')) return importedRole(this, id, roleName);
      return new Role(this, id, {
        roleName,
        assumedBy: new ServicePrincipal(`ec2.${Aws.URL_SUFFIX}`),
        description: `karpless nodes of ${props.clusterName}`,
        managedPolicies: NODE_ROLE_MANAGED_POLICIES.map((p) => ManagedPolicy.fromAwsManagedPolicyName(p)),
      });
    });
  }

  private grantPermissions(clusterName: string, scope: { nodeClassDeletion: boolean; isolated: boolean }): void {
    const noticeBus = this.queues.noticeBus;
    for (const f of [this.watcher, this.provision, this.interruption, this.drift, this.gc]) {
      this.table.grantReadWriteData(f.function);
      noticeBus.grantPutEventsTo(f.function);
      f.function.addToRolePolicy(clusterDiscovery(clusterName));
    }
    // A failed batch's records: the backoff delay (ChangeMessageVisibility, granted with the event
    // source) and, after the last attempt, the dead-letter queue with the reason.
    this.queues.provisionDeadLetterQueue.grantSendMessages(this.provision.function);
    this.queues.restrictDeadLetterSenders(this.provision.function.role ? [this.provision.function.role.roleArn] : []);
    const nodeRoleArns = this.nodeRoles.map((r) => r.roleArn);
    const ssmParameters = this.configuration.nodeClasses.flatMap((c) =>
      c.spec.amiSelectorTerms.flatMap((t) => (t.ssmParameter ? [t.ssmParameter] : [])),
    );
    // The drift function launches replacements through the same path as the provision function.
    for (const launching of [this.provision, this.drift]) {
      for (const statement of launchStatements({ clusterName, nodeRoleArns, ssmParameters })) {
        launching.function.addToRolePolicy(statement);
      }
      launching.function.addToRolePolicy(regionalReads(LAUNCH_READS));
      // A batched launch tags each instance with its claim's name right after CreateFleet. A policy
      // of its own: the default policy stays within its size limit whatever the cluster name.
      launching.function.role?.attachInlinePolicy(
        new Policy(launching, INSTANCE_TAGGING_POLICY, { statements: [scopedInstanceTagging(clusterName)] }),
      );
    }

    // gc lists what it may collect; consolidation (instance types, prices) is the drift function's.
    this.gc.function.addToRolePolicy(
      regionalReads(['DescribeInstances', 'DescribeLaunchTemplates', 'DescribeLaunchTemplateVersions']),
    );
    this.gc.function.addToRolePolicy(scopedDeletion(clusterName, ['instance', 'launch-template']));
    for (const statement of instanceProfileCleanup(clusterName)) this.gc.function.addToRolePolicy(statement);
    // Registration labels a node with its instance type's labels, described per launched type. With
    // the configuration read from the cluster, an EC2NodeClass's deletion deletes its launch templates
    // and (outside an isolated VPC, where karpless creates none) its managed instance profiles, under
    // the same tag-scoped statements as garbage collection.
    const { nodeClassDeletion, isolated } = scope;
    this.watcher.function.addToRolePolicy(
      regionalReads([
        'DescribeInstances',
        'DescribeInstanceTypes',
        ...(nodeClassDeletion ? ['DescribeLaunchTemplates'] : []),
      ]),
    );
    this.watcher.function.addToRolePolicy(
      scopedDeletion(clusterName, nodeClassDeletion ? ['instance', 'launch-template'] : ['instance']),
    );
    if (nodeClassDeletion && !isolated) {
      for (const statement of instanceProfileCleanup(clusterName)) this.watcher.function.addToRolePolicy(statement);
    }
    this.watcher.function.addToRolePolicy(scopedInstanceTagging(clusterName));
    this.interruption.function.addToRolePolicy(regionalReads(['DescribeInstances']));
    this.interruption.function.addToRolePolicy(scopedDeletion(clusterName, ['instance']));
  }

  /**
   * `cdk destroy` would stop at the node role, which IAM refuses to delete while the instance
   * profiles karpless made at run time hold it. The gc function, invoked by CloudFormation as this
   * resource is deleted (before the node roles it depends on, after nothing else of karpless is
   * needed), removes those profiles and karpless's launch templates and reports the instances still
   * running. Its physical id never changes, so only the stack's deletion deletes it.
   */
  private uninstallOnDestroy(clusterName: string): void {
    const uninstall = new CustomResource(this, 'Uninstall', {
      serviceToken: this.gc.function.functionArn,
      resourceType: 'Custom::KarplessUninstall',
      properties: { ClusterName: clusterName },
    });
    for (const role of this.nodeRoles) {
      if (role instanceof Role) uninstall.node.addDependency(role);
    }
  }

  private wireEvents(watcherInterval: Duration): void {
    this.provision.function.addEventSource(
      new SqsEventSource(this.queues.provisionQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );
    this.interruption.function.addEventSource(
      new SqsEventSource(this.queues.interruptionQueue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(1),
        reportBatchItemFailures: true,
      }),
    );
    new Rule(this, 'WatcherSchedule', {
      description: 'karpless watcher: pending pods, registration, node deletions',
      schedule: Schedule.rate(watcherInterval),
      // A missed run is not retried: the next one a minute later sees the same cluster.
      targets: [new LambdaFunction(this.watcher.function, { retryAttempts: 0, maxEventAge: Duration.minutes(1) })],
    });
    noAsyncRetries(this.watcher, Duration.minutes(1));
  }

  private wireDrift(driftInterval: Duration): void {
    const target = new LambdaFunction(this.drift.function, { retryAttempts: 0, maxEventAge: Duration.minutes(5) });
    noAsyncRetries(this.drift, Duration.minutes(5));
    new Rule(this, 'DriftSchedule', {
      description: 'karpless drift: re-resolve node classes, replace drifted and expired nodes within budgets',
      schedule: Schedule.rate(driftInterval),
      // A missed run is not retried: the next scheduled one re-reads everything.
      targets: [target],
    });
    new Rule(this, 'AmiStateChangeRule', {
      description: 'karpless drift: an AMI of this account became available',
      eventPattern: { source: ['aws.ec2'], detailType: ['EC2 AMI State Change'], detail: { State: ['available'] } },
      targets: [target],
    });
  }

  private wireGc(gcInterval: Duration): void {
    new Rule(this, 'GcSchedule', {
      description:
        'karpless gc: orphaned instances and Nodes, leaked launch templates and instance profiles, empty nodes',
      schedule: Schedule.rate(gcInterval),
      // A missed run is not retried: the next one lists everything again.
      targets: [new LambdaFunction(this.gc.function, { retryAttempts: 0, maxEventAge: gcInterval })],
    });
    noAsyncRetries(this.gc, gcInterval);
  }

  private createAccessEntries(clusterName: string, nodeEntries: boolean, sharedNodeRole: boolean): void {
    if (nodeEntries) {
      const classes = this.configuration.nodeClasses;
      this.nodeRoles.forEach((role, i) => {
        // With one role for every class, every class is this role's; otherwise the classes naming it
        // (roles are made in the order of their first `spec.role`).
        const users = sharedNodeRole ? classes : classes.filter((c) => c.spec.role === specRoles(classes)[i]);
        const windows = users.some((c) => resolveAMIFamily(c)?.startsWith('Windows'));
        // Logical ids as before one entry per role, so an update replaces nothing EKS would refuse.
        new CfnAccessEntry(this, `NodeAccess${windows ? 'Windows' : 'Linux'}${i === 0 ? '' : i + 1}`, {
          clusterName,
          principalArn: role.roleArn,
          type: windows ? 'EC2_WINDOWS' : 'EC2_LINUX',
        });
      });
    }
    const groups: [KarplessFunction, string][] = [
      [this.watcher, KUBE.rbacGroup],
      [this.interruption, KUBE.rbacGroup],
      [this.drift, KUBE.rbacGroup],
      [this.gc, KUBE.rbacGroup],
      // The provision function reads the cluster before it decides; a notice can make it read, never write.
      [this.provision, KUBE.readerRbacGroup],
    ];
    for (const [f, group] of groups) {
      const role = f.function.role;
      if (!role) continue;
      new CfnAccessEntry(this, `${f.node.id}Access`, {
        clusterName,
        principalArn: role.roleArn,
        type: 'STANDARD',
        kubernetesGroups: [group],
      });
    }
  }
}

/**
 * The EventBridge target's retry policy covers delivery to Lambda only; once accepted, Lambda's own
 * async defaults (2 retries over up to 6 hours) would run a failed scheduled function again, late and
 * beside the next scheduled run. These functions start over from fresh reads each run: no retries,
 * and an event older than one interval is dropped.
 */
function noAsyncRetries(fn: KarplessFunction, maxEventAge: Duration): void {
  fn.function.configureAsyncInvoke({
    retryAttempts: 0,
    maxEventAge: Duration.seconds(Math.min(Math.max(maxEventAge.toSeconds(), 60), 21_600)),
  });
}

/** An existing role by name or ARN: referenced, never created, changed or deleted by the stack. */
function importedRole(scope: Construct, id: string, nameOrArn: string): IRole {
  return nameOrArn.startsWith('arn:')
    ? Role.fromRoleArn(scope, id, nameOrArn, { mutable: false })
    : Role.fromRoleName(scope, id, nameOrArn, { mutable: false });
}

/** The distinct `spec.role` values, in the order node roles are made for them. */
function specRoles(classes: Configuration['nodeClasses']): string[] {
  return [...new Set(classes.flatMap((c) => (c.spec.role ? [c.spec.role] : [])))];
}

function isConfiguration(value: ProvisionerProps['manifests']): value is Configuration {
  return !Array.isArray(value) && typeof value === 'object' && value !== null && 'nodePools' in value;
}

/** The validated, defaulted objects, as the functions load them at cold start ({nodePools, nodeClasses}). */
function writeConfigurationDocument(configuration: Configuration): string {
  const path = join(mkdtempSync(join(tmpdir(), 'karpless-config-')), 'configuration.json');
  writeFileSync(path, JSON.stringify({ nodePools: configuration.nodePools, nodeClasses: configuration.nodeClasses }));
  return path;
}
