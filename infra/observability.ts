// The dashboard and alarms an operator looks at first: what was decided and launched, what failed,
// and whether anything is piling up (queue age, DLQ depth, function errors), and what was disrupted.
// Beyond Lambda's own metrics, the alarms watch what a healthy cluster never shows: a watcher that
// is not running, notices put that no provision decision followed, nodes of ours that fail to
// register or never do, and gc or drift actions that keep failing.

import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IAlarmAction,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE, SERVICE } from '../shared/contracts';

export interface ObservabilityProps {
  readonly clusterName: string;
  readonly functions: Readonly<Record<string, IFunction>>;
  readonly queues: Readonly<Record<string, Queue>>;
  readonly deadLetterQueues: Readonly<Record<string, Queue>>;
  readonly alarmActions: readonly IAlarmAction[];
  /** Oldest-message age that raises the alarm. */
  readonly maxMessageAge: Duration;
  /** The watcher's schedule: no invocation in three of them raises the alarm. */
  readonly watcherInterval: Duration;
}

interface AlarmOptions {
  /** Periods looked at, and how many of them must breach (default 1 of 1). */
  readonly periods?: number;
  readonly breaching?: number;
  readonly comparison?: ComparisonOperator;
  /** What a period without data means (default: fine). */
  readonly missing?: TreatMissingData;
}

/** A metric a function puts without dimensions of its own: {service, cluster} (shared/runtime/powertools.ts). */
function functionMetric(
  service: string,
  cluster: string,
  metricName: string,
  period: Duration,
  statistic = 'Sum',
  dimensions: Record<string, string> = {},
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service, cluster, ...dimensions },
    statistic,
    period,
  });
}

// SEARCH matches the metric whatever dimensions the function's metrics logger adds (service,
// capacity type, kind), so each graph shows one line per dimension value.
function search(
  metric: string,
  statistic: 'Sum' | 'SampleCount' | 'Average' | 'Minimum' | 'p99',
  label: string,
): IMetric {
  return new MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE}} MetricName="${metric}"', '${statistic}', 300)`,
    label,
    period: Duration.minutes(5),
  });
}

