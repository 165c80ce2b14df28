// Single-node consolidation (Karpenter's SingleNodeConsolidation, reference §8) for NodePools with
// consolidationPolicy WhenEmptyOrUnderutilized: the first candidate whose pods the scheduling core
// places elsewhere is deleted, or replaced by one cheaper node when they need a node of their own.
// Pure: the drift function acts on the command (shared/runtime/drift-consolidation.ts).
//
// Kept from Karpenter: only registered, initialized nodes that are not disrupting, not annotated
// karpenter.sh/do-not-disrupt (nor any of their pods), whose pods' PodDisruptionBudgets allow an
// eviction, that are consolidatable (no pod event for consolidateAfter) and within the Underutilized
// budgets; every pod must schedule again; a replacement must be strictly cheaper and is one node; a
// spot node is only deleted, never replaced (SpotToSpotConsolidation is off by default upstream).
// Different: Karpenter times consolidateAfter from the NodeClaim's lastPodEventTime; without NodeClaim
// objects the latest of the instance's launch and its pods' creation stands in for it (a pod leaving
// is not seen). Empty nodes are left to emptiness.ts.

import type { LabelSelector, Node, Pod } from '../apis/core/v1';
import type { NodePool } from '../apis/v1/types';
import { KUBE } from '../contracts';
import type { InstanceType } from '../instancetypes/types';
import { type NodePoolUsage, usageWithout } from '../nodeclaim/usage';
import { deletionTimestamp } from '../runtime/objects';
import { type PlannedNodeClaim, podKey, solve } from '../scheduling';
import { compileSelector } from '../scheduling/topology';
import { toExistingNodes } from '../workloads/nodes';
import { allowedDisruptions, budgetDecision, budgetLimit } from './budgets';
import { consolidateAfterMs } from './emptiness';
import { type ClusterNode, candidateCapacity } from './plan';

/** What a PodDisruptionBudget allows now (status.disruptionsAllowed). */
export interface DisruptionBudgetView {
  namespace: string;
  name: string;
  selector?: LabelSelector;
  disruptionsAllowed: number;
}

export interface ConsolidationCandidate {
  nodeName: string;
  instanceId: string;
  nodePool: string;
  instanceType: string;
  zone: string;
  capacityType: string;
  /** USD/hour of the node's offering today. */
  price: number;
  /** The pods that must move. */
  pods: Pod[];
}

export type ConsolidationCommand =
  | { kind: 'delete'; candidate: ConsolidationCandidate; savings: number; elsewhere: Record<string, string[]> }
  | { kind: 'replace'; candidate: ConsolidationCandidate; replacement: PlannedNodeClaim; savings: number };

export interface ConsolidationPlan {
  command?: ConsolidationCommand;
  /** Every node looked at and why it was not consolidated (or what was decided). */
  considered: { nodeName: string; outcome: string }[];
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
  pdbs: readonly DisruptionBudgetView[];
  isEvictable(pod: Pod): boolean;
  /** What the NodePools' claims hold now (shared/nodeclaim/usage.ts): a replacement stays within the limits. */
  nodePoolUsage?: NodePoolUsage;
}

function lastPodEvent(entry: ClusterNode): number {
  const times = entry.pods.map((p) => Date.parse(p.metadata.creationTimestamp ?? '')).filter(Number.isFinite);
  return Math.max(entry.instance.launchTime ?? 0, ...times);
}

/** The PDB that forbids evicting one of the pods now, if any. */
export function blockingBudget(pods: readonly Pod[], pdbs: readonly DisruptionBudgetView[]): string | undefined {
  for (const pod of pods) {
    const namespace = pod.metadata.namespace ?? 'default';
    for (const pdb of pdbs) {
      if (pdb.namespace !== namespace || pdb.disruptionsAllowed > 0) continue;
      if (compileSelector(pdb.selector).matches(pod.metadata.labels ?? {})) {
        return `pod ${podKey(pod)}: PodDisruptionBudget ${pdb.namespace}/${pdb.name} allows no disruption`;
      }
    }
  }
  return undefined;
}

function priceOf(input: ConsolidationInput, entry: ClusterNode): number | undefined {
  const type = input.instanceTypes[entry.instance.nodePool]?.find((t) => t.name === entry.instance.instanceType);
  return type?.offerings.find((o) => o.zone === entry.instance.zone && o.capacityType === entry.instance.capacityType)
    ?.price;
}

/** Why the node is no candidate, or the candidate. */
function candidateOf(input: ConsolidationInput, entry: ClusterNode): ConsolidationCandidate | string {
  const { node, instance } = entry;
  const labels = node.metadata.labels ?? {};
  const pool = input.nodePools.find((p) => p.metadata.name === instance.nodePool);
  if (!pool) return 'its NodePool is not in the configuration';
  if ((pool.spec.disruption?.consolidationPolicy ?? 'WhenEmptyOrUnderutilized') !== 'WhenEmptyOrUnderutilized') {
    return 'consolidationPolicy is not WhenEmptyOrUnderutilized';
  }
  const after = consolidateAfterMs(pool);
  if (after === undefined) return 'consolidateAfter is Never';
  if (deletionTimestamp(node) || input.disrupting.get(instance.nodePool)?.has(node.metadata.name))
    return 'already disrupting';
  if (labels[KUBE.registeredLabel] !== 'true' || labels[KUBE.initializedLabel] !== 'true') return 'not initialized';
  if (node.metadata.annotations?.[KUBE.doNotDisruptAnnotation] === 'true')
    return `annotated ${KUBE.doNotDisruptAnnotation}`;
  const pods = entry.pods.filter(input.isEvictable);
  if (pods.length === 0) return 'empty: left to emptiness';
  const pinned = pods.find((p) => p.metadata.annotations?.[KUBE.doNotDisruptAnnotation] === 'true');
  if (pinned) return `pod ${podKey(pinned)} is annotated ${KUBE.doNotDisruptAnnotation}`;
  if (input.now < lastPodEvent(entry) + after) return `not consolidatable before consolidateAfter passes`;
  const blocked = blockingBudget(pods, input.pdbs);
  if (blocked) return blocked;
  const price = priceOf(input, entry);
  if (price === undefined) return `no price for ${instance.instanceType} ${instance.capacityType} in ${instance.zone}`;
  return {
    nodeName: node.metadata.name,
    instanceId: instance.instanceId,
    nodePool: instance.nodePool,
    instanceType: instance.instanceType,
    zone: instance.zone,
    capacityType: instance.capacityType,
    price,
    pods,
  };
}

