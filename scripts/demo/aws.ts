// The demo's AWS side on the moto emulator: a VPC with a subnet in each of three zones, a security
// group, an AMI and an EKS cluster, then the synthesized karpless stack deployed through moto's
// CloudFormation. Where moto cannot create a resource of the template, it is created through the SDK
// from the same definition, or left out, and each such case is reported.

import {
  CloudFormationClient,
  CreateStackCommand,
  DescribeStackResourcesCommand,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation';
import {
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DescribeImagesCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { CreateClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueUrlCommand, SetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';

export const DEMO_REGION = 'us-west-2';
export const DEMO_ACCOUNT = '123456789012';
export const DEMO_ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c'];

export interface AwsEndpoint {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export function demoEndpoint(endpoint: string): AwsEndpoint {
  return { endpoint, region: DEMO_REGION, credentials: { accessKeyId: 'demo', secretAccessKey: 'demo' } };
}

export interface DemoNetwork {
  vpcId: string;
  subnets: { id: string; zone: string }[];
  securityGroupId: string;
  imageId: string;
}

/** The network, AMI and EKS cluster the demo's EC2NodeClass selects (examples/demo). */
export async function createClusterResources(aws: AwsEndpoint, clusterName: string): Promise<DemoNetwork> {
  const ec2 = new EC2Client(aws);
  const eks = new EKSClient(aws);
  const discovery = [{ Key: 'karpenter.sh/discovery', Value: clusterName }];
  try {
    const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.42.0.0/16' }));
    const vpcId = vpc.Vpc?.VpcId ?? '';
    const subnets: DemoNetwork['subnets'] = [];
    for (const [i, zone] of DEMO_ZONES.entries()) {
      const subnet = await ec2.send(
        new CreateSubnetCommand({
          VpcId: vpcId,
          CidrBlock: `10.42.${i}.0/24`,
          AvailabilityZone: zone,
          TagSpecifications: [{ ResourceType: 'subnet', Tags: discovery }],
        }),
      );
      subnets.push({ id: subnet.Subnet?.SubnetId ?? '', zone });
    }
    const group = await ec2.send(
      new CreateSecurityGroupCommand({
        GroupName: `${clusterName}-nodes`,
        Description: 'karpless demo nodes',
        VpcId: vpcId,
        TagSpecifications: [{ ResourceType: 'security-group', Tags: discovery }],
      }),
    );
    // moto drops the architecture of a registered image, so the demo tags one of moto's own x86_64
    // images as its node image instead; the EC2NodeClass finds it by that tag.
    const images = await ec2.send(
      new DescribeImagesCommand({
        Filters: [
          { Name: 'architecture', Values: ['x86_64'] },
          { Name: 'name', Values: ['amzn2-ami-*-x86_64-gp2'] },
          { Name: 'state', Values: ['available'] },
        ],
      }),
    );
    const imageId = images.Images?.find((i) => i.ImageId)?.ImageId;
    if (!imageId) throw new Error('demo: moto offers no x86_64 Amazon Linux image to use as the node image');
    await ec2.send(new CreateTagsCommand({ Resources: [imageId], Tags: [{ Key: 'karpless-demo', Value: 'al2023' }] }));
    await eks.send(
      new CreateClusterCommand({
        name: clusterName,
        roleArn: `arn:aws:iam::${DEMO_ACCOUNT}:role/${clusterName}-cluster`,
        resourcesVpcConfig: { subnetIds: subnets.map((s) => s.id), securityGroupIds: [group.GroupId ?? ''] },
        kubernetesNetworkConfig: { serviceIpv4Cidr: '172.20.0.0/16' },
        version: '1.31',
      }),
    );
    return { vpcId, subnets, securityGroupId: group.GroupId ?? '', imageId };
  } finally {
    ec2.destroy();
    eks.destroy();
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface TemplateResource {
  Type: string;
  Properties?: Record<string, Json>;
  DependsOn?: string | string[];
}
export interface Template {
  Resources: Record<string, TemplateResource>;
  [key: string]: Json | Record<string, TemplateResource>;
}

/** What the demo did instead of CloudFormation for one resource of the template. */
export interface Substitution {
  logicalId: string;
  type: string;
  action: 'created through the SDK' | 'left out';
  why: string;
}

const LEFT_OUT: Record<string, string> = {
  'AWS::EKS::AccessEntry':
    'moto implements neither this resource type nor CreateAccessEntry; the fake API server does not check identities',
  'AWS::Lambda::EventSourceMapping':
    'moto would invoke the function in Docker; the demo receives from the queue and calls the handler in-process instead',
  'AWS::CDK::Metadata': 'CDK bookkeeping only',
  'Custom::KarplessUninstall':
    "moto's CloudFormation would invoke the gc function (in Docker) and wait for its answer; the demo never destroys the stack; `cdk destroy` is replayed against moto in test/integration/runtime/destroy.test.ts",
  'Custom::KarplessPreflight':
    "moto's CloudFormation would invoke the preflight function (in Docker); the demo runs the same check in-process before the deploy",
  'AWS::Events::EventBusPolicy':
    "moto's CloudFormation does not implement it, and moto evaluates no resource policy: the demo's producers are karpless's own functions",
};
const SCHEDULE_LEFT_OUT =
  'moto matches a schedule rule against every event put and fails on its Lambda target; the demo invokes';
/** What the demo does in place of each function's schedule. */
const SCHEDULED_BY_THE_DEMO: Record<string, string> = {
  Watcher: 'the watcher itself at each step, where the schedule would have run it',
  Drift: 'the drift function itself: with the AMI release event, then once per round as the schedule would',
  Gc: 'the gc function itself once, at the end, as one scheduled run',
};

function scheduleLeftOut(logicalId: string): string {
  const fn = Object.keys(SCHEDULED_BY_THE_DEMO).find((name) => logicalId.includes(`${name}Schedule`));
  return `${SCHEDULE_LEFT_OUT} ${fn ? SCHEDULED_BY_THE_DEMO[fn] : 'nothing in its place'}`;
}
const THROUGH_SDK: Record<string, string> = {
  'AWS::SQS::QueuePolicy': "moto's CloudFormation accepts this type but never applies the policy",
};

/**
 * Splits the template into what moto's CloudFormation can create and what the demo handles itself,
 * fixing the one moto bug in between (a Ref to an EventBus resolves to an object, not its name: in a
 * rule's EventBusName and in the functions' environment, which GetFunctionConfiguration then cannot
 * serialize).
 */
export function prepareTemplate(template: Template): {
  template: Template;
  deferred: Record<string, TemplateResource>;
  substitutions: Substitution[];
} {
  const copy = JSON.parse(JSON.stringify(template)) as Template;
  const deferred: Record<string, TemplateResource> = {};
  const substitutions: Substitution[] = [];
  const busNames = new Map<string, string>();
  for (const [id, resource] of Object.entries(copy.Resources)) {
    if (resource.Type === 'AWS::Events::EventBus') busNames.set(id, String(resource.Properties?.Name ?? ''));
  }
  for (const [id, resource] of Object.entries(copy.Resources)) {
    const scheduled = resource.Type === 'AWS::Events::Rule' && resource.Properties?.ScheduleExpression !== undefined;
    const leftOut = scheduled ? scheduleLeftOut(id) : LEFT_OUT[resource.Type];
    const throughSdk = THROUGH_SDK[resource.Type];
    if (leftOut || throughSdk) {
      delete copy.Resources[id];
      if (throughSdk) deferred[id] = resource;
      substitutions.push({
        logicalId: id,
        type: resource.Type,
        action: throughSdk ? 'created through the SDK' : 'left out',
        why: throughSdk ?? leftOut ?? '',
      });
      continue;
    }
    if (resource.Properties)
      resource.Properties = replaceBusRefs(resource.Properties, busNames) as Record<string, Json>;
  }
  const gone = new Set([...substitutions.map((s) => s.logicalId)]);
  // What refers to a resource left out goes too (e.g. the permission for the schedule to invoke).
  for (let changed = true; changed; ) {
    changed = false;
    for (const [id, resource] of Object.entries(copy.Resources)) {
      const refersTo = [...gone].find((g) => references(resource.Properties ?? {}, g));
      if (!refersTo || deferred[id]) continue;
      delete copy.Resources[id];
      gone.add(id);
      changed = true;
      substitutions.push({
        logicalId: id,
        type: resource.Type,
        action: 'left out',
        why: `it refers to ${refersTo}, left out`,
      });
    }
  }
  for (const resource of Object.values(copy.Resources)) {
    if (Array.isArray(resource.DependsOn)) resource.DependsOn = resource.DependsOn.filter((d) => !gone.has(d));
    else if (resource.DependsOn && gone.has(resource.DependsOn)) delete resource.DependsOn;
  }
  return { template: copy, deferred, substitutions };
}

/** The template with each `{ Ref: <EventBus> }` replaced by the bus's name. */
function replaceBusRefs(value: Json, busNames: ReadonlyMap<string, string>): Json {
  if (Array.isArray(value)) return value.map((v) => replaceBusRefs(v, busNames));
  if (value === null || typeof value !== 'object') return value;
  const ref = typeof value.Ref === 'string' ? busNames.get(value.Ref) : undefined;
  if (ref && Object.keys(value).length === 1) return ref;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceBusRefs(v, busNames)]));
}

function references(value: Json, logicalId: string): boolean {
  if (Array.isArray(value)) return value.some((v) => references(v, logicalId));
  if (value === null || typeof value !== 'object') return false;
  if (value.Ref === logicalId) return true;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && getAtt[0] === logicalId) return true;
  return Object.values(value).some((v) => references(v, logicalId));
}

interface PhysicalResource {
  type: string;
  physicalId: string;
}

/** Resolves the intrinsic functions CDK emits in queue policies against the created stack. */
function resolve(value: Json, resources: Map<string, PhysicalResource>, aws: AwsEndpoint): Json {
  if (Array.isArray(value)) return value.map((v) => resolve(v, resources, aws));
  if (value === null || typeof value !== 'object') return value;
  if ('Ref' in value) {
    const ref = String(value.Ref);
    if (ref === 'AWS::Region') return aws.region;
    if (ref === 'AWS::AccountId') return DEMO_ACCOUNT;
    if (ref === 'AWS::Partition') return 'aws';
    if (ref === 'AWS::URLSuffix') return 'amazonaws.com';
    return resources.get(ref)?.physicalId ?? ref;
  }
  if ('Fn::GetAtt' in value) {
    const [id = '', attribute] = value['Fn::GetAtt'] as string[];
    const resource = resources.get(id);
    if (!resource || attribute !== 'Arn') throw new Error(`demo: cannot resolve Fn::GetAtt ${id}.${attribute}`);
    if (resource.type === 'AWS::SQS::Queue') {
      return `arn:aws:sqs:${aws.region}:${DEMO_ACCOUNT}:${resource.physicalId.split('/').pop()}`;
    }
    if (resource.type === 'AWS::Events::Rule')
      return `arn:aws:events:${aws.region}:${DEMO_ACCOUNT}:rule/${resource.physicalId}`;
    return resource.physicalId;
  }
  if ('Fn::Join' in value) {
    const [separator, parts] = value['Fn::Join'] as [string, Json[]];
    return parts.map((p) => String(resolve(p, resources, aws))).join(separator);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, resources, aws)]));
}

