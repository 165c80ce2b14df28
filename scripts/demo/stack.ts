// The demo's AWS resources and its karpless stack: the cluster's network, AMI and EKS cluster, the
// stack synthesized for it and deployed to moto's CloudFormation. With `vpc` (`npm run demo -- --vpc`)
// the stack is synthesized as `cdk deploy -c vpc=… -c subnets=…` would for a private cluster: two
// private subnets for the functions are made in the cluster's VPC, every function is placed there,
// and the deploy reads back from moto's Lambda where each one landed and prints the VPC endpoints
// the stack's VpcEndpoints output lists, the ones a VPC without NAT must have for the calls to work.

import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CreateSubnetCommand, DescribeSubnetsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { SignatureV4 } from '@smithy/signature-v4';
import { Template as CdkTemplate } from 'aws-cdk-lib/assertions';
import { buildKarplessApp } from '../../infra/karpless-stack';
import type { Provisioner } from '../../infra/provisioner';
import { NodeSha256 } from '../../shared/kube/token';
import { readNetworkFacts, vpcApi } from '../../shared/providers/vpc';
import { networkProblems, networkRequest, preflightFailure } from '../../shared/runtime/preflight';
import {
  type AwsEndpoint,
  createClusterResources,
  DEMO_ZONES,
  type DemoNetwork,
  type DeployedStack,
  deployStack,
  type Template,
} from './aws';
import { DEMO_CLUSTER } from './cluster';
import type { Timeline } from './timeline';

const MANIFESTS = 'examples/demo';

/** Where moto's Lambda says one deployed function runs. */
export interface FunctionPlacement {
  functionName: string;
  vpcId?: string;
  subnetIds: string[];
  securityGroupIds: string[];
}

/** The functions' network in VPC mode, as deployed. */
export interface DemoVpc {
  vpcId: string;
  /** The private subnets made for the functions (the nodes keep the cluster's discovery-tagged ones). */
  functionSubnetIds: string[];
  placements: FunctionPlacement[];
  /** The stack's VpcEndpoints output: interface and gateway endpoints, and what needs NAT. */
  endpoints: string;
}

export interface DemoStack {
  network: DemoNetwork;
  provisioner: Provisioner;
  template: Template;
  deployed: DeployedStack;
  vpc?: DemoVpc;
}

/** Creates the cluster's resources, synthesizes the stack for them and deploys it to moto. */
export async function deployDemoStack(
  aws: AwsEndpoint,
  timeline: Timeline,
  options: { vpc?: boolean } = {},
): Promise<DemoStack> {
  const network = await createClusterResources(aws, DEMO_CLUSTER);
  timeline.add(
    'aws',
    `VPC ${network.vpcId}, subnets ${network.subnets.map((s) => `${s.id} (${s.zone})`).join(', ')}, security group ${network.securityGroupId}, AMI ${network.imageId}, EKS cluster ${DEMO_CLUSTER}`,
  );
  const functionSubnetIds = options.vpc ? await createFunctionSubnets(aws, network.vpcId) : [];
  if (options.vpc) {
    timeline.add(
      'aws',
      `private subnets for the functions: ${functionSubnetIds.join(', ')} (as -c vpc=${network.vpcId} -c subnets=${functionSubnetIds.join(',')})`,
    );
  }
  const { stack, provisioner } = buildKarplessApp(
    {
      clusterName: DEMO_CLUSTER,
      manifests: [MANIFESTS],
      ...(options.vpc ? { vpc: { vpcId: network.vpcId, subnetIds: functionSubnetIds } } : {}),
    },
    { context: { 'aws:cdk:bundling-stacks': [] } },
  );
  const template = CdkTemplate.fromStack(stack).toJSON() as Template;
  timeline.add('stack', `synthesized ${stack.stackName}: ${Object.keys(template.Resources).length} resources`);
  if (options.vpc) timeline.add('stack', await preflight(aws, template));
  const deployed = await deployStack(aws, stack.stackName, template);
  timeline.add(
    'stack',
    `${stack.stackName} CREATE_COMPLETE on moto's CloudFormation (${deployed.resources.size} resources)`,
  );
  for (const s of deployed.substitutions) timeline.add('stack', `${s.logicalId} (${s.type}) ${s.action}: ${s.why}`);
  if (!options.vpc) return { network, provisioner, template, deployed };
  const vpc = await readVpcPlacement(aws, deployed, network.vpcId, functionSubnetIds);
  for (const p of vpc.placements) {
    timeline.add(
      'stack',
      `${p.functionName} runs in ${p.vpcId}, subnets ${p.subnetIds.join(', ')}, security groups ${p.securityGroupIds.join(', ')}`,
    );
  }
  timeline.add('stack', `VPC endpoints the functions need (output VpcEndpoints): ${vpc.endpoints}`);
  return { network, provisioner, template, deployed, vpc };
}

/**
 * The check of Custom::KarplessPreflight with the properties the template gives it, in-process as
 * moto's CloudFormation cannot invoke its function: a wrong id fails the demo before the deploy.
 */
