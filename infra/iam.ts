// The functions' IAM statements, mirroring Karpenter's controller policy (reference §9) statement by
// statement with the same conditions, split so that each function gets only what it calls. Every
// write is scoped by the cluster's tags: creation must carry them (aws:RequestTag), deletion and
// re-tagging only touch what already carries them (aws:ResourceTag).

import { Aws } from 'aws-cdk-lib';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { TAG } from '../shared/contracts';

export interface ScopeArgs {
  clusterName: string;
  /** ARNs of the node roles the functions may pass to EC2 (through instance profiles). */
  nodeRoleArns: readonly string[];
  /**
   * The EC2NodeClasses' custom `ssmParameter` AMI terms (names or ARNs): read exactly these besides
   * AWS's public parameters.
   */
  ssmParameters?: readonly string[];
}

const ec2Arn = (resource: string) => `arn:${Aws.PARTITION}:ec2:${Aws.REGION}:${Aws.ACCOUNT_ID}:${resource}`;
/**
 * Resources a shared VPC's owner shares through AWS RAM (subnets, security groups, capacity
 * reservations, placement groups) keep the owner's account in their ARN, so the account is `*`, as in
 * Karpenter's policy; what may be launched into them is still bounded by the tag-scoped statements.
 */
const ec2AnyAccountArn = (resource: string) => `arn:${Aws.PARTITION}:ec2:${Aws.REGION}:*:${resource}`;
const ec2RegionArn = (resource: string) => `arn:${Aws.PARTITION}:ec2:${Aws.REGION}::${resource}`;
const instanceProfileArn = () => `arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:instance-profile/*`;

/** What a launch creates: the fleet, its instances and their volumes, interfaces and spot requests. */
const CREATED_RESOURCES = [
  'fleet/*',
  'instance/*',
  'volume/*',
  'network-interface/*',
  'launch-template/*',
  'spot-instances-request/*',
];

function requestTags(clusterName: string): Record<string, string> {
  return {
    [`aws:RequestTag/${TAG.clusterOwned(clusterName)}`]: 'owned',
    [`aws:RequestTag/${TAG.clusterName}`]: clusterName,
  };
}

function ownedResource(clusterName: string): Record<string, string> {
  return { [`aws:ResourceTag/${TAG.clusterOwned(clusterName)}`]: 'owned' };
}

/** Read-only EC2 calls, limited to the stack's region (AllowRegionalReadActions). */
export function regionalReads(actions: readonly string[]): PolicyStatement {
  return new PolicyStatement({
    sid: 'AllowRegionalReadActions',
    actions: actions.map((a) => `ec2:${a}`),
    resources: ['*'],
    conditions: { StringEquals: { 'aws:RequestedRegion': Aws.REGION } },
  });
}

