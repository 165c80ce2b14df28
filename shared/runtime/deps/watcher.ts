// What the watcher function needs beyond the common runtime: the Kubernetes client, the notice
// publisher and what registration must know of NodePools and launched instance types.

import { isEvictable } from '../../kube/client';
import { claimKnowledge, instanceTypeSource, kubeClient, noticePublisher, type Runtime } from '../environment';
import type { Telemetry } from '../telemetry';
import type { WatcherDeps } from '../watcher';

export async function watcherDeps(runtime: Runtime, telemetry: Telemetry): Promise<WatcherDeps> {
  const kube = await kubeClient(runtime);
  const claims = claimKnowledge(runtime, instanceTypeSource(runtime, telemetry));
  await claims.prepare();
  return {
    ...telemetry,
    kube,
    instances: runtime.instances,
    state: runtime.state,
    notices: noticePublisher(runtime),
    claims,
    isEvictable,
    clock: runtime.clock,
    sleep: runtime.sleep,
  };
}
