// Cordon, drain, terminate, release: Karpenter's termination controller as a state machine whose
// progress lives in the state table (a DrainRecord), so any invocation can take one step and the
// next resumes. Used for `kubectl delete node` (the watcher) and for interruptions.
//
//   cordoned ──cordon + karpenter.sh/disrupted:NoSchedule──► draining ──no evictable pod left, or
//   deadline──► terminating ──TerminateInstances──► done ──finalizer removed──► (record deleted)

import type { Node, Pod } from '../apis/core/v1';
import { KUBE, METRIC } from '../contracts';
import { isKubeApiError, type KubeClient } from '../kube/types';
import type { Clock, Sleep } from '../providers/clock';
import type { DrainRecord, StateStore } from '../providers/state';
import type { ClaimInstances } from './instances';
import { deletionTimestamp, finalizers, resourceVersion } from './objects';
import type { Telemetry } from './telemetry';

/** Drain records outlive the longest drain we wait for; a record past it is stale. */
export const DRAIN_RECORD_TTL_MS = 24 * 60 * 60 * 1000;
/** A drain with no terminationGracePeriod has no deadline (PDBs and do-not-disrupt are waited for). */
export const NO_DEADLINE = Number.MAX_SAFE_INTEGER;
/** How long one eviction call may keep retrying a PodDisruptionBudget's 429 before the next step. */
export const EVICTION_ATTEMPT_MS = 5_000;

export interface DrainDeps extends Telemetry {
  kube: Pick<KubeClient, 'getNode' | 'patchNode' | 'listPods' | 'evictPod' | 'deleteNode'>;
  instances: Pick<ClaimInstances, 'terminate'>;
  state: Pick<StateStore, 'getDrain' | 'putDrain' | 'deleteDrain'>;
  clock: Clock;
  /** DaemonSet and mirror pods are never evicted (shared/kube isEvictable). */
  isEvictable(pod: Pod): boolean;
}

export interface DrainStart {
  nodeName: string;
  instanceId: string;
  reason: string;
  deadline: number;
}

/** The node's drain record, created (phase cordoned) when there is none yet. */
export async function startDrain(deps: DrainDeps, start: DrainStart): Promise<DrainRecord> {
  const existing = await deps.state.getDrain(start.nodeName);
  if (existing) return existing;
  const now = deps.clock();
  const record: DrainRecord = {
    ...start,
    phase: 'cordoned',
    startedAt: now,
    expiresAt: now + DRAIN_RECORD_TTL_MS,
  };
  await deps.state.putDrain(record);
  deps.log.info('drain started', { node: start.nodeName, instanceId: start.instanceId, reason: start.reason });
  return record;
}

export interface DrainStep {
  record: DrainRecord;
  /** Pods evicted in this step (their replacements need capacity). */
  evicted: Pod[];
  /** The record was finished and deleted. */
  finished: boolean;
}

