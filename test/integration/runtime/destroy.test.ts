// `cdk destroy` replayed against moto: moto's CloudFormation cannot run a Lambda-backed custom
// resource (no Docker), so the test plays CloudFormation's part. The stack is synthesized for the
// cluster (the IAM harness's template, with every function under its own role), karpless makes what
// it makes at run time (a real provision: the managed instance profile holding the node role, launch
// templates, a running instance), then every resource is deleted in an order CloudFormation may use,
// computed from the template's dependencies (DependsOn, Ref, Fn::GetAtt, Fn::Sub): the uninstall
// resource gets its Delete event with its properties as the template defines them, and the IAM
// resources (the functions' policies and roles, the node role) are deleted in moto at their turn.
// moto's DeleteRole refuses a role that is still in an instance profile, as IAM does.
// The uninstall's own behaviour (another cluster's profiles and templates kept, a run without the
// cluster) is tested in gc.test.ts; this file proves the stack's deletion order lets it work.

import { DescribeLaunchTemplatesCommand } from '@aws-sdk/client-ec2';
import {
  DeleteRoleCommand,
  DeleteRolePolicyCommand,
  GetRoleCommand,
  ListInstanceProfilesCommand,
  ListRolePoliciesCommand,
} from '@aws-sdk/client-iam';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ENV, TAG } from '../../../shared/contracts';
import { errorCode } from '../../../shared/providers/aws-errors';
import { M5_LARGE_ON_DEMAND, testNodePool } from '../../support/nodepools';
import { ProvisionFixture } from '../helpers';
import { FUNCTIONS, synthesizedTemplate } from '../iam';
import { deleteUninstallResource } from '../support/uninstall';

const CLUSTER = 'destroy';
const NODE_ROLE = `KarpenterNodeRole-${CLUSTER}`;

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
}
type Resources = Record<string, Resource>;

/** The logical ids a value refers to: Ref, Fn::GetAtt, and the names inside Fn::Sub strings. */
function references(value: unknown, ids: ReadonlySet<string>, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) references(v, ids, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, arg] of Object.entries(value)) {
      if (key === 'Ref' && typeof arg === 'string' && ids.has(arg)) out.add(arg);
      else if (key === 'Fn::GetAtt') {
        const id = Array.isArray(arg) ? String(arg[0]) : String(arg).split('.')[0];
        if (id && ids.has(id)) out.add(id);
      } else if (key === 'Fn::Sub') {
        const text = Array.isArray(arg) ? String(arg[0]) : String(arg);
        for (const [, name] of text.matchAll(/\$\{([^}.!]+)[^}]*\}/g)) if (name && ids.has(name)) out.add(name);
        if (Array.isArray(arg)) references(arg[1], ids, out);
      } else references(arg, ids, out);
    }
  }
  return out;
}

/** What each resource needs to exist while it exists: CloudFormation deletes it first. */
function dependencies(resources: Resources): Map<string, Set<string>> {
  const ids = new Set(Object.keys(resources));
  return new Map(
    Object.entries(resources).map(([id, r]) => {
      const on = references(r.Properties ?? {}, ids);
      for (const d of [r.DependsOn ?? []].flat()) on.add(d);
      return [id, on];
    }),
  );
}

// Among the resources free to go at a step, IAM first and custom resources last: the order least
// favourable to the uninstall, so only a dependency in the template can keep it before the node role.
const PRIORITY = (type: string) => (type.startsWith('AWS::IAM::') ? 0 : type.startsWith('Custom::') ? 2 : 1);

/** A deletion order CloudFormation may follow: each resource after every resource that depends on it. */
function deletionOrder(resources: Resources): string[] {
  const deps = dependencies(resources);
  const dependents = new Map<string, number>(Object.keys(resources).map((id) => [id, 0]));
  for (const on of deps.values()) for (const d of on) dependents.set(d, (dependents.get(d) ?? 0) + 1);
  const order: string[] = [];
  const ready = [...dependents].filter(([, n]) => n === 0).map(([id]) => id);
  while (ready.length > 0) {
    ready.sort((a, b) => PRIORITY(resources[a]?.Type ?? '') - PRIORITY(resources[b]?.Type ?? '') || a.localeCompare(b));
    const next = ready.shift() ?? '';
    order.push(next);
    for (const d of deps.get(next) ?? []) {
      const left = (dependents.get(d) ?? 0) - 1;
      dependents.set(d, left);
      if (left === 0) ready.push(d);
    }
  }
  if (order.length !== Object.keys(resources).length) throw new Error('the template has a dependency cycle');
  return order;
}

