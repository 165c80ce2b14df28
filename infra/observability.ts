// The dashboard and alarms an operator looks at first: what was decided and launched, what failed,
// and whether anything is piling up (queue age, DLQ depth, function errors), and what was disrupted.

import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IAlarmAction,
  type IMetric,
  MathExpression,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE } from '../shared/contracts';

export interface ObservabilityProps {
  readonly clusterName: string;
  readonly functions: Readonly<Record<string, IFunction>>;
  readonly queues: Readonly<Record<string, Queue>>;
  readonly deadLetterQueues: Readonly<Record<string, Queue>>;
  readonly alarmActions: readonly IAlarmAction[];
  /** Oldest-message age that raises the alarm. */
  readonly maxMessageAge: Duration;
}

// SEARCH matches the metric whatever dimensions the function's metrics logger adds (service,
// capacity type, kind), so each graph shows one line per dimension value.
function search(metric: string, statistic: 'Sum' | 'Average' | 'p99', label: string): IMetric {
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
    const alarm = (alarmId: string, metric: IMetric, threshold: number, description: string) => {
      const created = new Alarm(this, alarmId, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: `karpless ${props.clusterName}: ${description}`,
      });
      for (const action of props.alarmActions) created.addAlarmAction(action);
      this.alarms.push(created);
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
        title: 'Garbage collected by resource and reason',
        left: [search(METRIC.garbageCollected, 'Sum', 'deleted')],
      }),
      new GraphWidget({
        title: 'Function errors',
        left: Object.values(props.functions).map((f) => f.metricErrors({ period: Duration.minutes(5) })),
      }),
    );
  }
}
