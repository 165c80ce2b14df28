// Existing capacity for the provision decision (Karpenter's cluster state as the scheduler sees it):
// every live NodeClaim of ours, as its Node when one has joined, else as the in-flight claim its
// instance and NodePool describe, each carrying everything already on it: the pods bound there and
// the pods nominated to it that are still pending in the cluster (not only those of this batch, so
// a burst split over two decisions cannot fill one claim twice). An uninitialized node is offered as
// such with its NodePool's startup taints, so the packer looks past those and the known ephemeral
// taints, which go away on their own (statenode.go Taints()), and with the DaemonSet pods that have
// not reached it yet. Pure.

import type { Node, Pod } from '../apis/core/v1';
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_NODEPOOL, LABEL_ZONE } from '../apis/v1/labels';
import type { NodePool } from '../apis/v1/types';
import { KUBE } from '../contracts';
import type { InstanceType } from '../instancetypes/types';
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

/** What an in-flight claim will look like once its node joins: the pool's template and the launched offering. */
function claimLabels(instance: ClaimInstance, pool: NodePool, type: InstanceType | undefined): Record<string, string> {
  return {
    ...pool.spec.template.metadata?.labels,
    ...type?.labels,
    [LABEL_NODEPOOL]: instance.nodePool,
    [LABEL_ZONE]: instance.zone,
    [LABEL_CAPACITY_TYPE]: instance.capacityType,
    [LABEL_HOSTNAME]: instance.nodeClaimName,
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
  instance: ClaimInstance,
  pool: NodePool,
  type: InstanceType | undefined,
  bound: Pod[],
  nominated: Pod[],
  daemonSets: readonly Pod[],
): { node: ExistingNode; initialized: boolean } {
  const base = toExistingNodes([node], []).existingNodes[0] as ExistingNode;
  const initialized = node.metadata.labels?.[KUBE.initializedLabel] === 'true';
  const startupTaints = pool.spec.template.spec.startupTaints ?? [];
  const hasAllocatable = Object.keys(base.allocatable).length > 0;
  return {
    initialized,
    node: {
      ...base,
      // A joined but unregistered node lacks the claim's labels until the watcher registers it.
      labels: { ...claimLabels(instance, pool, type), ...base.labels },
      allocatable: hasAllocatable || !type ? base.allocatable : type.allocatable,
      pods: [...bound, ...nominated, ...(initialized ? [] : daemonSetsToCome(daemonSets, bound))],
      // Ours even before registration labels it with its NodePool (toExistingNodes cannot tell).
      ...(initialized ? {} : { initialized: false, startupTaints }),
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
  const claims: ClaimCapacity[] = [];
  const held = new Set<string>();
  for (const instance of input.live) {
    const pool = input.nodePools.find((p) => p.metadata.name === instance.nodePool);
    if (!pool) continue;
    const node = nodeByInstance.get(instance.instanceId);
    // A node being deleted takes no new pods; its nominated pods are planned again.
    if (node && deletionTimestamp(node) !== undefined) continue;
    const type = input.instanceTypes[instance.nodePool]?.find((t) => t.name === instance.instanceType);
    if (!node && !type) continue;
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
      ? nodeBacked(node, instance, pool, type, boundByNode.get(node.metadata.name) ?? [], nominated, input.daemonSets)
      : {
          initialized: false,
          node: {
            name: instance.nodeClaimName,
            labels: claimLabels(instance, pool, type),
            taints: pool.spec.template.spec.taints ?? [],
            allocatable: (type as InstanceType).allocatable,
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
