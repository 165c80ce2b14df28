// Which pending pods karpless provisions for (Karpenter's pod.IsProvisionable): not bound, not
// being preempted onto a node, marked Unschedulable by the kube-scheduler, not terminal, not being
// deleted, and not made by a DaemonSet or a node (those follow nodes instead of asking for them).

import type { Pod } from '../apis/core/v1';
import { controllerKind, deletionTimestamp, nominatedNodeName, podCondition } from './objects';

/** The field selector of unassigned pods: the pending candidates, listed and watched. */
export const UNASSIGNED_PODS = 'spec.nodeName=';

export function isProvisionable(pod: Pod): boolean {
  if (pod.spec.nodeName) return false;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (deletionTimestamp(pod)) return false;
  if (nominatedNodeName(pod)) return false;
  const kind = controllerKind(pod);
  if (kind === 'DaemonSet' || kind === 'Node') return false;
  const scheduled = podCondition(pod, 'PodScheduled');
  return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable';
}
