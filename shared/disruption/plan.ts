// planDisruption: the nodes of ours → candidates (expired, drifted) → budget decisions → a
// replacement plan per candidate from the scheduling core (what its pods need, priced). Pure: the
// drift function acts on the plan, `karpless disruption` prints it.
//
// Karpenter's rules kept here: only registered, initialized nodes that are not being deleted are
// candidates; a node or pod annotated karpenter.sh/do-not-disrupt keeps a node from drift (not from
// expiration, which is forceful and ignores budgets too); nodes already disrupting count against
// the budget; a drifted node whose pods would not all schedule again is left alone.

import type { Node, Pod } from '../apis/core/v1';
import type { NodePool } from '../apis/v1/types';
import { KUBE } from '../contracts';
import type { InstanceType } from '../instancetypes/types';
import type { NodeClaimRecord } from '../nodeclaim/record';
import {
  addClaim,
  capacityFromCatalog,
  capacityOf,
  type NodePoolUsage,
  plannedCapacity,
  usageWithout,
} from '../nodeclaim/usage';
import { deletionTimestamp } from '../runtime/objects';
import { type ExistingNode, type PlannedNodeClaim, podKey, solve, type UnschedulablePod } from '../scheduling';
import { toExistingNodes } from '../workloads/nodes';
import { budgetDecision, budgetLimit } from './budgets';
import { type DriftSubject, detectDrift, type NodeClassToday } from './drift';
import { expiryOf } from './expiration';
import { HASH_TAG_KEYS } from './hash';
import type { BudgetDecision, DisruptionCause } from './types';

/** One node of ours: the Node, what EC2 says of its instance, and the pods bound to it. */
export interface ClusterNode {
  node: Node;
  instance: Omit<DriftSubject, 'instanceTypeLabels' | 'nodeLabels'> & {
    instanceId: string;
    nodePool: string;
    nodeClass: string;
    zone: string;
    capacityType: string;
    launchTime?: number;
  };
  pods: Pod[];
  /** Its NodeClaim record: expiration, drift and the drain deadline read what the claim was launched with. */
  record?: NodeClaimRecord;
}

export interface DisruptionCandidate {
  nodeName: string;
  instanceId: string;
  nodePool: string;
  instanceType: string;
  zone: string;
  capacityType: string;
  reason: DisruptionCause;
  /** "AMIDrift: node runs ami-1; …" or "expired: launched … + expireAfter 720h". */
  detail: string;
  /** Pods that must find a new place (DaemonSet and mirror pods stay behind). */
  pods: Pod[];
  launchTime?: number;
}

export interface ExcludedNode {
  nodeName: string;
  reason: string;
}

export interface ReplacementPlan {
  nodeClaims: PlannedNodeClaim[];
  /** Pods that fit on nodes already there: existing node name → pod keys. */
  elsewhere: Record<string, string[]>;
  unschedulable: UnschedulablePod[];
  /** USD/hour of the replacements. */
  totalPrice: number;
}

export interface CandidateDecision {
  candidate: DisruptionCandidate;
  /** May start disrupting now. */
  allowed: boolean;
  /** Which budget allows or blocks, or why a forceful reason needs none. */
  budget: BudgetDecision;
  replacement: ReplacementPlan;
}

export interface DisruptionPlan {
  decisions: CandidateDecision[];
  /** Nodes of ours that are not candidates although something would disrupt them, with why. */
  excluded: ExcludedNode[];
}

export interface CandidateInput {
  now: number;
  nodes: readonly ClusterNode[];
  nodePools: readonly NodePool[];
  /** Node class name → how it resolves now. */
  nodeClasses: ReadonlyMap<string, NodeClassToday>;
  /** The labels of an instance type of a NodePool today, undefined when the catalog lacks it. */
  instanceTypeLabels(nodePool: string, instanceType: string): Record<string, string> | undefined;
  isEvictable(pod: Pod): boolean;
}

function doNotDisrupt(entry: ClusterNode, isEvictable: (pod: Pod) => boolean): string | undefined {
  if (entry.node.metadata.annotations?.[KUBE.doNotDisruptAnnotation] === 'true') return 'the node';
  const pod = entry.pods.find(
    (p) => isEvictable(p) && p.metadata.annotations?.[KUBE.doNotDisruptAnnotation] === 'true',
  );
  return pod ? `pod ${podKey(pod)}` : undefined;
}

function candidateOf(entry: ClusterNode, pods: Pod[], reason: DisruptionCause, detail: string): DisruptionCandidate {
  const { instance } = entry;
  return {
    nodeName: entry.node.metadata.name,
    instanceId: instance.instanceId,
    nodePool: instance.nodePool,
    instanceType: instance.instanceType,
    zone: instance.zone,
    capacityType: instance.capacityType,
    reason,
    detail,
    pods,
    ...(instance.launchTime !== undefined ? { launchTime: instance.launchTime } : {}),
  };
}

