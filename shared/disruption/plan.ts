// planDisruption: the nodes of ours → candidates (expired, drifted) → budget decisions → a
// replacement plan per candidate from the scheduling core (what its pods need, priced). Pure: the
// drift function acts on the plan, `karpless disruption` prints it.
//
// Karpenter's rules kept here: only registered, initialized nodes that are not being deleted are
// candidates (candidates.ts); a drifted node whose pods block eviction (do-not-disrupt, a PDB, two
// PDBs on one pod) is left alone unless its claim has a terminationGracePeriod; expiration is
// forceful and ignores budgets and blocks alike; drifted candidates go empty ones first, then by
// how long they have been drifted; the budgets count only initialized nodes, and NotReady,
// deleting and disrupting ones use them up; a drifted node whose pods would not all schedule again
// is left alone.

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
import { type BudgetMember, budgetCounts, budgetDecision, budgetLimit, type PoolBudgetCount } from './budgets';
import { checkCandidate, NO_PDBS, type PdbLimits, stuckInPlace } from './candidates';
import { type Drift, type DriftSubject, detectDrift, type NodeClassToday } from './drift';
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
    reservation?: { id: string };
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
  /** Epoch ms the node was first seen drifted (its claim's Drifted condition), for upstream's order. */
  driftedSince?: number;
  /** A pod block a terminationGracePeriod lets drift go past, reported so users see why the drain may wait. */
  ignoredBlock?: string;
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
  /** The cluster's PodDisruptionBudgets (candidates.ts pdbLimits); none when absent. */
  pdbs?: PdbLimits;
  /** NodePool name → its instance types today: InstanceTypeNotFound drift reads their offerings. */
  instanceTypes?: Record<string, InstanceType[]>;
}

/** Upstream checks InstanceTypeNotFound only for claims older than this. */
export const INSTANCE_TYPE_NOT_FOUND_AFTER_MS = 60 * 60 * 1000;

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

/** Today's catalog has no offering of the node's type in its zone and capacity type (reserved may be on-demand now). */
function instanceTypeNotFound(input: CandidateInput, entry: ClusterNode): boolean | undefined {
  const { instance } = entry;
  const created = Date.parse(entry.record?.metadata.creationTimestamp ?? '') || instance.launchTime;
  const types = input.instanceTypes?.[instance.nodePool];
  if (!types || created === undefined || input.now - created <= INSTANCE_TYPE_NOT_FOUND_AFTER_MS) return undefined;
  const type = types.find((t) => t.name === instance.instanceType);
  const capacityTypes = instance.capacityType === 'reserved' ? ['reserved', 'on-demand'] : [instance.capacityType];
  return !type?.offerings.some((o) => o.zone === instance.zone && capacityTypes.includes(o.capacityType));
}

/**
 * The pods a replacement must hold (IsCurrentlyReschedulable): not DaemonSet, mirror or finished
 * pods, nor pods no eviction will move (an active do-not-disrupt, a fully blocking PDB).
 */
function movingPods(input: CandidateInput, entry: ClusterNode): Pod[] {
  const limits = input.pdbs ?? NO_PDBS;
  return entry.pods.filter((p) => input.isEvictable(p) && !stuckInPlace(p, limits, input.now));
}

/** When the node was first found drifted: its claim's Drifted condition, else now. */
function driftedSince(entry: ClusterNode, now: number): number {
  const drifted = entry.record?.status.conditions.find((c) => c.type === 'Drifted' && c.status === 'True');
  const at = Date.parse(drifted?.lastTransitionTime ?? '');
  return Number.isFinite(at) ? at : now;
}

function expiredCandidate(
  input: CandidateInput,
  entry: ClusterNode,
  nodePool: NodePool,
): DisruptionCandidate | undefined {
  const hashTags = launchedHashTags(entry);
  const expiry = expiryOf({
    nodePool,
    ...(entry.record ? { claim: entry.record } : {}),
    ...(entry.instance.launchTime !== undefined ? { launchTime: entry.instance.launchTime } : {}),
    ...(hashTags ? { hashTags } : {}),
  });
  if (!expiry || input.now < expiry.at) return undefined;
  const since = new Date(expiry.since).toISOString();
  const detail =
    expiry.source === 'NodeClaim'
      ? `NodeClaim created ${since}, expireAfter ${expiry.expireAfter}`
      : `launched ${since}, expireAfter ${expiry.expireAfter}`;
  return candidateOf(entry, movingPods(input, entry), 'Expired', detail);
}

