// The provision queue's retry calls against moto's SQS: a failed FIFO record comes back after its
// backoff delay instead of the queue's visibility timeout, and one past its last attempt lands in the
// FIFO dead-letter queue with its reason, group and attempts. The queues are the stack's (created with
// the account's root clients); the calls are the provision function's, under its role.

import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SqsRetryQueue, sqsApi } from '../../../shared/providers/retryqueue';
import { DEAD_LETTER_ATTRIBUTE, type FailedRecord } from '../../../shared/runtime/provision-retry';
import { motoAccount } from '../helpers';
import { PROVIDER_CLUSTER, providerClients } from './roles';

// The stack's queue names (infra/queues.ts resourcePrefix; not imported, which would load aws-cdk-lib):
// the provision role may change the visibility of the one and send to the other.
const PROVISION_QUEUE = `karpless-${PROVIDER_CLUSTER}-provision`;
const PROVISION_DLQ = `karpless-${PROVIDER_CLUSTER}-provision-dlq`;

async function fifo(name: string, account = motoAccount()) {
  const created = await account.sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}.fifo`,
      Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true', VisibilityTimeout: '720' },
    }),
  );
  return created.QueueUrl ?? '';
}

describe('SqsRetryQueue (moto)', () => {
  it('makes a received record visible again after its delay, not the queue visibility timeout', async () => {
    const account = motoAccount();
    const queueUrl = await fifo(PROVISION_QUEUE, account);
    const dlqUrl = await fifo(PROVISION_DLQ, account);
    await account.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"n":1}', MessageGroupId: 'c1' }),
    );
    const first = await account.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MessageSystemAttributeNames: ['All'] }),
    );
    const message = first.Messages?.[0];
    expect(message).toBeDefined();
    const record: FailedRecord = {
      messageId: message?.MessageId ?? '',
      receiptHandle: message?.ReceiptHandle ?? '',
      body: message?.Body ?? '',
      attempts: 1,
      messageGroupId: 'c1',
    };
    // Hidden for 720 s by the receive; a zero delay makes it visible at once.
    const queue = new SqsRetryQueue(sqsApi((await providerClients(account, 'provision')).sqs), queueUrl, dlqUrl);
    await queue.retryAfter([{ record, seconds: 0 }]);
    const again = await account.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
    expect(again.Messages?.map((m) => m.Body)).toEqual(['{"n":1}']);
  });

  it('names the records it could not change', async () => {
    const account = motoAccount();
    const queueUrl = await fifo(PROVISION_QUEUE, account);
    const queue = new SqsRetryQueue(sqsApi((await providerClients(account, 'provision')).sqs), queueUrl, queueUrl);
    const record: FailedRecord = { messageId: 'm-gone', receiptHandle: 'not-a-handle', body: '{}', attempts: 1 };
    await expect(queue.retryAfter([{ record, seconds: 5 }])).rejects.toThrow(/m-gone/);
  });

  it('puts a record on the FIFO dead-letter queue with its reason, attempts and source message', async () => {
    const account = motoAccount();
    const queueUrl = await fifo(PROVISION_QUEUE, account);
    const dlqUrl = await fifo(PROVISION_DLQ, account);
    const queue = new SqsRetryQueue(sqsApi((await providerClients(account, 'provision')).sqs), queueUrl, dlqUrl);
    await queue.deadLetter(
      {
        messageId: 'm-1',
        receiptHandle: 'r',
        body: '{"detail-type":"PodsUnschedulable"}',
        attempts: 5,
        messageGroupId: 'c1',
        messageDeduplicationId: 'abc',
      },
      'CreateFleet: RequestLimitExceeded',
    );
    const dead = await account.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const message = dead.Messages?.[0];
    expect(message?.Body).toBe('{"detail-type":"PodsUnschedulable"}');
    expect(message?.Attributes?.MessageGroupId).toBe('c1');
    expect(message?.MessageAttributes?.[DEAD_LETTER_ATTRIBUTE.reason]?.StringValue).toBe(
      'CreateFleet: RequestLimitExceeded',
    );
    expect(message?.MessageAttributes?.[DEAD_LETTER_ATTRIBUTE.attempts]?.StringValue).toBe('5');
    expect(message?.MessageAttributes?.[DEAD_LETTER_ATTRIBUTE.sourceMessageId]?.StringValue).toBe('m-1');
  });
});