/** Expired and drifted nodes, oldest first, and the ones left alone with why. */
export function findCandidates(input: CandidateInput): { candidates: DisruptionCandidate[]; excluded: ExcludedNode[] } {
  const candidates: DisruptionCandidate[] = [];
  const excluded: ExcludedNode[] = [];
  for (const entry of input.nodes) {
    const labels = entry.node.metadata.labels ?? {};
    const nodePool = input.nodePools.find((p) => p.metadata.name === entry.instance.nodePool);
    const today = input.nodeClasses.get(entry.instance.nodeClass);
    if (deletionTimestamp(entry.node) || !nodePool || !today) continue;
    if (labels[KUBE.registeredLabel] !== 'true' || labels[KUBE.initializedLabel] !== 'true') continue;
    const pods = entry.pods.filter(input.isEvictable);
    const name = entry.node.metadata.name;
    const hashTags = launchedHashTags(entry);
    const expiry = expiryOf({
      nodePool,
      ...(entry.record ? { claim: entry.record } : {}),
      ...(entry.instance.launchTime !== undefined ? { launchTime: entry.instance.launchTime } : {}),
      ...(hashTags ? { hashTags } : {}),
    });
    if (expiry && input.now >= expiry.at) {
      const since = new Date(expiry.since).toISOString();
      const detail =
        expiry.source === 'NodeClaim'
          ? `NodeClaim created ${since}, expireAfter ${expiry.expireAfter}`
          : `launched ${since}, expireAfter ${expiry.expireAfter}`;
      candidates.push(candidateOf(entry, pods, 'Expired', detail));
      continue;
    }
    const subject: DriftSubject = {
      ...entry.instance,
      ...(hashTags ? { hashTags } : {}),
      nodeLabels: labels,
      ...optional('instanceTypeLabels', input.instanceTypeLabels(entry.instance.nodePool, entry.instance.instanceType)),
    };
    const drift = detectDrift(subject, nodePool, today);
    if (!drift) continue;
    const blocker = doNotDisrupt(entry, input.isEvictable);
    if (blocker) {
      excluded.push({
        nodeName: name,
        reason: `${drift.reason}, but ${blocker} is annotated ${KUBE.doNotDisruptAnnotation}`,
      });
      continue;
    }
    candidates.push(candidateOf(entry, pods, 'Drifted', `${drift.reason}: ${drift.detail}`));
  }
  candidates.sort((a, b) => (a.launchTime ?? 0) - (b.launchTime ?? 0) || (a.nodeName < b.nodeName ? -1 : 1));
  return { candidates, excluded };
}

