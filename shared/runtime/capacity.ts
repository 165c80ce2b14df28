// Existing capacity for the provision decision (Karpenter's cluster state as the scheduler sees it):
// every live NodeClaim of ours, as its Node when one has joined, else as the in-flight claim its
// NodeClaim record says it was launched as (its narrowed labels, taints, startup taints, allocatable;
// the instance and its NodePool for instances without a record), each carrying everything already on
// it: the pods bound there and the pods nominated to it that are still pending in the cluster (not
// only those of this batch, so a burst split over two decisions cannot fill one claim twice). A claim
// marked for deletion is not offered. An uninitialized node is offered as such with the claim's
// startup taints, so the packer looks past those and the known ephemeral taints, which go away on
// their own (statenode.go Taints()), and with the DaemonSet pods that have not reached it yet. A
// claim an earlier decision recorded and nominated but had no time left to launch is offered too,
// from its record, so its pods are not planned again while the decision launches it. Pure.

import type { Node, Pod } from '../apis/core/v1';
import {
  LABEL_CAPACITY_TYPE,
  LABEL_HOSTNAME,
  LABEL_INSTANCE_TYPE,
  LABEL_NODEPOOL,
  LABEL_ZONE,
} from '../apis/v1/labels';
import type { NodePool, Taint } from '../apis/v1/types';
import { KUBE, REGISTRATION_TTL_MS } from '../contracts';
import { resourceAmounts } from '../instancetypes/capacity';
import type { InstanceType, Resources } from '../instancetypes/types';
import { isMarkedForDeletion, type NodeClaimRecord } from '../nodeclaim/record';
import type { Nomination } from '../providers/state';
import type { ExistingNode } from '../scheduling';
import { toExistingNodes } from '../workloads/nodes';
import { type ClaimInstance, instanceIdFromProviderID } from './instances';
import { LAUNCH_BATCH_ANNOTATION } from './launch-batches';
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
  /** Epoch ms: how old an unlaunched record is. */
  now: number;
}

/** One live NodeClaim offered to the packer. */
export interface ClaimCapacity {
  nodeClaimName: string;
  nodePool: string;
  nomination?: Nomination;
  /** Its Node is initialized: the kube-scheduler can bind there now. */
  initialized: boolean;
  node: ExistingNode;
  /**
   * Recorded by an earlier decision and not launched yet (its invocation ended first): this decision
   * launches it from the record, and its nominated pods are not planned again.
   */
  unlaunched?: { record: NodeClaimRecord; pods: Pod[] };
}

export interface ExistingCapacity {
  claims: ClaimCapacity[];
  /** Pending pods nominated to an offered claim: counted there, not planned again. */
  held: Set<string>;
  /**
   * Records a decision wrote that waited too long to launch (UNLAUNCHED_RECORD_MAX_AGE_MS): not
   * offered; the decision deletes them and frees their pods, which it plans again.
   */
  abandoned: NodeClaimRecord[];
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
  const liveClaims = new Set(input.live.map((i) => i.nodeClaimName));
  const abandoned: NodeClaimRecord[] = [];
  for (const record of input.records) {
    if (liveClaims.has(record.metadata.name)) continue;
    if (
      waitingToLaunch(record) &&
      !(input.now - Date.parse(record.metadata.creationTimestamp) < UNLAUNCHED_RECORD_MAX_AGE_MS)
    ) {
      abandoned.push(record);
      continue;
    }
    const offered = unlaunchedClaim(input, record, nominationByClaim.get(record.metadata.name), podsByUid);
    if (!offered) continue;
    for (const pod of offered.unlaunched?.pods ?? []) held.add(podUid(pod));
    claims.push(offered);
  }
  return { claims, held, abandoned };
}

/** Written by a provision decision (it names its launch batch), not launched, not being deleted. */
function waitingToLaunch(record: NodeClaimRecord): boolean {
  return (
    record.metadata.annotations[LAUNCH_BATCH_ANNOTATION] !== undefined &&
    record.status.providerID === undefined &&
    !isMarkedForDeletion(record)
  );
}

/**
 * How old an unlaunched record may be and still be launched: gc deletes a record without an instance
 * at the registration TTL, and a launch begun close to that could lose its record under it. An older
 * one is deleted by the decision that finds it, and its pods are planned again.
 */
export const UNLAUNCHED_RECORD_MAX_AGE_MS = REGISTRATION_TTL_MS - 5 * 60_000;

/**
 * A record a provision decision wrote (it names its launch batch) whose launch has not happened, as
 * in-flight capacity: its labels and taints, what the smallest of its candidate types can hold (any
 * of them may launch), its nominated pods. Drift's replacements carry no batch and are not ours to
 * launch; a record without its nomination is one whose decision never got to its pods.
 */
function unlaunchedClaim(
  input: CapacityInput,
  record: NodeClaimRecord,
  nomination: Nomination | undefined,
  podsByUid: ReadonlyMap<string, Pod>,
): ClaimCapacity | undefined {
  if (!waitingToLaunch(record) || !nomination) return undefined;
  const nodePool = record.metadata.labels[LABEL_NODEPOOL];
  if (!nodePool || !input.nodePools.some((p) => p.metadata.name === nodePool)) return undefined;
  const typeRequirement = record.spec.requirements.find((r) => r.key === LABEL_INSTANCE_TYPE);
  const names = new Set(typeRequirement?.operator === 'In' ? (typeRequirement.values ?? []) : []);
  const allocatable = smallestAllocatable((input.instanceTypes[nodePool] ?? []).filter((t) => names.has(t.name)));
  if (!allocatable) return undefined;
  const pods = nomination.podUids.flatMap((uid) => {
    const pod = podsByUid.get(uid);
    return pod && isUnboundLive(pod) && controllerKind(pod) !== 'DaemonSet' ? [pod] : [];
  });
  const name = record.metadata.name;
  return {
    nodeClaimName: name,
    nodePool,
    nomination,
    initialized: false,
    node: {
      name,
      labels: { ...record.metadata.labels, [LABEL_HOSTNAME]: name },
      taints: record.spec.taints,
      allocatable,
      pods: [...pods, ...input.daemonSets],
      inFlight: true,
    },
    unlaunched: { record, pods },
  };
}

/** Per resource, the least any of the types has: what the claim holds whichever type launches. */
function smallestAllocatable(types: readonly InstanceType[]): Resources | undefined {
  const [first, ...rest] = types;
  if (!first) return undefined;
  const out: Resources = { ...first.allocatable };
  for (const type of rest) {
    for (const key of Object.keys(out)) out[key] = Math.min(out[key] ?? 0, type.allocatable[key] ?? 0);
  }
  return out;
}
