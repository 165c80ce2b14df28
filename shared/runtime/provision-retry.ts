// What happens to a provision batch that failed: Karpenter retries a failed provisioning loop in
// seconds, so the batch comes back with exponential backoff (a short visibility timeout on its
// records) rather than after the queue's 12-minute visibility timeout, and after the last attempt each
// record goes to the dead-letter queue with the reason it failed. A record the handler could not
// settle (a call here failing) falls back to the queue's own visibility timeout and redrive policy.

import { errorMessage } from '../providers/aws-errors';
import type { RuntimeLog } from './telemetry';

export interface ProvisionRetryPolicy {
  /** Receives of a record before it goes to the dead-letter queue (the queue's maxReceiveCount). */
  maxAttempts: number;
  /** Delay before the second attempt; each later one doubles it, up to maxDelaySeconds. */
  baseDelaySeconds: number;
  maxDelaySeconds: number;
}

/** 5 attempts at 0, 5, 15, 35 and 75 s (plus each attempt's own run time). */
export const PROVISION_RETRY: ProvisionRetryPolicy = { maxAttempts: 5, baseDelaySeconds: 5, maxDelaySeconds: 60 };

/** Message attributes of a record the handler moved to the dead-letter queue. */
export const DEAD_LETTER_ATTRIBUTE = {
  reason: 'karpless-failure-reason',
  attempts: 'karpless-attempts',
  sourceMessageId: 'karpless-source-message-id',
} as const;

/** SQS's limit is 256 KiB for body and attributes together: the reason keeps to a readable size. */
const MAX_REASON_CHARS = 1_000;

/** The delay before attempt `attempt + 1`, after `attempt` failed receives. */
export function retryDelaySeconds(attempt: number, policy: ProvisionRetryPolicy = PROVISION_RETRY): number {
  const exponent = Math.max(0, attempt - 1);
  return Math.min(policy.maxDelaySeconds, policy.baseDelaySeconds * 2 ** exponent);
}

/** One record of the failed batch, as the SQS event carries it. */
export interface FailedRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  /** ApproximateReceiveCount: this is attempt number `attempts`. */
  attempts: number;
  messageGroupId?: string;
  messageDeduplicationId?: string;
}

/** The two SQS calls this needs (shared/providers/retryqueue.ts). */
export interface RetryQueuePort {
  /** Makes each record visible again after its delay; throws naming the ones that failed. */
  retryAfter(records: readonly { record: FailedRecord; seconds: number }[]): Promise<void>;
  /** Sends the record to the dead-letter queue with the reason (message attributes). */
  deadLetter(record: FailedRecord, reason: string): Promise<void>;
}

export interface SettledBatch {
  /** Message ids to report as batch item failures (they stay in the queue). */
  failures: string[];
  retried: { messageId: string; attempt: number; delaySeconds: number }[];
  deadLettered: string[];
}

/**
 * Settles the records of a failed batch: those past the last attempt go to the dead-letter queue
 * with `reason` and are acknowledged; the rest come back after their backoff delay.
 */
export async function settleFailedBatch(
  records: readonly FailedRecord[],
  reason: string,
  queue: RetryQueuePort,
  log: RuntimeLog,
  policy: ProvisionRetryPolicy = PROVISION_RETRY,
): Promise<SettledBatch> {
  const settled: SettledBatch = { failures: [], retried: [], deadLettered: [] };
  const shortReason = reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS - 1)}…` : reason;
  const retrying: { record: FailedRecord; seconds: number }[] = [];
  for (const record of records) {
    if (record.attempts < policy.maxAttempts) {
      retrying.push({ record, seconds: retryDelaySeconds(record.attempts, policy) });
      continue;
    }
    try {
      await queue.deadLetter(record, shortReason);
      settled.deadLettered.push(record.messageId);
      log.error('provision notice moved to the dead-letter queue', {
        messageId: record.messageId,
        attempts: record.attempts,
        reason: shortReason,
      });
    } catch (error) {
      // Still reported as failed: the queue's redrive policy moves it on its next receive.
      settled.failures.push(record.messageId);
      log.error('moving a notice to the dead-letter queue failed', {
        messageId: record.messageId,
        error: errorMessage(error),
      });
    }
  }
  for (const { record } of retrying) settled.failures.push(record.messageId);
  if (retrying.length > 0) {
    try {
      await queue.retryAfter(retrying);
      for (const { record, seconds } of retrying) {
        settled.retried.push({ messageId: record.messageId, attempt: record.attempts, delaySeconds: seconds });
      }
    } catch (error) {
      log.warn('shortening the retry delay failed: the batch comes back after the queue visibility timeout', {
        error: errorMessage(error),
      });
    }
  }
  return settled;
}
