// provision λ (SQS FIFO, one message group per cluster): the batch's PodsUnschedulable notices →
// one decision → NodeClaims launched. A failure retrying may cure returns the whole batch (FIFO
// order), a malformed notice is logged and acknowledged.

import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { errorMessage } from '../../shared/providers/aws-errors';
import { provisionDeps } from '../../shared/runtime/deps/provision';
import { buildRuntime } from '../../shared/runtime/environment';
import { parseProvisionRecords } from '../../shared/runtime/notices';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';
import { type ProvisionDeps, provision } from '../../shared/runtime/provision';

export function createHandler(load: () => Promise<ProvisionDeps>, tools: Powertools) {
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    tools.logger.addContext(context);
    try {
      const deps = await load();
      const { batch, rejected } = parseProvisionRecords(event.Records, deps.cluster);
      for (const r of rejected) tools.logger.error('malformed notice acknowledged', { ...r });
      if (batch) await provision(deps, batch);
      return { batchItemFailures: [] };
    } catch (error) {
      tools.logger.error('provision failed, the batch will be retried', { error: errorMessage(error) });
      return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
    } finally {
      tools.metrics.publishStoredMetrics();
    }
  };
}

const tools = powertools('karpless-provision');
export const handler = createHandler(
  once(async () => provisionDeps(buildRuntime(), tools.telemetry)),
  tools,
);