async function preflight(aws: AwsEndpoint, template: Template): Promise<string> {
  const check = Object.values(template.Resources).find((r) => r.Type === 'Custom::KarplessPreflight');
  if (!check) throw new Error('demo --vpc: the template has no Custom::KarplessPreflight');
  const ec2 = new EC2Client(aws);
  try {
    const request = networkRequest(check.Properties as Record<string, unknown>);
    const problems = networkProblems(request, await readNetworkFacts(vpcApi(ec2), request));
    if (problems.length > 0) throw new Error(preflightFailure(problems));
    return `preflight (Custom::KarplessPreflight): ${request.vpcId} holds subnets ${request.subnetIds.join(', ')}`;
  } finally {
    ec2.destroy();
  }
}

/** Two private subnets, untagged so no EC2NodeClass selects them for nodes. */
async function createFunctionSubnets(aws: AwsEndpoint, vpcId: string): Promise<string[]> {
  const ec2 = new EC2Client(aws);
  try {
    const ids: string[] = [];
    for (const [i, zone] of DEMO_ZONES.slice(0, 2).entries()) {
      const subnet = await ec2.send(
        new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: `10.42.${100 + i}.0/24`, AvailabilityZone: zone }),
      );
      ids.push(subnet.Subnet?.SubnetId ?? '');
    }
    return ids;
  } finally {
    ec2.destroy();
  }
}

/**
 * Reads each deployed function's VpcConfig from moto's Lambda and the stack's VpcEndpoints output,
 * and fails the demo naming any function left outside the functions' subnets.
 */
async function readVpcPlacement(
  aws: AwsEndpoint,
  deployed: DeployedStack,
  vpcId: string,
  functionSubnetIds: string[],
): Promise<DemoVpc> {
  // The preflight runs outside the VPC it checks, by design.
  const names = [...deployed.resources.entries()]
    .filter(([id, r]) => r.type === 'AWS::Lambda::Function' && !id.startsWith('ProvisionerPreflight'))
    .map(([, r]) => r);
  const placements = await Promise.all(names.map((r) => functionPlacement(aws, r.physicalId)));
  await resolveVpcs(aws, placements);
  for (const p of placements) {
    const outside = p.subnetIds.length === 0 || p.subnetIds.some((s) => !functionSubnetIds.includes(s));
    if (p.vpcId !== vpcId || outside) {
      throw new Error(
        `demo --vpc: function ${p.functionName} runs in ${p.vpcId ?? 'no VPC'} (subnets ${p.subnetIds.join(',') || 'none'}), not in ${vpcId} subnets ${functionSubnetIds.join(',')}`,
      );
    }
  }
  const cfn = new CloudFormationClient(aws);
  try {
    const stack = (await cfn.send(new DescribeStacksCommand({ StackName: deployed.stackName }))).Stacks?.[0];
    const output = stack?.Outputs?.find((o) => o.OutputKey?.includes('VpcEndpoints'));
    if (!output?.OutputValue) throw new Error(`demo --vpc: stack ${deployed.stackName} has no VpcEndpoints output`);
    return { vpcId, functionSubnetIds, placements, endpoints: output.OutputValue };
  } finally {
    cfn.destroy();
  }
}

/** GetFunctionConfiguration on moto's Lambda, signed as the demo (the project has no Lambda SDK client). */
export async function functionPlacement(aws: AwsEndpoint, functionName: string): Promise<FunctionPlacement> {
  const url = new URL(`/2015-03-31/functions/${encodeURIComponent(functionName)}/configuration`, aws.endpoint);
  const signer = new SignatureV4({
    service: 'lambda',
    region: aws.region,
    credentials: aws.credentials,
    sha256: NodeSha256,
  });
  const signed = await signer.sign({
    method: 'GET',
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    headers: { host: url.host },
  });
  const response = await fetch(url, { headers: signed.headers });
  if (!response.ok) {
    throw new Error(
      `demo --vpc: GetFunctionConfiguration ${functionName} answered ${response.status}: ${await response.text()}`,
    );
  }
  const config = (await response.json()) as {
    VpcConfig?: { VpcId?: string; SubnetIds?: string[]; SecurityGroupIds?: string[] };
  };
  // moto answers a made-up VpcId; the VPC is read from the subnets instead (resolveVpcs).
  return {
    functionName,
    subnetIds: config.VpcConfig?.SubnetIds ?? [],
    securityGroupIds: config.VpcConfig?.SecurityGroupIds ?? [],
  };
}

/** Sets each placement's VPC to the one its subnets are in (one VPC for all, or the first found). */
async function resolveVpcs(aws: AwsEndpoint, placements: FunctionPlacement[]): Promise<void> {
  const subnetIds = [...new Set(placements.flatMap((p) => p.subnetIds))];
  if (subnetIds.length === 0) return;
  const ec2 = new EC2Client(aws);
  try {
    const subnets = (await ec2.send(new DescribeSubnetsCommand({ SubnetIds: subnetIds }))).Subnets ?? [];
    const vpcOf = new Map(subnets.map((s) => [s.SubnetId ?? '', s.VpcId ?? '']));
    for (const p of placements) {
      const vpcId = p.subnetIds.map((s) => vpcOf.get(s)).find((v) => v);
      if (vpcId) p.vpcId = vpcId;
    }
  } finally {
    ec2.destroy();
  }
}
