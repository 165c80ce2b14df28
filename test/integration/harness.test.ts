import { CreateFleetCommand, DescribeImagesCommand, DescribeInstanceTypesCommand } from '@aws-sdk/client-ec2';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import { describe, expect, it } from 'vitest';
import { createFleetErrorBody, ec2ErrorBody, injectFault, motoAccount } from './helpers';
import { seedImageId } from './moto/seed';

describe('moto harness', () => {
  it('serves the seeded EKS parameters and images in every account', async () => {
    const account = motoAccount();
    const name = '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id';
    const param = await account.ssm.send(new GetParameterCommand({ Name: name }));
    const id = seedImageId('amazon-eks-node-al2023-arm64-standard-1.31-v20240917');
    expect(param.Parameter?.Value).toBe(id);
    const images = await account.ec2.send(new DescribeImagesCommand({ ImageIds: [id] }));
    expect(images.Images?.[0]).toMatchObject({
      Architecture: 'arm64',
      Name: 'amazon-eks-node-al2023-arm64-standard-1.31-v20240917',
    });
  });
  it('injects a fault only into the account that asked for it', async () => {
    const a = motoAccount({ maxAttempts: 1 });
    const b = motoAccount({ maxAttempts: 1 });
    await injectFault(a, {
      action: 'DescribeInstanceTypes',
      status: 400,
      body: ec2ErrorBody('UnauthorizedOperation', 'no'),
      times: 1,
    });
    await expect(b.ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large'] }))).resolves.toBeDefined();
    await expect(a.ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large'] }))).rejects.toMatchObject({
      name: 'UnauthorizedOperation',
    });
    await expect(a.ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large'] }))).resolves.toBeDefined();
  });
  it('parses an injected CreateFleet errorSet', async () => {
    const a = motoAccount();
    await injectFault(a, {
      action: 'CreateFleet',
      status: 200,
      body: createFleetErrorBody([
        { instanceType: 'm5.large', zone: 'us-west-2a', code: 'InsufficientInstanceCapacity', message: 'none' },
      ]),
    });
    const out = await a.ec2.send(
      new CreateFleetCommand({
        Type: 'instant',
        LaunchTemplateConfigs: [],
        TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' },
      }),
    );
    expect(out.Errors?.[0]).toMatchObject({
      ErrorCode: 'InsufficientInstanceCapacity',
      LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2a' } },
    });
  });
});
