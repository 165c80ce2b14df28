// Each AWS call a function makes, turned into the authorization requests AWS evaluates for it: the
// IAM action, the resource ARN (per the Service Authorization Reference) and the context keys
// (aws:RequestTag/*, aws:TagKeys, aws:ResourceTag/*, ec2:CreateAction, iam:PassedToService,
// aws:RequestedRegion). Resource tags and owners are read from moto with the account's root key
// before the call runs, as AWS reads them before it decides.
//
// CreateFleet follows what Karpenter's controller policy must allow for it: CreateFleet on the fleet
// and every resource it names or creates, RunInstances for the instances the fleet launches (with the
// network interfaces, security groups and spot requests RunInstances authorizes), CreateTags for the
// tags applied at creation (ec2:CreateAction = CreateFleet) and iam:PassRole for the instance
// profile's role, passed to EC2.

import type { LaunchTemplate, ResponseLaunchTemplateData, Tag } from '@aws-sdk/client-ec2';

export interface AuthorizationRequest {
  action: string;
  resource: string;
  context: Record<string, string | string[]>;
}

/** What the model reads of existing resources (with root credentials, before the call). */
export interface ResourceLookups {
  instanceTags(ids: readonly string[]): Promise<Map<string, Tag[]>>;
  launchTemplate(
    spec: { id?: string | undefined; name?: string | undefined },
    version?: string,
  ): Promise<{ template: LaunchTemplate; data: ResponseLaunchTemplateData } | undefined>;
  /** The account that owns a subnet, security group, placement group or capacity reservation. */
  owner(kind: 'subnet' | 'security-group' | 'placement-group' | 'capacity-reservation', id: string): Promise<string>;
  /** Snapshots of an image's block devices. */
  imageSnapshots(imageId: string): Promise<string[]>;
  instanceProfile(name: string): Promise<{ arn: string; tags: Tag[]; roleArns: string[] } | undefined>;
  roleArn(name: string): Promise<string>;
}

export interface CallContext {
  accountId: string;
  region: string;
  lookups: ResourceLookups;
}

type Context = Record<string, string | string[]>;

export function requestTagContext(tags: readonly Tag[] | undefined): Context {
  const context: Context = {};
  for (const t of tags ?? []) if (t.Key) context[`aws:RequestTag/${t.Key}`] = t.Value ?? '';
  const keys = (tags ?? []).flatMap((t) => (t.Key ? [t.Key] : []));
  if (keys.length > 0) context['aws:TagKeys'] = keys;
  return context;
}

export function resourceTagContext(tags: readonly Tag[] | undefined): Context {
  const context: Context = {};
  for (const t of tags ?? []) if (t.Key) context[`aws:ResourceTag/${t.Key}`] = t.Value ?? '';
  return context;
}

type Input = Record<string, unknown>;

const EC2_CREATED_BY_FLEET = ['fleet', 'instance', 'volume'] as const;
/** Resource types RunInstances creates for a fleet's instances (network-interface, spot request). */
const EC2_CREATED_BY_RUN = ['instance', 'volume', 'network-interface'] as const;

function tagsFor(specs: unknown, resourceType: string): Tag[] {
  const list = (specs as { ResourceType?: string; Tags?: Tag[] }[] | undefined) ?? [];
  return list.filter((s) => s.ResourceType === resourceType).flatMap((s) => s.Tags ?? []);
}

function mergeTags(...lists: Tag[][]): Tag[] {
  const byKey = new Map<string, Tag>();
  for (const list of lists) for (const t of list) if (t.Key) byKey.set(t.Key, t);
  return [...byKey.values()];
}

class Ec2Arns {
  constructor(private readonly ctx: CallContext) {}
  of(type: string, id: string, owner = this.ctx.accountId): string {
    return `arn:aws:ec2:${this.ctx.region}:${owner}:${type}/${id}`;
  }
  regional(type: 'image' | 'snapshot', id: string): string {
    return `arn:aws:ec2:${this.ctx.region}::${type}/${id}`;
  }
}

