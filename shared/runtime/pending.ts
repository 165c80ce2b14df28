// Which pending pods karpless provisions for (Karpenter's pod.IsProvisionable): not bound, not
// being preempted onto a node, marked Unschedulable by the kube-scheduler, not terminal, not being
// deleted, and not made by a DaemonSet or a node (those follow nodes instead of asking for them).

import type { Pod } from '../apis/core/v1';
import { controllerKind, deletionTimestamp, nominatedNodeName, podCondition } from './objects';

/** The field selector of unassigned pods: the pending candidates, listed and watched. */
export const UNASSIGNED_PODS = 'spec.nodeName=';

/** Why karpless does not provision for the pod, or undefined when it does. */
export function notProvisionableReason(pod: Pod): string | undefined {
  if (pod.spec.nodeName) return `bound to node ${pod.spec.nodeName}`;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return `finished (phase ${phase})`;
  if (deletionTimestamp(pod)) return 'terminating';
  const nominated = nominatedNodeName(pod);
  if (nominated) return `nominated to node ${nominated} by the kube-scheduler (preemption)`;
  const kind = controllerKind(pod);
  if (kind === 'DaemonSet' || kind === 'Node') return `made by a ${kind}: it follows nodes`;
  const scheduled = podCondition(pod, 'PodScheduled');
  if (scheduled?.status !== 'False' || scheduled.reason !== 'Unschedulable') {
    return 'not marked Unschedulable by the kube-scheduler (PodScheduled=False, reason Unschedulable)';
  }
  return undefined;
}

export function isProvisionable(pod: Pod): boolean {
  return notProvisionableReason(pod) === undefined;
}