function asPending(pod: Pod): Pod {
  const { nodeName: _bound, ...spec } = pod.spec;
  return { ...pod, spec, status: { phase: 'Pending' } };
}

function cheapest(type: InstanceType): number {
  return Math.min(...type.offerings.filter((o) => o.available).map((o) => o.price));
}

/** Simulates moving the candidate's pods; the command, or why there is none. */
function simulate(input: ConsolidationInput, candidate: ConsolidationCandidate): ConsolidationCommand | string {
  const busy = new Set([...input.disrupting.values()].flatMap((s) => [...s]));
  const landing = [...input.nodes, ...(input.otherNodes ?? [])].filter(
    (e) => e.node.metadata.name !== candidate.nodeName && !deletionTimestamp(e.node) && !busy.has(e.node.metadata.name),
  );
  const existing = toExistingNodes(
    landing.map((e) => e.node),
    landing.flatMap((e) => e.pods),
  ).existingNodes;
  const usage = usageWithout(input.nodePoolUsage, candidate.nodePool, candidateCapacity(input, candidate));
  const result = solve({
    pods: candidate.pods.map(asPending),
    nodePools: [...input.nodePools],
    instanceTypes: input.instanceTypes,
    daemonSets: input.daemonSets,
    existingNodes: existing,
    ...(usage ? { nodePoolUsage: usage } : {}),
  });
  if (result.unschedulable.length > 0) {
    return `${result.unschedulable.length} pod(s) would not schedule again (${result.unschedulable[0]?.reasons[0] ?? 'no reason given'})`;
  }
  if (result.nodeClaims.length === 0) {
    const elsewhere = Object.fromEntries(
      result.existingNodes.filter((p) => p.pods.length > 0).map((p) => [p.name, p.pods.map(podKey)]),
    );
    return { kind: 'delete', candidate, savings: candidate.price, elsewhere };
  }
  if (result.nodeClaims.length > 1) return `its pods would need ${result.nodeClaims.length} new nodes`;
  if (candidate.capacityType === 'spot')
    return 'a spot node is only deleted, never replaced (spot-to-spot consolidation)';
  const [claim] = result.nodeClaims;
  if (!claim || claim.offering.price >= candidate.price) {
    return `no cheaper replacement (cheapest ${claim?.offering.instanceType} at $${claim?.offering.price.toFixed(4)}/h vs $${candidate.price.toFixed(4)}/h)`;
  }
  const replacement = { ...claim, instanceTypes: claim.instanceTypes.filter((t) => cheapest(t) < candidate.price) };
  return { kind: 'replace', candidate, replacement, savings: candidate.price - claim.offering.price };
}

/**
 * The first consolidation command the budgets allow, trying candidates with the fewest pods first
 * (the cheapest to disrupt), then the most expensive; every node considered is listed with why.
 */
export function planSingleNodeConsolidation(input: ConsolidationInput): ConsolidationPlan {
  const considered: ConsolidationPlan['considered'] = [];
  const candidates: ConsolidationCandidate[] = [];
  for (const entry of input.nodes) {
    const outcome = candidateOf(input, entry);
    if (typeof outcome === 'string') considered.push({ nodeName: entry.node.metadata.name, outcome });
    else candidates.push(outcome);
  }
  candidates.sort((a, b) => a.pods.length - b.pods.length || b.price - a.price || (a.nodeName < b.nodeName ? -1 : 1));
  for (const candidate of candidates) {
    const pool = input.nodePools.find((p) => p.metadata.name === candidate.nodePool);
    if (!pool) continue;
    const poolNodes = input.nodes.filter((n) => n.instance.nodePool === candidate.nodePool).length;
    const limit = budgetLimit(pool, 'Underutilized', { nodes: poolNodes, now: input.now });
    const disrupting = input.disrupting.get(candidate.nodePool)?.size ?? 0;
    if (allowedDisruptions(limit, disrupting) === 0) {
      considered.push({ nodeName: candidate.nodeName, outcome: budgetDecision(limit, disrupting).message });
      continue;
    }
    const command = simulate(input, candidate);
    if (typeof command === 'string') {
      considered.push({ nodeName: candidate.nodeName, outcome: command });
      continue;
    }
    considered.push({
      nodeName: candidate.nodeName,
      outcome:
        command.kind === 'delete'
          ? `delete: its pods fit on other nodes, saves $${command.savings.toFixed(4)}/h`
          : `replace by ${command.replacement.offering.instanceType}, saves $${command.savings.toFixed(4)}/h`,
    });
    return { command, considered };
  }
  return { considered };
}