async function createFleet(input: Input, ctx: CallContext): Promise<AuthorizationRequest[]> {
  const arns = new Ec2Arns(ctx);
  const region = { 'aws:RequestedRegion': ctx.region, 'ec2:Region': ctx.region };
  const out: AuthorizationRequest[] = [];
  const both = (resource: string, context: Context = {}) => {
    for (const action of ['ec2:CreateFleet', 'ec2:RunInstances'])
      out.push({ action, resource, context: { ...region, ...context } });
  };
  const fleetTags = input.TagSpecifications;
  const configs = (input.LaunchTemplateConfigs as Input[] | undefined) ?? [];
  const spot = (input.TargetCapacitySpecification as Input | undefined)?.DefaultTargetCapacityType === 'spot';
  const createdTags = new Map<string, Tag[]>();
  const passRoles = new Set<string>();
  for (const config of configs) {
    const spec = (config.LaunchTemplateSpecification as Input | undefined) ?? {};
    const found = await ctx.lookups.launchTemplate(
      { id: spec.LaunchTemplateId as string | undefined, name: spec.LaunchTemplateName as string | undefined },
      spec.Version as string | undefined,
    );
    if (!found) throw new Error(`iam harness: CreateFleet names launch template ${JSON.stringify(spec)}, not found`);
    const { template, data } = found;
    both(arns.of('launch-template', template.LaunchTemplateId ?? ''), resourceTagContext(template.Tags));
    for (const type of [...EC2_CREATED_BY_FLEET, ...EC2_CREATED_BY_RUN, 'spot-instances-request']) {
      const tags = mergeTags(
        createdTags.get(type) ?? [],
        tagsFor(data.TagSpecifications, type),
        tagsFor(fleetTags, type),
      );
      createdTags.set(type, tags);
    }
    const groups = [...(data.SecurityGroupIds ?? []), ...(data.NetworkInterfaces ?? []).flatMap((n) => n.Groups ?? [])];
    for (const group of groups) {
      out.push({
        action: 'ec2:RunInstances',
        resource: arns.of('security-group', group, await ctx.lookups.owner('security-group', group)),
        context: region,
      });
    }
    const reservation = data.CapacityReservationSpecification?.CapacityReservationTarget?.CapacityReservationId;
    if (reservation) {
      both(arns.of('capacity-reservation', reservation, await ctx.lookups.owner('capacity-reservation', reservation)));
    }
    const group = data.Placement?.GroupName ?? data.Placement?.GroupId;
    if (group) both(arns.of('placement-group', group, await ctx.lookups.owner('placement-group', group)));
    const profile = data.IamInstanceProfile?.Name ?? data.IamInstanceProfile?.Arn?.split('/').pop();
    if (profile) {
      const found = await ctx.lookups.instanceProfile(profile);
      for (const role of found?.roleArns ?? []) passRoles.add(role);
    }
    const images = new Set<string>();
    if (data.ImageId) images.add(data.ImageId);
    for (const override of (config.Overrides as Input[] | undefined) ?? []) {
      if (override.ImageId) images.add(override.ImageId as string);
      const subnet = override.SubnetId as string | undefined;
      if (subnet) both(arns.of('subnet', subnet, await ctx.lookups.owner('subnet', subnet)));
    }
    for (const image of images) {
      both(arns.regional('image', image));
      for (const snapshot of await ctx.lookups.imageSnapshots(image)) {
        out.push({ action: 'ec2:RunInstances', resource: arns.regional('snapshot', snapshot), context: region });
      }
    }
  }
  const created = (type: string) => createdTags.get(type) ?? [];
  for (const type of EC2_CREATED_BY_FLEET) {
    out.push({
      action: 'ec2:CreateFleet',
      resource: arns.of(type, '*'),
      context: { ...region, ...requestTagContext(created(type)) },
    });
  }
  for (const type of [...EC2_CREATED_BY_RUN, ...(spot ? ['spot-instances-request'] : [])]) {
    out.push({
      action: 'ec2:RunInstances',
      resource: arns.of(type, '*'),
      context: { ...region, ...requestTagContext(created(type)) },
    });
  }
  for (const type of [...EC2_CREATED_BY_FLEET, 'network-interface', ...(spot ? ['spot-instances-request'] : [])]) {
    const tags = created(type);
    if (tags.length === 0) continue;
    out.push({
      action: 'ec2:CreateTags',
      resource: arns.of(type, '*'),
      context: { ...region, ...requestTagContext(tags), 'ec2:CreateAction': 'CreateFleet' },
    });
  }
  for (const role of passRoles) {
    out.push({ action: 'iam:PassRole', resource: role, context: { 'iam:PassedToService': 'ec2.amazonaws.com' } });
  }
  return out;
}

