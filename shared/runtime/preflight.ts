// The stack's preflight (Custom::KarplessPreflight): before CloudFormation creates any function in
// the VPC it was given, check that the VPC exists and that every subnet and security group given is
// in it. Without it the first function fails with Lambda's own error, after the roles, queues and
// table were made, and a subnet of another VPC is reported as a security-group mismatch. Each
// problem names the id, where it actually is, and what to pass instead.

export interface NetworkRequest {
  clusterName: string;
  vpcId: string;
  subnetIds: string[];
  /** Empty: the stack creates the functions' security group in the VPC. */
  securityGroupIds: string[];
}

/** What the account and region say about the ids of a request (shared/providers/vpc.ts). */
export interface NetworkFacts {
  vpcExists: boolean;
  /** Subnet id → its VPC, for the subnets of the request that exist. */
  subnetVpcs: ReadonlyMap<string, string>;
  /** Security group id → its VPC, for the groups of the request that exist. */
  groupVpcs: ReadonlyMap<string, string>;
  /** Some subnets of the requested VPC, to suggest. */
  vpcSubnets: readonly string[];
}

/** The CloudFormation resource properties as the stack defines them (infra/network.ts). */
export function networkRequest(properties: Record<string, unknown> | undefined): NetworkRequest {
  const p = properties ?? {};
  const list = (key: string): string[] => {
    const value = p[key];
    if (value === undefined || value === '') return [];
    if (!Array.isArray(value)) throw new Error(`preflight: ${key} is ${JSON.stringify(value)}, not a list of ids`);
    return value.map(String);
  };
  if (typeof p.VpcId !== 'string' || p.VpcId === '') throw new Error('preflight: the resource has no VpcId');
  return {
    clusterName: typeof p.ClusterName === 'string' ? p.ClusterName : '',
    vpcId: p.VpcId,
    subnetIds: list('SubnetIds'),
    securityGroupIds: list('SecurityGroupIds'),
  };
}

/** One sentence per id that cannot work; none when the network is what the functions need. */
export function networkProblems(request: NetworkRequest, facts: NetworkFacts): string[] {
  const { vpcId } = request;
  const problems: string[] = [];
  const theirVpcs = [...new Set([...facts.subnetVpcs.values()].filter((v) => v !== vpcId))];
  if (!facts.vpcExists) {
    const cluster = request.clusterName || 'CLUSTER';
    problems.push(
      `vpc ${vpcId} does not exist in this account and region: pass the VPC the cluster's endpoint is reachable from (-c vpc=…; the cluster's own: aws eks describe-cluster --name ${cluster} --query cluster.resourcesVpcConfig.vpcId)${theirVpcs.length === 1 ? `; the subnets given are in ${theirVpcs[0]}` : ''}`,
    );
  }
  const instead = facts.vpcSubnets.length > 0 ? ` (it has ${facts.vpcSubnets.join(', ')})` : '';
  for (const subnet of request.subnetIds) {
    const actual = facts.subnetVpcs.get(subnet);
    if (actual === undefined) {
      problems.push(
        `subnet ${subnet} does not exist in this account and region: pass subnets of ${vpcId} in -c subnets${instead}`,
      );
    } else if (actual !== vpcId && facts.vpcExists) {
      problems.push(
        `subnet ${subnet} is in ${actual}, not in ${vpcId}: pass subnets of ${vpcId} in -c subnets${instead}, or -c vpc=${actual}`,
      );
    }
  }
  for (const group of request.securityGroupIds) {
    const actual = facts.groupVpcs.get(group);
    const orDefault = 'or leave -c securityGroups out and the stack creates one';
    if (actual === undefined) {
      problems.push(
        `security group ${group} does not exist in this account and region: pass security groups of ${vpcId} in -c securityGroups, ${orDefault}`,
      );
    } else if (actual !== vpcId && facts.vpcExists) {
      problems.push(
        `security group ${group} is in ${actual}, not in ${vpcId}: a function's interfaces take security groups of its own VPC only; pass ones of ${vpcId} in -c securityGroups, ${orDefault}`,
      );
    }
  }
  return problems;
}

/** The Reason CloudFormation shows in the stack events when the preflight fails. */
export function preflightFailure(problems: readonly string[]): string {
  return `karpless preflight: ${problems.join('; ')}`;
}
