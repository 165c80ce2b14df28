// Private and restricted clusters: the functions in the user's VPC, the endpoints they need listed,
// and Karpenter's isolatedVPC (no Pricing API, no IAM) with the checks synth makes on them.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { operationsContext } from '../../infra/context';
import { buildKarplessApp } from '../../infra/karpless-stack';
import { ENV } from '../../shared/contracts';
import { NO_BUNDLING, synthProvisioner } from './stack';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const VPC = 'vpc-0a1b2c3d4e5f60718';
const SUBNETS = ['subnet-0123456789abcdef0', 'subnet-0fedcba9876543210'];

type Resource = { Type: string; Properties: Record<string, unknown> };

let outdir: string;
let template: Template;

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'karpless-vpc-'));
  const app = new App({ outdir, context: { ...NO_BUNDLING, vpc: VPC, subnets: SUBNETS.join(',') } });
  const { stack } = buildKarplessApp(
    { clusterName: 'demo', manifests: ['examples/manifests'], ...operationsContext(app.node) },
    app,
  );
  app.synth();
  template = Template.fromStack(stack);
});

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('-c vpc=… -c subnets=…', () => {
  it('puts every function in the given subnets, behind a security group that only lets HTTPS out', () => {
    const functions = Object.values(template.toJSON().Resources as Record<string, Resource>).filter(
      (r) => r.Type === 'AWS::Lambda::Function',
    );
    expect(functions).toHaveLength(5);
    for (const fn of functions) {
      expect(fn.Properties.VpcConfig).toEqual({
        SubnetIds: SUBNETS,
        SecurityGroupIds: [{ 'Fn::GetAtt': [expect.stringMatching(/FunctionSecurityGroup/), 'GroupId'] }],
      });
    }
    template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      VpcId: VPC,
      SecurityGroupEgress: [{ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }],
    });
  });

  it('lists the endpoints the functions call from the VPC in the stack outputs', () => {
    const outputs = template.findOutputs('*');
    const endpoints = JSON.stringify(Object.entries(outputs).find(([id]) => id.includes('VpcEndpoints'))?.[1]);
    for (const service of ['ec2', 'eks', 'events', 'sqs', 'ssm', 'dynamodb'])
      expect(endpoints).toContain(`.${service}`);
    expect(endpoints).toContain('iam.amazonaws.com');
  });

  it('passes cdk-nag with the VPC access policy acknowledged, and nothing else new', () => {
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; conclusion: string; violations: unknown[] }[];
    };
    const nag = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions');
    expect(nag?.violations).toEqual([]);
    expect(nag?.conclusion).toBe('success');
  });

  it('refuses ids that are not ids, and subnets without a VPC, naming the value', () => {
    expect(() => synthProvisioner({ vpc: { vpcId: 'my-vpc', subnetIds: SUBNETS } })).toThrow(
      "vpc 'my-vpc' is not a VPC id",
    );
    expect(() => synthProvisioner({ vpc: { vpcId: VPC, subnetIds: [] } })).toThrow(/no subnets given/);
    expect(() => synthProvisioner({ vpc: { vpcId: VPC, subnetIds: ['subnet-x'] } })).toThrow(
      "subnets: 'subnet-x' is not a subnet id",
    );
    expect(() => operationsContext(new App({ context: { subnets: SUBNETS.join(',') } }).node)).toThrow(
      /also give -c vpc=vpc-/,
    );
  });

  it('uses the security groups given instead of making one', () => {
    const { template: t } = synthProvisioner({
      vpc: { vpcId: VPC, subnetIds: SUBNETS, securityGroupIds: ['sg-0123456789abcdef0'] },
    });
    t.resourceCountIs('AWS::EC2::SecurityGroup', 0);
    t.hasResourceProperties('AWS::Lambda::Function', {
      VpcConfig: { SubnetIds: SUBNETS, SecurityGroupIds: ['sg-0123456789abcdef0'] },
    });
  });
});

describe('isolatedVPC', () => {
  it('requires every EC2NodeClass to name its instance profile, since IAM is out of reach', () => {
    expect(() => synthProvisioner({ isolatedVPC: true })).toThrow(
      /isolatedVPC: EC2NodeClass\/default.* has no spec.instanceProfile/,
    );
  });

  it('tells the functions not to call the Pricing API or IAM', () => {
    const { template: t } = synthProvisioner({
      isolatedVPC: true,
      manifests: ['test/fixtures/manifests/profile-only'],
      nodeRole: 'KarpenterNodeRole-demo',
      vpc: { vpcId: VPC, subnetIds: SUBNETS },
    });
    const functions = Object.values(t.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(5);
    for (const fn of functions) expect(fn.Properties.Environment.Variables[ENV.isolatedVPC]).toBe('true');
    const endpoints = JSON.stringify(t.findOutputs('*'));
    expect(endpoints).toContain('nat: none');
  });
});
