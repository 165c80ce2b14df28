// Which pending pods the provision function and the watcher provision for: the API server's pods,
// judged by the one rule (shared/workloads/provisionable.ts, Karpenter's pod.IsProvisionable) with
// a PodScheduled=False/Unschedulable condition required.

import type { Pod } from '../apis/core/v1';
import { notProvisionableReason as reasonOf } from '../workloads/provisionable';

/** The field selector of unassigned pods: the pending candidates, listed and watched. */
export const UNASSIGNED_PODS = 'spec.nodeName=';

/** Why karpless does not provision for the API server's pod, or undefined when it does. */
export function notProvisionableReason(pod: Pod): string | undefined {
  return reasonOf(pod);
}

export function isProvisionable(pod: Pod): boolean {
  return notProvisionableReason(pod) === undefined;
}