export interface DeployedStack {
  stackName: string;
  /** Logical id → physical id of everything CloudFormation created. */
  resources: Map<string, PhysicalResource>;
  substitutions: Substitution[];
  /** Queue name → URL on the emulator (moto's stack answers with amazonaws.com URLs). */
  queueUrl(name: string): Promise<string>;
}

/** What `cdk bootstrap` would have created: the asset bucket and the version parameter the template checks. */
async function bootstrap(aws: AwsEndpoint): Promise<void> {
  const s3 = new S3Client({ ...aws, forcePathStyle: true });
  const ssm = new SSMClient(aws);
  try {
    await s3.send(
      new CreateBucketCommand({
        Bucket: `cdk-hnb659fds-assets-${DEMO_ACCOUNT}-${aws.region}`,
        CreateBucketConfiguration: { LocationConstraint: 'us-west-2' },
      }),
    );
    await ssm.send(
      new PutParameterCommand({
        Name: '/cdk-bootstrap/hnb659fds/version',
        Value: '30',
        Type: 'String',
        Overwrite: true,
      }),
    );
  } catch (error) {
    // A second demo against the same emulator finds them already there.
    if (!String((error as Error).name).includes('BucketAlready')) throw error;
  } finally {
    s3.destroy();
    ssm.destroy();
  }
}

