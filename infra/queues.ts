// The queues and rules that carry events to the functions. Interruption events come from the
// default bus (reference §6: five rules, source + detail-type only); PodsUnschedulable notices come
// from karpless's own bus into a FIFO queue with one message group per cluster, so provisioning
// decisions for a cluster are made one at a time.
//
// The trust boundary: the notice bus takes PutEvents only from karpless's own function roles and the
// principals the user lists; each queue refuses SendMessage from anyone but EventBridge delivering
// for one of its own rules (an explicit Deny, so an identity policy allowing sqs:SendMessage on *
// does not reach them either); each dead-letter queue takes redrives from its own source queue only,
// and sends from no IAM principal but the provision function (its DLQ, with the reason).

import { createHash } from 'node:crypto';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Queue, QueueEncryption, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DETAIL_TYPE, EVENT_SOURCE, INTERRUPTION_RULES } from '../shared/contracts';

/** Karpenter's interruption queue keeps messages 5 minutes: an older warning is past acting on. */
export const INTERRUPTION_RETENTION = Duration.seconds(300);

/** SQS queue names: at most 80 characters, `.fifo` included. */
const MAX_QUEUE_NAME = 80;
/** The longest name suffix of the queues named after the cluster. */
const LONGEST_QUEUE_SUFFIX = '-provision-dlq.fifo';

/**
 * `karpless-<cluster>`, the prefix of the queue and bus names. An EKS name may have 100
 * characters, a queue name 80: past that the cluster name is cut and a hash of the whole name keeps
 * two long names that share a beginning apart.
 */
export function resourcePrefix(clusterName: string): string {
  const plain = `karpless-${clusterName}`;
  if (plain.length + LONGEST_QUEUE_SUFFIX.length <= MAX_QUEUE_NAME) return plain;
  const hash = createHash('sha256').update(clusterName).digest('hex').slice(0, 8);
  return `${plain.slice(0, MAX_QUEUE_NAME - LONGEST_QUEUE_SUFFIX.length - hash.length - 1)}-${hash}`;
}

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

/**
 * A dead-letter queue only its source queue may redrive into. The source's ARN is built from its
 * name, not referenced: the source's RedrivePolicy already references this queue (a cycle otherwise).
 */
function dlq(scope: Construct, id: string, queueName: string, sourceQueueName: string, fifo: boolean): Queue {
  const source = Stack.of(scope).formatArn({ service: 'sqs', resource: sourceQueueName });
  return new Queue(scope, id, {
    queueName,
    ...(fifo ? { fifo: true } : {}),
    redriveAllowPolicy: {
      redrivePermission: RedrivePermission.BY_QUEUE,
      sourceQueues: [Queue.fromQueueArn(scope, `${id}Source`, source)],
    },
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

    const prefix = resourcePrefix(props.clusterName);
    this.interruptionDeadLetterQueue = dlq(
      this,
      'InterruptionDeadLetterQueue',
      `${prefix}-interruption-dlq`,
      `${prefix}-interruption`,
      false,
    );
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
    this.provisionDeadLetterQueue = dlq(
      this,
      'ProvisionDeadLetterQueue',
      `${prefix}-provision-dlq.fifo`,
      `${prefix}-provision.fifo`,
      true,
    );
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
    onlyRulesSend(this.interruptionQueue, this.interruptionRules);
    onlyRulesSend(this.provisionQueue, [this.noticeRule]);
  }

  /**
   * Closes the dead-letter queues to senders: an IAM principal may send to the provision DLQ only if
   * listed (the provision function, which moves a record there with its reason after its last
   * attempt), and to the interruption DLQ not at all. SQS's own moves of a source queue's messages
   * are made by no IAM principal (no aws:PrincipalArn), so the Deny does not reach them.
   */
  restrictDeadLetterSenders(provisionSenders: readonly string[]): void {
    onlyPrincipalsSend(this.provisionDeadLetterQueue, provisionSenders);
    onlyPrincipalsSend(this.interruptionDeadLetterQueue, []);
  }

  /**
   * Closes the notice bus to every principal but these (IAM role or user ARNs, `*` wildcards
   * allowed): karpless's own function roles and the producers the user lists.
   */
  restrictNoticeProducers(principalArns: readonly string[]): void {
    this.noticeBus.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyKarplessAndListedProducers',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['events:PutEvents'],
        resources: [this.noticeBus.eventBusArn],
        conditions: { ArnNotLike: { 'aws:PrincipalArn': [...principalArns] } },
      }),
    );
  }
}

/**
 * Denies SendMessage to all but EventBridge delivering for these rules. A request without
 * aws:SourceArn (any IAM principal sending directly) fails ArnNotEquals too, so it is denied.
 */
function onlyRulesSend(queue: Queue, rules: readonly Rule[]): void {
  queue.addToResourcePolicy(
    new PolicyStatement({
      sid: 'OnlyItsEventBridgeRulesSend',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: { ArnNotEquals: { 'aws:SourceArn': rules.map((r) => r.ruleArn) } },
    }),
  );
}

/** Denies SendMessage to every IAM principal but these (none: every IAM principal). */
function onlyPrincipalsSend(queue: Queue, principalArns: readonly string[]): void {
  queue.addToResourcePolicy(
    new PolicyStatement({
      sid: 'OnlyKarplessSends',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: {
        Null: { 'aws:PrincipalArn': 'false' },
        ...(principalArns.length > 0 ? { ArnNotEquals: { 'aws:PrincipalArn': [...principalArns] } } : {}),
      },
    }),
  );
}
