// What every function does before it acts: the Karpenter check (./coexistence), then, where the
// configuration is read from the cluster (settings.configurationSource), the NodePools and
// EC2NodeClasses of the API server served in place of the bundled ones (../cluster-configuration).
// One source per runtime: its cache and the last valid version of each object live as long as the
// cold start.

import { ClusterConfigurationSource, serveConfiguration } from '../cluster-configuration';
import { kubeClient, type Runtime } from '../environment';
import type { Telemetry } from '../telemetry';
import { runningKarpenterGuard } from './coexistence';

const sources = new WeakMap<Runtime, ClusterConfigurationSource>();

/** Refreshes the runtime's configuration from the cluster when so configured; never throws for it. */
export async function refreshConfiguration(runtime: Runtime, telemetry: Telemetry): Promise<void> {
  if (runtime.settings.configurationSource !== 'cluster') return;
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
  serveConfiguration(runtime.config, (await source.current()).config);
}

/** The Karpenter check, then the configuration refresh: each handler's `beforeActing`. */
export function beforeActing(runtime: () => Promise<Runtime>, telemetry: Telemetry): () => Promise<void> {
  const guard = runningKarpenterGuard(runtime, telemetry);
  return async () => {
    await guard();
    await refreshConfiguration(await runtime(), telemetry);
  };
}