async function ec2Requests(
  command: string,
  input: Input,
  ctx: CallContext,
): Promise<AuthorizationRequest[] | undefined> {
  const arns = new Ec2Arns(ctx);
  const region = { 'aws:RequestedRegion': ctx.region, 'ec2:Region': ctx.region };
  if (command.startsWith('Describe')) return [{ action: `ec2:${command}`, resource: '*', context: region }];
  switch (command) {
    case 'CreateFleet':
      return createFleet(input, ctx);
    case 'CreateLaunchTemplate': {
      const tags = tagsFor(input.TagSpecifications, 'launch-template');
      const resource = arns.of('launch-template', '*');
      return [
        { action: 'ec2:CreateLaunchTemplate', resource, context: { ...region, ...requestTagContext(tags) } },
        ...(tags.length > 0
          ? [
              {
                action: 'ec2:CreateTags',
                resource,
                context: { ...region, ...requestTagContext(tags), 'ec2:CreateAction': 'CreateLaunchTemplate' },
              },
            ]
          : []),
      ];
    }
    case 'DeleteLaunchTemplate': {
      const found = await ctx.lookups.launchTemplate({
        id: input.LaunchTemplateId as string | undefined,
        name: input.LaunchTemplateName as string | undefined,
      });
      const id = found?.template.LaunchTemplateId ?? '*';
      return [
        {
          action: 'ec2:DeleteLaunchTemplate',
          resource: arns.of('launch-template', id),
          context: { ...region, ...resourceTagContext(found?.template.Tags) },
        },
      ];
    }
    case 'TerminateInstances': {
      const ids = (input.InstanceIds as string[] | undefined) ?? [];
      const tags = await ctx.lookups.instanceTags(ids);
      return ids.map((id) => ({
        action: 'ec2:TerminateInstances',
        resource: arns.of('instance', id),
        context: { ...region, ...resourceTagContext(tags.get(id)) },
      }));
    }
    case 'CreateTags': {
      const out: AuthorizationRequest[] = [];
      const ids = (input.Resources as string[] | undefined) ?? [];
      const instanceIds = ids.filter((id) => id.startsWith('i-'));
      if (instanceIds.length !== ids.length) return undefined;
      const tags = await ctx.lookups.instanceTags(instanceIds);
      for (const id of instanceIds) {
        out.push({
          action: 'ec2:CreateTags',
          resource: arns.of('instance', id),
          context: { ...region, ...resourceTagContext(tags.get(id)), ...requestTagContext(input.Tags as Tag[]) },
        });
      }
      return out;
    }
    default:
      return undefined;
  }
}

async function profileRequest(action: string, name: string, ctx: CallContext, extra: Context = {}) {
  const found = await ctx.lookups.instanceProfile(name);
  return {
    action,
    resource: found?.arn ?? `arn:aws:iam::${ctx.accountId}:instance-profile/${name}`,
    context: { ...resourceTagContext(found?.tags), ...extra },
  };
}

async function iamRequests(
  command: string,
  input: Input,
  ctx: CallContext,
): Promise<AuthorizationRequest[] | undefined> {
  const name = input.InstanceProfileName as string;
  switch (command) {
    case 'CreateInstanceProfile': {
      const path = (input.Path as string | undefined) ?? '/';
      return [
        {
          action: 'iam:CreateInstanceProfile',
          resource: `arn:aws:iam::${ctx.accountId}:instance-profile${path}${name}`,
          context: requestTagContext(input.Tags as Tag[] | undefined),
        },
      ];
    }
    case 'AddRoleToInstanceProfile':
      return [
        await profileRequest('iam:AddRoleToInstanceProfile', name, ctx),
        // The caller must be allowed to pass the role: to EC2, which is what instance profiles are for.
        {
          action: 'iam:PassRole',
          resource: await ctx.lookups.roleArn(input.RoleName as string),
          context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
        },
      ];
    case 'RemoveRoleFromInstanceProfile':
    case 'DeleteInstanceProfile':
    case 'GetInstanceProfile':
      return [await profileRequest(`iam:${command}`, name, ctx)];
    case 'TagInstanceProfile':
      return [await profileRequest('iam:TagInstanceProfile', name, ctx, requestTagContext(input.Tags as Tag[]))];
    case 'ListInstanceProfiles':
      return [{ action: 'iam:ListInstanceProfiles', resource: '*', context: {} }];
    default:
      return undefined;
  }
}

const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

