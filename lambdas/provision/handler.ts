// provision λ (SQS FIFO, one message group per cluster): the batch's PodsUnschedulable notices →
// one decision → NodeClaims launched (parts of a split notice kept until their observation is
// complete, for a bounded time: notice-parts.ts). A malformed notice is logged and acknowledged. A failed
// decision or launch returns the whole batch (FIFO order) after a backoff of seconds, and after the
// last attempt each record goes to the dead-letter queue with the reason (shared/runtime/provision-retry.ts).

import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { SERVICE } from '../../shared/contracts';
import { errorMessage } from '../../shared/providers/aws-errors';
import { beforeActing } from '../../shared/runtime/deps/configuration';
import { provisionDeps, provisionRetryQueue } from '../../shared/runtime/deps/provision';
import { buildRuntime } from '../../shared/runtime/environment';
import { gatherNotices } from '../../shared/runtime/notice-parts';
import { parseNoticeRecords, provisionBatchOf } from '../../shared/runtime/notices';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';
import { type ProvisionDeps, provision } from '../../shared/runtime/provision';
import { type FailedRecord, type RetryQueuePort, settleFailedBatch } from '../../shared/runtime/provision-retry';

export function failedRecord(record: SQSRecord): FailedRecord {
  // Lambda always sets attributes; a hand-built event may not.
  const attributes: Partial<SQSRecord['attributes']> = record.attributes ?? {};
  const attempts = Number(attributes.ApproximateReceiveCount);
  return {
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    body: record.body,
    attempts: Number.isFinite(attempts) && attempts > 0 ? attempts : 1,
    ...(attributes.MessageGroupId ? { messageGroupId: attributes.MessageGroupId } : {}),
    ...(attributes.MessageDeduplicationId ? { messageDeduplicationId: attributes.MessageDeduplicationId } : {}),
  };
}

export function createHandler(
  load: () => Promise<ProvisionDeps>,
  tools: Powertools,
  retryQueue: () => RetryQueuePort,
  beforeActing: () => Promise<void> = async () => {},
) {
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    tools.logger.addContext(context);
    try {
      const deps = await load();
      await beforeActing();
      const { details, rejected } = parseNoticeRecords(event.Records, deps.cluster);
      for (const r of rejected) tools.logger.error('malformed notice acknowledged', { ...r });
      // Parts of a split notice wait (bounded) for the rest of their observation: one plan for all.
      const gathered = deps.noticeParts
        ? await gatherNotices({ parts: deps.noticeParts, clock: deps.clock, log: deps.log }, details)
        : undefined;
      const batch = provisionBatchOf(gathered ? gathered.ready : details);
      // A hand-built context (tests, local runs) may not say how much time is left: then all of it is.
      const remainingMs =
        typeof context?.getRemainingTimeInMillis === 'function' ? () => context.getRemainingTimeInMillis() : undefined;
      if (batch) await provision(deps, batch, remainingMs ? { remainingMs } : {});
      await gathered?.planned();
      return { batchItemFailures: [] };
    } catch (error) {
      const reason = errorMessage(error);
      tools.logger.error('provision failed, the batch will be retried', { error: reason });
      try {
        const records = event.Records.map(failedRecord);
        const settled = await settleFailedBatch(records, reason, retryQueue(), tools.telemetry.log);
        if (settled.retried.length > 0) tools.logger.info('provision retry scheduled', { retried: settled.retried });
        return { batchItemFailures: settled.failures.map((itemIdentifier) => ({ itemIdentifier })) };
      } catch (settling) {
        // Without the retry queue the batch still comes back, after the queue's visibility timeout.
        tools.logger.error('scheduling the retry failed', { error: errorMessage(settling) });
        return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
      }
    } finally {
      tools.metrics.publishStoredMetrics();
    }
  };
}

const tools = powertools(SERVICE.provision);
let queue: RetryQueuePort | undefined;
const runtime = once(async () => buildRuntime());
export const handler = createHandler(
  once(async () => provisionDeps(await runtime(), tools.telemetry)),
  tools,
  () => {
    queue ??= provisionRetryQueue();
    return queue;
  },
  beforeActing(runtime, tools.telemetry),
);
