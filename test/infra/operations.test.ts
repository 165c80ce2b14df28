// What makes the stack operable in a real account: failures that page someone (alarms on what
// Lambda's own metrics cannot see), bounded retries, and a closed trust boundary.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it, vi } from 'vitest';
import { loadDeployConfiguration } from '../../infra/configuration';
import { operationsContext } from '../../infra/context';
import { buildKarplessApp, stackName } from '../../infra/karpless-stack';
import { resourcePrefix } from '../../infra/queues';
import { METRIC, METRICS_NAMESPACE, SERVICE } from '../../shared/contracts';
import { exampleTemplate, NO_BUNDLING, synthProvisioner } from './stack';

// Synthesizing takes seconds, far more on a machine shared with other builds.
vi.setConfig({ testTimeout: 180_000 });

type Resource = { Type: string; Properties: Record<string, unknown> };

function alarm(id: string): Record<string, unknown> {
  const resources = exampleTemplate().toJSON().Resources as Record<string, Resource>;
  const found = Object.entries(resources).find(
    ([logicalId, r]) => r.Type === 'AWS::CloudWatch::Alarm' && logicalId.startsWith(`ProvisionerObservability${id}`),
  );
  if (!found) throw new Error(`no alarm ${id}`);
  return found[1].Properties;
}

function functionLogicalId(name: string): string {
  const resources = exampleTemplate().toJSON().Resources as Record<string, Resource>;
  const found = Object.keys(resources).find(
    (id) => resources[id]?.Type === 'AWS::Lambda::Function' && id.startsWith(`Provisioner${name}`),
  );
  if (!found) throw new Error(`no function ${name}`);
  return found;
}

describe('alarms that page someone', () => {
  it('alarms when the watcher is not invoked, missing data counting as the breach', () => {
    expect(alarm('WatcherNotRunning')).toMatchObject({
      MetricName: 'Invocations',
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      Period: 300,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionLogicalId('Watcher') } }],
    });
  });

  it('stretches the watcher window to three of its intervals', () => {
    const { template } = synthProvisioner({ watcherInterval: Duration.minutes(4) });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Invocations',
      Period: 720,
      ComparisonOperator: 'LessThanThreshold',
    });
  });

  it('alarms when notices are put and no provision decision follows within 15 minutes', () => {
    const props = alarm('NoticesNotProvisioned');
    const metrics = props.Metrics as {
      Id: string;
      Expression?: string;
      MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions: unknown[] }; Stat: string };
    }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe(
      'IF(FILL(notices, 0) > 0 AND FILL(decisions, 0) == 0, 1, 0)',
    );
    const stat = (id: string) => metrics.find((m) => m.Id === id)?.MetricStat;
    expect(stat('notices')).toMatchObject({
      Metric: {
        Namespace: METRICS_NAMESPACE,
        MetricName: METRIC.noticesPut,
        Dimensions: expect.arrayContaining([
          { Name: 'service', Value: SERVICE.watcher },
          { Name: 'cluster', Value: 'demo' },
        ]),
      },
      Stat: 'Sum',
      Period: 900,
    });
    expect(stat('decisions')).toMatchObject({
      Metric: {
        MetricName: METRIC.podsPerDecision,
        Dimensions: expect.arrayContaining([{ Name: 'service', Value: SERVICE.provision }]),
      },
      Stat: 'SampleCount',
    });
    expect(props).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
  });

  it('alarms on registration failures in two periods running, and on any instance that never registered', () => {
    expect(alarm('RegistrationFailures')).toMatchObject({
      MetricName: METRIC.registrationFailures,
      Namespace: METRICS_NAMESPACE,
      Dimensions: expect.arrayContaining([{ Name: 'service', Value: SERVICE.watcher }]),
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
    });
    expect(alarm('NodesNeverRegistered')).toMatchObject({
      MetricName: METRIC.garbageCollected,
      Dimensions: expect.arrayContaining([
        { Name: 'service', Value: SERVICE.gc },
        { Name: 'resource', Value: 'instance' },
        { Name: 'reason', Value: 'RegistrationTimeout' },
      ]),
      Threshold: 1,
      EvaluationPeriods: 1,
    });
  });

  it('alarms on gc and drift actions failing for 15 minutes running', () => {
    for (const [id, service] of [
      ['GcActionFailures', SERVICE.gc],
      ['DriftActionFailures', SERVICE.drift],
    ] as const) {
      expect(alarm(id)).toMatchObject({
        MetricName: METRIC.actionFailures,
        Dimensions: expect.arrayContaining([{ Name: 'service', Value: service }]),
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
      });
    }
  });
});

