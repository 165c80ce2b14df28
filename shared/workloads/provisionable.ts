// Which unbound pods karpless provisions for: Karpenter's pod.IsProvisionable, the one rule for both
// the provision function (pods as the API server has them) and `karpless plan` (pods as manifests).
// A pod is provisioned for when it is not bound, not terminal, not being deleted, not being preempted
// onto a node, not made by a DaemonSet or a Node (those follow nodes instead of asking for them), and
// marked Unschedulable by the kube-scheduler. A manifest has no status: a pod written without a
// PodScheduled condition describes a pod to be created, and `karpless plan` plans it.

import type { Pod } from '../apis/core/v1';

export interface ProvisionableOptions {
  /**
   * The pod comes from a YAML file, not the API server: without a PodScheduled condition it is a pod
   * still to be created (no scheduler has seen it), and is planned. A condition it does carry is
   * judged as the API server's would be.
   */
  manifest?: boolean;
}

interface LiveStatus {
  phase?: string;
  nominatedNodeName?: string;
  conditions?: { type: string; status: string; reason?: string }[];
}

function controllerKind(pod: Pod): { kind: string; name: string } | undefined {
  const owners = pod.metadata.ownerReferences ?? [];
  return owners.find((o) => o.controller) ?? owners[0];
}

/** Why karpless does not provision for the pod, or undefined when it does. */
export function notProvisionableReason(pod: Pod, options: ProvisionableOptions = {}): string | undefined {
  const status = pod.status as LiveStatus | undefined;
  if (pod.spec.nodeName) return `bound to node ${pod.spec.nodeName}`;
  if (status?.phase === 'Succeeded' || status?.phase === 'Failed') return `finished (phase ${status.phase})`;
  if ((pod.metadata as { deletionTimestamp?: string }).deletionTimestamp) return 'terminating';
  if (status?.nominatedNodeName) {
    return `nominated to node ${status.nominatedNodeName} by the kube-scheduler (preemption)`;
  }
  const owner = controllerKind(pod);
  if (owner?.kind === 'DaemonSet' || owner?.kind === 'Node') {
    return `made by ${owner.kind} ${owner.name}: it follows nodes`;
  }
  const scheduled = status?.conditions?.filter((c) => c.type === 'PodScheduled') ?? [];
  if (scheduled.length === 0 && options.manifest) return undefined;
  if (!scheduled.some((c) => c.status === 'False' && c.reason === 'Unschedulable')) {
    const c = scheduled[0];
    const seen = c ? `PodScheduled=${c.status}${c.reason ? ` reason ${c.reason}` : ''}` : 'no PodScheduled condition';
    return `not marked Unschedulable by the kube-scheduler (${seen})`;
  }
  return undefined;
}
