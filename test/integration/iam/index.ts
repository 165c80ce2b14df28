// Runs each karpless function with the credentials of its own role, as the synthesized stack defines
// it. The roles and their policies (from `cdk synth` of the test's cluster and manifests) are created
// in the test's moto account, each function's clients sign with credentials from moto's STS
// AssumeRole, and moto enforces IAM on them (actions: see policies.ts actionsOnly). Every call those
// clients make is also turned into the authorization requests AWS evaluates (authorization.ts) and
// simulated against the full policies, resources and conditions included (simulator.ts): a denied
// call fails as AWS would fail it, and the denial fails the test (no-denials.ts).
//
// Seeding stays with the account's root clients (MotoAccount's); only functionRuntimes' clients are
// the functions'.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeImagesCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeLaunchTemplateVersionsCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2Client,
  type Tag,
} from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import {
  CreateRoleCommand,
  GetInstanceProfileCommand,
  GetRoleCommand,
  IAMClient,
  PutRolePolicyCommand,
} from '@aws-sdk/client-iam';
import { PricingClient } from '@aws-sdk/client-pricing';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { inject } from 'vitest';
import type { Configuration } from '../../../shared/apis/configuration';
import { ENV } from '../../../shared/contracts';
import { type AwsClients, buildRuntime, type Runtime, type RuntimeOptions } from '../../../shared/runtime/environment';
import { CREDENTIALS, inAccount, type MotoAccount } from '../helpers';
import { authorizationRequests, type ResourceLookups } from './authorization';
import {
  actionsOnly,
  FUNCTIONS,
  type FunctionName,
  type FunctionRole,
  functionRole,
  type StackFunctionName,
  type Template,
  withoutStatement,
} from './policies';
import { type Denial, formatDenial, PolicySimulator } from './simulator';
import { fetchTemplate, type SynthRequest } from './synth-server';

export { FUNCTIONS, type FunctionName, type StackFunctionName } from './policies';
export { type Denial, formatDenial, takeDenials } from './simulator';

/**
 * A subnet or security group tagged with this key is treated as shared through AWS RAM by the account
 * in its value: its ARN names that account, as it does in AWS for a shared-VPC subnet.
 */
export const RAM_OWNER_TAG = 'karpless.test/ram-owner';

const ERROR_NAMES: Record<string, string> = { ec2: 'UnauthorizedOperation', iam: 'AccessDenied' };

function accessDenied(service: string, denials: Denial[]): Error {
  const error = new Error(`not authorized (iam harness):\n${denials.map(formatDenial).join('\n')}`);
  return Object.assign(error, {
    name: ERROR_NAMES[service] ?? 'AccessDeniedException',
    $fault: 'client',
    $metadata: { httpStatusCode: 403 },
  });
}

function tagValue(tags: readonly Tag[] | undefined, key: string): string | undefined {
  return tags?.find((t) => t.Key === key)?.Value;
}

/** Reads what authorization depends on, with the account's root clients. */
function rootLookups(account: MotoAccount): ResourceLookups {
  const { ec2, iam } = account;
  const quiet = async <T>(call: Promise<T>): Promise<T | undefined> => call.catch(() => undefined);
  return {
    async instanceTags(ids) {
      const out = new Map<string, Tag[]>();
      const found = await quiet(ec2.send(new DescribeInstancesCommand({ InstanceIds: [...ids] })));
      for (const i of (found?.Reservations ?? []).flatMap((r) => r.Instances ?? [])) {
        if (i.InstanceId) out.set(i.InstanceId, i.Tags ?? []);
      }
      return out;
    },
    async launchTemplate(spec, version) {
      const listed = await quiet(
        ec2.send(
          new DescribeLaunchTemplatesCommand(
            spec.id ? { LaunchTemplateIds: [spec.id] } : { LaunchTemplateNames: [spec.name ?? ''] },
          ),
        ),
      );
      const template = listed?.LaunchTemplates?.[0];
      if (!template?.LaunchTemplateId) return undefined;
      const versions = await ec2.send(
        new DescribeLaunchTemplateVersionsCommand({
          LaunchTemplateId: template.LaunchTemplateId,
          Versions: [version ?? '$Latest'],
        }),
      );
      return { template, data: versions.LaunchTemplateVersions?.[0]?.LaunchTemplateData ?? {} };
    },
    async owner(kind, id) {
      if (kind === 'subnet') {
        const s = (await quiet(ec2.send(new DescribeSubnetsCommand({ SubnetIds: [id] }))))?.Subnets?.[0];
        return tagValue(s?.Tags, RAM_OWNER_TAG) ?? s?.OwnerId ?? account.accountId;
      }
      if (kind === 'security-group') {
        const g = (await quiet(ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [id] }))))?.SecurityGroups?.[0];
        return tagValue(g?.Tags, RAM_OWNER_TAG) ?? g?.OwnerId ?? account.accountId;
      }
      return account.accountId;
    },
    async imageSnapshots(imageId) {
      const found = await quiet(ec2.send(new DescribeImagesCommand({ ImageIds: [imageId] })));
      return (found?.Images?.[0]?.BlockDeviceMappings ?? []).flatMap((b) =>
        b.Ebs?.SnapshotId ? [b.Ebs.SnapshotId] : [],
      );
    },
    async instanceProfile(name) {
      const found = await quiet(iam.send(new GetInstanceProfileCommand({ InstanceProfileName: name })));
      const profile = found?.InstanceProfile;
      if (!profile?.Arn) return undefined;
      return {
        arn: profile.Arn,
        tags: profile.Tags ?? [],
        roleArns: (profile.Roles ?? []).flatMap((r) => (r.Arn ? [r.Arn] : [])),
      };
    },
    async roleArn(name) {
      const found = await quiet(iam.send(new GetRoleCommand({ RoleName: name })));
      return found?.Role?.Arn ?? `arn:aws:iam::${account.accountId}:role/${name}`;
    },
  };
}

