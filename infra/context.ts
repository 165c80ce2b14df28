// The `-c` context values of the operational props: `reservedConcurrency=false`,
// `noticeProducers=ARN,ARN`, and for clusters that have a node role and its access entry already
// (a Karpenter user's): `nodeRole=NAME|ARN` and `nodeAccessEntries=false`; for private clusters:
// `vpc=vpc-…`, `subnets=subnet-…,…`, `securityGroups=sg-…,…` and `isolatedVPC=true`; for GitOps:
// `configuration=cluster` (NodePools and EC2NodeClasses read from the API server); Karpenter's
// feature gates: `nodeRepair=true`, `spotToSpotConsolidation=true`. A value that
// cannot mean anything fails synth naming the key.

import type { Node } from 'constructs';
import type { ProvisionerProps } from './provisioner';

export type OperationsContext = Pick<
  ProvisionerProps,
  | 'reservedConcurrency'
  | 'noticeProducers'
  | 'nodeAccessEntries'
  | 'vpc'
  | 'isolatedVPC'
  | 'configuration'
  | 'nodeRepair'
  | 'spotToSpotConsolidation'
> & { nodeRole?: string };

// IAM role names: 1-64 of letters, digits and +=,.@_- ; or a role ARN (paths allowed).
const ROLE_NAME = /^[\w+=,.@-]{1,64}$/;
const ROLE_ARN = /^arn:aws[\w-]*:iam::\d{12}:role\/([\w+=,.@/-]+\/)?[\w+=,.@-]{1,64}$/;

function roleContext(node: Node, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  const role = String(value).trim();
  if (!ROLE_NAME.test(role) && !ROLE_ARN.test(role)) {
    throw new Error(
      `context ${key} is ${JSON.stringify(value)}: give an existing IAM role's name (-c ${key}=KarpenterNodeRole-my-cluster) or ARN`,
    );
  }
  return role;
}

function booleanContext(node: Node, key: string): boolean | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`context ${key} is ${JSON.stringify(value)}: use -c ${key}=true or -c ${key}=false`);
}

function listContext(node: Node, key: string): string[] | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined) return undefined;
  const items = Array.isArray(value) ? value.map(String) : String(value).split(',');
  return items.map((item) => item.trim()).filter((item) => item.length > 0);
}

function vpcContext(node: Node): ProvisionerProps['vpc'] {
  const vpcId: unknown = node.tryGetContext('vpc');
  const subnetIds = listContext(node, 'subnets');
  const securityGroupIds = listContext(node, 'securityGroups');
  if (vpcId === undefined) {
    if (subnetIds !== undefined || securityGroupIds !== undefined) {
      throw new Error('context subnets and securityGroups place the functions in a VPC: also give -c vpc=vpc-…');
    }
    return undefined;
  }
  // The ids themselves are checked by the network construct, naming the bad one.
  return {
    vpcId: String(vpcId).trim(),
    subnetIds: subnetIds ?? [],
    ...(securityGroupIds !== undefined ? { securityGroupIds } : {}),
  };
}

function configurationContext(node: Node): OperationsContext['configuration'] {
  const value: unknown = node.tryGetContext('configuration');
  if (value === undefined) return undefined;
  if (value === 'bundled' || value === 'cluster') return value;
  throw new Error(
    `context configuration is ${JSON.stringify(value)}: use -c configuration=cluster (NodePools and EC2NodeClasses from the API server) or -c configuration=bundled`,
  );
}

export function operationsContext(node: Node): OperationsContext {
  const reservedConcurrency = booleanContext(node, 'reservedConcurrency');
  const noticeProducers = listContext(node, 'noticeProducers');
  const nodeRole = roleContext(node, 'nodeRole');
  const nodeAccessEntries = booleanContext(node, 'nodeAccessEntries');
  const isolatedVPC = booleanContext(node, 'isolatedVPC');
  const vpc = vpcContext(node);
  const configuration = configurationContext(node);
  const nodeRepair = booleanContext(node, 'nodeRepair');
  const spotToSpotConsolidation = booleanContext(node, 'spotToSpotConsolidation');
  return {
    ...(nodeRepair !== undefined ? { nodeRepair } : {}),
    ...(spotToSpotConsolidation !== undefined ? { spotToSpotConsolidation } : {}),
    ...(configuration !== undefined ? { configuration } : {}),
    ...(vpc !== undefined ? { vpc } : {}),
    ...(isolatedVPC !== undefined ? { isolatedVPC } : {}),
    ...(nodeRole !== undefined ? { nodeRole } : {}),
    ...(nodeAccessEntries !== undefined ? { nodeAccessEntries } : {}),
    ...(reservedConcurrency !== undefined ? { reservedConcurrency } : {}),
    ...(noticeProducers !== undefined ? { noticeProducers } : {}),
  };
}
