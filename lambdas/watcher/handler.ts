// watcher λ (scheduled each minute): list and watch pending pods and nodes until shortly before the
// timeout; put PodsUnschedulable notices, register nodes, finish node deletions.
// A run that failed at its job (could not start, never listed, left pending pods without a notice)
// throws after logging, so Lambda's Errors metric and the stack's alarm see it; the schedule's
// next run starts over (no async retry: the stack sets zero).

import type { Context } from 'aws-lambda';
import { SERVICE } from '../../shared/contracts';
import { errorMessage } from '../../shared/providers/aws-errors';
import { beforeActing } from '../../shared/runtime/deps/configuration';
import { watcherDeps } from '../../shared/runtime/deps/watcher';
import { buildRuntime } from '../../shared/runtime/environment';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';
import { RunFailedError } from '../../shared/runtime/telemetry';
import { runWatcher, type WatcherDeps, type WatcherReport } from '../../shared/runtime/watcher';

/** Time left for the last notice and the log lines after the watch stops. */
export const STOP_MARGIN_MS = 5_000;

export function createHandler(
  load: () => Promise<WatcherDeps>,
  tools: Powertools,
  beforeActing: () => Promise<void> = async () => {},
) {
  return async (_event: unknown, context: Context): Promise<WatcherReport> => {
    tools.logger.addContext(context);
    try {
      const deps = await load();
      await beforeActing();
      const stopAt = deps.clock() + context.getRemainingTimeInMillis() - STOP_MARGIN_MS;
      const report = await runWatcher(deps, { stopAt });
      tools.logger.info('watcher finished', { ...report });
      if (report.failed.length > 0) throw new RunFailedError(`watcher run failed: ${report.failed.join('; ')}`);
      return report;
    } catch (error) {
      tools.logger.error('watcher failed', { error: errorMessage(error) });
      throw error;
    } finally {
      tools.metrics.publishStoredMetrics();
    }
  };
}

const tools = powertools(SERVICE.watcher);
const runtime = once(async () => buildRuntime());
export const handler = createHandler(
  once(async () => watcherDeps(await runtime(), tools.telemetry)),
  tools,
  beforeActing(runtime, tools.telemetry),
);
