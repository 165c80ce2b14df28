// Emptiness (Karpenter's Emptiness disruption method, reference §8): with consolidationPolicy
// WhenEmpty or WhenEmptyOrUnderutilized, a node whose only pods are DaemonSet and mirror pods for
// longer than consolidateAfter is deleted, within the NodePool's budgets for reason Empty. Pure:
// the gc function (shared/runtime/gc-emptiness.ts) reads the cluster, asks, and acts.
//
// Karpenter times consolidateAfter from the NodeClaim's lastPodEventTime. karpless has no NodeClaim
// objects, so the first run that sees a node empty stamps it with EMPTY_SINCE_ANNOTATION and later
// runs measure from that; a pod landing on the node clears the stamp. A node is thus deleted between
// consolidateAfter and consolidateAfter + one gc interval after it became empty.

import type { Node, Pod } from '../apis/core/v1';
import { parseDurationSeconds } from '../apis/duration';
import { DEFAULT_CONSOLIDATE_AFTER } from '../apis/v1/defaults';
import type { NodePool } from '../apis/v1/types';
import { KUBE } from '../contracts';
import { deletionTimestamp } from '../runtime/objects';
import { allowedDisruptions, budgetDecision, budgetLimit } from './budgets';
import type { BudgetDecision } from './types';

/** When the gc function first saw the node hold no pod but DaemonSet and mirror pods (RFC 3339). */
export const EMPTY_SINCE_ANNOTATION = 'karpless.io/empty-since';

export interface EmptinessSubject {
  node: Node;
  /** The NodePool the node's instance was launched for (its EC2 tag). */
  nodePool: string;
  /** Pods bound to the node. */
  pods: Pod[];
}

export type EmptinessStep =
  /** Stamp the node: empty from `at` on. */
  | { kind: 'mark'; nodeName: string; at: number }
  /** Remove the stamp: the node holds a workload pod again, or emptiness no longer applies. */
  | { kind: 'clear'; nodeName: string };

export interface EmptyCandidate {
  nodeName: string;
  nodePool: string;
  /** Epoch ms. */
  emptySince: number;
  detail: string;
}

export interface EmptinessInput {
  now: number;
  subjects: readonly EmptinessSubject[];
  nodePools: readonly NodePool[];
  /** DaemonSet, mirror, finished and terminating pods are not (shared/kube isEvictable). */
  isEvictable(pod: Pod): boolean;
}

/** consolidateAfter in ms, or undefined when the pool never consolidates (`Never`, unreadable, or no emptiness policy). */
export function consolidateAfterMs(nodePool: NodePool): number | undefined {
  const disruption = nodePool.spec.disruption;
  const policy = disruption?.consolidationPolicy ?? 'WhenEmptyOrUnderutilized';
  if (policy !== 'WhenEmpty' && policy !== 'WhenEmptyOrUnderutilized' && policy !== 'Balanced') return undefined;
  const after = disruption?.consolidateAfter ?? DEFAULT_CONSOLIDATE_AFTER;
  if (after === 'Never') return undefined;
  const seconds = parseDurationSeconds(after);
  return seconds === undefined ? undefined : seconds * 1000;
}

/** Registered and initialized by karpless, not being deleted, not annotated do-not-disrupt. */
function eligible(node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  if (labels[KUBE.registeredLabel] !== 'true' || labels[KUBE.initializedLabel] !== 'true') return false;
  if (deletionTimestamp(node)) return false;
  return node.metadata.annotations?.[KUBE.doNotDisruptAnnotation] !== 'true';
}

/** The stamps to write or remove, and the nodes empty for longer than their pool's consolidateAfter. */
export function findEmptyNodes(input: EmptinessInput): { steps: EmptinessStep[]; candidates: EmptyCandidate[] } {
  const steps: EmptinessStep[] = [];
  const candidates: EmptyCandidate[] = [];
  for (const { node, nodePool, pods } of input.subjects) {
    const name = node.metadata.name;
    const stamp = node.metadata.annotations?.[EMPTY_SINCE_ANNOTATION];
    const pool = input.nodePools.find((p) => p.metadata.name === nodePool);
    const after = pool ? consolidateAfterMs(pool) : undefined;
    const empty = !pods.some(input.isEvictable);
    if (deletionTimestamp(node)) continue;
    if (after === undefined || !eligible(node) || !empty) {
      if (stamp !== undefined) steps.push({ kind: 'clear', nodeName: name });
      continue;
    }
    const parsed = stamp === undefined ? Number.NaN : Date.parse(stamp);
    const since = Number.isFinite(parsed) ? parsed : input.now;
    if (!Number.isFinite(parsed)) steps.push({ kind: 'mark', nodeName: name, at: input.now });
    if (input.now - since >= after) {
      candidates.push({
        nodeName: name,
        nodePool,
        emptySince: since,
        detail: `only DaemonSet and mirror pods since ${new Date(since).toISOString()}, consolidateAfter ${pool?.spec.disruption?.consolidateAfter ?? DEFAULT_CONSOLIDATE_AFTER}`,
      });
    }
  }
  candidates.sort((a, b) => a.emptySince - b.emptySince || (a.nodeName < b.nodeName ? -1 : 1));
  return { steps, candidates };
}

export interface EmptyDecision {
  candidate: EmptyCandidate;
  allowed: boolean;
  budget: BudgetDecision;
}

/**
 * The budgets' answer for each candidate, longest-empty first: per pool, as many as the Empty
 * budgets allow beside the nodes already disrupting. The caller still takes a ledger slot for each
 * allowed one, so two invocations cannot both use the last one.
 */
export function decideEmptyDisruptions(input: {
  now: number;
  candidates: readonly EmptyCandidate[];
  nodePools: readonly NodePool[];
  /** NodePool → its nodes of ours (the count percentages resolve against). */
  poolSizes: ReadonlyMap<string, number>;
  /** NodePool → nodes disrupting now (deleting, draining, recorded). */
  disrupting: ReadonlyMap<string, ReadonlySet<string>>;
}): EmptyDecision[] {
  const busy = new Map([...input.disrupting].map(([pool, nodes]) => [pool, new Set(nodes)]));
  const out: EmptyDecision[] = [];
  for (const candidate of input.candidates) {
    const pool = input.nodePools.find((p) => p.metadata.name === candidate.nodePool);
    if (!pool) continue;
    const nodes = busy.get(candidate.nodePool) ?? new Set<string>();
    busy.set(candidate.nodePool, nodes);
    const limit = budgetLimit(pool, 'Empty', { nodes: input.poolSizes.get(candidate.nodePool) ?? 0, now: input.now });
    const budget = budgetDecision(limit, nodes.size);
    const allowed = allowedDisruptions(limit, nodes.size) > 0;
    if (allowed) nodes.add(candidate.nodeName);
    out.push({ candidate, allowed, budget: { ...budget, allowed } });
  }
  return out;
}
