// The provision queue's failed records over SQS: ChangeMessageVisibilityBatch brings them back after
// their backoff delay, SendMessage puts one past its last attempt on the dead-letter queue with the
// reason as message attributes. Both queues are FIFO: the record keeps its group and deduplication id.

import {
  ChangeMessageVisibilityBatchCommand,
  type ChangeMessageVisibilityBatchCommandInput,
  type ChangeMessageVisibilityBatchCommandOutput,
  SendMessageCommand,
  type SendMessageCommandInput,
  type SendMessageCommandOutput,
} from '@aws-sdk/client-sqs';
import { DEAD_LETTER_ATTRIBUTE, type FailedRecord, type RetryQueuePort } from '../runtime/provision-retry';

export interface SqsApi {
  changeMessageVisibilityBatch(
    input: ChangeMessageVisibilityBatchCommandInput,
  ): Promise<ChangeMessageVisibilityBatchCommandOutput>;
  sendMessage(input: SendMessageCommandInput): Promise<SendMessageCommandOutput>;
}

interface Sender {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send is generic over every command of the client.
  send(command: any): Promise<any>;
}

export function sqsApi(client: Sender): SqsApi {
  return {
    changeMessageVisibilityBatch: (i) => client.send(new ChangeMessageVisibilityBatchCommand(i)),
    sendMessage: (i) => client.send(new SendMessageCommand(i)),
  };
}

/** ChangeMessageVisibilityBatch takes at most 10 entries. */
const BATCH = 10;

export class SqsRetryQueue implements RetryQueuePort {
  constructor(
    private readonly sqs: SqsApi,
    private readonly queueUrl: string,
    private readonly deadLetterQueueUrl: string,
  ) {}

  async retryAfter(records: readonly { record: FailedRecord; seconds: number }[]): Promise<void> {
    const failed: string[] = [];
    for (let i = 0; i < records.length; i += BATCH) {
      const entries = records.slice(i, i + BATCH).map(({ record, seconds }, j) => ({
        Id: String(i + j),
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: seconds,
      }));
      const out = await this.sqs.changeMessageVisibilityBatch({ QueueUrl: this.queueUrl, Entries: entries });
      for (const f of out.Failed ?? []) {
        const record = records[Number(f.Id)]?.record;
        failed.push(`${record?.messageId ?? f.Id}: ${f.Code ?? 'error'} ${f.Message ?? ''}`.trim());
      }
    }
    if (failed.length > 0) throw new Error(`ChangeMessageVisibilityBatch on ${this.queueUrl}: ${failed.join('; ')}`);
  }

  async deadLetter(record: FailedRecord, reason: string): Promise<void> {
    await this.sqs.sendMessage({
      QueueUrl: this.deadLetterQueueUrl,
      MessageBody: record.body,
      MessageGroupId: record.messageGroupId ?? 'karpless',
      MessageDeduplicationId: record.messageDeduplicationId ?? record.messageId,
      MessageAttributes: {
        [DEAD_LETTER_ATTRIBUTE.reason]: { DataType: 'String', StringValue: reason },
        [DEAD_LETTER_ATTRIBUTE.attempts]: { DataType: 'Number', StringValue: String(record.attempts) },
        [DEAD_LETTER_ATTRIBUTE.sourceMessageId]: { DataType: 'String', StringValue: record.messageId },
      },
    });
  }
}
