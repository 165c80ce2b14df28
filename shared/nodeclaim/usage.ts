// NodePool usage: what every decision counts against a NodePool's `spec.limits`. Karpenter's NodePool
// counter (pkg/controllers/nodepool/counter, state.Cluster.updateNodePoolResources) sums the capacity
// of every claim of the pool that is not marked for deletion, one `nodes` each; its scheduler starts
// each solve from `limits − that` (Scheduler.calculateExistingNodeClaims). karpless reads the same sum
// from what it has: NodeClaim records, our instances that have no record (launched before records, or
// whose record is not written yet), and Nodes that carry a `karpenter.sh/nodepool` label neither
// accounts for (`karpless plan --nodes`). Pure.

import type { Node } from '../apis/core/v1';
import { LABEL_INSTANCE_TYPE, LABEL_NODEPOOL } from '../apis/v1/labels';
import type { NodePool, NodeSelectorRequirementWithMinValues, ResourceList } from '../apis/v1/types';
import { resourceAmounts } from '../instancetypes/capacity';
import type { Resources } from '../instancetypes/types';
import { formatLimit } from '../scheduling/packing/reason-text';
import { amount } from '../scheduling/resources';

/** The `nodes` pseudo-resource of `spec.limits` (Karpenter's resources.Node). */
export const NODES = 'nodes';

/** NodePool name → what its claims hold (cpu in millicores, bytes, counts; `nodes` one per claim). */
export type NodePoolUsage = Record<string, Resources>;

/** What usage reads of a NodeClaim record (shared/nodeclaim/record.ts NodeClaimRecord fits it). */
export interface UsageRecord {
  metadata: { name: string; labels: Record<string, string>; deletionTimestamp?: string };
  spec: { requirements: readonly NodeSelectorRequirementWithMinValues[] };
  status: { providerID?: string; nodeName?: string; capacity: ResourceList };
}

/** What usage reads of one of our instances (runtime ClaimInstance fits it). */
export interface UsageInstance {
  instanceId: string;
  nodeClaimName: string;
  nodePool: string;
  instanceType: string;
}

export interface UsageInput {
  records?: readonly UsageRecord[];
  /**
   * Our live (pending or running) instances. When given, a launched record whose instance is not
   * among them is gone (terminated, or about to be collected) and holds nothing.
   */
  instances?: readonly UsageInstance[];
  /** Nodes of the cluster: they size claims whose Node registered, and count alone for their NodePool label. */
  nodes?: readonly Node[];
  /** Capacity of an instance type as a NodePool resolves it, for claims known only by their type. */
  typeCapacity(nodePool: string, instanceType: string): Resources | undefined;
  /**
   * Claims being replaced right now (a disruption in progress): Karpenter marks them for deletion as it
   * launches their replacements, which count instead.
   */
  deleting?: { nodeNames?: ReadonlySet<string>; instanceIds?: ReadonlySet<string> };
}

/** One claim as usage counts it. */
export interface ClaimUsage {
  /** The NodeClaim's (or, for a bare Node, the Node's) name. */
  name: string;
  nodePool: string;
  capacity: Resources;
}

function instanceIdOfProviderID(providerID: string | undefined): string | undefined {
  if (!providerID?.startsWith('aws://')) return undefined;
  const last = providerID.split('/').pop() ?? '';
  return /^i-[0-9a-f]+$/.test(last) ? last : undefined;
}

