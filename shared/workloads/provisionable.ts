// Which unbound pods a plan provisions for, as Karpenter's IsProvisionable decides from what the
// API server says of a pod: only pods the kube-scheduler has tried and marked Unschedulable. A pod
// written as a manifest, with no status at all, describes a pod to be created and stays plannable.

import type { Pod } from '../apis/core/v1';

/**
 * Why an unbound pod is not provisioned for, or undefined when it is:
 *  - terminating (metadata.deletionTimestamp): it is going away;
 *  - status.nominatedNodeName: the scheduler is preempting for it on that node;
 *  - a PodScheduled condition whose reason is not Unschedulable (e.g. SchedulingGated): the scheduler
 *    has not found it unschedulable (yet);
 *  - owned by a DaemonSet or a Node (a mirror pod): their controllers place them.
 */
export function notProvisionableReason(pod: Pod): string | undefined {
  if (pod.metadata.deletionTimestamp) return 'terminating';
  if (pod.status?.nominatedNodeName) return `nominated to node ${pod.status.nominatedNodeName} by a preemption`;
  const scheduled = pod.status?.conditions?.filter((c) => c.type === 'PodScheduled') ?? [];
  if (scheduled.length > 0 && !scheduled.some((c) => c.reason === 'Unschedulable')) {
    const c = scheduled[0]!;
    return `not marked Unschedulable by the scheduler (PodScheduled=${c.status}${c.reason ? ` reason ${c.reason}` : ''})`;
  }
  const owner = pod.metadata.ownerReferences?.find((o) => o.kind === 'DaemonSet' || o.kind === 'Node');
  if (owner) return `owned by ${owner.kind} ${owner.name}, whose controller places it`;
  return undefined;
}
