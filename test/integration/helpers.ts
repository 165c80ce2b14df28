// SDK clients bound to a fresh moto account, so every test sees an empty region of its own even when
// files run in parallel against the one server; plus fault injection and small fixtures.

import { randomInt } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  EC2Client,
  type Tag,
} from '@aws-sdk/client-ec2';
import { CreateClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { IAMClient } from '@aws-sdk/client-iam';
import { PricingClient } from '@aws-sdk/client-pricing';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { inject } from 'vitest';
import { SEED_K8S_VERSION } from './moto/seed';

export const REGION = 'us-west-2';
export const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };

interface BuildStack {
  add(
    middleware: (next: (args: { request: unknown }) => unknown) => (args: { request: unknown }) => unknown,
    options: { step: 'build'; name: string },
  ): void;
}

/** Sends every request of the client into the given moto account (x-moto-account-id). */
export function inAccount<T extends { middlewareStack: unknown }>(client: T, accountId: string): T {
  (client.middlewareStack as BuildStack).add(
    (next) => (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) request.headers['x-moto-account-id'] = accountId;
      return next(args);
    },
    { step: 'build', name: 'motoAccount' },
  );
  return client;
}

/**
 * A fresh moto account and its root clients ("testing" keys: the root user, allowed everything while
 * moto enforces IAM): for seeding and checking. Functions never run with these: build their runtimes
 * with functionRuntimes (./iam), which gives each function its own synthesized role.
 */
export interface MotoAccount {
  endpoint: string;
  accountId: string;
  region: string;
  ec2: EC2Client;
  ssm: SSMClient;
  eks: EKSClient;
  iam: IAMClient;
  dynamodb: DynamoDBClient;
  eventbridge: EventBridgeClient;
  sqs: SQSClient;
  /** moto answers GetProducts with HTTP 500: this client exercises the fallback to bundled prices. */
  pricing: PricingClient;
  /** Environment for a child `karpless` process talking to this account. */
  env: Record<string, string>;
}

export function randomAccountId(): string {
  return String(randomInt(100_000_000_000, 999_999_999_999));
}

/** moto's account for requests without the header: what a child `karpless` process talks to. */
export const DEFAULT_ACCOUNT_ID = '123456789012';

/**
 * Clients for a brand-new moto account (or the given one). Pass maxAttempts 1 to see throttling
 * errors unretried.
 */
