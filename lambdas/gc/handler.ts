// gc λ (scheduled, every 2 minutes by default): terminate instances that never registered or lost
// their Node, delete Nodes whose instance is gone, launch templates and instance profiles the
// configuration no longer has, and hand empty nodes to the termination flow (shared/runtime/gc.ts).
// Every run starts from fresh lists, so a failed run is logged and left to the next one.

import type { Context } from 'aws-lambda';
import { errorMessage } from '../../shared/providers/aws-errors';
import { gcDeps } from '../../shared/runtime/deps/gc';
import { buildRuntime } from '../../shared/runtime/environment';
import { type GcDeps, type GcReport, runGarbageCollection } from '../../shared/runtime/gc';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';

export function createHandler(load: () => Promise<GcDeps>, tools: Powertools) {
  return async (_event: unknown, context: Context): Promise<GcReport | { error: string }> => {
    tools.logger.addContext(context);
    try {
      const report = await runGarbageCollection(await load());
      tools.logger.info('gc finished', {
        deleted: report.deleted.length,
        failed: report.failed,
        emptiness: report.emptiness,
      });
      return report;
    } catch (error) {
      tools.logger.error('gc failed', { error: errorMessage(error) });
      return { error: errorMessage(error) };
    } finally {
      tools.metrics.publishStoredMetrics();
    }
  };
}

const tools = powertools('karpless-gc');
export const handler = createHandler(
  once(async () => gcDeps(buildRuntime(), tools.telemetry)),
  tools,
);
