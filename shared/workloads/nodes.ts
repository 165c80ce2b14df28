// Nodes a user gives to `karpless plan --nodes`: existing capacity the packer fills before it plans new
// NodeClaims, with the pods already bound there counting against capacity and topology. Pure.

import type { Node, Pod } from '../apis/core/v1';
import { LABEL_HOSTNAME, LABEL_NODEPOOL } from '../apis/v1/labels';
import type { NodePool, Taint } from '../apis/v1/types';
import { KUBE } from '../contracts';
import { resourceAmounts } from '../instancetypes/capacity';
import type { ExistingNode } from '../scheduling';

// The node lifecycle controller taints cordoned nodes with this; the scheduler then treats a cordon
// like any NoSchedule taint, and so do we.
const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

export interface ExistingNodesResult {
  existingNodes: ExistingNode[];
  /** Bound pods whose node was not given: they are left out, and the user is told. */
  notes: string[];
}

/**
 * Nodes and the pods bound to them (spec.nodeName) → the packer's ExistingNode. A node of a NodePool
 * (`karpenter.sh/nodepool`) without `karpenter.sh/initialized=true` is still starting: it is marked
 * uninitialized with its NodePool's startup taints (from `nodePools`, when given), so those and the
 * known ephemeral taints do not keep pods off it, as Karpenter's cluster state reads such a node.
 */
export function toExistingNodes(
  nodes: readonly Node[],
  boundPods: readonly Pod[],
  nodePools: readonly NodePool[] = [],
): ExistingNodesResult {
  const byName = new Map<string, ExistingNode>();
  for (const node of nodes) {
    const name = node.metadata.name;
    const taints = [...(node.spec?.taints ?? [])];
    if (node.spec?.unschedulable && !taints.some((t) => t.key === UNSCHEDULABLE_TAINT.key)) {
      taints.push(UNSCHEDULABLE_TAINT);
    }
    const labels = node.metadata.labels ?? {};
    const poolName = labels[LABEL_NODEPOOL];
    const startupTaints = nodePools.find((p) => p.metadata.name === poolName)?.spec.template.spec.startupTaints;
    byName.set(name, {
      name,
      labels: { [LABEL_HOSTNAME]: name, ...labels },
      taints,
      allocatable: resourceAmounts(node.status?.allocatable ?? node.status?.capacity),
      pods: [],
      ...(poolName !== undefined && labels[KUBE.initializedLabel] !== 'true'
        ? { initialized: false, ...(startupTaints ? { startupTaints } : {}) }
        : {}),
    });
  }
  const notes: string[] = [];
  for (const pod of boundPods) {
    const nodeName = pod.spec.nodeName ?? '';
    const node = byName.get(nodeName);
    if (node) node.pods.push(pod);
    else {
      notes.push(
        `pod ${pod.metadata.namespace ?? 'default'}/${pod.metadata.name} is bound to node ${nodeName}, which is not among the given nodes (--nodes): left out`,
      );
    }
  }
  return { existingNodes: [...byName.values()], notes };
}