/** CreateFleet, launch templates, tagging at creation, PassRole, instance profiles, SSM, pricing. */
export function launchStatements({ clusterName, nodeRoleArns, ssmParameters = [] }: ScopeArgs): PolicyStatement[] {
  const regionTag = { 'aws:RequestTag/topology.kubernetes.io/region': Aws.REGION };
  const resourceRegionTag = { 'aws:ResourceTag/topology.kubernetes.io/region': Aws.REGION };
  return [
    new PolicyStatement({
      sid: 'AllowScopedEC2InstanceAccessActions',
      actions: ['ec2:RunInstances', 'ec2:CreateFleet'],
      resources: [
        ec2RegionArn('image/*'),
        ec2RegionArn('snapshot/*'),
        ec2AnyAccountArn('security-group/*'),
        ec2AnyAccountArn('subnet/*'),
        ec2AnyAccountArn('capacity-reservation/*'),
        ec2AnyAccountArn('placement-group/*'),
      ],
    }),
    new PolicyStatement({
      sid: 'AllowScopedEC2LaunchTemplateAccessActions',
      actions: ['ec2:RunInstances', 'ec2:CreateFleet'],
      resources: [ec2Arn('launch-template/*')],
      conditions: {
        StringEquals: ownedResource(clusterName),
        StringLike: { [`aws:ResourceTag/${TAG.nodePool}`]: '*' },
      },
    }),
    new PolicyStatement({
      sid: 'AllowScopedEC2InstanceActionsWithTags',
      actions: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'],
      resources: CREATED_RESOURCES.map(ec2Arn),
      conditions: {
        StringEquals: requestTags(clusterName),
        StringLike: { [`aws:RequestTag/${TAG.nodePool}`]: '*' },
      },
    }),
    new PolicyStatement({
      sid: 'AllowScopedResourceCreationTagging',
      actions: ['ec2:CreateTags'],
      resources: CREATED_RESOURCES.map(ec2Arn),
      conditions: {
        StringEquals: {
          ...requestTags(clusterName),
          'ec2:CreateAction': ['RunInstances', 'CreateFleet', 'CreateLaunchTemplate'],
        },
        StringLike: { [`aws:RequestTag/${TAG.nodePool}`]: '*' },
      },
    }),
    new PolicyStatement({
      sid: 'AllowPassingInstanceRole',
      actions: ['iam:PassRole'],
      resources: [...nodeRoleArns],
      conditions: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
    }),
    new PolicyStatement({
      sid: 'AllowScopedInstanceProfileCreationActions',
      actions: ['iam:CreateInstanceProfile'],
      resources: [instanceProfileArn()],
      conditions: {
        StringEquals: { ...requestTags(clusterName), ...regionTag },
        StringLike: { [`aws:RequestTag/${TAG.nodeClass}`]: '*' },
      },
    }),
    new PolicyStatement({
      sid: 'AllowScopedInstanceProfileTagActions',
      actions: ['iam:TagInstanceProfile'],
      resources: [instanceProfileArn()],
      conditions: {
        StringEquals: {
          ...ownedResource(clusterName),
          ...resourceRegionTag,
          ...requestTags(clusterName),
          ...regionTag,
        },
        StringLike: { [`aws:ResourceTag/${TAG.nodeClass}`]: '*', [`aws:RequestTag/${TAG.nodeClass}`]: '*' },
      },
    }),
    new PolicyStatement({
      sid: 'AllowScopedInstanceProfileActions',
      actions: ['iam:AddRoleToInstanceProfile', 'iam:RemoveRoleFromInstanceProfile', 'iam:DeleteInstanceProfile'],
      resources: [instanceProfileArn()],
      conditions: {
        StringEquals: { ...ownedResource(clusterName), ...resourceRegionTag },
        StringLike: { [`aws:ResourceTag/${TAG.nodeClass}`]: '*' },
      },
    }),
    new PolicyStatement({
      sid: 'AllowInstanceProfileReadActions',
      actions: ['iam:GetInstanceProfile'],
      resources: [instanceProfileArn()],
    }),
    new PolicyStatement({
      sid: 'AllowSSMReadActions',
      actions: ['ssm:GetParameter'],
      resources: [
        `arn:${Aws.PARTITION}:ssm:${Aws.REGION}::parameter/aws/service/*`,
        ...[...new Set(ssmParameters)].sort().map(ssmParameterArn),
      ],
    }),
    pricingReads(),
  ];
}

/** A custom parameter's ARN: given as an ARN (e.g. shared from another account) or a name in this account. */
export function ssmParameterArn(nameOrArn: string): string {
  if (nameOrArn.startsWith('arn:')) return nameOrArn;
  return `arn:${Aws.PARTITION}:ssm:${Aws.REGION}:${Aws.ACCOUNT_ID}:parameter/${nameOrArn.replace(/^\//, '')}`;
}

/** On-demand prices (AllowPricingReadActions): the Pricing API has no resource-level permissions. */
export function pricingReads(): PolicyStatement {
  return new PolicyStatement({
    sid: 'AllowPricingReadActions',
    actions: ['pricing:GetProducts'],
    resources: ['*'],
  });
}

