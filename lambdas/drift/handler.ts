// drift λ (an `EC2 AMI State Change` rule and a schedule): re-resolve the node classes, then move
// drifted and expired nodes one step through their budgeted replacement (shared/runtime/drift.ts),
// then at most one single-node consolidation (shared/runtime/drift-consolidation.ts).
// A failed run changes nothing the next run cannot resume, so it is not retried, but it throws after
// logging: Lambda's Errors metric and the stack's alarm see it. An event it does not handle is
// ignored, not failed.

import type { Context } from 'aws-lambda';
import { SERVICE } from '../../shared/contracts';
import { errorMessage } from '../../shared/providers/aws-errors';
import { beforeActing } from '../../shared/runtime/deps/configuration';
import { driftDeps } from '../../shared/runtime/deps/drift';
import { type DriftDeps, type DriftReport, parseDriftTrigger, runDrift } from '../../shared/runtime/drift';
import { buildRuntime } from '../../shared/runtime/environment';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';

export type DriftResult = DriftReport | { ignored: string };

export function createHandler(
  load: () => Promise<DriftDeps>,
  tools: Powertools,
  beforeActing: () => Promise<void> = async () => {},
) {
  return async (event: unknown, context: Context): Promise<DriftResult> => {
    tools.logger.addContext(context);
    const trigger = parseDriftTrigger(event);
    if (!trigger) {
      tools.logger.warn('drift: not an AMI State Change or scheduled event, ignored', { event });
      return { ignored: 'not an AMI State Change or scheduled event' };
    }
    try {
      const deps = await load();
      await beforeActing();
      const report = await runDrift(deps, trigger);
      tools.logger.info('drift finished', { ...report });
      return report;
    } catch (error) {
      tools.logger.error('drift failed', { error: errorMessage(error) });
      throw error;
    } finally {
      tools.metrics.publishStoredMetrics();
    }
  };
}

const tools = powertools(SERVICE.drift);
const runtime = once(async () => buildRuntime());
export const handler = createHandler(
  once(async () => driftDeps(await runtime(), tools.telemetry)),
  tools,
  beforeActing(runtime, tools.telemetry),
);