describe('bounded retries of the scheduled functions', () => {
  it('gives the watcher, drift and gc functions no Lambda async retries and a short event age', () => {
    const template = exampleTemplate();
    const expected: [string, number][] = [
      ['Watcher', 60],
      ['Drift', 300],
      ['Gc', 120],
    ];
    for (const [name, age] of expected) {
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: functionLogicalId(name) },
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: age,
        Qualifier: '$LATEST',
      });
    }
    template.resourceCountIs('AWS::Lambda::EventInvokeConfig', 3);
  });

  it("keeps the schedules' EventBridge targets at no retries too", () => {
    const rules = Object.values(exampleTemplate().findResources('AWS::Events::Rule')) as Resource[];
    const scheduled = rules.filter((r) => r.Properties.ScheduleExpression !== undefined);
    expect(scheduled).toHaveLength(3);
    for (const rule of scheduled) {
      expect(rule.Properties.Targets).toEqual([
        expect.objectContaining({ RetryPolicy: expect.objectContaining({ MaximumRetryAttempts: 0 }) }),
      ]);
    }
  });
});

function statementsOfType(
  template: ReturnType<typeof exampleTemplate>,
  type: string,
  key: string,
): Record<string, unknown>[] {
  return Object.values(template.findResources(type)).flatMap((r) => {
    const value = (r.Properties as Record<string, Record<string, unknown>>)[key] ?? {};
    return Array.isArray(value.Statement) ? (value.Statement as Record<string, unknown>[]) : [value];
  });
}

describe('the trust boundary', () => {
  it('denies PutEvents on the notice bus to all but the five function roles', () => {
    const template = exampleTemplate();
    const denies = statementsOfType(template, 'AWS::Events::EventBusPolicy', 'Statement').filter(
      (st) => st.Effect === 'Deny',
    );
    expect(denies).toHaveLength(1);
    const deny = denies[0] as {
      Action: string;
      Principal: unknown;
      Condition: Record<string, Record<string, unknown>>;
    };
    expect(deny.Action).toBe('events:PutEvents');
    expect(deny.Principal).toEqual({ AWS: '*' });
    const allowed = deny.Condition.ArnNotLike?.['aws:PrincipalArn'] as { 'Fn::GetAtt': [string, string] }[];
    const roles = Object.entries(template.findResources('AWS::Lambda::Function')).map(
      ([, r]) => (r.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
    );
    expect(allowed.map((a) => a['Fn::GetAtt'][0]).sort()).toEqual(roles.sort());
    expect(roles).toHaveLength(5);
  });

  it('lets the user name more producers, and refuses what is not a principal ARN', () => {
    const producer = 'arn:aws:iam::111111111111:role/ci-*';
    const { template } = synthProvisioner({ noticeProducers: [producer] });
    const deny = statementsOfType(template, 'AWS::Events::EventBusPolicy', 'Statement').find(
      (st) => st.Effect === 'Deny',
    ) as { Condition: { ArnNotLike: { 'aws:PrincipalArn': unknown[] } } };
    expect(deny.Condition.ArnNotLike['aws:PrincipalArn']).toContain(producer);
    expect(() => synthProvisioner({ noticeProducers: ['ci-role'] })).toThrow(
      "noticeProducers: 'ci-role' is not an IAM principal ARN",
    );
  });

  it('denies SendMessage on each queue to all but EventBridge delivering for its own rules', () => {
    const template = exampleTemplate();
    const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy'));
    const denyOf = (queuePrefix: string) =>
      policies
        .filter((p) => JSON.stringify(p.Properties.Queues).includes(queuePrefix))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, unknown>[])
        .find((st) => st.Effect === 'Deny' && st.Action === 'sqs:SendMessage') as
        | { Principal: unknown; Condition: { ArnNotEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [string, string] }[] } } }
        | undefined;
    const rules = template.findResources('AWS::Events::Rule');
    const ruleIds = (match: (r: Record<string, unknown>) => boolean) =>
      Object.entries(rules)
        .filter(([, r]) => match(r.Properties))
        .map(([id]) => id)
        .sort();
    const provision = denyOf('ProvisionerEventsProvisionQueue');
    expect(provision?.Principal).toEqual({ AWS: '*' });
    expect(provision?.Condition.ArnNotEquals['aws:SourceArn'].map((a) => a['Fn::GetAtt'][0])).toEqual(
      ruleIds((p) => JSON.stringify(p.EventPattern ?? {}).includes('PodsUnschedulable')),
    );
    const interruption = denyOf('ProvisionerEventsInterruptionQueue');
    expect(interruption?.Condition.ArnNotEquals['aws:SourceArn'].map((a) => a['Fn::GetAtt'][0]).sort()).toEqual(
      ruleIds((p) => JSON.stringify(p.Targets ?? []).includes('ProvisionerEventsInterruptionQueue')),
    );
    expect(interruption?.Condition.ArnNotEquals['aws:SourceArn']).toHaveLength(5);
  });
  it('closes the dead-letter queues: redrive from their own source queue, sends from the provision function only', () => {
    const template = exampleTemplate();
    const queues = Object.entries(template.findResources('AWS::SQS::Queue'));
    const queueId = (name: string) => queues.find(([id]) => id.includes(name))?.[0] ?? '';
    const redrive = (name: string) =>
      JSON.stringify(queues.find(([id]) => id === queueId(name))?.[1].Properties.RedriveAllowPolicy ?? {});
    expect(redrive('ProvisionDeadLetterQueue')).toMatch(
      /"redrivePermission":"byQueue".*:karpless-demo-provision\.fifo"/,
    );
    expect(redrive('InterruptionDeadLetterQueue')).toMatch(
      /"redrivePermission":"byQueue".*:karpless-demo-interruption"/,
    );
    const denyOf = (name: string) =>
      Object.values(template.findResources('AWS::SQS::QueuePolicy'))
        .filter((p) => JSON.stringify(p.Properties.Queues).includes(queueId(name)))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, unknown>[])
        .find((st) => st.Effect === 'Deny' && st.Action === 'sqs:SendMessage');
    const provisionRole = Object.keys(template.findResources('AWS::IAM::Role')).find((id) =>
      id.startsWith('ProvisionerProvisionServiceRole'),
    );
    // Requests an IAM principal makes (SQS's own redrive has none), but the provision role's.
    expect(denyOf('ProvisionDeadLetterQueue')).toMatchObject({
      Principal: { AWS: '*' },
      Condition: {
        Null: { 'aws:PrincipalArn': 'false' },
        ArnNotEquals: { 'aws:PrincipalArn': [{ 'Fn::GetAtt': [provisionRole, 'Arn'] }] },
      },
    });
    expect(denyOf('InterruptionDeadLetterQueue')).toMatchObject({
      Principal: { AWS: '*' },
      Condition: { Null: { 'aws:PrincipalArn': 'false' } },
    });
    expect(denyOf('InterruptionDeadLetterQueue')?.Condition).not.toHaveProperty('ArnNotEquals');
  });
});

