// What makes the stack operable in a real account: failures that page someone (alarms on what
// Lambda's own metrics cannot see), bounded retries, and a closed trust boundary.

import { Duration } from 'aws-cdk-lib';
import { describe, expect, it, vi } from 'vitest';
import { METRIC, METRICS_NAMESPACE, SERVICE } from '../../shared/contracts';
import { exampleTemplate, synthProvisioner } from './stack';

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