/** Deploys the synthesized template to moto's CloudFormation and applies what moto does not. */
export async function deployStack(aws: AwsEndpoint, stackName: string, synthesized: Template): Promise<DeployedStack> {
  const cfn = new CloudFormationClient(aws);
  const sqs = new SQSClient(aws);
  const { template, deferred, substitutions } = prepareTemplate(synthesized);
  await bootstrap(aws);
  await cfn.send(
    new CreateStackCommand({
      StackName: stackName,
      TemplateBody: JSON.stringify(template),
      Capabilities: ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM'],
    }),
  );
  for (let i = 0; ; i++) {
    const stack = (await cfn.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
    const status = stack?.StackStatus ?? 'UNKNOWN';
    if (status === 'CREATE_COMPLETE') break;
    if (!status.endsWith('IN_PROGRESS') || i > 120)
      throw new Error(`demo: stack ${stackName} ended ${status}: ${stack?.StackStatusReason ?? ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const described = await cfn.send(new DescribeStackResourcesCommand({ StackName: stackName }));
  const resources = new Map<string, PhysicalResource>();
  for (const r of described.StackResources ?? []) {
    if (r.LogicalResourceId)
      resources.set(r.LogicalResourceId, { type: r.ResourceType ?? '', physicalId: r.PhysicalResourceId ?? '' });
  }
  const queueUrl = async (name: string) => (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl ?? '';
  for (const resource of Object.values(deferred)) {
    if (resource.Type !== 'AWS::SQS::QueuePolicy') continue;
    const document = resolve(resource.Properties?.PolicyDocument ?? {}, resources, aws);
    for (const queue of (resource.Properties?.Queues ?? []) as Json[]) {
      const physical = String(resolve(queue, resources, aws));
      const url = await queueUrl(physical.split('/').pop() ?? physical);
      await sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { Policy: JSON.stringify(document) } }),
      );
    }
  }
  cfn.destroy();
  return { stackName, resources, substitutions, queueUrl };
}
