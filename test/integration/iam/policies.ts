// The functions' roles as the synthesized CloudFormation template defines them, resolved for one moto
// account: intrinsic functions (Ref, Fn::GetAtt, Fn::Join, Fn::Sub) evaluated with the account, the
// region and the names the test gave the stack's table and bus, so the documents are the ones AWS
// would hold after `cdk deploy`.

export const FUNCTIONS = ['watcher', 'provision', 'interruption', 'drift', 'gc'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];
/** Any function of the stack: the five, and the deploy-time preflight of a stack in a VPC. */
export type StackFunctionName = FunctionName | 'preflight';

export interface PolicyStatement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

export interface PolicyDocument {
  Version: string;
  Statement: PolicyStatement[];
}

export interface FunctionRole {
  function: StackFunctionName;
  /** The template's logical id of the role. */
  logicalId: string;
  /** Identity policies by name (inline policies and the AWS::IAM::Policy resources attached to it). */
  policies: { name: string; document: PolicyDocument }[];
  /** Managed policies (AWSLambdaBasicExecutionRole: logs only, which the functions never call themselves). */
  managedPolicyArns: string[];
}

export interface ResolveContext {
  accountId: string;
  region: string;
  /** The physical name of the stack's state table, i.e. what the functions get in KARPLESS_STATE_TABLE. */
  tableName: string;
  /** The physical name of the notice bus (KARPLESS_NOTICE_BUS). */
  busName: string;
}

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
}

export interface Template {
  Resources: Record<string, Resource>;
}

const PARTITION = 'aws';

function pseudo(name: string, ctx: ResolveContext): string | undefined {
  switch (name) {
    case 'AWS::AccountId':
      return ctx.accountId;
    case 'AWS::Region':
      return ctx.region;
    case 'AWS::Partition':
      return PARTITION;
    case 'AWS::URLSuffix':
      return 'amazonaws.com';
    default:
      return undefined;
  }
}

function literal(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new Error(`iam harness: ${what} is not a literal string in the template`);
  return value;
}

/** The physical name AWS would give a resource of the template in this account. */
function physicalName(template: Template, logicalId: string, ctx: ResolveContext): string {
  const resource = template.Resources[logicalId];
  if (!resource) throw new Error(`iam harness: the template has no resource ${logicalId}`);
  const props = resource.Properties ?? {};
  switch (resource.Type) {
    case 'AWS::DynamoDB::Table':
      return ctx.tableName;
    case 'AWS::Events::EventBus':
      return ctx.busName;
    case 'AWS::IAM::Role':
      return props.RoleName === undefined ? logicalId : literal(props.RoleName, `${logicalId}.RoleName`);
    case 'AWS::SQS::Queue':
      return props.QueueName === undefined ? logicalId : literal(props.QueueName, `${logicalId}.QueueName`);
    default:
      throw new Error(`iam harness: no physical name for ${logicalId} (${resource.Type}); add its type to policies.ts`);
  }
}

function arnOf(template: Template, logicalId: string, ctx: ResolveContext): string {
  const resource = template.Resources[logicalId];
  const name = physicalName(template, logicalId, ctx);
  const { accountId: account, region } = ctx;
  switch (resource?.Type) {
    case 'AWS::DynamoDB::Table':
      return `arn:${PARTITION}:dynamodb:${region}:${account}:table/${name}`;
    case 'AWS::Events::EventBus':
      return `arn:${PARTITION}:events:${region}:${account}:event-bus/${name}`;
    case 'AWS::IAM::Role': {
      const path = (resource.Properties?.Path as string | undefined) ?? '/';
      return `arn:${PARTITION}:iam::${account}:role${path}${name}`;
    }
    case 'AWS::SQS::Queue':
      return `arn:${PARTITION}:sqs:${region}:${account}:${name}`;
    default:
      throw new Error(`iam harness: no ARN for ${logicalId} (${resource?.Type})`);
  }
}

/** Evaluates the intrinsic functions of a template value. */
export function resolve(template: Template, value: unknown, ctx: ResolveContext): unknown {
  if (Array.isArray(value)) return value.map((v) => resolve(template, v, ctx));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const [key, arg] = entries[0] ?? [];
  if (entries.length === 1 && key === 'Ref') {
    const name = literal(arg, 'Ref');
    return pseudo(name, ctx) ?? physicalName(template, name, ctx);
  }
  if (entries.length === 1 && key === 'Fn::GetAtt') {
    const [logicalId, attribute] = arg as [string, string];
    if (attribute !== 'Arn') throw new Error(`iam harness: Fn::GetAtt ${logicalId}.${attribute} is not supported`);
    return arnOf(template, logicalId, ctx);
  }
  if (entries.length === 1 && key === 'Fn::Join') {
    const [separator, parts] = arg as [string, unknown[]];
    return parts.map((p) => String(resolve(template, p, ctx))).join(separator);
  }
  if (entries.length === 1 && key === 'Fn::Sub') {
    const [text, variables] = (typeof arg === 'string' ? [arg, {}] : arg) as [string, Record<string, unknown>];
    return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
      if (name in variables) return String(resolve(template, variables[name], ctx));
      const p = pseudo(name, ctx);
      if (p !== undefined) return p;
      const [logicalId, attribute] = name.split('.');
      if (attribute === 'Arn' && logicalId) return arnOf(template, logicalId, ctx);
      return physicalName(template, name, ctx);
    });
  }
  if (key?.startsWith('Fn::')) throw new Error(`iam harness: ${key} is not supported in policies`);
  return Object.fromEntries(entries.map(([k, v]) => [k, resolve(template, v, ctx)]));
}

