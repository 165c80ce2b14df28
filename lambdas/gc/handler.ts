// gc λ (scheduled, every 2 minutes by default): terminate instances that never registered or lost
// their Node, delete Nodes whose instance is gone, launch templates and instance profiles the
// configuration no longer has, and hand empty nodes to the termination flow (shared/runtime/gc.ts).
// Every run starts from fresh lists, so a failed run is left to the next one, but it throws after
// logging (Lambda's Errors metric and the stack's alarm see it). A run in which only some deletions
// failed is not failed: those count in the ActionFailures metric.
//
// The same function backs the stack's uninstall resource (Custom::KarplessUninstall): on `cdk
// destroy` CloudFormation invokes it with a Delete event, and it removes the instance profiles and
// launch templates karpless created (shared/runtime/uninstall.ts) before the node role goes.

import type { Context } from 'aws-lambda';
import { SERVICE } from '../../shared/contracts';
import { errorMessage } from '../../shared/providers/aws-errors';
import {
  type CustomResourceEvent,
  type CustomResourceResponse,
  isCustomResourceEvent,
  respond,
  type SendResponse,
} from '../../shared/providers/cfn-response';
import { beforeActing } from '../../shared/runtime/deps/configuration';
import { gcDeps, uninstallDeps } from '../../shared/runtime/deps/gc';
import { buildRuntime } from '../../shared/runtime/environment';
import { type GcDeps, type GcReport, gcRunFailure, runGarbageCollection } from '../../shared/runtime/gc';
import { once, type Powertools, powertools } from '../../shared/runtime/powertools';
import { RunFailedError } from '../../shared/runtime/telemetry';
import { runUninstall, type UninstallDeps, uninstallSummary } from '../../shared/runtime/uninstall';

export function createHandler(
  load: () => Promise<GcDeps>,
  tools: Powertools,
  beforeActing: () => Promise<void> = async () => {},
) {
  return async (_event: unknown, context: Context): Promise<GcReport> => {
    tools.logger.addContext(context);
    try {
      const deps = await load();
      await beforeActing();
      const report = await runGarbageCollection(deps);
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

/**
 * Create and Update do nothing; Delete (the stack going away, since the physical id never changes)
 * cleans up. CloudFormation hears back whatever happens: a cleanup that partly failed is reported as
 * SUCCESS with what is left, so `cdk destroy` goes on and says what to remove by hand.
 */
export function createStackEventHandler(
  loadUninstall: () => Promise<UninstallDeps>,
  tools: Powertools,
  send?: SendResponse,
) {
  return async (event: CustomResourceEvent, context: Context): Promise<void> => {
    tools.logger.addContext(context);
    await respond(event, await stackEventResponse(event, loadUninstall, tools), send);
  };
}

async function stackEventResponse(
  event: CustomResourceEvent,
  loadUninstall: () => Promise<UninstallDeps>,
  tools: Powertools,
): Promise<CustomResourceResponse> {
  const physicalId = event.PhysicalResourceId ?? `${event.StackId}/${event.LogicalResourceId}`;
  let response: CustomResourceResponse = { Status: 'SUCCESS', Reason: 'nothing to do', PhysicalResourceId: physicalId };
  try {
    if (event.RequestType === 'Delete') {
      const report = await runUninstall(await loadUninstall());
      response = {
        ...response,
        Reason: uninstallSummary(report),
        Data: { StillRunning: report.stillRunning.join(','), Failed: String(report.failed.length) },
      };
    }
  } catch (error) {
    tools.logger.error('uninstall failed', { error: errorMessage(error) });
    response = {
      ...response,
      Reason: `uninstall failed, remove karpless's instance profiles and launch templates by hand: ${errorMessage(error)}`,
    };
  }
  return response;
}

const tools = powertools(SERVICE.gc);
const runtime = once(async () => buildRuntime());
const scheduled = createHandler(
  once(async () => gcDeps(await runtime(), tools.telemetry)),
  tools,
  beforeActing(runtime, tools.telemetry),
);
const stackEvent = createStackEventHandler(
  once(async () => uninstallDeps(await runtime(), tools.telemetry)),
  tools,
);
export const handler = (event: unknown, context: Context): Promise<GcReport | undefined> =>
  isCustomResourceEvent(event) ? stackEvent(event, context).then(() => undefined) : scheduled(event, context);
