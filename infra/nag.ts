// The cdk-nag AwsSolutions findings karpless accepts, each with its reason. Everything else fails
// synth. An acknowledgement names one finding exactly (rule + resource), so a new wildcard added
// later is a new finding, not silently covered.

import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { INSTANCE_TAGGING_POLICY, type Provisioner } from './provisioner';

const nag = (finding: string) => `AwsSolutions::AwsSolutions-${finding}`;

const LAMBDA_BASIC = 'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]';
const LAMBDA_VPC = 'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]';

const NODE_POLICIES = [
  'AmazonEKS_CNI_Policy',
  'AmazonEKSWorkerNodePolicy',
  'AmazonEC2ContainerRegistryPullOnly',
  'AmazonSSMManagedInstanceCore',
];

const ec2 = (resource: string) => `IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:${resource}]`;
// Subnets, security groups, reservations and placement groups may be shared from another account
// (AWS RAM), so their ARNs name any account, as Karpenter's controller policy does.
const ec2AnyAccount = (resource: string) => `IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:*:${resource}]`;

/** Resource wildcards of the launch statements: the ids of what a launch creates are not known before it. */
const LAUNCH_WILDCARDS: Record<string, string> = {
  [ec2('fleet/*')]: 'CreateFleet creates the fleet; allowed only with the cluster request tags',
  [ec2('instance/*')]: 'instances are created by CreateFleet; allowed only with the cluster request tags',
  [ec2('volume/*')]: 'volumes are created with the instances; allowed only with the cluster request tags',
  [ec2('network-interface/*')]: 'interfaces are created with the instances; allowed only with the cluster request tags',
  [ec2('spot-instances-request/*')]:
    'spot requests are created by CreateFleet; allowed only with the cluster request tags',
  [ec2('launch-template/*')]:
    'launch templates are created per node class and AMI; use and creation require the cluster tags',
  [ec2AnyAccount('security-group/*')]:
    'security groups are chosen at run time by the EC2NodeClass selector terms, possibly shared from another account',
  [ec2AnyAccount('subnet/*')]:
    'subnets are chosen at run time by the EC2NodeClass selector terms, possibly shared from another account',
  [ec2AnyAccount('capacity-reservation/*')]:
    'reservations are chosen at run time by the EC2NodeClass selector terms, possibly shared from another account',
  [ec2AnyAccount('placement-group/*')]:
    'placement groups are chosen at run time by the EC2NodeClass, possibly shared from another account',
  'IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>::image/*]':
    'AMIs are resolved at run time from the EC2NodeClass amiSelectorTerms (SSM aliases, ids, tags)',
  'IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>::snapshot/*]':
    'EBS snapshots named by blockDeviceMappings are only known at run time',
  'IAM5[Resource::arn:<AWS::Partition>:iam::<AWS::AccountId>:instance-profile/*]':
    'instance profiles are created per EC2NodeClass; creation, tagging and role changes require the cluster tags',
  'IAM5[Resource::arn:<AWS::Partition>:ssm:<AWS::Region>::parameter/aws/service/*]':
    'AMI aliases resolve through the public SSM parameters under /aws/service (EKS, Bottlerocket, Windows)',
  'IAM5[Resource::*]':
    'EC2 Describe* calls and pricing:GetProducts support no resource-level permissions; limited to the stack region',
};

/** One acknowledged finding: the construct path and the finding id. */
export interface NagAcknowledgement {
  path: string;
  id: string;
}

function acknowledge(
  made: NagAcknowledgement[],
  construct: IConstruct | undefined,
  finding: string,
  reason: string,
): void {
  if (!construct) return;
  Validations.of(construct).acknowledge({ id: nag(finding), reason });
  made.push({ path: construct.node.path, id: nag(finding) });
}

function defaultPolicy(fn: { role?: IConstruct | undefined }): IConstruct | undefined {
  return fn.role?.node.tryFindChild('DefaultPolicy');
}

/** Acknowledges the accepted findings; returns what it acknowledged, so a test can find any that match nothing. */
export function acknowledgeNagFindings(provisioner: Provisioner): NagAcknowledgement[] {
  const made: NagAcknowledgement[] = [];
  for (const f of [
    provisioner.watcher,
    provisioner.provision,
    provisioner.interruption,
    provisioner.drift,
    provisioner.gc,
  ]) {
    acknowledge(
      made,
      f.function.role,
      LAMBDA_BASIC,
      'CloudWatch Logs access for the function; its log group is created by the stack with a retention',
    );
    acknowledge(made, defaultPolicy(f.function), 'IAM5[Resource::*]', LAUNCH_WILDCARDS['IAM5[Resource::*]'] ?? '');
    if (provisioner.network) {
      acknowledge(
        made,
        f.function.role,
        LAMBDA_VPC,
        "the network-interface actions Lambda needs to place the function in the VPC's subnets; AWS maintains them",
      );
    }
  }
  const preflight = provisioner.preflight?.function.function;
  if (preflight) {
    acknowledge(
      made,
      preflight.role,
      LAMBDA_BASIC,
      'CloudWatch Logs access for the preflight function; its log group is created by the stack with a retention',
    );
    acknowledge(
      made,
      defaultPolicy(preflight),
      'IAM5[Resource::*]',
      'DescribeVpcs, DescribeSubnets and DescribeSecurityGroups support no resource-level permissions; limited to the stack region',
    );
  }
  for (const f of [provisioner.watcher, provisioner.interruption, provisioner.gc]) {
    acknowledge(
      made,
      defaultPolicy(f.function),
      ec2('instance/*'),
      'terminating and re-tagging instances requires the kubernetes.io/cluster/<cluster>=owned resource tag',
    );
  }
  const gcPolicy = defaultPolicy(provisioner.gc.function);
  acknowledge(
    made,
    gcPolicy,
    ec2('launch-template/*'),
    'leaked launch templates are deleted by id; DeleteLaunchTemplate requires the kubernetes.io/cluster/<cluster>=owned resource tag',
  );
  acknowledge(
    made,
    gcPolicy,
    `IAM5[Resource::arn:<AWS::Partition>:iam::<AWS::AccountId>:instance-profile/karpenter/<AWS::Region>/${provisioner.clusterName}/*]`,
    "the cluster's instance profiles live under its IAM path; deleting one requires the cluster, region and node class tags",
  );
  for (const launching of [provisioner.provision, provisioner.drift]) {
    for (const [finding, reason] of Object.entries(LAUNCH_WILDCARDS)) {
      acknowledge(made, defaultPolicy(launching.function), finding, reason);
    }
    acknowledge(
      made,
      launching.node.tryFindChild(INSTANCE_TAGGING_POLICY),
      ec2('instance/*'),
      'a batched launch tags each instance with its NodeClaim after CreateFleet; CreateTags requires the kubernetes.io/cluster/<cluster>=owned resource tag and only the NodeClaim and Name keys',
    );
  }
  for (const role of provisioner.nodeRoles) {
    for (const policy of NODE_POLICIES) {
      acknowledge(
        made,
        role,
        `IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${policy}]`,
        'the managed policies EKS documents for worker nodes; they track new AWS actions nodes need',
      );
    }
  }
  return made;
}