function driftSubject(input: CandidateInput, entry: ClusterNode): DriftSubject {
  const hashTags = launchedHashTags(entry);
  const { reservation: _reservation, ...instance } = entry.instance;
  return {
    ...instance,
    ...(hashTags ? { hashTags } : {}),
    nodeLabels: entry.node.metadata.labels ?? {},
    ...optional('claimLabels', entry.record?.metadata.labels),
    ...optional('reservationId', entry.instance.reservation?.id),
    ...optional('instanceTypeNotFound', instanceTypeNotFound(input, entry)),
    ...optional('instanceTypeLabels', input.instanceTypeLabels(entry.instance.nodePool, entry.instance.instanceType)),
  };
}

/** How the node drifted, whatever else is true of it (its claim's Drifted condition); undefined when it did not. */
export function driftOf(input: CandidateInput, entry: ClusterNode): Drift | undefined {
  const nodePool = input.nodePools.find((p) => p.metadata.name === entry.instance.nodePool);
  const today = input.nodeClasses.get(entry.instance.nodeClass);
  if (!nodePool || !today) return undefined;
  return detectDrift(driftSubject(input, entry), nodePool, today);
}

/** Empty drifted nodes first, then the longest drifted; expired ones (forceful) ahead of both. */
function upstreamOrder(a: DisruptionCandidate, b: DisruptionCandidate): number {
  const rank = (c: DisruptionCandidate) => (c.reason === 'Expired' ? 0 : c.pods.length === 0 ? 1 : 2);
  return (
    rank(a) - rank(b) ||
    (a.reason === 'Expired'
      ? (a.launchTime ?? 0) - (b.launchTime ?? 0)
      : (a.driftedSince ?? 0) - (b.driftedSince ?? 0)) ||
    (a.launchTime ?? 0) - (b.launchTime ?? 0) ||
    (a.nodeName < b.nodeName ? -1 : 1)
  );
}