function isDeleting(node: Node | undefined): boolean {
  return (node?.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp !== undefined;
}

/** The largest capacity, per resource, among the types a record not yet launched may still get (subtractMax). */
function largestCapacity(input: UsageInput, nodePool: string, record: UsageRecord): Resources {
  const types = record.spec.requirements.find((r) => r.key === LABEL_INSTANCE_TYPE && r.operator === 'In');
  const out: Resources = {};
  for (const name of types?.values ?? []) {
    for (const [resource, value] of Object.entries(input.typeCapacity(nodePool, name) ?? {})) {
      out[resource] = Math.max(out[resource] ?? 0, value);
    }
  }
  return out;
}

/** The Node's capacity where it reports one, else what the claim was known to launch. */
export function capacityOf(node: Node | undefined, known: Resources | undefined): Resources {
  const reported = resourceAmounts(node?.status?.capacity);
  return Object.keys(reported).length > 0 ? reported : { ...(known ?? {}) };
}

/** Every claim that counts against its NodePool's limits, with its capacity (without `nodes`). */
export function claimUsages(input: UsageInput): ClaimUsage[] {
  const nodes = input.nodes ?? [];
  const nodeByInstance = new Map<string, Node>();
  const nodeByName = new Map<string, Node>();
  for (const node of nodes) {
    nodeByName.set(node.metadata.name, node);
    const id = instanceIdOfProviderID(node.spec?.providerID);
    if (id) nodeByInstance.set(id, node);
  }
  const live = input.instances ? new Set(input.instances.map((i) => i.instanceId)) : undefined;
  const deletingNodes = input.deleting?.nodeNames ?? new Set<string>();
  const deletingInstances = input.deleting?.instanceIds ?? new Set<string>();
  const gone = (node: Node | undefined, instanceId: string | undefined) =>
    isDeleting(node) ||
    (node !== undefined && deletingNodes.has(node.metadata.name)) ||
    (instanceId !== undefined && deletingInstances.has(instanceId));

  const out: ClaimUsage[] = [];
  const claimed = new Set<string>();
  const accountedInstances = new Set<string>();
  const accountedNodes = new Set<string>();
  for (const record of input.records ?? []) {
    const nodePool = record.metadata.labels[LABEL_NODEPOOL];
    const name = record.metadata.name;
    claimed.add(name);
    const instanceId = instanceIdOfProviderID(record.status.providerID);
    if (instanceId) accountedInstances.add(instanceId);
    const node =
      (instanceId ? nodeByInstance.get(instanceId) : undefined) ??
      (record.status.nodeName ? nodeByName.get(record.status.nodeName) : undefined);
    if (node) accountedNodes.add(node.metadata.name);
    if (!nodePool || record.metadata.deletionTimestamp !== undefined || gone(node, instanceId)) continue;
    if (instanceId && live && !live.has(instanceId)) continue;
    const recorded = resourceAmounts(record.status.capacity);
    const known = Object.keys(recorded).length > 0 ? recorded : largestCapacity(input, nodePool, record);
    out.push({ name, nodePool, capacity: capacityOf(node, known) });
  }
  for (const instance of input.instances ?? []) {
    if (accountedInstances.has(instance.instanceId)) continue;
    accountedInstances.add(instance.instanceId);
    const node = nodeByInstance.get(instance.instanceId);
    if (node) accountedNodes.add(node.metadata.name);
    if (claimed.has(instance.nodeClaimName) || !instance.nodePool || gone(node, instance.instanceId)) continue;
    claimed.add(instance.nodeClaimName);
    const known = input.typeCapacity(instance.nodePool, instance.instanceType);
    out.push({ name: instance.nodeClaimName, nodePool: instance.nodePool, capacity: capacityOf(node, known) });
  }
  for (const node of nodes) {
    const nodePool = node.metadata.labels?.[LABEL_NODEPOOL];
    if (!nodePool || accountedNodes.has(node.metadata.name) || gone(node, undefined)) continue;
    // Its instance is known to be gone: the Node only waits for garbage collection.
    const instanceId = instanceIdOfProviderID(node.spec?.providerID);
    if (instanceId && live && !live.has(instanceId)) continue;
    // A Node written by hand may give only its instance type or its allocatable.
    const type = node.metadata.labels?.[LABEL_INSTANCE_TYPE];
    const known = (type ? input.typeCapacity(nodePool, type) : undefined) ?? resourceAmounts(node.status?.allocatable);
    out.push({ name: node.metadata.name, nodePool, capacity: capacityOf(node, known) });
  }
  return out;
}

/** Adds a claim's capacity and one `nodes` to its pool's usage (mutates and returns `usage`). */
export function addClaim(usage: NodePoolUsage, nodePool: string, capacity: Resources): NodePoolUsage {
  const pool = usage[nodePool] ?? {};
  usage[nodePool] = pool;
  for (const [resource, value] of Object.entries(capacity)) {
    if (resource !== NODES) pool[resource] = (pool[resource] ?? 0) + value;
  }
  pool[NODES] = (pool[NODES] ?? 0) + 1;
  return usage;
}

/** Takes a claim's capacity and one `nodes` off its pool's usage (mutates and returns `usage`). */
export function removeClaim(usage: NodePoolUsage, nodePool: string, capacity: Resources): NodePoolUsage {
  const pool = usage[nodePool];
  if (!pool) return usage;
  for (const [resource, value] of Object.entries(capacity)) {
    if (resource !== NODES) pool[resource] = Math.max(0, (pool[resource] ?? 0) - value);
  }
  pool[NODES] = Math.max(0, (pool[NODES] ?? 0) - 1);
  return usage;
}

/** A copy to charge and credit on its own (a simulation must not change the caller's usage). */
export function copyUsage(usage: NodePoolUsage): NodePoolUsage {
  return Object.fromEntries(Object.entries(usage).map(([pool, resources]) => [pool, { ...resources }]));
}

/**
 * The usage a disruption simulates against: the candidate's own claim taken off (Karpenter marks a
 * candidate for deletion before it computes its replacements, so they may take its place in the limits).
 */
export function usageWithout(
  usage: NodePoolUsage | undefined,
  nodePool: string,
  capacity: Resources,
): NodePoolUsage | undefined {
  return usage && removeClaim(copyUsage(usage), nodePool, capacity);
}

/** Usage per NodePool: the capacity of every claim that is not being deleted, plus one `nodes` each. */
export function nodePoolUsage(input: UsageInput): NodePoolUsage {
  const usage: NodePoolUsage = {};
  for (const claim of claimUsages(input)) addClaim(usage, claim.nodePool, claim.capacity);
  return usage;
}

/** What a planned claim is charged: the largest capacity among the types it may launch (Karpenter's subtractMax). */
export function plannedCapacity(instanceTypes: readonly { capacity: Resources }[]): Resources {
  const out: Resources = {};
  for (const type of instanceTypes) {
    for (const [resource, value] of Object.entries(type.capacity)) out[resource] = Math.max(out[resource] ?? 0, value);
  }
  return out;
}

/**
 * A typeCapacity reading a resolved catalog (NodePool name → its instance types). A type the pool no
 * longer allows (its requirements changed since the launch) is sized from any pool that has it.
 */
export function capacityFromCatalog(
  byNodePool: Readonly<Record<string, readonly { name: string; capacity: Resources }[]>>,
): UsageInput['typeCapacity'] {
  return (nodePool, instanceType) => {
    const own = byNodePool[nodePool]?.find((t) => t.name === instanceType);
    if (own) return own.capacity;
    for (const types of Object.values(byNodePool)) {
      const found = types.find((t) => t.name === instanceType);
      if (found) return found.capacity;
    }
    return undefined;
  };
}

/** One resource of a NodePool's `spec.limits` and how much of it the pool's claims hold (base units). */
export interface LimitUsage {
  resource: string;
  used: number;
  limit: number;
}

/** Usage against limits for one NodePool that has `spec.limits`. */
export interface NodePoolLimits {
  nodePool: string;
  resources: LimitUsage[];
  /** Some resource is used up: no claim can be opened in the pool. */
  exhausted: boolean;
}

/** Per NodePool with limits, in the given order: each limited resource, used and limit. */
export function limitsUsage(nodePools: readonly NodePool[], usage: NodePoolUsage): NodePoolLimits[] {
  const out: NodePoolLimits[] = [];
  for (const pool of nodePools) {
    const limits = Object.entries(pool.spec.limits ?? {});
    if (limits.length === 0) continue;
    const used = usage[pool.metadata.name] ?? {};
    const resources = limits.map(([resource, quantity]) => ({
      resource,
      used: used[resource] ?? 0,
      limit: amount(resource, quantity),
    }));
    out.push({ nodePool: pool.metadata.name, resources, exhausted: resources.some((r) => r.used >= r.limit) });
  }
  return out;
}

/** "cpu 8/8, memory 32Gi/64Gi, nodes 1/10": what `karpless plan` and `karpless status` print. */
export function formatLimitsUsage(limits: NodePoolLimits): string {
  return limits.resources
    .map((r) => `${r.resource} ${formatLimit(r.resource, r.used)}/${formatLimit(r.resource, r.limit)}`)
    .join(', ');
}