function functionLogicalId(template: Template, fn: StackFunctionName): string {
  const prefix = `Provisioner${fn[0]?.toUpperCase()}${fn.slice(1)}`;
  const found = Object.entries(template.Resources).filter(
    // CDK appends an 8-digit hash to the construct path.
    ([id, r]) =>
      r.Type === 'AWS::Lambda::Function' && id.startsWith(prefix) && /^[0-9A-F]{8}$/.test(id.slice(prefix.length)),
  );
  if (found.length !== 1)
    throw new Error(`iam harness: expected one Lambda function ${prefix}…, found ${found.length}`);
  return found[0]?.[0] ?? '';
}

/** The role of one function with every identity policy attached to it, resolved for the account. */
export function functionRole(template: Template, fn: StackFunctionName, ctx: ResolveContext): FunctionRole {
  const lambda = template.Resources[functionLogicalId(template, fn)];
  const roleRef = (lambda?.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'];
  if (!roleRef) throw new Error(`iam harness: the ${fn} function's Role is not a Fn::GetAtt of a role`);
  const [roleId] = roleRef;
  const role = template.Resources[roleId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`iam harness: ${roleId} is not an AWS::IAM::Role`);
  const policies: FunctionRole['policies'] = [];
  for (const inline of (role.Properties?.Policies as { PolicyName: string; PolicyDocument: unknown }[]) ?? []) {
    policies.push({
      name: inline.PolicyName,
      document: resolve(template, inline.PolicyDocument, ctx) as PolicyDocument,
    });
  }
  for (const [id, r] of Object.entries(template.Resources)) {
    if (r.Type !== 'AWS::IAM::Policy') continue;
    const roles = (r.Properties?.Roles as { Ref?: string }[] | undefined) ?? [];
    if (!roles.some((ref) => ref.Ref === roleId)) continue;
    policies.push({ name: id, document: resolve(template, r.Properties?.PolicyDocument, ctx) as PolicyDocument });
  }
  const managedPolicyArns = ((role.Properties?.ManagedPolicyArns as unknown[]) ?? []).map((a) =>
    String(resolve(template, a, ctx)),
  );
  return { function: fn, logicalId: roleId, policies, managedPolicyArns };
}

/**
 * SQS authorizes a batch call as its single action (no IAM action has the batch's name); moto asks
 * for the operation's own name, so the batch names are added to what moto enforces. The simulation
 * checks the single action (authorization.ts).
 */
const MOTO_BATCH_ACTIONS: Record<string, string> = {
  'sqs:ChangeMessageVisibility': 'sqs:ChangeMessageVisibilityBatch',
  'sqs:SendMessage': 'sqs:SendMessageBatch',
  'sqs:DeleteMessage': 'sqs:DeleteMessageBatch',
};

function withMotoBatchActions(action: string | string[] | undefined): string | string[] | undefined {
  if (action === undefined) return undefined;
  const actions = typeof action === 'string' ? [action] : action;
  const batches = actions.flatMap((a) => (MOTO_BATCH_ACTIONS[a] ? [MOTO_BATCH_ACTIONS[a]] : []));
  return batches.length === 0 ? action : [...actions, ...batches];
}

/**
 * What moto can enforce of a policy: its actions. moto authorizes nearly every call against the
 * resource "*" and evaluates no conditions, so each Allow keeps its actions on "*"; resources and
 * conditions are checked by the policy simulation of every call instead (simulator.ts).
 */
export function actionsOnly(document: PolicyDocument): PolicyDocument {
  return {
    Version: document.Version,
    Statement: document.Statement.filter((s) => s.Effect === 'Allow').map((s) => {
      const { Sid, Effect, NotAction } = s;
      const Action = withMotoBatchActions(s.Action);
      return {
        ...(Sid ? { Sid } : {}),
        Effect,
        ...(Action ? { Action } : {}),
        ...(NotAction ? { NotAction } : {}),
        Resource: '*',
      };
    }),
  };
}

/** A copy of the role without the statement of that Sid (for proving the harness notices). */
export function withoutStatement(role: FunctionRole, sid: string): FunctionRole {
  let removed = 0;
  const policies = role.policies.map((p) => ({
    name: p.name,
    document: {
      ...p.document,
      Statement: p.document.Statement.filter((s) => {
        if (s.Sid !== sid) return true;
        removed++;
        return false;
      }),
    },
  }));
  if (removed === 0) throw new Error(`iam harness: the ${role.function} role has no statement ${sid}`);
  return { ...role, policies };
}
