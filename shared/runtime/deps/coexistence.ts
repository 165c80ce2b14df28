// The Karpenter check every acting function makes before it acts (../coexistence.ts), over the
// runtime's Kubernetes client (the one its deps use). A cluster whose RBAC predates the check (no `list leases`) is not refused: the
// check is skipped with a warning until `infra/kubernetes/rbac.yaml` is re-applied.

import { isKubeApiError } from '../../kube/types';
import { KARPENTER_LEASE, karpenterGuard } from '../coexistence';
import { kubeClient, type Runtime } from '../environment';
import type { Telemetry } from '../telemetry';

export function runningKarpenterGuard(runtime: () => Promise<Runtime>, telemetry: Telemetry): () => Promise<void> {
  let warned = false;
  return async () => {
    const { clock } = await runtime();
    const leases = async () => {
      try {
        return (
          await (await kubeClient(await runtime())).listLeases({ fieldSelector: `metadata.name=${KARPENTER_LEASE}` })
        ).items;
      } catch (error) {
        if (!isKubeApiError(error, 403)) throw error;
        if (!warned) {
          telemetry.log.warn(
            'cannot list leases, so cannot tell whether Karpenter runs: re-apply infra/kubernetes/rbac.yaml',
          );
          warned = true;
        }
        return [];
      }
    };
    await karpenterGuard(leases, clock)();
  };
}
