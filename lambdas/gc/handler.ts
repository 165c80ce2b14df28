// gc λ (scheduled, every 2 minutes by default): terminate instances that never registered or lost
// their Node, delete Nodes whose instance is gone, launch templates and instance profiles the
// configuration no longer has, and hand empty nodes to the termination flow (shared/runtime/gc.ts).
// Every run starts from fresh lists, so a failed run is left to the next one, but it throws after
// logging (Lambda's Errors metric and the stack's alarm see it). A run in which only some deletions
// failed is not failed: those count in the ActionFailures metric.

import type { Context } from 'aws-lambda';
import { SERVICE } from '../../shared/contracts';
import { errorMessage } from '../../shared/providers/aws-errors';
import { gcDeps } from '../../shared/runtime/deps/gc';
import { buildRuntime } from '../../shared/runtime/environment';
import { type GcDeps, type GcReport, gcRunFailure, runGarbageCollection } from '../../shared/runtime/gc';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';
import { RunFailedError } from '../../shared/runtime/telemetry';

export function createHandler(load: () => Promise<GcDeps>, tools: Powertools) {
  return async (_event: unknown, context: Context): Promise<GcReport> => {
    tools.logger.addContext(context);
    try {
      const report = await runGarbageCollection(await load());
      tools.logger.info('gc finished', {
        deleted: report.deleted.length,
        failed: report.failed,
        emptiness: report.emptiness,
      });
      const failure = gcRunFailure(report);
      if (failure) throw new RunFailedError(`gc run failed: ${failure}`);
      return report;
    } catch (error) {
      tools.logger.error('gc failed', { error: errorMessage(error) });
      throw error;
    } finally {
      tools.metrics.publishStoredMetrics();
    }
  };
}

const tools = powertools(SERVICE.gc);
export const handler = createHandler(
  once(async () => gcDeps(buildRuntime(), tools.telemetry)),
  tools,
);
