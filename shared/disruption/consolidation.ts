// Consolidation as Karpenter's disruption controller does it (CORE disruption/emptiness.go,
// multinodeconsolidation.go, singlenodeconsolidation.go, consolidation.go, types.go), its methods in
// upstream's order, the first that finds a command ending the pass: Emptiness (every empty candidate
// the pools' Empty budgets allow, deleted at once; WhenEmpty and WhenEmptyOrUnderutilized pools),
// multi-node (a binary search over the first 100 non-empty candidates in disruption-cost order for
// the largest prefix that can go at once, for one cheaper node or none), then single-node (the first
// candidate, in the same order, that can go alone). Pure: the drift function carries out the command
// (shared/runtime/drift-consolidation.ts), `karpless disruption` prints it.
//
// A candidate is a node of ours that is initialized, not deleting or disrupting, not annotated
// do-not-disrupt, whose pods all may be evicted (candidates.ts, graceful class), whose NodePool
// consolidates, that has a price, and that is consolidatable: no pod bound, finished or deleted on
// it for consolidateAfter (the claim record's lastPodEventTime, else its Initialized time). Budgets
// are reason Empty for emptiness and Underutilized for the others, counted as drift counts them
// (plan.ts budgetMembers).

import type { Node, Pod } from '../apis/core/v1';
import { parseDurationSeconds } from '../apis/duration';
import type { NodePool } from '../apis/v1/types';
import type { InstanceType } from '../instancetypes/types';
import type { NodeClaimRecord } from '../nodeclaim/record';
import type { NodePoolUsage } from '../nodeclaim/usage';
import { deletionTimestamp } from '../runtime/objects';
import { toExistingNodes } from '../workloads/nodes';
import { allowedDisruptions, budgetCounts, budgetDecision, budgetLimit } from './budgets';
import { checkCandidate, NO_PDBS, type PdbLimits, stuckInPlace } from './candidates';
import {
  type ConsolidationCandidate,
  type ConsolidationCommand,
  computeConsolidation,
  type SimulationContext,
} from './consolidation-command';
import { consolidateAfterMs } from './emptiness';
import { budgetMembers, type ClusterNode, candidateCapacity } from './plan';

export type { ConsolidationCandidate, ConsolidationCommand } from './consolidation-command';

/** Upstream considers at most this many candidates in one multi-node command. */
export const MULTI_NODE_MAX_CANDIDATES = 100;

export interface ConsolidationPlan {
  command?: ConsolidationCommand;
  /** Every node looked at and why it was not consolidated (or what was decided). */
  considered: { nodeName: string; outcome: string }[];
  /** Messages for Unconsolidatable events: node → why (only the reasons upstream publishes). */
  unconsolidatable: { nodeName: string; message: string }[];
  /** The candidates before budgets, by pool and reason (the eligible-nodes gauge). */
  eligible?: { nodePool: string; reason: 'Empty' | 'Underutilized' }[];
}

export interface ConsolidationInput {
  now: number;
  nodes: readonly ClusterNode[];
  /** Nodes that are not ours but can take pods. */
  otherNodes?: readonly { node: Node; pods: Pod[] }[];
  nodePools: readonly NodePool[];
  /** NodePool name → its instance types, priced. */
  instanceTypes: Record<string, InstanceType[]>;
  daemonSets: Pod[];
  /** NodePool → nodes disrupting now (deleting, draining, recorded). */
  disrupting: ReadonlyMap<string, ReadonlySet<string>>;
  pdbs?: PdbLimits;
  isEvictable(pod: Pod): boolean;
  /** Pods waiting for a node (the provision function's pending set). */
  pendingPods?: readonly Pod[];
  /** What the NodePools' claims hold now (shared/nodeclaim/usage.ts): a replacement stays within the limits. */
  nodePoolUsage?: NodePoolUsage;
  /** Karpenter's SpotToSpotConsolidation feature gate (off by default). */
  spotToSpot?: boolean;
}