export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const alarm = (
      alarmId: string,
      metric: IMetric,
      threshold: number,
      description: string,
      options: AlarmOptions = {},
    ) => {
      const created = new Alarm(this, alarmId, {
        metric,
        threshold,
        evaluationPeriods: options.periods ?? 1,
        datapointsToAlarm: options.breaching ?? options.periods ?? 1,
        comparisonOperator: options.comparison ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: options.missing ?? TreatMissingData.NOT_BREACHING,
        alarmDescription: `karpless ${props.clusterName}: ${description}`,
      });
      for (const action of props.alarmActions) created.addAlarmAction(action);
      this.alarms.push(created);
      return created;
    };
    for (const [name, queue] of Object.entries(props.deadLetterQueues)) {
      alarm(
        `${name}DeadLetters`,
        queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        1,
        `messages in the ${name} dead-letter queue: read them, fix the cause, redrive`,
      );
    }
    for (const [name, queue] of Object.entries(props.queues)) {
      alarm(
        `${name}MessageAge`,
        queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
        props.maxMessageAge.toSeconds(),
        `the ${name} queue's oldest message is older than ${props.maxMessageAge.toSeconds()}s: its function is failing or throttled`,
      );
    }
    for (const [name, fn] of Object.entries(props.functions)) {
      alarm(
        `${name}Errors`,
        fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        1,
        `the ${name} function failed`,
      );
    }

    this.pipelineAlarms(props, alarm);

    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Decision latency (ms)',
        left: [search(METRIC.decisionLatency, 'p99', 'p99'), search(METRIC.decisionLatency, 'Average', 'avg')],
      }),
      new GraphWidget({ title: 'Pods per decision', left: [search(METRIC.podsPerDecision, 'Sum', 'pods')] }),
      new GraphWidget({ title: 'Launches by capacity type', left: [search(METRIC.launches, 'Sum', 'launches')] }),
      new GraphWidget({ title: 'Capacity errors', left: [search(METRIC.capacityErrors, 'Sum', 'errors')] }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Interruptions by kind', left: [search(METRIC.interruptions, 'Sum', 'interruptions')] }),
      new GraphWidget({
        title: 'Registrations and drains',
        left: [search(METRIC.registrations, 'Sum', 'registered'), search(METRIC.drains, 'Sum', 'drained')],
      }),
      new GraphWidget({
        title: 'Queue age (s)',
        left: Object.values(props.queues).map((q) =>
          q.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
        ),
      }),
      new GraphWidget({
        title: 'Dead-letter queue depth',
        left: Object.values(props.deadLetterQueues).map((q) =>
          q.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        ),
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Disruptions by reason',
        left: [search(METRIC.disruptions, 'Sum', 'nodes disrupted')],
      }),
      new GraphWidget({
        title: 'Terminations by reason',
        left: [search(METRIC.podsDrained, 'Sum', 'pods drained')],
        right: [search(METRIC.nodesTerminated, 'Sum', 'nodes terminated')],
      }),
      new GraphWidget({
        title: 'Garbage collected by resource and reason',
        left: [search(METRIC.garbageCollected, 'Sum', 'deleted')],
      }),
      new GraphWidget({
        title: 'Function errors',
        left: Object.values(props.functions).map((f) => f.metricErrors({ period: Duration.minutes(5) })),
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Failures the next run retries',
        left: [
          search(METRIC.registrationFailures, 'Sum', 'registrations failed'),
          search(METRIC.actionFailures, 'Sum', 'gc and drift actions failed'),
        ],
      }),
      new GraphWidget({
        title: 'Notices put and decisions made',
        left: [search(METRIC.noticesPut, 'Sum', 'notices'), search(METRIC.podsPerDecision, 'SampleCount', 'decisions')],
      }),
    );
    // Why a pool rolls or not: candidates per reason, what the budgets leave, what was decided.
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Disruption-eligible nodes by pool and reason',
        left: [search(METRIC.eligibleNodes, 'Average', 'eligible')],
      }),
      new GraphWidget({
        title: 'Allowed disruptions by pool and reason',
        left: [search(METRIC.allowedDisruptions, 'Minimum', 'allowed')],
      }),
      new GraphWidget({
        title: 'Disruption decisions by pool, reason and decision',
        left: [search(METRIC.disruptionDecisions, 'Sum', 'decisions')],
      }),
    );
  }

  /** Alarms on the notice → decision → registration pipeline, which Lambda's own metrics cannot see. */
  private pipelineAlarms(
    props: ObservabilityProps,
    alarm: (id: string, metric: IMetric, threshold: number, description: string, options?: AlarmOptions) => Alarm,
  ): void {
    const cluster = props.clusterName;
    const watcher = props.functions.Watcher;
    if (watcher) {
      // A watcher that is not invoked (schedule disabled, throttled to zero, deleted) puts no
      // metric at all, so missing data is the breach here.
      const window = Duration.seconds(Math.max(300, props.watcherInterval.toSeconds() * 3));
      alarm(
        'WatcherNotRunning',
        watcher.metricInvocations({ period: window, statistic: 'Sum' }),
        1,
        `the watcher was not invoked for ${window.toMinutes()} minutes: no pending pod is noticed and no node registered`,
        { comparison: ComparisonOperator.LESS_THAN_THRESHOLD, missing: TreatMissingData.BREACHING },
      );
    }
    const quarter = Duration.minutes(15);
    alarm(
      'NoticesNotProvisioned',
      new MathExpression({
        expression: 'IF(FILL(notices, 0) > 0 AND FILL(decisions, 0) == 0, 1, 0)',
        usingMetrics: {
          notices: functionMetric(SERVICE.watcher, cluster, METRIC.noticesPut, quarter),
          decisions: functionMetric(SERVICE.provision, cluster, METRIC.podsPerDecision, quarter, 'SampleCount'),
        },
        period: quarter,
        label: 'notices put without a provision decision',
      }),
      1,
      'the watcher put notices for 15 minutes and the provision function decided nothing: the bus, the rule, the queue policy or the provision function is broken',
    );
    const five = Duration.minutes(5);
    alarm(
      'RegistrationFailures',
      functionMetric(SERVICE.watcher, cluster, METRIC.registrationFailures, five),
      1,
      'the watcher failed to register nodes of ours for 10 minutes: they keep the unregistered taint and gc terminates them after 15',
      { periods: 2 },
    );
    alarm(
      'NodesNeverRegistered',
      functionMetric(SERVICE.gc, cluster, METRIC.garbageCollected, five, 'Sum', {
        resource: 'instance',
        reason: 'RegistrationTimeout',
      }),
      1,
      'gc terminated instances that never registered as nodes: check the node role access entry, userData and the watcher',
    );
    for (const [name, service] of [
      ['Gc', SERVICE.gc],
      ['Drift', SERVICE.drift],
    ] as const) {
      alarm(
        `${name}ActionFailures`,
        functionMetric(service, cluster, METRIC.actionFailures, five),
        1,
        `${name.toLowerCase()} actions (deletions, disruption steps) kept failing for 15 minutes: see the function's log`,
        { periods: 3 },
      );
    }
  }
}
