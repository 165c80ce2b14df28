// The preflight's decisions without AWS (the moto cases under its role: test/integration/runtime/
// preflight.test.ts): a missing VPC says where the subnets are instead of calling each one foreign,
// and the handler answers FAILED, never nothing, when the properties are wrong or EC2 cannot be read.

import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createPreflightHandler } from '../../lambdas/preflight/handler';
import type { VpcApi } from '../../shared/providers/vpc';
import { powertools } from '../../shared/runtime/powertools';
import { type NetworkRequest, networkProblems } from '../../shared/runtime/preflight';

// The handler logs each answer; quiet unless asked (DEBUG_LOG=DEBUG).
process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';

const request: NetworkRequest = {
  clusterName: 'c1',
  vpcId: 'vpc-0000000000000000a',
  subnetIds: ['subnet-0000000000000000a', 'subnet-0000000000000000b'],
  securityGroupIds: [],
};

describe('networkProblems', () => {
  it('names a missing VPC once, with the VPC its subnets are in, not each subnet as foreign', () => {
    const problems = networkProblems(request, {
      vpcExists: false,
      subnetVpcs: new Map(request.subnetIds.map((s) => [s, 'vpc-0000000000000000b'])),
      groupVpcs: new Map(),
      vpcSubnets: [],
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^vpc vpc-0000000000000000a does not exist.*the subnets given are in vpc-0000000000000000b$/,
    );
  });

  it('finds nothing wrong when the VPC holds every subnet', () => {
    const problems = networkProblems(request, {
      vpcExists: true,
      subnetVpcs: new Map(request.subnetIds.map((s) => [s, request.vpcId])),
      groupVpcs: new Map(),
      vpcSubnets: request.subnetIds,
    });
    expect(problems).toEqual([]);
  });
});

describe('the preflight handler', () => {
  const tools = powertools('test-preflight', 'c1');
  const context = { getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
  const event = (properties: Record<string, unknown>) => ({
    RequestType: 'Create' as const,
    ResponseURL: 'https://cloudformation-custom-resource-response.example/presigned',
    StackId: 'arn:aws:cloudformation:us-west-2:111111111111:stack/Karpless-c1/1',
    RequestId: 'r1',
    LogicalResourceId: 'ProvisionerPreflightCheck',
    ResourceType: 'Custom::KarplessPreflight',
    ResourceProperties: properties,
  });
  const answer = async (api: Partial<VpcApi>, properties: Record<string, unknown>) => {
    let body = '';
    await createPreflightHandler(
      () => api as VpcApi,
      tools,
      async (_url, sent) => {
        body = sent;
      },
    )(event(properties), context);
    return JSON.parse(body) as { Status: string; Reason: string };
  };

  it('fails, naming the error, when EC2 cannot be read', async () => {
    const denied = Object.assign(new Error('You are not authorized to perform this operation.'), {
      name: 'UnauthorizedOperation',
    });
    const api = {
      describeVpcs: async () => Promise.reject(denied),
      describeSubnets: async () => ({ Subnets: [], $metadata: {} }),
      describeSecurityGroups: async () => ({ SecurityGroups: [], $metadata: {} }),
    };
    const response = await answer(api, { VpcId: request.vpcId, SubnetIds: request.subnetIds });
    expect(response.Status).toBe('FAILED');
    expect(response.Reason).toContain('karpless preflight could not read the network');
    expect(response.Reason).toContain('not authorized');
  });

  it('fails properties that are not what the stack defines', async () => {
    const response = await answer({}, { VpcId: request.vpcId, SubnetIds: 'subnet-0000000000000000a' });
    expect(response).toMatchObject({ Status: 'FAILED' });
    expect(response.Reason).toContain('SubnetIds is "subnet-0000000000000000a", not a list of ids');
  });
});
