// A fixed round of the SDK calls karpless makes, each answer reduced to values that do not depend
// on moto's generated ids, so a bundled run (lean SDK copies, infra/lean-sdk.ts) and an unbundled
// one can be compared value for value. Run as a script it prints its result as JSON.

import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeSubnetsCommand,
  EC2Client,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2';
import { CreateInstanceProfileCommand, GetInstanceProfileCommand, IAMClient } from '@aws-sdk/client-iam';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';

interface BuildStack {
  add(
    middleware: (next: (args: { request: unknown }) => unknown) => (args: { request: unknown }) => unknown,
    options: { step: 'build'; name: string },
  ): void;
}

function inAccount<T extends { middlewareStack: unknown }>(client: T, account: string): T {
  (client.middlewareStack as BuildStack).add(
    (next) => (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) request.headers['x-moto-account-id'] = account;
      return next(args);
    },
    { step: 'build', name: 'probeAccount' },
  );
  return client;
}

async function errorName(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'no error';
  } catch (error) {
    return `${(error as Error).name}: ${(error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode}`;
  }
}

/**
 * `envCredentials`: one client finds its credentials itself, as the functions' clients do (in a
 * bundle, through infra/lambda-credentials.ts reading Lambda's environment variables).
 */
export async function probe(
  endpoint: string,
  account: string,
  envCredentials = false,
): Promise<Record<string, unknown>> {
  const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
  const config = { endpoint, region: 'us-west-2', credentials };
  const ec2 = inAccount(new EC2Client(config), account);
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.9.0.0/16' }));
  const subnet = await ec2.send(
    new CreateSubnetCommand({ VpcId: vpc.Vpc?.VpcId, CidrBlock: '10.9.1.0/24', AvailabilityZone: 'us-west-2b' }),
  );
  const subnets = await ec2.send(
    new DescribeSubnetsCommand({ Filters: [{ Name: 'vpc-id', Values: [vpc.Vpc?.VpcId ?? ''] }] }),
  );
  const types = await ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large'] }));
  const template = await ec2.send(
    new CreateLaunchTemplateCommand({
      LaunchTemplateName: 'probe',
      LaunchTemplateData: {
        ImageId: 'ami-12c6146b',
        MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1 },
        BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, Encrypted: true } }],
        TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'eks:eks-cluster-name', Value: 'probe' }] }],
      },
      TagSpecifications: [{ ResourceType: 'launch-template', Tags: [{ Key: 'karpenter.sh/nodepool', Value: 'p' }] }],
    }),
  );
  const fleet = await ec2.send(
    new CreateFleetCommand({
      Type: 'instant',
      LaunchTemplateConfigs: [
        {
          LaunchTemplateSpecification: { LaunchTemplateName: 'probe', Version: '$Latest' },
          Overrides: [{ InstanceType: 'm5.large', SubnetId: subnet.Subnet?.SubnetId ?? '' }],
        },
      ],
      TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' },
      OnDemandOptions: { AllocationStrategy: 'lowest-price' },
      TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'eks:eks-cluster-name', Value: 'probe' }] }],
    }),
  );
  const instanceId = fleet.Instances?.[0]?.InstanceIds?.[0] ?? '';
  const described = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
  const instance = described.Reservations?.[0]?.Instances?.[0];
  const terminated = await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
  const templates = await ec2.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: ['probe'] }));

  const ssm = inAccount(new SSMClient(config), account);
  const parameter = await ssm.send(
    new GetParameterCommand({
      Name: '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id',
    }),
  );
  const iam = inAccount(new IAMClient(config), account);
  await iam.send(new CreateInstanceProfileCommand({ InstanceProfileName: 'probe', Tags: [{ Key: 'k', Value: 'v' }] }));
  const profile = await iam.send(new GetInstanceProfileCommand({ InstanceProfileName: 'probe' }));

  const dynamo = inAccount(new DynamoDBClient(config), account);
  await dynamo.send(
    new CreateTableCommand({
      TableName: 'probe',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
  await dynamo.send(
    new PutItemCommand({ TableName: 'probe', Item: { pk: { S: 'a' }, n: { N: '3' }, l: { L: [{ BOOL: true }] } } }),
  );
  const item = await dynamo.send(new GetItemCommand({ TableName: 'probe', Key: { pk: { S: 'a' } } }));

  const ambient = inAccount(
    new EC2Client({ endpoint, region: 'us-west-2', ...(envCredentials ? {} : { credentials }) }),
    account,
  );
  const ambientVpcs = await ambient.send(
    new DescribeSubnetsCommand({ Filters: [{ Name: 'vpc-id', Values: [vpc.Vpc?.VpcId ?? ''] }] }),
  );

  return {
    ambientSubnets: ambientVpcs.Subnets?.length,
    subnets: subnets.Subnets?.map((s) => [s.CidrBlock, s.AvailabilityZone, s.State]),
    vcpus: types.InstanceTypes?.[0]?.VCpuInfo?.DefaultVCpus,
    memory: types.InstanceTypes?.[0]?.MemoryInfo?.SizeInMiB,
    templateName: template.LaunchTemplate?.LaunchTemplateName,
    templateVersion: template.LaunchTemplate?.LatestVersionNumber,
    fleetErrors: fleet.Errors?.length ?? 0,
    instance: [instance?.InstanceType, instance?.Placement?.AvailabilityZone, instance?.MetadataOptions?.HttpTokens],
    instanceTags: instance?.Tags?.map((t) => `${t.Key}=${t.Value}`).sort(),
    launchTimeIsDate: instance?.LaunchTime instanceof Date,
    terminated: terminated.TerminatingInstances?.[0]?.CurrentState?.Name,
    templates: templates.LaunchTemplates?.map((t) => [t.LaunchTemplateName, t.Tags?.map((x) => x.Key)]),
    parameterIsAmi: /^ami-/.test(parameter.Parameter?.Value ?? ''),
    profile: [profile.InstanceProfile?.InstanceProfileName, profile.InstanceProfile?.Tags?.length],
    item: item.Item,
    ec2Error: await errorName(ec2.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: ['missing'] }))),
    iamError: await errorName(iam.send(new GetInstanceProfileCommand({ InstanceProfileName: 'missing' }))),
    ssmError: await errorName(ssm.send(new GetParameterCommand({ Name: '/missing' }))),
  };
}

const [, , endpoint, account, mode] = process.argv;
if (endpoint && account) console.log(JSON.stringify(await probe(endpoint, account, mode === 'env-credentials')));