/** Upstream's EvictionCost: 1, moved by pod-deletion-cost and priority, clamped to [-10, 10]. */
export function evictionCost(pod: Pod): number {
  let cost = 1;
  const deletionCost = Number(pod.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost']);
  if (Number.isFinite(deletionCost)) cost += deletionCost / 2 ** 27;
  if (pod.spec.priority !== undefined) cost += pod.spec.priority / 2 ** 25;
  return Math.min(10, Math.max(-10, cost));
}

/** Upstream's LifetimeRemaining: the share of the claim's expireAfter still ahead (1 without one). */
export function lifetimeRemaining(record: NodeClaimRecord | undefined, now: number): number {
  const expireAfter = record?.spec.expireAfter;
  const total = expireAfter === undefined || expireAfter === 'Never' ? undefined : parseDurationSeconds(expireAfter);
  if (!record || total === undefined || total <= 0) return 1;
  const age = (now - Date.parse(record.metadata.creationTimestamp)) / 1000;
  return Math.min(1, Math.max(0, (total - age) / total));
}

/** When the last pod bound, finished or left: the record's lastPodEventTime, else its Initialized time, else the launch. */
export function lastPodEventTime(entry: ClusterNode): number {
  const recorded = Date.parse(entry.record?.status.lastPodEventTime ?? '');
  if (Number.isFinite(recorded)) return recorded;
  const initialized = entry.record?.status.conditions.find((c) => c.type === 'Initialized' && c.status === 'True');
  const at = Date.parse(initialized?.lastTransitionTime ?? '');
  if (Number.isFinite(at)) return at;
  // No record: the latest of the launch and the pods' creation stands in (a pod leaving is not seen).
  const times = entry.pods.map((p) => Date.parse(p.metadata.creationTimestamp ?? '')).filter(Number.isFinite);
  return Math.max(entry.instance.launchTime ?? 0, ...times);
}

function priceOf(input: ConsolidationInput, entry: ClusterNode): number | undefined {
  const type = input.instanceTypes[entry.instance.nodePool]?.find((t) => t.name === entry.instance.instanceType);
  return type?.offerings.find((o) => o.zone === entry.instance.zone && o.capacityType === entry.instance.capacityType)
    ?.price;
}

/**
 * Upstream's IsReschedulable keeps a terminating StatefulSet pod: its successor, same name, waits
 * for it to go, so the node holding it is not empty yet.
 */
function terminatingStatefulSetPod(pod: Pod): boolean {
  return (
    pod.metadata.deletionTimestamp !== undefined &&
    (pod.metadata.ownerReferences ?? []).some((o) => o.kind === 'StatefulSet')
  );
}

type Outcome = ConsolidationCandidate | { outcome: string; unconsolidatable?: boolean };

/** Why the node is no candidate, or the candidate. */
function candidateOf(input: ConsolidationInput, entry: ClusterNode): Outcome {
  const { node, instance } = entry;
  const pool = input.nodePools.find((p) => p.metadata.name === instance.nodePool);
  if (!pool) return { outcome: 'its NodePool is not in the configuration' };
  if (deletionTimestamp(node) || input.disrupting.get(instance.nodePool)?.has(node.metadata.name)) {
    return { outcome: 'already disrupting' };
  }
  const check = checkCandidate(
    { node, pods: entry.pods },
    { limits: input.pdbs ?? NO_PDBS, now: input.now, disruptionClass: 'graceful' },
  );
  if (!check.ok) return { outcome: check.message };
  const invalidPdb = input.pdbs?.invalid[0];
  if (invalidPdb) return { outcome: invalidPdb };
  const price = priceOf(input, entry);
  if (price === undefined) {
    return { outcome: `Instance Type "${instance.instanceType}" not found`, unconsolidatable: true };
  }
  const after = consolidateAfterMs(pool);
  if (after === undefined) {
    return { outcome: `NodePool "${pool.metadata.name}" has consolidation disabled`, unconsolidatable: true };
  }
  const limits = input.pdbs ?? NO_PDBS;
  const pods = entry.pods.filter(
    (p) => (input.isEvictable(p) || terminatingStatefulSetPod(p)) && !stuckInPlace(p, limits, input.now),
  );
  if (pods.length > 0 && (pool.spec.disruption?.consolidationPolicy ?? 'WhenEmptyOrUnderutilized') === 'WhenEmpty') {
    return {
      outcome: `NodePool "${pool.metadata.name}" has consolidation policy WhenEmpty, but node is not empty`,
      unconsolidatable: true,
    };
  }
  // The claim's Consolidatable condition: no pod event for consolidateAfter, empty or not.
  const last = lastPodEventTime(entry);
  if (input.now < last + after) {
    return {
      outcome: `not consolidatable until ${new Date(last + after).toISOString()} (last pod event ${new Date(last).toISOString()}, consolidateAfter ${pool.spec.disruption?.consolidateAfter})`,
    };
  }
  const cost = pods.reduce((sum, p) => sum + evictionCost(p), 0) * lifetimeRemaining(entry.record, input.now);
  return {
    nodeName: node.metadata.name,
    instanceId: instance.instanceId,
    nodePool: instance.nodePool,
    instanceType: instance.instanceType,
    zone: instance.zone,
    capacityType: instance.capacityType,
    price,
    pods,
    disruptionCost: cost,
    capacity: candidateCapacity(input, { ...instance, nodeName: node.metadata.name }),
  };
}

function simulationContext(input: ConsolidationInput): SimulationContext {
  const disrupting = new Set([...input.disrupting.values()].flatMap((s) => [...s]));
  const all = [...input.nodes, ...(input.otherNodes ?? [])];
  const active = all.filter((e) => !deletionTimestamp(e.node) && !disrupting.has(e.node.metadata.name));
  const deleting = all.filter((e) => deletionTimestamp(e.node) || disrupting.has(e.node.metadata.name));
  const limits = input.pdbs ?? NO_PDBS;
  return {
    nodePools: input.nodePools,
    instanceTypes: input.instanceTypes,
    daemonSets: input.daemonSets,
    landing: toExistingNodes(
      active.map((e) => e.node),
      active.flatMap((e) => e.pods),
      input.nodePools,
    ).existingNodes,
    pendingPods: input.pendingPods ?? [],
    deletingPods: deleting
      .flatMap((e) => e.pods)
      .filter((p) => input.isEvictable(p) && !stuckInPlace(p, limits, input.now)),
    ...(input.nodePoolUsage ? { nodePoolUsage: input.nodePoolUsage } : {}),
    spotToSpot: input.spotToSpot ?? false,
  };
}

/**
 * Upstream's firstNConsolidationOption: the largest prefix [0, mid] of the candidates (at least two)
 * that can be deleted, or replaced by one node with instance types left after filterOutSameType.
 */
function multiNode(
  ctx: SimulationContext,
  candidates: readonly ConsolidationCandidate[],
): ConsolidationCommand | undefined {
  if (candidates.length < 2) return undefined;
  let min = 1;
  let max = Math.min(candidates.length, MULTI_NODE_MAX_CANDIDATES);
  if (candidates.length <= max) max = candidates.length - 1;
  let saved: ConsolidationCommand | undefined;
  while (min <= max) {
    const mid = Math.floor((min + max) / 2);
    const command = computeConsolidation(ctx, candidates.slice(0, mid + 1), 'multi');
    if (typeof command !== 'string') {
      saved = command;
      min = mid + 1;
    } else {
      max = mid - 1;
    }
  }
  return saved;
}

function describe(command: ConsolidationCommand): string {
  const nodes = command.candidates.map((c) => c.nodeName).join(', ');
  if (command.method === 'empty') return `emptiness: delete ${nodes}, empty, saves $${command.savings.toFixed(4)}/h`;
  const what =
    command.kind === 'delete'
      ? `delete ${nodes}: the pods fit on other nodes`
      : `replace ${nodes} by one ${command.replacement?.offering.instanceType} (${command.replacement?.offering.capacityType})`;
  return `${command.method}-node consolidation: ${what}, saves $${command.savings.toFixed(4)}/h`;
}

/** The candidates, in order, that the pool's budgets for `reason` let go now; the others' outcome says which budget blocks. */
function withinBudget(
  input: ConsolidationInput,
  candidates: readonly ConsolidationCandidate[],
  reason: 'Empty' | 'Underutilized',
  considered: ConsolidationPlan['considered'],
): ConsolidationCandidate[] {
  const counts = budgetCounts(budgetMembers(input.nodes, input.disrupting));
  const allowed = new Map<string, number>();
  const out: ConsolidationCandidate[] = [];
  for (const c of candidates) {
    const pool = input.nodePools.find((p) => p.metadata.name === c.nodePool) as NodePool;
    const count = counts.get(c.nodePool) ?? { nodes: 0, disrupting: new Set<string>() };
    const limit = budgetLimit(pool, reason, { nodes: count.nodes, now: input.now });
    if (!allowed.has(c.nodePool)) allowed.set(c.nodePool, allowedDisruptions(limit, count.disrupting.size));
    const left = allowed.get(c.nodePool) ?? 0;
    if (left <= 0) {
      // The nodes this pass already picked count as disrupting in the message, as they will.
      const picked = out.filter((o) => o.nodePool === c.nodePool).length;
      const message = budgetDecision(limit, count.disrupting.size + picked).message;
      considered.push({ nodeName: c.nodeName, outcome: message });
      continue;
    }
    allowed.set(c.nodePool, left - 1);
    out.push(c);
  }
  return out;
}

/**
 * Emptiness (every empty candidate the Empty budgets allow, deleted in one command), then
 * multi-node, then single-node consolidation: the first command found, with every node's outcome.
 */
export function planConsolidation(input: ConsolidationInput): ConsolidationPlan {
  const considered: ConsolidationPlan['considered'] = [];
  const unconsolidatable: ConsolidationPlan['unconsolidatable'] = [];
  const candidates: ConsolidationCandidate[] = [];
  for (const entry of input.nodes) {
    const outcome = candidateOf(input, entry);
    const nodeName = entry.node.metadata.name;
    if ('outcome' in outcome) {
      considered.push({ nodeName, outcome: outcome.outcome });
      if (outcome.unconsolidatable) unconsolidatable.push({ nodeName, message: outcome.outcome });
    } else candidates.push(outcome);
  }
  // Upstream's sortCandidates: cheapest to disrupt first.
  candidates.sort((a, b) => a.disruptionCost - b.disruptionCost || (a.nodeName < b.nodeName ? -1 : 1));
  const eligible = candidates.map((c) => ({
    nodePool: c.nodePool,
    reason: c.pods.length === 0 ? ('Empty' as const) : ('Underutilized' as const),
  }));
  const empty = withinBudget(
    input,
    candidates.filter((c) => c.pods.length === 0),
    'Empty',
    considered,
  );
  if (empty.length > 0) {
    const command: ConsolidationCommand = {
      kind: 'delete',
      method: 'empty',
      candidates: empty,
      savings: empty.reduce((sum, c) => sum + c.price, 0),
      elsewhere: {},
    };
    for (const c of empty) considered.push({ nodeName: c.nodeName, outcome: describe(command) });
    return { command, considered, unconsolidatable, eligible };
  }
  const underutilized = withinBudget(
    input,
    candidates.filter((c) => c.pods.length > 0),
    'Underutilized',
    considered,
  );
  const ctx = simulationContext(input);
  const multi = multiNode(ctx, underutilized.slice(0, MULTI_NODE_MAX_CANDIDATES));
  if (multi) {
    for (const c of multi.candidates) considered.push({ nodeName: c.nodeName, outcome: describe(multi) });
    return { command: multi, considered, unconsolidatable, eligible };
  }
  for (const candidate of underutilized) {
    const command = computeConsolidation(ctx, [candidate], 'single');
    if (typeof command === 'string') {
      considered.push({ nodeName: candidate.nodeName, outcome: command });
      unconsolidatable.push({ nodeName: candidate.nodeName, message: command });
      continue;
    }
    considered.push({ nodeName: candidate.nodeName, outcome: describe(command) });
    return { command, considered, unconsolidatable, eligible };
  }
  return { considered, unconsolidatable, eligible };
}