export interface StepOptions {
  /** Also delete the Node object once its instance is gone (interruptions; a deletion already has one). */
  deleteNode: boolean;
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

async function cordon(deps: DrainDeps, node: Node): Promise<void> {
  const taints = node.spec?.taints ?? [];
  const tainted = taints.some((t) => t.key === KUBE.disruptedTaintKey && t.effect === 'NoSchedule');
  if (node.spec?.unschedulable && tainted) return;
  await deps.kube.patchNode(node.metadata.name, {
    spec: {
      unschedulable: true,
      taints: tainted ? taints : [...taints, { key: KUBE.disruptedTaintKey, effect: 'NoSchedule' }],
    },
  });
}

/** Evicts what may be evicted now; true when no pod that must leave is left on the node. */
async function evictPods(deps: DrainDeps, record: DrainRecord, evicted: Pod[]): Promise<boolean> {
  const now = deps.clock();
  const pastDeadline = now >= record.deadline;
  const pods = (await deps.kube.listPods({ fieldSelector: `spec.nodeName=${record.nodeName}` })).items.filter(
    (p) => deps.isEvictable(p) && !isTerminal(p),
  );
  let remaining = 0;
  for (const pod of pods) {
    remaining++;
    if (deletionTimestamp(pod)) continue; // already going: wait for it
    if (pod.metadata.annotations?.[KUBE.doNotDisruptAnnotation] === 'true' && !pastDeadline) continue;
    const outcome = await deps.kube.evictPod(
      pod.metadata.namespace ?? 'default',
      pod.metadata.name,
      Math.min(record.deadline, now + EVICTION_ATTEMPT_MS),
    );
    if (outcome.kind === 'evicted') evicted.push(pod);
    else deps.log.info('eviction blocked', { node: record.nodeName, pod: pod.metadata.name, reason: outcome.message });
  }
  return remaining === 0;
}

async function removeFinalizer(deps: DrainDeps, node: Node): Promise<void> {
  const current = finalizers(node);
  if (!current.includes(KUBE.terminationFinalizer)) return;
  const version = resourceVersion(node);
  await deps.kube.patchNode(node.metadata.name, {
    metadata: {
      finalizers: current.filter((f) => f !== KUBE.terminationFinalizer),
      ...(version ? { resourceVersion: version } : {}),
    },
  });
}

async function finish(deps: DrainDeps, record: DrainRecord, options: StepOptions): Promise<void> {
  const node = await deps.kube.getNode(record.nodeName);
  if (node) {
    try {
      await removeFinalizer(deps, node);
      if (options.deleteNode && !deletionTimestamp(node)) await deps.kube.deleteNode(record.nodeName);
    } catch (error) {
      if (!isKubeApiError(error, 404)) throw error;
    }
  }
  await deps.state.deleteDrain(record.nodeName);
  deps.metrics.record(METRIC.drains, 'Count', 1, { reason: record.reason });
  deps.log.info('drain finished', { node: record.nodeName, instanceId: record.instanceId, reason: record.reason });
}

async function advance(record: DrainRecord, phase: DrainRecord['phase'], deps: DrainDeps): Promise<DrainRecord> {
  const next = { ...record, phase };
  await deps.state.putDrain(next);
  return next;
}

/** Takes one step of the drain; call again (now or in a later invocation) until finished. */
export async function stepDrain(deps: DrainDeps, record: DrainRecord, options: StepOptions): Promise<DrainStep> {
  const evicted: Pod[] = [];
  switch (record.phase) {
    case 'cordoned': {
      const node = await deps.kube.getNode(record.nodeName);
      if (node) await cordon(deps, node);
      return { record: await advance(record, node ? 'draining' : 'terminating', deps), evicted, finished: false };
    }
    case 'draining': {
      const empty = await evictPods(deps, record, evicted);
      const next = empty || deps.clock() >= record.deadline ? await advance(record, 'terminating', deps) : record;
      return { record: next, evicted, finished: false };
    }
    case 'terminating': {
      if (record.instanceId) await deps.instances.terminate([record.instanceId]);
      deps.log.info('instance terminated', { node: record.nodeName, instanceId: record.instanceId });
      return { record: await advance(record, 'done', deps), evicted, finished: false };
    }
    case 'done':
      await finish(deps, record, options);
      return { record, evicted, finished: true };
  }
}

/**
 * Steps the drain until it finishes or `until` passes, pausing `pollMs` between steps that are
 * waiting on pods to leave. Returns every pod evicted on the way.
 */
export async function driveDrain(
  deps: DrainDeps & { sleep: Sleep },
  record: DrainRecord,
  options: StepOptions & { until: number; pollMs: number },
): Promise<{ record: DrainRecord; evicted: Pod[]; finished: boolean }> {
  const evicted: Pod[] = [];
  let current = record;
  while (deps.clock() < options.until) {
    const step = await stepDrain(deps, current, options);
    evicted.push(...step.evicted);
    if (step.finished) return { record: step.record, evicted, finished: true };
    const waiting = step.record.phase === 'draining' && current.phase === 'draining';
    current = step.record;
    if (waiting) await deps.sleep(options.pollMs);
  }
  return { record: current, evicted, finished: false };
}
