// What every function does before it acts: the Karpenter check (./coexistence), then, where the
// configuration is read from the cluster (settings.configurationSource), the NodePools and
// EC2NodeClasses of the API server served in place of the bundled ones (../cluster-configuration).
// One source per runtime: its cache and the last valid version of each object live as long as the
// cold start.

import { ClusterConfigurationSource, type ObservedObjects, serveConfiguration } from '../cluster-configuration';
import { kubeClient, type Runtime } from '../environment';
import type { Telemetry } from '../telemetry';
import { runningKarpenterGuard } from './coexistence';

const sources = new WeakMap<Runtime, ClusterConfigurationSource>();

async function sourceOf(runtime: Runtime, telemetry: Telemetry): Promise<ClusterConfigurationSource> {
  let source = sources.get(runtime);
  if (!source) {
    source = new ClusterConfigurationSource({
      karpenter: (await kubeClient(runtime)).karpenterObjects(),
      bundled: runtime.config,
      log: telemetry.log,
      clock: runtime.clock,
      versions: runtime.state,
    });
    sources.set(runtime, source);
  }
  return source;
}

/** Refreshes the runtime's configuration from the cluster when so configured; never throws for it. */
export async function refreshConfiguration(runtime: Runtime, telemetry: Telemetry): Promise<void> {
  if (runtime.settings.configurationSource !== 'cluster') return;
  const source = await sourceOf(runtime, telemetry);
  serveConfiguration(runtime.config, (await source.current()).config);
}

/**
 * The watcher's re-read on change: the NodePools and EC2NodeClasses its status pass listed, served
 * at once when one changed (resourceVersion), so a `kubectl apply` reaches registration and status
 * within a pass rather than the watcher's next invocation.
 */
export async function observeConfiguration(
  runtime: Runtime,
  telemetry: Telemetry,
  lists: ObservedObjects,
): Promise<void> {
  if (runtime.settings.configurationSource !== 'cluster') return;
  const read = await (await sourceOf(runtime, telemetry)).observe(lists);
  if (read) serveConfiguration(runtime.config, read.config);
}

/** The Karpenter check, then the configuration refresh: each handler's `beforeActing`. */
export function beforeActing(runtime: () => Promise<Runtime>, telemetry: Telemetry): () => Promise<void> {
  const guard = runningKarpenterGuard(runtime, telemetry);
  return async () => {
    await guard();
    await refreshConfiguration(await runtime(), telemetry);
  };
}