interface MiddlewareStack {
  add(
    middleware: (
      next: (args: { input: unknown }) => Promise<unknown>,
      context: { commandName?: string },
    ) => (args: { input: unknown }) => Promise<unknown>,
    options: { step: 'initialize'; name: string },
  ): void;
}

/** Simulates every call of the client before it is sent; a denied call fails like AWS's answer. */
function audited<T extends { middlewareStack: unknown }>(
  client: T,
  service: string,
  account: MotoAccount,
  simulator: PolicySimulator,
  lookups: ResourceLookups,
): T {
  (client.middlewareStack as MiddlewareStack).add(
    (next, context) => async (args) => {
      const command = (context.commandName ?? '').replace(/Command$/, '');
      const input = (args.input ?? {}) as Record<string, unknown>;
      const requests = await authorizationRequests(service, command, input, {
        accountId: account.accountId,
        region: account.region,
        lookups,
      });
      const call = `${service}:${command}`;
      if (requests === undefined) {
        const denial = {
          request: { action: call, resource: '?', context: {} },
          result: 'is not modelled by the iam harness (add it to test/integration/iam/authorization.ts)',
        };
        throw accessDenied(service, simulator.record(call, denial));
      }
      const denials = await simulator.check(call, requests);
      if (denials.length > 0) throw accessDenied(service, denials);
      return next(args);
    },
    { step: 'initialize', name: 'iamAudit' },
  );
  return client;
}

export interface FunctionIdentity {
  function: StackFunctionName;
  roleArn: string;
  /** The assumed-role session's ARN: what AWS names as the caller. */
  sessionArn: string;
  role: FunctionRole;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string };
}

/** Creates the role in the account (actions only, for moto) and assumes it as Lambda would. */
export async function assumeFunctionRole(account: MotoAccount, role: FunctionRole): Promise<FunctionIdentity> {
  const roleName = `karpless-${role.function}-${randomUUID().slice(0, 8)}`;
  const created = await account.iam.send(
    new CreateRoleCommand({
      RoleName: roleName,
      AssumeRolePolicyDocument: JSON.stringify({
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }],
      }),
    }),
  );
  for (const policy of role.policies) {
    await account.iam.send(
      new PutRolePolicyCommand({
        RoleName: roleName,
        PolicyName: policy.name,
        PolicyDocument: JSON.stringify(actionsOnly(policy.document)),
      }),
    );
  }
  const sts = inAccount(
    new STSClient({ endpoint: account.endpoint, region: account.region, credentials: CREDENTIALS }),
    account.accountId,
  );
  const assumed = await sts.send(
    new AssumeRoleCommand({ RoleArn: created.Role?.Arn ?? '', RoleSessionName: role.function }),
  );
  sts.destroy();
  const c = assumed.Credentials;
  if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken) {
    throw new Error(`iam harness: AssumeRole of ${roleName} returned no credentials`);
  }
  return {
    function: role.function,
    roleArn: created.Role?.Arn ?? '',
    sessionArn: assumed.AssumedRoleUser?.Arn ?? '',
    role,
    credentials: { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken },
  };
}

/** The runtime's clients, and SQS for the provision function's retry queue (ChangeMessageVisibility, its DLQ). */
export type FunctionClients = AwsClients & Required<Pick<AwsClients, 'ssm' | 'iam' | 'pricing'>> & { sqs: SQSClient };

