// What a function that decides a node must leave (drift, expiration, emptiness, consolidation) carries
// for the termination path (shared/runtime/termination.ts): it hands the node over with
// beginTermination, and its planning reads isEvictable.

import type { Pod } from '../apis/core/v1';
import type { KubeClient } from '../kube/types';
import type { Clock } from '../providers/clock';
import type { NodeClaimStore, StateStore } from '../providers/state';
import type { ClaimInstances } from './instances';
import type { Telemetry } from './telemetry';

export { NO_DEADLINE } from '../termination/plan';

export interface DrainDeps extends Telemetry {
  kube: Pick<KubeClient, 'getNode' | 'patchNode' | 'listPods' | 'evictPod' | 'deleteNode'>;
  instances: Pick<ClaimInstances, 'terminate'>;
  state: Pick<StateStore, 'getDrain' | 'putDrain' | 'deleteDrain'>;
  /** The NodeClaim records: a node handed over marks its claim's for deletion (its deadline starts there). */
  records?: Pick<NodeClaimStore, 'getNodeClaim' | 'markNodeClaimForDeletion' | 'deleteNodeClaim'>;
  clock: Clock;
  /** What disruption decisions count as a pod that has to move (shared/kube isEvictable). */
  isEvictable(pod: Pod): boolean;
}
