// The queues and rules that carry events to the functions. Interruption events come from the
// default bus (reference §6: five rules, source + detail-type only); PodsUnschedulable notices come
// from karpless's own bus into a FIFO queue with one message group per cluster, so provisioning
// decisions for a cluster are made one at a time.

import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DETAIL_TYPE, EVENT_SOURCE, INTERRUPTION_RULES } from '../shared/contracts';

/** Karpenter's interruption queue keeps messages 5 minutes: an older warning is past acting on. */
export const INTERRUPTION_RETENTION = Duration.seconds(300);

/** Lambda's guidance: a visibility timeout of at least six times the consumer's timeout. */
export const VISIBILITY_FACTOR = 6;

export interface EventQueuesProps {
  readonly clusterName: string;
  readonly interruptionConsumerTimeout: Duration;
  readonly provisionConsumerTimeout: Duration;
  /** Receives before a message moves to its dead-letter queue. */
  readonly interruptionMaxReceiveCount: number;
  readonly provisionMaxReceiveCount: number;
}

function dlq(scope: Construct, id: string, queueName: string, fifo: boolean): Queue {
  return new Queue(scope, id, {
    queueName,
    ...(fifo ? { fifo: true } : {}),
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    removalPolicy: RemovalPolicy.DESTROY,
  });
}

export class EventQueues extends Construct {
  readonly noticeBus: EventBus;
  readonly provisionQueue: Queue;
  readonly provisionDeadLetterQueue: Queue;
  readonly interruptionQueue: Queue;
  readonly interruptionDeadLetterQueue: Queue;
  readonly interruptionRules: Rule[];
  readonly noticeRule: Rule;

  constructor(scope: Construct, id: string, props: EventQueuesProps) {
    super(scope, id);
    const interruptionVisibility = props.interruptionConsumerTimeout.toSeconds() * VISIBILITY_FACTOR;
    // A poison message must reach the DLQ before the 5-minute retention drops it unseen.
    if (interruptionVisibility * props.interruptionMaxReceiveCount >= INTERRUPTION_RETENTION.toSeconds()) {
      throw new Error(
        `interruption consumer timeout ${props.interruptionConsumerTimeout.toSeconds()}s is too long: ${VISIBILITY_FACTOR}× it times ${props.interruptionMaxReceiveCount} receives must stay under the ${INTERRUPTION_RETENTION.toSeconds()}s retention`,
      );
    }

    const prefix = `karpless-${props.clusterName}`;
    this.interruptionDeadLetterQueue = dlq(this, 'InterruptionDeadLetterQueue', `${prefix}-interruption-dlq`, false);
    this.interruptionQueue = new Queue(this, 'InterruptionQueue', {
      queueName: `${prefix}-interruption`,
      retentionPeriod: INTERRUPTION_RETENTION,
      visibilityTimeout: Duration.seconds(interruptionVisibility),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.interruptionDeadLetterQueue, maxReceiveCount: props.interruptionMaxReceiveCount },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.interruptionRules = INTERRUPTION_RULES.map(
      (rule) =>
        new Rule(this, `${rule.id}Rule`, {
          description: `karpless ${props.clusterName}: ${rule.detailTypes[0]} → interruption queue`,
          eventPattern: { source: [rule.source], detailType: [...rule.detailTypes] },
          targets: [new SqsQueue(this.interruptionQueue)],
        }),
    );

    this.noticeBus = new EventBus(this, 'NoticeBus', {
      eventBusName: `${prefix}-notices`,
      description: `karpless notices for ${props.clusterName}`,
    });
    this.provisionDeadLetterQueue = dlq(this, 'ProvisionDeadLetterQueue', `${prefix}-provision-dlq.fifo`, true);
    this.provisionQueue = new Queue(this, 'ProvisionQueue', {
      // Named, so that operators find them and a second stack for the same cluster fails to deploy.
      queueName: `${prefix}-provision.fifo`,
      fifo: true,
      contentBasedDeduplication: true,
      visibilityTimeout: Duration.seconds(props.provisionConsumerTimeout.toSeconds() * VISIBILITY_FACTOR),
      retentionPeriod: Duration.hours(1),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.provisionDeadLetterQueue, maxReceiveCount: props.provisionMaxReceiveCount },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.noticeRule = new Rule(this, 'PodsUnschedulableRule', {
      eventBus: this.noticeBus,
      description: `karpless ${props.clusterName}: PodsUnschedulable → provision queue`,
      eventPattern: {
        source: [EVENT_SOURCE],
        detailType: [DETAIL_TYPE.podsUnschedulable],
        detail: { cluster: [props.clusterName] },
      },
      targets: [new SqsQueue(this.provisionQueue, { messageGroupId: props.clusterName })],
    });
  }
}