/** TerminateInstances (and, for garbage collection, DeleteLaunchTemplate) only on what the cluster owns. */
export function scopedDeletion(
  clusterName: string,
  kinds: readonly ('instance' | 'launch-template')[],
): PolicyStatement {
  const actions = kinds.map((k) => (k === 'instance' ? 'ec2:TerminateInstances' : 'ec2:DeleteLaunchTemplate'));
  return new PolicyStatement({
    sid: 'AllowScopedDeletion',
    actions,
    resources: kinds.map((k) => ec2Arn(`${k}/*`)),
    conditions: {
      StringEquals: ownedResource(clusterName),
      StringLike: { [`aws:ResourceTag/${TAG.nodePool}`]: '*' },
    },
  });
}

/**
 * Garbage collection of the cluster's managed instance profiles: list them, read them under the
 * cluster's IAM path (`/karpenter/<region>/<cluster>/`, see instanceProfilePath), and remove the
 * role from and delete only those tagged as the cluster's in this region (AllowScopedInstanceProfileActions).
 */
export function instanceProfileCleanup(clusterName: string): PolicyStatement[] {
  const underPath = `arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:instance-profile/karpenter/${Aws.REGION}/${clusterName}/*`;
  return [
    // ListInstanceProfiles has no resource type (Service Authorization Reference): only "*" allows
    // it. Listing is read-only; what gc may delete stays scoped to the path and the tags below.
    new PolicyStatement({
      sid: 'AllowInstanceProfileListing',
      actions: ['iam:ListInstanceProfiles'],
      resources: ['*'],
    }),
    new PolicyStatement({
      sid: 'AllowScopedInstanceProfileListActions',
      actions: ['iam:GetInstanceProfile'],
      resources: [underPath],
    }),
    new PolicyStatement({
      sid: 'AllowScopedInstanceProfileDeletion',
      actions: ['iam:RemoveRoleFromInstanceProfile', 'iam:DeleteInstanceProfile'],
      resources: [underPath],
      conditions: {
        StringEquals: { ...ownedResource(clusterName), 'aws:ResourceTag/topology.kubernetes.io/region': Aws.REGION },
        StringLike: { [`aws:ResourceTag/${TAG.nodeClass}`]: '*' },
      },
    }),
  ];
}

/** Re-tagging our own instances at registration: only the keys Karpenter sets then. */
export function scopedInstanceTagging(clusterName: string): PolicyStatement {
  return new PolicyStatement({
    sid: 'AllowScopedResourceTagging',
    actions: ['ec2:CreateTags'],
    resources: [ec2Arn('instance/*')],
    conditions: {
      StringEquals: ownedResource(clusterName),
      StringLike: { [`aws:ResourceTag/${TAG.nodePool}`]: '*' },
      StringEqualsIfExists: { [`aws:RequestTag/${TAG.clusterName}`]: clusterName },
      'ForAllValues:StringEquals': { 'aws:TagKeys': [TAG.clusterName, TAG.nodeClaim, 'Name'] },
    },
  });
}

/** The API server endpoint and CA (AllowAPIServerEndpointDiscovery). */
export function clusterDiscovery(clusterName: string): PolicyStatement {
  return new PolicyStatement({
    sid: 'AllowAPIServerEndpointDiscovery',
    effect: Effect.ALLOW,
    actions: ['eks:DescribeCluster'],
    resources: [`arn:${Aws.PARTITION}:eks:${Aws.REGION}:${Aws.ACCOUNT_ID}:cluster/${clusterName}`],
  });
}

/** The managed policies every node role carries (reference §9). */
export const NODE_ROLE_MANAGED_POLICIES = [
  'AmazonEKS_CNI_Policy',
  'AmazonEKSWorkerNodePolicy',
  'AmazonEC2ContainerRegistryPullOnly',
  'AmazonSSMManagedInstanceCore',
] as const;