describe('names from any EKS cluster name', () => {
  it('turns underscores into hyphens in the stack name', () => {
    expect(stackName('prod_eu_1')).toBe('Karpless-prod-eu-1');
    expect(stackName('demo')).toBe('Karpless-demo');
  });

  it('keeps every queue name within 80 characters, long names apart', () => {
    const long = `c${'x'.repeat(98)}1`;
    const other = `c${'x'.repeat(98)}2`;
    expect(resourcePrefix('demo')).toBe('karpless-demo');
    expect(`${resourcePrefix(long)}-provision-dlq.fifo`).toHaveLength(80);
    expect(resourcePrefix(long)).not.toBe(resourcePrefix(other));
    const { template } = synthProvisioner({ clusterName: long });
    const names = Object.values(template.findResources('AWS::SQS::Queue')).map((q) => String(q.Properties.QueueName));
    expect(names).toHaveLength(4);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(80);
  });

  it('synthesizes a cfn-lint-clean stack for a 100-character name with underscores', () => {
    const clusterName = `a_${'b'.repeat(97)}c`;
    const outdir = mkdtempSync(join(tmpdir(), 'karpless-names-'));
    try {
      const built = buildKarplessApp(
        { clusterName, manifests: ['examples/manifests'] },
        { outdir, context: NO_BUNDLING },
      );
      built.app.synth();
      const template = join(outdir, `${stackName(clusterName)}.template.json`);
      expect(JSON.parse(readFileSync(template, 'utf8')).Resources).toBeDefined();
      const run = spawnSync('cfn-lint', ['--ignore-checks', 'W3005', '--', template], { encoding: 'utf8' });
      if (run.error) throw new Error(`cfn-lint could not run (${run.error.message}): pip install cfn-lint`);
      expect(run.stdout + run.stderr).toBe('');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});

describe('the node role given by ARN', () => {
  it('uses the existing role: nothing created, its ARN in the access entry and PassRole', () => {
    const arn = 'arn:aws:iam::111111111111:role/nodes/KarpenterNodeRole-demo';
    const configuration = loadDeployConfiguration(['examples/manifests']);
    for (const nodeClass of configuration.nodeClasses) nodeClass.spec.role = arn;
    const { template } = synthProvisioner({ manifests: configuration });
    const roles = Object.values(template.findResources('AWS::IAM::Role')).map((r) => r.Properties.RoleName);
    expect(roles).not.toContain(arn);
    template.hasResourceProperties('AWS::EKS::AccessEntry', { PrincipalArn: arn, Type: 'EC2_LINUX' });
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).toContain(arn);
  });
});

describe('reserved concurrency', () => {
  it('reserves one for the watcher, drift and gc by default, and none when turned off', () => {
    const reserved = (template: ReturnType<typeof exampleTemplate>) =>
      Object.values(template.findResources('AWS::Lambda::Function')).filter(
        (f) => f.Properties.ReservedConcurrentExecutions !== undefined,
      ).length;
    expect(reserved(exampleTemplate())).toBe(3);
    expect(reserved(synthProvisioner({ reservedConcurrency: false }).template)).toBe(0);
  });
});

describe('-c context', () => {
  const contextOf = (context: Record<string, unknown>) => operationsContext(new App({ context }).node);

  it('reads reservedConcurrency and noticeProducers', () => {
    expect(contextOf({})).toEqual({});
    expect(contextOf({ reservedConcurrency: 'false' })).toEqual({ reservedConcurrency: false });
    expect(contextOf({ reservedConcurrency: true })).toEqual({ reservedConcurrency: true });
    expect(contextOf({ noticeProducers: 'arn:aws:iam::1:role/a, arn:aws:iam::1:role/b' })).toEqual({
      noticeProducers: ['arn:aws:iam::1:role/a', 'arn:aws:iam::1:role/b'],
    });
  });

  it('refuses a value that means nothing, naming the key', () => {
    expect(() => contextOf({ reservedConcurrency: 'no' })).toThrow(
      'context reservedConcurrency is "no": use -c reservedConcurrency=true or -c reservedConcurrency=false',
    );
    expect(() => contextOf({ nodeRole: 'not a role' })).toThrow(
      /context nodeRole is "not a role": give an existing IAM role/,
    );
    expect(() => contextOf({ nodeAccessEntries: 'nope' })).toThrow(/context nodeAccessEntries is "nope"/);
    expect(contextOf({ configuration: 'cluster' })).toEqual({ configuration: 'cluster' });
    expect(contextOf({ nodeRepair: 'true', spotToSpotConsolidation: 'false' })).toEqual({
      nodeRepair: true,
      spotToSpotConsolidation: false,
    });
    expect(() => contextOf({ nodeRepair: 'yes' })).toThrow(
      'context nodeRepair is "yes": use -c nodeRepair=true or -c nodeRepair=false',
    );
    expect(() => contextOf({ configuration: 'git' })).toThrow(
      /context configuration is "git": use -c configuration=cluster/,
    );
  });

  it('reads an existing node role (name or ARN) and nodeAccessEntries, for clusters migrating from Karpenter', () => {
    expect(contextOf({ nodeRole: 'KarpenterNodeRole-demo', nodeAccessEntries: 'false' })).toEqual({
      nodeRole: 'KarpenterNodeRole-demo',
      nodeAccessEntries: false,
    });
    const arn = 'arn:aws:iam::111111111111:role/eks/KarpenterNodeRole-demo';
    expect(contextOf({ nodeRole: arn })).toEqual({ nodeRole: arn });
  });

  it("synthesizes a Karpenter user's stack without creating the node role or its access entry", () => {
    const app = new App({ context: { ...NO_BUNDLING, nodeRole: 'KarpenterNodeRole-demo', nodeAccessEntries: false } });
    const { stack } = buildKarplessApp(
      { clusterName: 'demo', manifests: ['examples/manifests'], ...operationsContext(app.node) },
      app,
    );
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::IAM::InstanceProfile', 0);
    expect(
      Object.keys(template.findResources('AWS::IAM::Role', { Properties: { RoleName: Match.anyValue() } })),
    ).toEqual([]);
    template.resourcePropertiesCountIs('AWS::EKS::AccessEntry', { Type: 'EC2_LINUX' }, 0);
    template.resourcePropertiesCountIs('AWS::EKS::AccessEntry', { Type: 'EC2_WINDOWS' }, 0);
  });
});