const general = testNodePool({ template: { requirements: M5_LARGE_ON_DEMAND } });

let fixture: ProvisionFixture;
let resources: Resources;
let order: string[];
let running: string[];
/** What happened to each resource at its turn, in order. */
const replayed: { id: string; type: string; outcome: string }[] = [];
let uninstallResponse: Record<string, unknown> | undefined;
let deleteBeforeUninstall = '';
/** What karpless had made by the time the stack was destroyed. */
const made = { profiles: [] as string[], templates: [] as string[] };

async function karplessProfiles(): Promise<string[]> {
  const out = await fixture.account.iam.send(new ListInstanceProfilesCommand({ PathPrefix: '/karpenter/' }));
  return (out.InstanceProfiles ?? []).map(
    (p) => `${p.InstanceProfileName} (${(p.Roles ?? []).map((r) => r.RoleName)})`,
  );
}

async function karplessTemplates(): Promise<string[]> {
  const out = await fixture.account.ec2.send(
    new DescribeLaunchTemplatesCommand({ Filters: [{ Name: `tag:${TAG.clusterName}`, Values: [CLUSTER] }] }),
  );
  return (out.LaunchTemplates ?? []).map((t) => t.LaunchTemplateName ?? '');
}

async function deleteRole(roleName: string): Promise<string> {
  const { iam } = fixture.account;
  try {
    // CloudFormation removes a role's inline policies with it.
    const inline = await iam.send(new ListRolePoliciesCommand({ RoleName: roleName }));
    for (const name of inline.PolicyNames ?? []) {
      await iam.send(new DeleteRolePolicyCommand({ RoleName: roleName, PolicyName: name }));
    }
    await iam.send(new DeleteRoleCommand({ RoleName: roleName }));
    return 'deleted';
  } catch (error) {
    return `${errorCode(error) ?? 'error'}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The custom resource's properties as CloudFormation sends them: intrinsic functions resolved. */
function eventProperties(properties: Record<string, unknown>): Record<string, unknown> {
  const { accountId, region } = fixture.account;
  return Object.fromEntries(
    Object.entries(properties).map(([key, value]) => {
      if (typeof value === 'string') return [key, value];
      const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
      if (getAtt?.[1] === 'Arn' && resources[getAtt[0]]?.Type === 'AWS::Lambda::Function') {
        return [key, `arn:aws:lambda:${region}:${accountId}:function:Karpless-${CLUSTER}-${getAtt[0]}`];
      }
      throw new Error(`destroy replay: cannot resolve ${key} ${JSON.stringify(value)}`);
    }),
  );
}

async function uninstall(id: string, resource: Resource): Promise<string> {
  uninstallResponse = await deleteUninstallResource(fixture.runtimes.gc, {
    cluster: CLUSTER,
    accountId: fixture.account.accountId,
    logicalId: id,
    properties: eventProperties(resource.Properties ?? {}),
  });
  return String(uninstallResponse.Status);
}

beforeAll(async () => {
  fixture = await ProvisionFixture.start({ cluster: CLUSTER, nodePools: [general] });
  // What karpless makes at run time: one provision decision makes the node class's instance
  // profile (holding the node role), its launch template and an instance.
  const pod = fixture.pendingPod('web-1', '500m');
  expect((await fixture.provision([fixture.notice([pod])])).batchItemFailures).toEqual([]);
  running = (await fixture.liveInstances()).flatMap((i) => (i.InstanceId ? [i.InstanceId] : []));
  made.profiles = await karplessProfiles();
  made.templates = await karplessTemplates();

  const template = await synthesizedTemplate({
    [ENV.clusterName]: CLUSTER,
    [ENV.configFile]: fixture.runtime.settings.configFile,
  });
  resources = template.Resources as Resources;
  order = deletionOrder(resources);
  // The roles in moto: the functions' (created by the harness under other names) and the node role.
  const roleNames = new Map<string, string>();
  for (const fn of FUNCTIONS) {
    const identity = fixture.runtimes.identities[fn];
    roleNames.set(identity.role.logicalId, identity.roleArn.split('/').pop() ?? '');
  }
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type === 'AWS::IAM::Role' && typeof r.Properties?.RoleName === 'string') {
      roleNames.set(id, r.Properties.RoleName);
    }
  }
  // The reason the uninstall exists: IAM refuses the node role while a profile holds it.
  deleteBeforeUninstall = await deleteRole(NODE_ROLE);

  for (const id of order) {
    const resource = resources[id] as Resource;
    let outcome = 'not in moto';
    if (resource.Type === 'Custom::KarplessUninstall') outcome = await uninstall(id, resource);
    else if (resource.Type === 'AWS::IAM::Policy') {
      const roles = ((resource.Properties?.Roles ?? []) as { Ref?: string }[]).flatMap((r) => {
        const name = roleNames.get(r.Ref ?? '');
        return name ? [name] : [];
      });
      for (const RoleName of roles) {
        await fixture.account.iam.send(new DeleteRolePolicyCommand({ RoleName, PolicyName: id }));
      }
      if (roles.length > 0) outcome = 'deleted';
    } else if (resource.Type === 'AWS::IAM::Role' && roleNames.has(id)) {
      outcome = await deleteRole(roleNames.get(id) ?? '');
    }
    replayed.push({ id, type: resource.Type, outcome });
  }
});

afterAll(async () => {
  await fixture?.stop();
});

describe('cdk destroy, replayed in the order of the synthesized template', () => {
  it('had something to clean up: an instance profile holding the node role, a launch template, an instance', () => {
    expect(running).toHaveLength(1);
    expect(made.profiles).toEqual([expect.stringContaining(`(${NODE_ROLE})`)]);
    expect(made.templates.length).toBeGreaterThan(0);
    expect(deleteBeforeUninstall).toMatch(/^DeleteConflict/);
  });

  it('runs the uninstall before the node role goes, and while the gc function still has its permissions', () => {
    const at = (type: string, name?: string) =>
      replayed.findIndex(
        (r) => r.type === type && (name === undefined || resources[r.id]?.Properties?.RoleName === name),
      );
    expect(at('Custom::KarplessUninstall')).toBeGreaterThanOrEqual(0);
    expect(at('Custom::KarplessUninstall')).toBeLessThan(at('AWS::IAM::Role', NODE_ROLE));
    expect(uninstallResponse).toMatchObject({ Status: 'SUCCESS', Data: { Failed: '0' } });
  });

  it('deletes the node role and every other IAM resource of the stack', async () => {
    const iamOutcomes = replayed.filter((r) => r.type.startsWith('AWS::IAM::'));
    // Five function roles with their policies, and the node role.
    expect(iamOutcomes.filter((r) => r.type === 'AWS::IAM::Role' && r.outcome === 'deleted')).toHaveLength(
      FUNCTIONS.length + 1,
    );
    expect(iamOutcomes.filter((r) => r.outcome !== 'deleted' && r.outcome !== 'not in moto')).toEqual([]);
    await expect(fixture.account.iam.send(new GetRoleCommand({ RoleName: NODE_ROLE }))).rejects.toMatchObject({
      name: 'NoSuchEntityException',
    });
  });

  it('leaves no karpless instance profile or launch template', async () => {
    expect(await karplessProfiles()).toEqual([]);
    expect(await karplessTemplates()).toEqual([]);
  });

  it('names the instance it found still running, and leaves it running', async () => {
    expect(uninstallResponse?.Data).toMatchObject({ StillRunning: running.join(',') });
    expect(String(uninstallResponse?.Reason)).toContain(`still running: ${running.join(', ')}`);
    expect((await fixture.liveInstances()).map((i) => i.InstanceId)).toEqual(running);
  });
});