/** SDK clients signed with the function's role credentials, every call simulated against its policies. */
export function functionClients(
  account: MotoAccount,
  identity: FunctionIdentity,
  options: { maxAttempts?: number } = {},
): FunctionClients {
  const simulator = new PolicySimulator(identity.role, identity.sessionArn, account.accountId);
  const lookups = rootLookups(account);
  const config = {
    endpoint: account.endpoint,
    region: account.region,
    credentials: identity.credentials,
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  };
  const wrap = <T extends { middlewareStack: unknown }>(client: T, service: string) =>
    audited(inAccount(client, account.accountId), service, account, simulator, lookups);
  return {
    ec2: wrap(new EC2Client(config), 'ec2'),
    eks: wrap(new EKSClient(config), 'eks'),
    ssm: wrap(new SSMClient(config), 'ssm'),
    iam: wrap(new IAMClient(config), 'iam'),
    dynamodb: wrap(new DynamoDBClient(config), 'dynamodb'),
    eventbridge: wrap(new EventBridgeClient(config), 'events'),
    pricing: wrap(new PricingClient(config), 'pricing'),
    sqs: wrap(new SQSClient(config), 'sqs'),
  };
}

/** The synthesized template for the cluster and configuration of a function environment. */
export async function synthesizedTemplate(env: NodeJS.ProcessEnv): Promise<Template> {
  const clusterName = env[ENV.clusterName];
  const configFile = env[ENV.configFile];
  if (!clusterName || !configFile) {
    throw new Error(`iam harness: the environment needs ${ENV.clusterName} and ${ENV.configFile}`);
  }
  const configuration = JSON.parse(readFileSync(configFile, 'utf8')) as Configuration;
  const source = env[ENV.configurationSource] === 'cluster' ? { configurationSource: 'cluster' as const } : {};
  return (await fetchTemplate(inject('iamSynthEndpoint'), { clusterName, configuration, ...source })) as Template;
}

/**
 * One function's role, synthesized for the cluster and configuration, created in the account and
 * assumed: for a test that drives the providers directly rather than through a function environment.
 * `names` are the physical names the test gave the stack's state table and notice bus (a trailing `*`
 * stands for the tables of a file that makes one per test); without them, statements on the table and
 * the bus resolve to names nothing uses. Clients: functionClients.
 */
export async function functionIdentity(
  account: MotoAccount,
  fn: StackFunctionName,
  stack: SynthRequest,
  names: { tableName?: string; busName?: string } = {},
): Promise<FunctionIdentity> {
  const template = (await fetchTemplate(inject('iamSynthEndpoint'), stack)) as Template;
  const ctx = {
    accountId: account.accountId,
    region: account.region,
    tableName: names.tableName ?? '',
    busName: names.busName ?? '',
  };
  return assumeFunctionRole(account, functionRole(template, fn, ctx));
}

/** Every function's role as the template defines it, resolved for the account and the environment. */
export async function functionRoles(
  account: MotoAccount,
  env: NodeJS.ProcessEnv,
): Promise<Record<FunctionName, FunctionRole>> {
  const template = await synthesizedTemplate(env);
  const ctx = {
    accountId: account.accountId,
    region: account.region,
    tableName: env[ENV.stateTable] ?? '',
    busName: env[ENV.noticeBus] ?? '',
  };
  return Object.fromEntries(FUNCTIONS.map((fn) => [fn, functionRole(template, fn, ctx)])) as Record<
    FunctionName,
    FunctionRole
  >;
}

export interface FunctionRuntimeOptions extends Omit<RuntimeOptions, 'clients'> {
  env: NodeJS.ProcessEnv;
  /** Leaves one statement out of a function's role: the harness must then find the calls it allowed. */
  without?: { function: FunctionName; sid: string };
}

export type FunctionRuntimes = Record<FunctionName, Runtime> & {
  identities: Record<FunctionName, FunctionIdentity>;
};

/**
 * One runtime per function, each with its own role's credentials (buildRuntime with the clients of
 * functionClients). Use `runtimes.watcher` for the watcher's deps, `runtimes.provision` for the
 * provision function's, and so on.
 */
export async function functionRuntimes(
  account: MotoAccount,
  options: FunctionRuntimeOptions,
): Promise<FunctionRuntimes> {
  const roles = await functionRoles(account, options.env);
  const { without, ...runtimeOptions } = options;
  if (without) roles[without.function] = withoutStatement(roles[without.function], without.sid);
  const identities = {} as Record<FunctionName, FunctionIdentity>;
  const runtimes = {} as Record<FunctionName, Runtime>;
  for (const fn of FUNCTIONS) {
    identities[fn] = await assumeFunctionRole(account, roles[fn]);
    runtimes[fn] = buildRuntime({ ...runtimeOptions, clients: functionClients(account, identities[fn]) });
  }
  return { ...runtimes, identities };
}
