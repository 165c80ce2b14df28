// Where the functions run when the cluster's API server is private or restricted: in the user's VPC
// and subnets, with a security group that only lets them out on HTTPS. The VPC is referenced by id,
// never looked up, so synth stays offline; a VPC, subnet or security group that does not exist or is
// in another VPC fails the deploy at the preflight (NetworkPreflight), before any function is
// created, naming it. Which AWS endpoints the functions then need is a fixed list
// (vpcEndpointServices): the deploy prints it, since without NAT every service on it needs an
// interface endpoint (DynamoDB a gateway endpoint) or the calls time out.

import { Aws, CustomResource, Duration, Fn } from 'aws-cdk-lib';
import {
  type ISecurityGroup,
  type ISubnet,
  type IVpc,
  Peer,
  Port,
  SecurityGroup,
  Subnet,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { KarplessFunction } from './function';
import { regionalReads } from './iam';

export interface FunctionNetworkProps {
  /** The VPC the functions run in (`vpc-…`): the cluster's, or one routed to its private endpoint. */
  readonly vpcId: string;
  /** Subnets of that VPC for the functions' network interfaces, private ones (two zones or more for availability). */
  readonly subnetIds: readonly string[];
  /**
   * Security groups of the functions' interfaces; the cluster's security group must allow HTTPS from them.
   * @default - one created in the VPC, allowing outbound HTTPS only
   */
  readonly securityGroupIds?: readonly string[];
}

const VPC_ID = /^vpc-[0-9a-f]{8}([0-9a-f]{9})?$/;
const SUBNET_ID = /^subnet-[0-9a-f]{8}([0-9a-f]{9})?$/;
const SECURITY_GROUP_ID = /^sg-[0-9a-f]{8}([0-9a-f]{9})?$/;

/** Synth-time checks of the ids: a typo fails here, naming the value, not halfway through a deploy. */
export function checkNetworkProps(props: FunctionNetworkProps): void {
  if (!VPC_ID.test(props.vpcId)) throw new Error(`vpc '${props.vpcId}' is not a VPC id: give vpc-0123456789abcdef0`);
  if (props.subnetIds.length === 0) {
    throw new Error(
      `vpc ${props.vpcId}: no subnets given: pass the private subnets the functions run in (-c subnets=subnet-…,subnet-…)`,
    );
  }
  for (const id of props.subnetIds) {
    if (!SUBNET_ID.test(id)) throw new Error(`subnets: '${id}' is not a subnet id: give subnet-0123456789abcdef0`);
  }
  for (const id of props.securityGroupIds ?? []) {
    if (!SECURITY_GROUP_ID.test(id)) {
      throw new Error(`securityGroups: '${id}' is not a security group id: give sg-0123456789abcdef0`);
    }
  }
}

export class FunctionNetwork extends Construct {
  readonly vpc: IVpc;
  readonly subnets: ISubnet[];
  readonly securityGroups: ISecurityGroup[];

  constructor(scope: Construct, id: string, props: FunctionNetworkProps) {
    super(scope, id);
    checkNetworkProps(props);
    // The zones are never read: the functions are placed by subnet id.
    this.vpc = Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: props.vpcId, availabilityZones: Fn.getAzs() });
    this.subnets = props.subnetIds.map((subnetId) => Subnet.fromSubnetId(this, subnetId, subnetId));
    if (props.securityGroupIds && props.securityGroupIds.length > 0) {
      this.securityGroups = props.securityGroupIds.map((sg) =>
        SecurityGroup.fromSecurityGroupId(this, sg, sg, { mutable: false }),
      );
    } else {
      const sg = new SecurityGroup(this, 'FunctionSecurityGroup', {
        vpc: this.vpc,
        description: 'karpless functions: outbound HTTPS to AWS endpoints and the EKS API server only',
        allowAllOutbound: false,
      });
      sg.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'AWS service endpoints and the EKS API server');
      this.securityGroups = [sg];
    }
  }
}

export interface NetworkPreflightProps {
  readonly clusterName: string;
  readonly network: FunctionNetworkProps;
  /** The preflight handler module (lambdas/preflight/handler.ts). */
  readonly entry: string;
  readonly configurationFile: string;
  readonly logRetention: RetentionDays;
}

/**
 * Custom::KarplessPreflight and its function: checks at deploy time what synth cannot (it never
 * calls AWS), that the VPC exists and holds every subnet and security group given. Whatever runs in
 * the VPC must depend on `resource`, so a wrong id fails the deploy before any of it is created.
 * The function runs outside the VPC it checks, and may only describe VPCs, subnets and groups.
 */
export class NetworkPreflight {
  readonly function: KarplessFunction;
  readonly resource: CustomResource;

  constructor(scope: Construct, props: NetworkPreflightProps) {
    this.function = new KarplessFunction(scope, 'Preflight', {
      entry: props.entry,
      configurationFile: props.configurationFile,
      timeout: Duration.seconds(30),
      memorySizeMiB: 256,
      environment: {},
      logRetention: props.logRetention,
    });
    this.function.function.addToRolePolicy(
      regionalReads(['DescribeVpcs', 'DescribeSubnets', 'DescribeSecurityGroups']),
    );
    const { vpcId, subnetIds, securityGroupIds = [] } = props.network;
    this.resource = new CustomResource(scope, 'PreflightCheck', {
      serviceToken: this.function.function.functionArn,
      resourceType: 'Custom::KarplessPreflight',
      properties: {
        ClusterName: props.clusterName,
        VpcId: vpcId,
        SubnetIds: [...subnetIds],
        SecurityGroupIds: [...securityGroupIds],
      },
    });
  }
}

/**
 * The endpoints the functions call from the VPC, as `com.amazonaws.<region>.<service>` names.
 * Isolated (Karpenter's isolatedVPC): no Pricing API (bundled on-demand prices, spot prices from EC2)
 * and no IAM (instance profiles given in the EC2NodeClass), the two services without an endpoint in
 * every region. Otherwise those two need a NAT route.
 */
export function vpcEndpointServices(isolated: boolean): { interface: string[]; gateway: string[]; nat: string[] } {
  const name = (service: string) => `com.amazonaws.${Aws.REGION}.${service}`;
  return {
    // ec2: instances, templates, fleets; eks: DescribeCluster for the API server's address and CA;
    // events: notices and decisions on the bus; sqs: the provision function's retries and DLQ;
    // ssm: AMI aliases.
    interface: ['ec2', 'eks', 'events', 'sqs', 'ssm'].map(name),
    gateway: [name('dynamodb')],
    nat: isolated ? [] : ['iam.amazonaws.com (instance profiles)', 'api.pricing (on-demand prices)'],
  };
}