/** The hash tags the claim launched with: its record's annotations, else the instance's tags. */
function launchedHashTags(entry: ClusterNode): Record<string, string> | undefined {
  const annotations = entry.record?.metadata.annotations ?? {};
  const fromRecord = Object.fromEntries(HASH_TAG_KEYS.flatMap((k) => (annotations[k] ? [[k, annotations[k]]] : [])));
  return Object.keys(fromRecord).length > 0 ? fromRecord : entry.instance.hashTags;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

export interface PlanInput extends CandidateInput {
  /** NodePool name → its instance types, priced. */
  instanceTypes: Record<string, InstanceType[]>;
  /** One pod template per DaemonSet. */
  daemonSets: Pod[];
  /** NodePool name → nodes already being disrupted (deleting, draining, replacing). */
  disrupting: ReadonlyMap<string, ReadonlySet<string>>;
  /** Nodes that are not ours but can take pods (managed node groups, Fargate excluded by taints). */
  otherNodes?: readonly { node: Node; pods: Pod[] }[];
  /**
   * What the NodePools' claims hold now, candidates included and claims being deleted left out
   * (shared/nodeclaim/usage.ts): replacements are planned within the limits that leaves.
   */
  nodePoolUsage?: NodePoolUsage;
}

function asPending(pod: Pod): Pod {
  const { nodeName: _bound, ...spec } = pod.spec;
  return { ...pod, spec, status: { phase: 'Pending' } };
}

/** The capacity candidates' pods may move to: every node that is neither a candidate nor disrupting. */
function landingNodes(input: PlanInput, excludedNames: ReadonlySet<string>): ExistingNode[] {
  const entries = [...input.nodes, ...(input.otherNodes ?? [])].filter(
    (e) => !excludedNames.has(e.node.metadata.name) && !deletionTimestamp(e.node),
  );
  return toExistingNodes(
    entries.map((e) => e.node),
    entries.flatMap((e) => e.pods),
  ).existingNodes;
}

interface Simulated {
  plan: ReplacementPlan;
  /** Pods placed on landing nodes, to apply once the candidate is allowed. */
  placed: { name: string; pods: Pod[] }[];
}

/** What the candidate's claim holds: its Node's capacity, else its instance type's. */
export function candidateCapacity(
  input: Pick<PlanInput, 'nodes' | 'instanceTypes'>,
  candidate: Pick<DisruptionCandidate, 'nodeName' | 'nodePool' | 'instanceType'>,
) {
  const entry = input.nodes.find((n) => n.node.metadata.name === candidate.nodeName);
  return capacityOf(entry?.node, capacityFromCatalog(input.instanceTypes)(candidate.nodePool, candidate.instanceType));
}

function planReplacement(
  input: PlanInput,
  candidate: DisruptionCandidate,
  landing: readonly ExistingNode[],
  usage: NodePoolUsage | undefined,
): Simulated {
  if (candidate.pods.length === 0) {
    return { plan: { nodeClaims: [], elsewhere: {}, unschedulable: [], totalPrice: 0 }, placed: [] };
  }
  const result = solve({
    pods: candidate.pods.map(asPending),
    nodePools: [...input.nodePools],
    instanceTypes: input.instanceTypes,
    daemonSets: input.daemonSets,
    existingNodes: landing.map((n) => ({ ...n, pods: [...n.pods] })),
    ...(usage ? { nodePoolUsage: usage } : {}),
  });
  const placed = result.existingNodes.filter((p) => p.pods.length > 0);
  return {
    plan: {
      nodeClaims: result.nodeClaims,
      elsewhere: Object.fromEntries(placed.map((p) => [p.name, p.pods.map(podKey)])),
      unschedulable: result.unschedulable,
      totalPrice: result.totalPrice,
    },
    placed,
  };
}

function budgetFor(
  input: PlanInput,
  nodePool: NodePool,
  candidate: DisruptionCandidate,
  busy: ReadonlySet<string>,
  plan: ReplacementPlan,
): BudgetDecision {
  if (candidate.reason === 'Expired') return { allowed: true, message: 'expiration is forceful: budgets do not apply' };
  if (busy.has(candidate.nodeName)) return { allowed: true, message: 'already disrupting' };
  const limit = budgetLimit(nodePool, candidate.reason, { nodes: poolSize(input, candidate.nodePool), now: input.now });
  const budget = budgetDecision(limit, busy.size);
  if (!budget.allowed || plan.unschedulable.length === 0) return budget;
  return {
    ...budget,
    allowed: false,
    message: `${plan.unschedulable.length} pod(s) would not schedule again (${plan.unschedulable[0]?.reasons[0] ?? 'no reason given'})`,
  };
}

function poolSize(input: PlanInput, nodePool: string): number {
  return input.nodes.filter((n) => n.instance.nodePool === nodePool).length;
}

/** Candidates, what the budgets decide for each (in order), and each one's replacement plan. */
export function planDisruption(input: PlanInput): DisruptionPlan {
  const { candidates, excluded } = findCandidates(input);
  const disrupting = new Map([...input.disrupting].map(([pool, nodes]) => [pool, new Set(nodes)]));
  const landing = landingNodes(
    input,
    new Set([...candidates.map((c) => c.nodeName), ...[...disrupting.values()].flatMap((s) => [...s])]),
  );
  const decisions: CandidateDecision[] = [];
  // Each allowed candidate leaves the limits and its replacements enter them, for the next candidate.
  let usage = input.nodePoolUsage;
  for (const candidate of candidates) {
    const nodePool = input.nodePools.find((p) => p.metadata.name === candidate.nodePool);
    if (!nodePool) continue;
    const busy = disrupting.get(candidate.nodePool) ?? new Set<string>();
    disrupting.set(candidate.nodePool, busy);
    const simulated = usageWithout(usage, candidate.nodePool, candidateCapacity(input, candidate));
    const { plan, placed } = planReplacement(input, candidate, landing, simulated);
    const budget = budgetFor(input, nodePool, candidate, busy, plan);
    if (budget.allowed) {
      if (simulated) {
        for (const claim of plan.nodeClaims) addClaim(simulated, claim.nodePool, plannedCapacity(claim.instanceTypes));
        usage = simulated;
      }
      busy.add(candidate.nodeName);
      // The next candidate sees these pods where this one's plan put them.
      for (const p of placed) landing.find((n) => n.name === p.name)?.pods.push(...p.pods);
    }
    decisions.push({ candidate, allowed: budget.allowed, budget, replacement: plan });
  }
  return { decisions, excluded };
}
