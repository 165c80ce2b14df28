// Existing capacity for the provision decision (Karpenter's cluster state as the scheduler sees it):
// every live NodeClaim of ours, as its Node when one has joined, else as the in-flight claim its
// NodeClaim record says it was launched as (its narrowed labels, taints, startup taints, allocatable;
// the instance and its NodePool for instances without a record), each carrying everything already on
// it: the pods bound there and the pods nominated to it that are still pending in the cluster (not
// only those of this batch, so a burst split over two decisions cannot fill one claim twice). A claim
// marked for deletion is not offered. An uninitialized node is offered as such with the claim's
// startup taints, so the packer looks past those and the known ephemeral taints, which go away on
// their own (statenode.go Taints()), and with the DaemonSet pods that have not reached it yet. Pure.

import type { Node, Pod } from '../apis/core/v1';
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_NODEPOOL, LABEL_ZONE } from '../apis/v1/labels';
import type { NodePool, Taint } from '../apis/v1/types';
import { KUBE } from '../contracts';
import { resourceAmounts } from '../instancetypes/capacity';
import type { InstanceType, Resources } from '../instancetypes/types';
import { isMarkedForDeletion, type NodeClaimRecord } from '../nodeclaim/record';
import type { Nomination } from '../providers/state';
import type { ExistingNode } from '../scheduling';
import { toExistingNodes } from '../workloads/nodes';
import { type ClaimInstance, instanceIdFromProviderID } from './instances';
import { controllerKind, deletionTimestamp, podUid } from './objects';

export interface CapacityInput {
  nodePools: readonly NodePool[];
  /** NodePool name → its instance types. */
  instanceTypes: Readonly<Record<string, InstanceType[]>>;
  /** Our pending or running instances. */
  live: readonly ClaimInstance[];
  nominations: readonly Nomination[];
  /** The NodeClaim records: what each claim was launched as. */
  records: readonly NodeClaimRecord[];
  /** Every Node and every Pod of the cluster, as the API server answered. */
  nodes: readonly Node[];
  pods: readonly Pod[];
  /** DaemonSet pod templates: what an uninitialized node will still run. */
  daemonSets: readonly Pod[];
}

/** One live NodeClaim offered to the packer. */
export interface ClaimCapacity {
  nodeClaimName: string;
  nodePool: string;
  nomination?: Nomination;
  /** Its Node is initialized: the kube-scheduler can bind there now. */
  initialized: boolean;
  node: ExistingNode;
}

export interface ExistingCapacity {
  claims: ClaimCapacity[];
  /** Pending pods nominated to an offered claim: counted there, not planned again. */
  held: Set<string>;
}

function isUnboundLive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return !pod.spec.nodeName && phase !== 'Succeeded' && phase !== 'Failed' && deletionTimestamp(pod) === undefined;
}

