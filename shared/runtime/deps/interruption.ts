// What the interruption function needs beyond the common runtime: the Kubernetes client for drains,
// and the message parsers.

import { parseInterruption } from '../../interruption';
import { isEvictable } from '../../kube/client';
import { kubeClient, type Runtime } from '../environment';
import type { InterruptionDeps } from '../interruption';
import type { Telemetry } from '../telemetry';

export async function interruptionDeps(
  runtime: Runtime,
  telemetry: Telemetry,
): Promise<Omit<InterruptionDeps, 'invocationDeadline'>> {
  const kube = await kubeClient(runtime);
  return {
    ...telemetry,
    cluster: runtime.settings.cluster,
    kube,
    nodeClaimObjects: kube.karpenterObjects(),
    instances: runtime.instances,
    state: runtime.state,
    records: runtime.state,
    parse(body) {
      const result = parseInterruption(body);
      if (!result.ok) throw new Error(result.error);
      return result.message;
    },
    rebalanceAction: runtime.settings.rebalanceAction,
    isEvictable,
    clock: runtime.clock,
    sleep: runtime.sleep,
  };
}
