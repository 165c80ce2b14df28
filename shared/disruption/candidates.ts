// Which nodes a voluntary disruption may take, as Karpenter decides it (CORE disruption/types.go
// NewCandidate; state.StateNode ValidateNodeDisruptable and ValidatePodsDisruptable; pkg/utils/pdb;
// pkg/utils/pod IsDoNotDisruptActive). Pure: the caller passes the PodDisruptionBudgets, the time and
// the pods bound to the node.
//
// - The node: managed, initialized, not being deleted, not annotated karpenter.sh/do-not-disrupt=true.
// - Its pods: none with an active do-not-disrupt annotation ("true", or a duration still running from
//   the pod's start; an unreadable value counts as absent), DaemonSet and mirror pods included, and
//   every pod an eviction would touch allowed by its PodDisruptionBudget. A pod matched by two PDBs
//   blocks: the eviction API refuses such a pod whatever the budgets allow.
// - Drift is eventual: a claim launched with a terminationGracePeriod is a candidate even when its
//   pods block eviction, since the grace period bounds the drain. Consolidation is graceful and
//   always respects them. Expiration is forceful and never asks (the drain still waits on PDBs up to
//   the grace period).

import type { LabelSelector, Node, Pod } from '../apis/core/v1';
import { parseDurationSeconds } from '../apis/duration';
import { KUBE } from '../contracts';
import type { PodDisruptionBudget } from '../kube/types';
import { deletionTimestamp } from '../runtime/objects';
import { podKey } from '../scheduling';
import { compileSelector } from '../scheduling/topology';

/** Drift (and repair) may ignore pods that block eviction when a terminationGracePeriod bounds the drain; consolidation may not. */
export type DisruptionClass = 'eventual' | 'graceful';

/** One PodDisruptionBudget as the disruption decisions read it. */
export interface PdbView {
  namespace: string;
  name: string;
  matches(labels: Record<string, string>): boolean;
  disruptionsAllowed: number;
  /** unhealthyPodEvictionPolicy AlwaysAllow: an unready pod is evicted whatever the budget says. */
  alwaysAllowUnhealthy: boolean;
  /** maxUnavailable 0 or 0%, or minAvailable 100%: no pod will ever be evicted. */
  fullyBlocking: boolean;
}

export interface PdbLimits {
  budgets: PdbView[];
  /** PDBs whose selector cannot be read: `namespace/name: why`. Upstream fails the whole pass on one. */
  invalid: string[];
}

function selectorError(selector: LabelSelector | undefined): string | undefined {
  for (const e of selector?.matchExpressions ?? []) {
    const values = e.values ?? [];
    if ((e.operator === 'In' || e.operator === 'NotIn') && values.length === 0) {
      return `matchExpressions key ${e.key}: operator ${e.operator} needs values`;
    }
    if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && values.length > 0) {
      return `matchExpressions key ${e.key}: operator ${e.operator} takes no values`;
    }
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator)) {
      return `matchExpressions key ${e.key}: unknown operator ${String(e.operator)}`;
    }
  }
  return undefined;
}

function fullyBlocking(spec: PodDisruptionBudget['spec']): boolean {
  return spec?.maxUnavailable === 0 || spec?.maxUnavailable === '0%' || spec?.minAvailable === '100%';
}

/** The cluster's PodDisruptionBudgets, compiled once per decision. */
export function pdbLimits(pdbs: readonly PodDisruptionBudget[]): PdbLimits {
  const budgets: PdbView[] = [];
  const invalid: string[] = [];
  for (const pdb of pdbs) {
    const namespace = pdb.metadata.namespace ?? 'default';
    const error = selectorError(pdb.spec?.selector);
    if (error) {
      invalid.push(`PodDisruptionBudget ${namespace}/${pdb.metadata.name}: spec.selector ${error}`);
      continue;
    }
    const selector = compileSelector(pdb.spec?.selector);
    budgets.push({
      namespace,
      name: pdb.metadata.name,
      matches: selector.matches,
      disruptionsAllowed: pdb.status?.disruptionsAllowed ?? 0,
      alwaysAllowUnhealthy: pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow',
      fullyBlocking: fullyBlocking(pdb.spec),
    });
  }
  return { budgets, invalid };
}

export const NO_PDBS: PdbLimits = { budgets: [], invalid: [] };

export interface DoNotDisrupt {
  active: boolean;
  /** The annotation's value is neither "true" nor a positive duration: treated as absent. */
  invalid?: string;
  /** Epoch ms a duration's protection ends. */
  until?: number;
}

/**
 * The pod's karpenter.sh/do-not-disrupt: "true" protects for good; a duration ("30m") protects that
 * long from the pod's start (for good while the start is unknown); anything else is ignored.
 */
export function doNotDisrupt(pod: Pod, now: number): DoNotDisrupt {
  const value = pod.metadata.annotations?.[KUBE.doNotDisruptAnnotation];
  if (value === undefined) return { active: false };
  if (value === 'true') return { active: true };
  const seconds = parseDurationSeconds(value);
  if (seconds === undefined || seconds <= 0) {
    return {
      active: false,
      invalid: `pod ${podKey(pod)}: ${KUBE.doNotDisruptAnnotation}="${value}" is neither "true" nor a positive duration, so it is ignored`,
    };
  }
  const start = Date.parse(pod.status?.startTime ?? '');
  if (!Number.isFinite(start)) return { active: true };
  const until = start + seconds * 1000;
  return { active: now < until, until };
}

function isActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && pod.metadata.deletionTimestamp === undefined;
}

function ownedByNode(pod: Pod): boolean {
  return (
    (pod.metadata.ownerReferences ?? []).some((o) => o.kind === 'Node') ||
    pod.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined
  );
}

function toleratesDisruptedTaint(pod: Pod): boolean {
  return (pod.spec.tolerations ?? []).some(
    (t) =>
      (t.key === undefined || t.key === '' ? t.operator === 'Exists' : t.key === KUBE.disruptedTaintKey) &&
      (t.effect === undefined || t.effect === 'NoSchedule'),
  );
}

/** Whether a drain would call the eviction API for the pod (pkg/utils/pod IsEvictable). */
export function evictedByDrain(pod: Pod, now: number): boolean {
  return isActive(pod) && !toleratesDisruptedTaint(pod) && !ownedByNode(pod) && !doNotDisrupt(pod, now).active;
}

function unready(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'False');
}

/** The PDBs that keep the pod from being evicted now (`blocking` picks zero-allowed or fully blocking ones). */
function blockingPdbs(pod: Pod, limits: PdbLimits, now: number, fully: boolean): string[] {
  if (!evictedByDrain(pod, now)) return [];
  const namespace = pod.metadata.namespace ?? 'default';
  const matching = limits.budgets.filter((b) => b.namespace === namespace && b.matches(pod.metadata.labels ?? {}));
  // The eviction API refuses a pod that two budgets cover, whatever they allow.
  if (matching.length > 1) return matching.map((b) => `${b.namespace}/${b.name}`);
  const [pdb] = matching;
  if (!pdb || (pdb.alwaysAllowUnhealthy && unready(pod))) return [];
  const blocks = fully ? pdb.fullyBlocking : pdb.disruptionsAllowed <= 0;
  return blocks ? [`${pdb.namespace}/${pdb.name}`] : [];
}

/** Why evicting the pods is not possible now (a PDB, or two on one pod), or undefined when it is. */
export function pdbBlock(pods: readonly Pod[], limits: PdbLimits, now: number): string | undefined {
  for (const pod of pods) {
    const pdbs = blockingPdbs(pod, limits, now, false);
    if (pdbs.length > 1) {
      return `pod ${podKey(pod)} is matched by PodDisruptionBudgets ${pdbs.join(', ')}; the eviction API refuses a pod with more than one`;
    }
    if (pdbs.length === 1) return `PodDisruptionBudget ${pdbs[0]} prevents evicting pod ${podKey(pod)}`;
  }
  return undefined;
}

/**
 * A pod that will never be evicted (fully blocking PDB, or an active do-not-disrupt): the
 * simulation leaves it where it is rather than plan capacity for it (IsCurrentlyReschedulable).
 */
export function stuckInPlace(pod: Pod, limits: PdbLimits, now: number): boolean {
  return doNotDisrupt(pod, now).active || blockingPdbs(pod, limits, now, true).length > 0;
}

/** What the node-level checks read. */
export interface CandidateNode {
  node: Node;
  pods: Pod[];
  /** The claim's terminationGracePeriod, as it was launched with (undefined: none). */
  terminationGracePeriod?: string | undefined;
}

/** Why the Node itself is no candidate, or undefined. */
export function nodeBlock(node: Node): string | undefined {
  const labels = node.metadata.labels ?? {};
  if (labels[KUBE.registeredLabel] !== 'true') return 'node is not registered';
  if (labels[KUBE.initializedLabel] !== 'true') return "node isn't initialized";
  if (deletionTimestamp(node)) return 'node is deleting or marked for deletion';
  if (node.metadata.annotations?.[KUBE.doNotDisruptAnnotation] === 'true') {
    return `disruption is blocked through the "${KUBE.doNotDisruptAnnotation}" annotation on the node`;
  }
  return undefined;
}

/** Why the node's pods keep it from disruption (do-not-disrupt, then PDBs), or undefined. */
export function podBlock(pods: readonly Pod[], limits: PdbLimits, now: number): string | undefined {
  for (const pod of pods) {
    if (isActive(pod) && doNotDisrupt(pod, now).active) {
      return `pod ${podKey(pod)} has the "${KUBE.doNotDisruptAnnotation}" annotation`;
    }
  }
  return pdbBlock(pods, limits, now);
}

export type CandidateCheck = { ok: true; ignoredBlock?: string } | { ok: false; message: string };

/**
 * Upstream's NewCandidate checks: the node, then its pods; an eventual disruption of a claim with
 * a terminationGracePeriod goes ahead past a pod block (reported as `ignoredBlock`).
 */
export function checkCandidate(
  entry: CandidateNode,
  options: { limits: PdbLimits; now: number; disruptionClass: DisruptionClass },
): CandidateCheck {
  const node = nodeBlock(entry.node);
  if (node) return { ok: false, message: node };
  const pods = podBlock(entry.pods, options.limits, options.now);
  if (!pods) return { ok: true };
  if (options.disruptionClass === 'eventual' && entry.terminationGracePeriod !== undefined) {
    return {
      ok: true,
      ignoredBlock: `${pods}; terminationGracePeriod ${entry.terminationGracePeriod} bounds the drain`,
    };
  }
  return { ok: false, message: pods };
}

/** Unreadable do-not-disrupt values on the node's pods, for one log line or event each. */
export function invalidDoNotDisrupt(pods: readonly Pod[], now: number): string[] {
  return pods.flatMap((p) => doNotDisrupt(p, now).invalid ?? []);
}