function dynamoRequests(command: string, input: Input, ctx: CallContext): AuthorizationRequest[] | undefined {
  const region = { 'aws:RequestedRegion': ctx.region };
  const table = (name: string) =>
    name.startsWith('arn:') ? name : `arn:aws:dynamodb:${ctx.region}:${ctx.accountId}:table/${name}`;
  const request = (action: string, name: string, index?: string) => ({
    action: `dynamodb:${action}`,
    resource: index ? `${table(name)}/index/${index}` : table(name),
    context: region,
  });
  switch (command) {
    case 'GetItem':
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
    case 'DescribeTable':
    case 'CreateTable':
    case 'UpdateTimeToLive':
      return [request(command, input.TableName as string)];
    case 'Query':
    case 'Scan':
      return [request(command, input.TableName as string, input.IndexName as string | undefined)];
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys((input.RequestItems as Input | undefined) ?? {}).map((name) => request(command, name));
    case 'TransactWriteItems':
    case 'TransactGetItems':
      // No IAM action of these names: AWS authorizes each item as its own operation.
      return ((input.TransactItems as Input[] | undefined) ?? []).flatMap((item) =>
        Object.entries(item).flatMap(([kind, op]) =>
          TRANSACT_ACTIONS[kind] ? [request(TRANSACT_ACTIONS[kind], (op as Input).TableName as string)] : [],
        ),
      );
    default:
      return undefined;
  }
}

function ssmParameterArn(name: string, ctx: CallContext): string {
  if (name.startsWith('arn:')) return name;
  const path = name.startsWith('/') ? name : `/${name}`;
  // AWS's public parameters belong to no account.
  const owner = path.startsWith('/aws/service/') ? '' : ctx.accountId;
  return `arn:aws:ssm:${ctx.region}:${owner}:parameter${path}`;
}

/** A batch call is authorized as the single action (there is no IAM action of the batch's name). */
const SQS_BATCH_ACTIONS: Record<string, string> = {
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
};

function sqsRequests(command: string, input: Input, ctx: CallContext): AuthorizationRequest[] | undefined {
  const url = input.QueueUrl as string | undefined;
  if (!url) return undefined;
  // https://sqs.<region>.amazonaws.com/<account>/<name> (moto: http://127.0.0.1:<port>/<account>/<name>)
  const [account, name] = new URL(url).pathname.split('/').filter(Boolean);
  if (!account || !name) return undefined;
  return [
    {
      action: `sqs:${SQS_BATCH_ACTIONS[command] ?? command}`,
      resource: `arn:aws:sqs:${ctx.region}:${account}:${name}`,
      context: { 'aws:RequestedRegion': ctx.region },
    },
  ];
}

/**
 * The authorization requests of one call; undefined for a call this model does not know, which the
 * harness reports rather than lets through.
 */
export async function authorizationRequests(
  service: string,
  command: string,
  input: Input,
  ctx: CallContext,
): Promise<AuthorizationRequest[] | undefined> {
  const region = { 'aws:RequestedRegion': ctx.region };
  switch (service) {
    case 'ec2':
      return ec2Requests(command, input, ctx);
    case 'iam':
      return iamRequests(command, input, ctx);
    case 'dynamodb':
      return dynamoRequests(command, input, ctx);
    case 'ssm':
      if (command === 'GetParameter')
        return [{ action: 'ssm:GetParameter', resource: ssmParameterArn(input.Name as string, ctx), context: region }];
      return undefined;
    case 'eks':
      if (command === 'DescribeCluster') {
        return [
          {
            action: 'eks:DescribeCluster',
            resource: `arn:aws:eks:${ctx.region}:${ctx.accountId}:cluster/${input.name as string}`,
            context: region,
          },
        ];
      }
      return undefined;
    case 'events':
      if (command === 'PutEvents') {
        return ((input.Entries as Input[] | undefined) ?? []).map((entry) => {
          const bus = (entry.EventBusName as string | undefined) ?? 'default';
          return {
            action: 'events:PutEvents',
            resource: bus.startsWith('arn:') ? bus : `arn:aws:events:${ctx.region}:${ctx.accountId}:event-bus/${bus}`,
            context: {
              ...region,
              'events:source': String(entry.Source ?? ''),
              'events:detail-type': String(entry.DetailType ?? ''),
            },
          };
        });
      }
      return undefined;
    case 'pricing':
      if (command === 'GetProducts') return [{ action: 'pricing:GetProducts', resource: '*', context: {} }];
      return undefined;
    case 'sqs':
      return sqsRequests(command, input, ctx);
    case 'sts':
      // GetCallerIdentity needs no permission.
      return command === 'GetCallerIdentity' ? [] : undefined;
    default:
      return undefined;
  }
}