function occupies(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

/** What one claim was launched as: its record where it has one, else its NodePool's template and its instance. */
interface ClaimShape {
  labels: Record<string, string>;
  taints: Taint[];
  startupTaints: Taint[];
  allocatable: Resources | undefined;
}

/**
 * What an in-flight claim will look like once its node joins: the record's labels (the requirement
 * values the decision narrowed, which registration puts on the Node), or for an instance without a
 * record the pool's template and the launched offering.
 */
function claimShape(
  instance: ClaimInstance,
  pool: NodePool,
  type: InstanceType | undefined,
  record: NodeClaimRecord | undefined,
): ClaimShape {
  const recorded = record ? resourceAmounts(record.status.allocatable) : {};
  return {
    labels: {
      ...pool.spec.template.metadata?.labels,
      ...type?.labels,
      ...record?.metadata.labels,
      [LABEL_NODEPOOL]: instance.nodePool,
      [LABEL_ZONE]: instance.zone,
      [LABEL_CAPACITY_TYPE]: instance.capacityType,
      [LABEL_HOSTNAME]: instance.nodeClaimName,
    },
    taints: record?.spec.taints ?? pool.spec.template.spec.taints ?? [],
    startupTaints: record?.spec.startupTaints ?? pool.spec.template.spec.startupTaints ?? [],
    allocatable: Object.keys(recorded).length > 0 ? recorded : type?.allocatable,
  };
}

/** DaemonSet templates with no pod of their DaemonSet bound on the node yet. */
function daemonSetsToCome(daemonSets: readonly Pod[], bound: readonly Pod[]): Pod[] {
  const present = new Set(
    bound.flatMap((p) => {
      const owner = (p.metadata.ownerReferences ?? []).find((o) => o.kind === 'DaemonSet');
      return owner ? [`${p.metadata.namespace ?? 'default'}/${owner.name}`] : [];
    }),
  );
  return daemonSets.filter((ds) => !present.has(`${ds.metadata.namespace ?? 'default'}/${ds.metadata.name}`));
}

function nodeBacked(
  node: Node,
  shape: ClaimShape,
  bound: Pod[],
  nominated: Pod[],
  daemonSets: readonly Pod[],
): { node: ExistingNode; initialized: boolean } {
  const base = toExistingNodes([node], []).existingNodes[0] as ExistingNode;
  const initialized = node.metadata.labels?.[KUBE.initializedLabel] === 'true';
  const hasAllocatable = Object.keys(base.allocatable).length > 0;
  return {
    initialized,
    node: {
      ...base,
      // A joined but unregistered node lacks the claim's labels until the watcher registers it.
      labels: { ...shape.labels, ...base.labels },
      allocatable: hasAllocatable || !shape.allocatable ? base.allocatable : shape.allocatable,
      pods: [...bound, ...nominated, ...(initialized ? [] : daemonSetsToCome(daemonSets, bound))],
      // Ours even before registration labels it with its NodePool (toExistingNodes cannot tell).
      ...(initialized ? {} : { initialized: false, startupTaints: shape.startupTaints }),
    },
  };
}

/** Our live claims as the packer's existing nodes, each with what is bound on it and nominated to it. */
export function existingCapacity(input: CapacityInput): ExistingCapacity {
  const podsByUid = new Map(input.pods.map((p) => [podUid(p), p]));
  const boundByNode = new Map<string, Pod[]>();
  for (const pod of input.pods) {
    if (!pod.spec.nodeName || !occupies(pod)) continue;
    const list = boundByNode.get(pod.spec.nodeName);
    if (list) list.push(pod);
    else boundByNode.set(pod.spec.nodeName, [pod]);
  }
  const nodeByInstance = new Map<string, Node>();
  for (const node of input.nodes) {
    const id = instanceIdFromProviderID(node.spec?.providerID);
    if (id) nodeByInstance.set(id, node);
  }
  const nominationByClaim = new Map(input.nominations.map((n) => [n.nodeClaimName, n]));
  const recordByClaim = new Map(input.records.map((r) => [r.metadata.name, r]));
  const claims: ClaimCapacity[] = [];
  const held = new Set<string>();
  for (const instance of input.live) {
    const pool = input.nodePools.find((p) => p.metadata.name === instance.nodePool);
    if (!pool) continue;
    const node = nodeByInstance.get(instance.instanceId);
    // A node being deleted takes no new pods; its nominated pods are planned again.
    if (node && deletionTimestamp(node) !== undefined) continue;
    const record = recordByClaim.get(instance.nodeClaimName);
    // Marked for deletion (drift, expiration, consolidation, `kubectl delete node` on its way): no new pods.
    if (record && isMarkedForDeletion(record)) continue;
    const type = input.instanceTypes[instance.nodePool]?.find((t) => t.name === instance.instanceType);
    const shape = claimShape(instance, pool, type, record);
    if (!node && !shape.allocatable) continue;
    const nomination = nominationByClaim.get(instance.nodeClaimName);
    // Without a node and without a nomination, the claim is past its registration TTL (or its launch
    // never finished): gc collects it, pods must not wait for it.
    if (!node && !nomination) continue;
    const nominated = (nomination?.podUids ?? []).flatMap((uid) => {
      const pod = podsByUid.get(uid);
      return pod && isUnboundLive(pod) && controllerKind(pod) !== 'DaemonSet' ? [pod] : [];
    });
    for (const pod of nominated) held.add(podUid(pod));
    const offered = node
      ? nodeBacked(node, shape, boundByNode.get(node.metadata.name) ?? [], nominated, input.daemonSets)
      : {
          initialized: false,
          node: {
            name: instance.nodeClaimName,
            labels: shape.labels,
            taints: shape.taints,
            allocatable: shape.allocatable as Resources,
            pods: [...nominated, ...input.daemonSets],
            inFlight: true,
          },
        };
    claims.push({
      nodeClaimName: instance.nodeClaimName,
      nodePool: instance.nodePool,
      ...(nomination ? { nomination } : {}),
      ...offered,
    });
  }
  return { claims, held };
}
