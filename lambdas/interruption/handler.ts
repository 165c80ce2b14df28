// interruption λ (SQS standard, batches of up to 10, ReportBatchItemFailures): one record at a time
// through the interruption core; a record that failed (retryable, or unparseable so that it ends in
// the DLQ after maxReceiveCount) is reported alone, the rest of the batch is not lost.

import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { SERVICE } from '../../shared/contracts';
import { errorMessage } from '../../shared/providers/aws-errors';
import { beforeActing } from '../../shared/runtime/deps/configuration';
import { interruptionDeps } from '../../shared/runtime/deps/interruption';
import { buildRuntime } from '../../shared/runtime/environment';
import { handleInterruption, type InterruptionDeps } from '../../shared/runtime/interruption';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';

/** Time left to report the batch after the last drain step. */
export const STOP_MARGIN_MS = 5_000;

export function createHandler(
  load: () => Promise<Omit<InterruptionDeps, 'invocationDeadline'>>,
  tools: Powertools,
  beforeActing: () => Promise<void> = async () => {},
) {
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    tools.logger.addContext(context);
    try {
      const loaded = await load();
      await beforeActing();
      const deps = {
        ...loaded,
        invocationDeadline: loaded.clock() + context.getRemainingTimeInMillis() - STOP_MARGIN_MS,
      };
      const record = async (r: SQSRecord) => {
        const outcome = await handleInterruption(deps, r.body);
        const fields = { messageId: r.messageId, ...outcome };
        if (outcome.status !== 'failed') return tools.logger.info('interruption record', fields);
        tools.logger.error('interruption record failed', fields);
        throw new Error(outcome.reason);
      };
      return await processPartialResponse(event, record, new BatchProcessor(EventType.SQS), {
        context,
        throwOnFullBatchFailure: false,
      });
    } catch (error) {
      tools.logger.error('interruption batch failed, every record will be retried', { error: errorMessage(error) });
      return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
    } finally {
      tools.metrics.publishStoredMetrics();
    }
  };
}

const tools = powertools(SERVICE.interruption);
const runtime = once(async () => buildRuntime());
export const handler = createHandler(
  once(async () => interruptionDeps(await runtime(), tools.telemetry)),
  tools,
  beforeActing(runtime, tools.telemetry),
);