export function motoAccount(options: { maxAttempts?: number; accountId?: string } = {}): MotoAccount {
  const endpoint = inject('motoEndpoint');
  const accountId = options.accountId ?? randomAccountId();
  const config = {
    endpoint,
    region: REGION,
    credentials: CREDENTIALS,
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  };
  return {
    endpoint,
    accountId,
    region: REGION,
    ec2: inAccount(new EC2Client(config), accountId),
    ssm: inAccount(new SSMClient(config), accountId),
    eks: inAccount(new EKSClient(config), accountId),
    iam: inAccount(new IAMClient(config), accountId),
    dynamodb: inAccount(new DynamoDBClient(config), accountId),
    eventbridge: inAccount(new EventBridgeClient(config), accountId),
    sqs: inAccount(new SQSClient(config), accountId),
    pricing: inAccount(new PricingClient(config), accountId),
    env: {
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: REGION,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  };
}

export interface FaultRule {
  action: string;
  /** Substring of the request body that must appear (e.g. an instance type). */
  contains?: string;
  status: number;
  body: string;
  times?: number;
}

/** Makes the next matching request of this account fail (or answer) with a canned response. */
export async function injectFault(account: MotoAccount, rule: FaultRule): Promise<void> {
  const response = await fetch(`${account.endpoint}/_fault`, {
    method: 'POST',
    body: JSON.stringify({ ...rule, account: account.accountId }),
  });
  if (!response.ok) throw new Error(`fault injection failed: ${response.status}`);
}

export async function clearFaults(account: MotoAccount): Promise<void> {
  await fetch(`${account.endpoint}/_fault?account=${account.accountId}`, { method: 'DELETE' });
}

/** An EC2 query-protocol error body, as EC2 returns for a failed call. */
export function ec2ErrorBody(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>${code}</Code><Message>${message}</Message></Error></Errors><RequestID>fault</RequestID></Response>`;
}

/** A CreateFleet answer with no instances and one per-override error, as EC2 returns for ICE. */
export function createFleetErrorBody(
  errors: { instanceType: string; zone: string; subnetId?: string; code: string; message: string }[],
): string {
  const items = errors
    .map(
      (e) =>
        `<item><launchTemplateAndOverrides><launchTemplateSpecification><version>$Latest</version></launchTemplateSpecification><overrides><instanceType>${e.instanceType}</instanceType><availabilityZone>${e.zone}</availabilityZone>${e.subnetId ? `<subnetId>${e.subnetId}</subnetId>` : ''}</overrides></launchTemplateAndOverrides><lifecycle>on-demand</lifecycle><errorCode>${e.code}</errorCode><errorMessage>${e.message}</errorMessage></item>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><CreateFleetResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>fault</requestId><fleetId>fleet-00000000-0000-0000-0000-000000000000</fleetId><errorSet>${items}</errorSet><fleetInstanceSet/></CreateFleetResponse>`;
}

function tagSpec(resourceType: 'vpc' | 'subnet' | 'security-group', tags: Record<string, string>) {
  const list: Tag[] = Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
  return list.length > 0 ? [{ ResourceType: resourceType, Tags: list }] : undefined;
}

export interface Network {
  vpcId: string;
  subnets: { id: string; zone: string; cidr: string }[];
  securityGroups: { id: string; name: string }[];
}

/**
 * A VPC with the given subnets (cidr, zone, tags) and security groups (name, tags). Subnet sizes
 * differ on purpose so "the subnet with most free IPs" is observable.
 */
export async function createNetwork(
  account: MotoAccount,
  spec: {
    subnets: { zone: string; cidr: string; tags?: Record<string, string> }[];
    securityGroups?: { name: string; tags?: Record<string, string> }[];
  },
): Promise<Network> {
  const vpc = await account.ec2.send(new CreateVpcCommand({ CidrBlock: '10.0.0.0/16' }));
  const vpcId = vpc.Vpc?.VpcId ?? '';
  const subnets: Network['subnets'] = [];
  for (const s of spec.subnets) {
    const created = await account.ec2.send(
      new CreateSubnetCommand({
        VpcId: vpcId,
        CidrBlock: s.cidr,
        AvailabilityZone: s.zone,
        TagSpecifications: tagSpec('subnet', s.tags ?? {}),
      }),
    );
    subnets.push({ id: created.Subnet?.SubnetId ?? '', zone: s.zone, cidr: s.cidr });
  }
  const securityGroups: Network['securityGroups'] = [];
  for (const g of spec.securityGroups ?? []) {
    const created = await account.ec2.send(
      new CreateSecurityGroupCommand({
        GroupName: g.name,
        Description: g.name,
        VpcId: vpcId,
        TagSpecifications: tagSpec('security-group', g.tags ?? {}),
      }),
    );
    securityGroups.push({ id: created.GroupId ?? '', name: g.name });
  }
  return { vpcId, subnets, securityGroups };
}

export async function createCluster(
  account: MotoAccount,
  name: string,
  options: { serviceCIDR?: string; ipFamily?: 'ipv4' | 'ipv6'; version?: string } = {},
): Promise<{ arn: string; endpoint: string }> {
  const created = await account.eks.send(
    new CreateClusterCommand({
      name,
      version: options.version ?? SEED_K8S_VERSION,
      roleArn: `arn:aws:iam::${account.accountId}:role/eks-cluster`,
      resourcesVpcConfig: { subnetIds: [] },
      kubernetesNetworkConfig: {
        ...(options.serviceCIDR ? { serviceIpv4Cidr: options.serviceCIDR } : {}),
        ...(options.ipFamily ? { ipFamily: options.ipFamily } : {}),
      },
    }),
  );
  return { arn: created.cluster?.arn ?? '', endpoint: created.cluster?.endpoint ?? '' };
}
