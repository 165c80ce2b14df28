// What the stack's preflight reads of the network it was given: which of the VPC, subnets and
// security groups exist, and the VPC each subnet and group is in. Filters rather than ids, so one
// missing id answers an empty list instead of failing the whole call, and every id can be named.

import {
  DescribeSecurityGroupsCommand,
  type DescribeSecurityGroupsCommandInput,
  type DescribeSecurityGroupsCommandOutput,
  DescribeSubnetsCommand,
  type DescribeSubnetsCommandInput,
  type DescribeSubnetsCommandOutput,
  DescribeVpcsCommand,
  type DescribeVpcsCommandInput,
  type DescribeVpcsCommandOutput,
} from '@aws-sdk/client-ec2';
import type { NetworkFacts, NetworkRequest } from '../runtime/preflight';

export interface VpcApi {
  describeVpcs(input: DescribeVpcsCommandInput): Promise<DescribeVpcsCommandOutput>;
  describeSubnets(input: DescribeSubnetsCommandInput): Promise<DescribeSubnetsCommandOutput>;
  describeSecurityGroups(input: DescribeSecurityGroupsCommandInput): Promise<DescribeSecurityGroupsCommandOutput>;
}

interface Sender {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send is generic over every command of the client.
  send(command: any): Promise<any>;
}

export function vpcApi(client: Sender): VpcApi {
  return {
    describeVpcs: (i) => client.send(new DescribeVpcsCommand(i)),
    describeSubnets: (i) => client.send(new DescribeSubnetsCommand(i)),
    describeSecurityGroups: (i) => client.send(new DescribeSecurityGroupsCommand(i)),
  };
}

/** At most this many of the VPC's own subnets are named in an error (as ids to pass instead). */
const SUGGESTED_SUBNETS = 6;

export async function readNetworkFacts(api: VpcApi, request: NetworkRequest): Promise<NetworkFacts> {
  const filter = (Name: string, Values: string[]) => ({ Filters: [{ Name, Values }] });
  const subnetIds = [...new Set(request.subnetIds)];
  const groupIds = [...new Set(request.securityGroupIds)];
  const [vpcs, subnets, groups, ofVpc] = await Promise.all([
    api.describeVpcs(filter('vpc-id', [request.vpcId])),
    subnetIds.length > 0 ? api.describeSubnets(filter('subnet-id', subnetIds)) : undefined,
    groupIds.length > 0 ? api.describeSecurityGroups(filter('group-id', groupIds)) : undefined,
    api.describeSubnets(filter('vpc-id', [request.vpcId])),
  ]);
  return {
    vpcExists: (vpcs.Vpcs ?? []).some((v) => v.VpcId === request.vpcId),
    subnetVpcs: new Map((subnets?.Subnets ?? []).map((s) => [s.SubnetId ?? '', s.VpcId ?? ''])),
    groupVpcs: new Map((groups?.SecurityGroups ?? []).map((g) => [g.GroupId ?? '', g.VpcId ?? ''])),
    vpcSubnets: (ofVpc.Subnets ?? [])
      .flatMap((s) => (s.SubnetId ? [s.SubnetId] : []))
      .sort()
      .slice(0, SUGGESTED_SUBNETS),
  };
}