/** Expired and drifted nodes in upstream's order, and the ones left alone with why. */
export function findCandidates(input: CandidateInput): { candidates: DisruptionCandidate[]; excluded: ExcludedNode[] } {
  const candidates: DisruptionCandidate[] = [];
  const excluded: ExcludedNode[] = [];
  const limits = input.pdbs ?? NO_PDBS;
  for (const entry of input.nodes) {
    const labels = entry.node.metadata.labels ?? {};
    const nodePool = input.nodePools.find((p) => p.metadata.name === entry.instance.nodePool);
    const today = input.nodeClasses.get(entry.instance.nodeClass);
    if (deletionTimestamp(entry.node) || !nodePool || !today) continue;
    if (labels[KUBE.registeredLabel] !== 'true' || labels[KUBE.initializedLabel] !== 'true') continue;
    const expired = expiredCandidate(input, entry, nodePool);
    if (expired) {
      candidates.push(expired);
      continue;
    }
    const drift = detectDrift(driftSubject(input, entry), nodePool, today);
    if (!drift) continue;
    const invalidPdb = limits.invalid[0];
    if (invalidPdb) {
      // Upstream cannot build its PDB limits and skips the pass: no voluntary disruption until fixed.
      excluded.push({ nodeName: entry.node.metadata.name, reason: `${drift.reason}, but ${invalidPdb}` });
      continue;
    }
    const check = checkCandidate(
      { node: entry.node, pods: entry.pods, terminationGracePeriod: entry.record?.spec.terminationGracePeriod },
      { limits, now: input.now, disruptionClass: 'eventual' },
    );
    if (!check.ok) {
      excluded.push({ nodeName: entry.node.metadata.name, reason: `${drift.reason}, but ${check.message}` });
      continue;
    }
    const candidate = candidateOf(entry, movingPods(input, entry), 'Drifted', `${drift.reason}: ${drift.detail}`);
    candidate.driftedSince = driftedSince(entry, input.now);
    if (check.ignoredBlock) candidate.ignoredBlock = check.ignoredBlock;
    candidates.push(candidate);
  }
  candidates.sort(upstreamOrder);
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

/**
 * The capacity candidates' pods may move to: every node not disrupting, other candidates included
 * (upstream simulates one candidate against all other active nodes).
 */
function landingNodes(input: PlanInput, excludedNames: ReadonlySet<string>): ExistingNode[] {
  const entries = [...input.nodes, ...(input.otherNodes ?? [])].filter(
    (e) => !excludedNames.has(e.node.metadata.name) && !deletionTimestamp(e.node),
  );
  return toExistingNodes(
    entries.map((e) => e.node),
    entries.flatMap((e) => e.pods),
    input.nodePools,
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
    existingNodes: landing.filter((n) => n.name !== candidate.nodeName).map((n) => ({ ...n, pods: [...n.pods] })),
    ...(usage ? { nodePoolUsage: usage } : {}),
    // Karpenter's disruption simulations schedule with reserved-capacity fallback: a replacement is
    // planned on what is left rather than wait for a reservation the simulation's other claims hold.
    reservedOfferingMode: 'fallback',
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
  count: PoolBudgetCount,
  plan: ReplacementPlan,
): BudgetDecision {
  if (candidate.reason === 'Expired') return { allowed: true, message: 'expiration is forceful: budgets do not apply' };
  // Only a disruption already under way needs no new slot: a NotReady candidate uses the budget up, as upstream.
  if (input.disrupting.get(candidate.nodePool)?.has(candidate.nodeName)) {
    return { allowed: true, message: 'already disrupting' };
  }
  const limit = budgetLimit(nodePool, candidate.reason, { nodes: count.nodes, now: input.now });
  const budget = budgetDecision(limit, count.disrupting.size);
  if (!budget.allowed || plan.unschedulable.length === 0) return budget;
  return {
    ...budget,
    allowed: false,
    message: `${plan.unschedulable.length} pod(s) would not schedule again (${plan.unschedulable[0]?.reasons[0] ?? 'no reason given'})`,
  };
}

function notReady(node: Node): boolean {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  // A Node that never posted Ready is not initialized either; only an explicit False or Unknown counts.
  return ready !== undefined && ready.status !== 'True';
}

/** One node of ours as the budgets count it: `disrupting` when something already holds it. */
export function budgetMember(node: Node, nodePool: string, disrupting: boolean): BudgetMember {
  const labels = node.metadata.labels ?? {};
  return {
    name: node.metadata.name,
    nodePool,
    initialized: labels[KUBE.registeredLabel] === 'true' && labels[KUBE.initializedLabel] === 'true',
    notReady: notReady(node),
    disrupting: disrupting || deletionTimestamp(node) !== undefined,
  };
}

/** Our nodes as the budgets count them: initialized ones, and whether each uses the budget up. */
export function budgetMembers(
  nodes: readonly ClusterNode[],
  disrupting: ReadonlyMap<string, ReadonlySet<string>>,
): BudgetMember[] {
  return nodes.map((n) =>
    budgetMember(n.node, n.instance.nodePool, disrupting.get(n.instance.nodePool)?.has(n.node.metadata.name) === true),
  );
}

/** Candidates, what the budgets decide for each (in order), and each one's replacement plan. */
export function planDisruption(input: PlanInput): DisruptionPlan {
  const { candidates, excluded } = findCandidates(input);
  const disrupting = new Map([...input.disrupting].map(([pool, nodes]) => [pool, new Set(nodes)]));
  const counts = budgetCounts(budgetMembers(input.nodes, input.disrupting));
  const landing = landingNodes(input, new Set([...disrupting.values()].flatMap((s) => [...s])));
  // A candidate an allowed one's pods were planned onto waits for the next run: its plan would move them again.
  const receivedFrom = new Map<string, string>();
  const decisions: CandidateDecision[] = [];
  // Each allowed candidate leaves the limits and its replacements enter them, for the next candidate.
  let usage = input.nodePoolUsage;
  for (const candidate of candidates) {
    const nodePool = input.nodePools.find((p) => p.metadata.name === candidate.nodePool);
    if (!nodePool) continue;
    const count = counts.get(candidate.nodePool) ?? { nodes: 0, disrupting: new Set<string>() };
    counts.set(candidate.nodePool, count);
    const simulated = usageWithout(usage, candidate.nodePool, candidateCapacity(input, candidate));
    const { plan, placed } = planReplacement(input, candidate, landing, simulated);
    const planned = budgetFor(input, nodePool, candidate, count, plan);
    const from = receivedFrom.get(candidate.nodeName);
    const budget =
      planned.allowed && from && !count.disrupting.has(candidate.nodeName)
        ? { ...planned, allowed: false, message: `pods of ${from} were just planned onto it; the next run decides` }
        : planned;
    if (budget.allowed) {
      if (simulated) {
        for (const claim of plan.nodeClaims) addClaim(simulated, claim.nodePool, plannedCapacity(claim.instanceTypes));
        usage = simulated;
      }
      count.disrupting.add(candidate.nodeName);
      // The next candidate sees these pods where this one's plan put them, and not this node.
      for (const p of placed) {
        landing.find((n) => n.name === p.name)?.pods.push(...p.pods);
        receivedFrom.set(p.name, candidate.nodeName);
      }
      const at = landing.findIndex((n) => n.name === candidate.nodeName);
      if (at >= 0) landing.splice(at, 1);
    }
    decisions.push({ candidate, allowed: budget.allowed, budget, replacement: plan });
  }
  return { decisions, excluded };
}
