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
import { NO_BUNDLING, statementsOf, synthProvisioner } from './stack';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const VPC = 'vpc-0a1b2c3d4e5f60718';
const SUBNETS = ['subnet-0123456789abcdef0', 'subnet-0fedcba9876543210'];

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };

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
    const functions = Object.entries(template.toJSON().Resources as Record<string, Resource>)
      .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && !id.startsWith('ProvisionerPreflight'))
      .map(([, r]) => r);
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

describe('the deploy-time preflight of -c vpc, subnets and securityGroups', () => {
  const resources = () => template.toJSON().Resources as Record<string, Resource>;
  const preflightId = () => Object.keys(template.findResources('Custom::KarplessPreflight'))[0] ?? '';
  const getAtt = (value: unknown): string => (value as { 'Fn::GetAtt'?: [string, string] })?.['Fn::GetAtt']?.[0] ?? '';
  const preflightFunction = () => getAtt(resources()[preflightId()]?.Properties.ServiceToken);

  it('checks the VPC, subnets and security groups given, from a function outside that VPC', () => {
    template.resourceCountIs('Custom::KarplessPreflight', 1);
    const check = resources()[preflightId()];
    expect(check?.Properties).toMatchObject({
      ClusterName: 'demo',
      VpcId: VPC,
      SubnetIds: SUBNETS,
      SecurityGroupIds: [],
      ServiceToken: { 'Fn::GetAtt': [expect.stringMatching(/^ProvisionerPreflight[0-9A-F]{8}$/), 'Arn'] },
    });
    expect(resources()[preflightFunction()]?.Type).toBe('AWS::Lambda::Function');
    expect(resources()[preflightFunction()]?.Properties.VpcConfig).toBeUndefined();
  });

  it('grants the preflight nothing but the three describes, in the stack region', () => {
    expect(statementsOf(template, 'Preflight')).toEqual([
      {
        Sid: 'AllowRegionalReadActions',
        Effect: 'Allow',
        Action: ['ec2:DescribeVpcs', 'ec2:DescribeSubnets', 'ec2:DescribeSecurityGroups'],
        Resource: '*',
        Condition: { StringEquals: { 'aws:RequestedRegion': { Ref: 'AWS::Region' } } },
      },
    ]);
    const roleId = getAtt(resources()[preflightFunction()]?.Properties.Role);
    expect(resources()[roleId]?.Properties.ManagedPolicyArns).toEqual([
      {
        'Fn::Join': [
          '',
          ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole'],
        ],
      },
    ]);
  });

  it('is what every function in the VPC and their security group wait for', () => {
    const waiting = Object.entries(resources()).filter(
      ([id, r]) =>
        (r.Type === 'AWS::Lambda::Function' && !id.startsWith('ProvisionerPreflight')) ||
        r.Type === 'AWS::EC2::SecurityGroup',
    );
    expect(waiting).toHaveLength(6);
    for (const [, r] of waiting) expect(r.DependsOn).toContain(preflightId());
  });

  it('passes the security groups given, and is not deployed without a VPC', () => {
    const { template: t } = synthProvisioner({
      vpc: { vpcId: VPC, subnetIds: SUBNETS, securityGroupIds: ['sg-0123456789abcdef0'] },
    });
    t.hasResourceProperties('Custom::KarplessPreflight', { SecurityGroupIds: ['sg-0123456789abcdef0'] });
    synthProvisioner().template.resourceCountIs('Custom::KarplessPreflight', 0);
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
    const functions = Object.entries(t.findResources('AWS::Lambda::Function'))
      .filter(([id]) => !id.startsWith('ProvisionerPreflight'))
      .map(([, r]) => r);
    expect(functions).toHaveLength(5);
    for (const fn of functions) expect(fn.Properties.Environment.Variables[ENV.isolatedVPC]).toBe('true');
    const endpoints = JSON.stringify(t.findOutputs('*'));
    expect(endpoints).toContain('nat: none');
  });
});
