// watcher λ (scheduled each minute): list and watch pending pods and nodes until shortly before the
// timeout; put PodsUnschedulable notices, register nodes, finish node deletions.

import type { Context } from 'aws-lambda';
import { errorMessage } from '../../shared/providers/aws-errors';
import { watcherDeps } from '../../shared/runtime/deps/watcher';
import { buildRuntime } from '../../shared/runtime/environment';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';
import { runWatcher, type WatcherDeps, type WatcherReport } from '../../shared/runtime/watcher';

/** Time left for the last notice and the log lines after the watch stops. */
export const STOP_MARGIN_MS = 5_000;

export function createHandler(load: () => Promise<WatcherDeps>, tools: Powertools) {
  return async (_event: unknown, context: Context): Promise<WatcherReport | { error: string }> => {
    tools.logger.addContext(context);
    try {
      const deps = await load();
      const stopAt = deps.clock() + context.getRemainingTimeInMillis() - STOP_MARGIN_MS;
      const report = await runWatcher(deps, { stopAt });
      tools.logger.info('watcher finished', { ...report });
      return report;
    } catch (error) {
      // The next scheduled run starts over from a fresh list: nothing is lost by giving up here.
      tools.logger.error('watcher failed', { error: errorMessage(error) });
      return { error: errorMessage(error) };
    } finally {
      tools.metrics.publishStoredMetrics();
    }
  };
}

const tools = powertools('karpless-watcher');
export const handler = createHandler(
  once(async () => watcherDeps(buildRuntime(), tools.telemetry)),
  tools,
);
