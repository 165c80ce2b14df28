// The stack's preflight (Custom::KarplessPreflight) against moto, under the role the synthesized stack
// gives its function (the IAM harness): CloudFormation's Create with a VPC that does not exist, a
// subnet of another VPC, a security group of another VPC, and the good case. The answer is the body
// CloudFormation would get at the pre-signed URL: FAILED with a reason naming each id fails the deploy
// before any function is created (they depend on it; test/infra/network.test.ts).

import {
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeInstancesCommand,
} from '@aws-sdk/client-ec2';
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createPreflightHandler } from '../../../lambdas/preflight/handler';
import type { CustomResourceEvent } from '../../../shared/providers/cfn-response';
import { vpcApi } from '../../../shared/providers/vpc';
import { type Powertools, powertools } from '../../../shared/runtime/powertools';
import { testNodeClass, testNodePool } from '../../support/nodepools';
import { type MotoAccount, motoAccount } from '../helpers';
import { type FunctionClients, functionClients, functionIdentity, takeDenials } from '../iam';

const CLUSTER = 'c1';
// The role does not depend on the ids: one synthesis with ids of the right shape serves every case.
const SYNTH_VPC = { vpcId: 'vpc-0a1b2c3d4e5f60718', subnetIds: ['subnet-0123456789abcdef0'] };
const MISSING_VPC = 'vpc-0123456789abcdef0';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

let account: MotoAccount;
let clients: FunctionClients;
let tools: Powertools;
/** The cluster's VPC (two private subnets, a security group) and another one. */
const net = { vpc: '', subnets: [] as string[], group: '', otherVpc: '', otherSubnet: '', otherGroup: '' };

async function vpcWith(cidr: string, subnets: number): Promise<{ vpc: string; subnets: string[]; group: string }> {
  const vpc = (await account.ec2.send(new CreateVpcCommand({ CidrBlock: `${cidr}.0.0/16` }))).Vpc?.VpcId ?? '';
  const ids: string[] = [];
  for (let i = 0; i < subnets; i++) {
    const s = await account.ec2.send(new CreateSubnetCommand({ VpcId: vpc, CidrBlock: `${cidr}.${i}.0/24` }));
    ids.push(s.Subnet?.SubnetId ?? '');
  }
  const group = await account.ec2.send(
    new CreateSecurityGroupCommand({ VpcId: vpc, GroupName: 'fns', Description: 'karpless functions' }),
  );
  return { vpc, subnets: ids, group: group.GroupId ?? '' };
}

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  tools = powertools('itest-preflight', CLUSTER);
  account = motoAccount();
  const cluster = await vpcWith('10.7', 2);
  const other = await vpcWith('10.8', 1);
  Object.assign(net, {
    vpc: cluster.vpc,
    subnets: cluster.subnets,
    group: cluster.group,
    otherVpc: other.vpc,
    otherSubnet: other.subnets[0],
    otherGroup: other.group,
  });
  const identity = await functionIdentity(account, 'preflight', {
    clusterName: CLUSTER,
    configuration: {
      nodePools: [testNodePool()],
      nodeClasses: [testNodeClass({ discovery: CLUSTER, role: 'KarpenterNodeRole-c1' })],
    },
    vpc: SYNTH_VPC,
  });
  clients = functionClients(account, identity);
});

