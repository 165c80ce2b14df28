// The few fields of live Kubernetes objects the runtime reads beyond shared/apis/core/v1 (which
// models what scheduling needs): deletion timestamps, finalizers, resource versions, conditions.

import type { Node, Pod } from '../apis/core/v1';

interface LiveMeta {
  deletionTimestamp?: string;
  finalizers?: string[];
  resourceVersion?: string;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

export function deletionTimestamp(object: Pod | Node): string | undefined {
  return (object.metadata as LiveMeta).deletionTimestamp;
}

/** Bound pods by node name (spec.nodeName); unbound pods are left out. */
export function podsByNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const pod of pods) {
    const name = pod.spec.nodeName;
    if (!name) continue;
    const list = out.get(name);
    if (list) list.push(pod);
    else out.set(name, [pod]);
  }
  return out;
}

export function finalizers(object: Pod | Node): string[] {
  return (object.metadata as LiveMeta).finalizers ?? [];
}

export function resourceVersion(object: Pod | Node): string | undefined {
  return (object.metadata as LiveMeta).resourceVersion;
}

export function nodeCondition(node: Node, type: string): Condition | undefined {
  const conditions = (node.status as { conditions?: Condition[] } | undefined)?.conditions;
  return conditions?.find((c) => c.type === type);
}

export function podCondition(pod: Pod, type: string): Condition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

export function nominatedNodeName(pod: Pod): string | undefined {
  return (pod.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName || undefined;
}

export function controllerKind(pod: Pod): string | undefined {
  const owners = pod.metadata.ownerReferences ?? [];
  return (owners.find((o) => o.controller) ?? owners[0])?.kind;
}

export function podUid(pod: Pod): string {
  return pod.metadata.uid ?? `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}