/** CloudFormation's request for the resource as the template defines its properties; the body it gets back. */
async function deploy(
  properties: { VpcId: string; SubnetIds: string[]; SecurityGroupIds?: string[] },
  requestType: CustomResourceEvent['RequestType'] = 'Create',
): Promise<{ Status: string; Reason: string; PhysicalResourceId: string }> {
  let body = '';
  const handler = createPreflightHandler(
    () => vpcApi(clients.ec2),
    tools,
    async (_url, sent) => {
      body = sent;
    },
  );
  await handler(
    {
      RequestType: requestType,
      ResponseURL: 'https://cloudformation-custom-resource-response.example/presigned',
      StackId: 'arn:aws:cloudformation:us-west-2:123456789012:stack/Karpless-c1/1',
      RequestId: 'req-1',
      LogicalResourceId: 'ProvisionerPreflightCheck0A1B2C3D',
      ResourceType: 'Custom::KarplessPreflight',
      ...(requestType === 'Create' ? {} : { PhysicalResourceId: 'Karpless-c1/ProvisionerPreflightCheck0A1B2C3D' }),
      ResourceProperties: {
        ServiceToken: 'arn:aws:lambda:us-west-2:123456789012:function:Karpless-c1-ProvisionerPreflight',
        ClusterName: CLUSTER,
        SecurityGroupIds: [],
        ...properties,
      },
    },
    { getRemainingTimeInMillis: () => 30_000, awsRequestId: 'req', functionName: 'preflight' } as unknown as Context,
  );
  return JSON.parse(body);
}

describe('Custom::KarplessPreflight under its synthesized role', () => {
  it('passes the cluster VPC with its own subnets, with or without security groups given', async () => {
    const created = await deploy({ VpcId: net.vpc, SubnetIds: net.subnets });
    expect(created).toMatchObject({ Status: 'SUCCESS' });
    expect(created.Reason).toContain(`vpc ${net.vpc}`);
    const updated = await deploy({ VpcId: net.vpc, SubnetIds: net.subnets, SecurityGroupIds: [net.group] }, 'Update');
    expect(updated).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: 'Karpless-c1/ProvisionerPreflightCheck0A1B2C3D',
    });
  });

  it('fails a VPC that does not exist, naming it, how to find the right one, and where the subnets are', async () => {
    const response = await deploy({ VpcId: MISSING_VPC, SubnetIds: net.subnets });
    expect(response.Status).toBe('FAILED');
    expect(response.Reason).toContain(`vpc ${MISSING_VPC} does not exist in this account and region`);
    expect(response.Reason).toContain(`aws eks describe-cluster --name ${CLUSTER}`);
    expect(response.Reason).toContain(`the subnets given are in ${net.vpc}`);
  });

  it("fails a subnet of another VPC, naming the subnet, its VPC, and the given VPC's subnets to pass instead", async () => {
    const response = await deploy({ VpcId: net.vpc, SubnetIds: [net.subnets[0] ?? '', net.otherSubnet] });
    expect(response.Status).toBe('FAILED');
    expect(response.Reason).toContain(`subnet ${net.otherSubnet} is in ${net.otherVpc}, not in ${net.vpc}`);
    expect(response.Reason).toContain(`(it has ${[...net.subnets].sort().join(', ')})`);
    expect(response.Reason).toContain(`or -c vpc=${net.otherVpc}`);
    // The subnet that is right is not named.
    expect(response.Reason).not.toContain(`subnet ${net.subnets[0]} `);
  });

  it('fails a security group of another VPC, and one that does not exist, naming each', async () => {
    const response = await deploy({
      VpcId: net.vpc,
      SubnetIds: net.subnets,
      SecurityGroupIds: [net.group, net.otherGroup, 'sg-0123456789abcdef0'],
    });
    expect(response.Status).toBe('FAILED');
    expect(response.Reason).toContain(`security group ${net.otherGroup} is in ${net.otherVpc}, not in ${net.vpc}`);
    expect(response.Reason).toContain('security group sg-0123456789abcdef0 does not exist');
    expect(response.Reason).toContain('leave -c securityGroups out and the stack creates one');
    expect(response.Reason).not.toContain(`security group ${net.group} `);
  });

  it('lets the rollback of a failed create delete it without reading anything', async () => {
    const response = await deploy({ VpcId: MISSING_VPC, SubnetIds: [] }, 'Delete');
    expect(response).toMatchObject({ Status: 'SUCCESS', Reason: 'nothing to do' });
  });

  it('may describe nothing else: its role has the three describes only', async () => {
    await expect(clients.ec2.send(new DescribeInstancesCommand({}))).rejects.toThrow(/not authorized/);
    const denied = takeDenials();
    expect(denied.map((d) => d.request.action)).toEqual(['ec2:DescribeInstances']);
  });
});
