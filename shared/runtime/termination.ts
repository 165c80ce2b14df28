// The one termination path (Karpenter's node termination controller, resumable across invocations).
// Every way a node leaves calls beginTermination: the claim's record is marked for deletion, a drain
// record keeps the deadline (deletionTimestamp + terminationGracePeriod), and the Node is deleted, so
// our finalizer holds it. stepTermination then takes one idempotent step each time it is called (the
// watcher calls it for every Node being deleted; the interruption function takes the first step of a
// spot warning itself):
//
//   draining ── disrupted taint + exclude-from-load-balancers label; pods deleted at deadline − grace;
//               the first non-empty eviction wave evicted; wait until no drainable pod is left, then
//               until the node's VolumeAttachments are gone (not past the deadline) ──►
//   terminating ── TerminateInstances until EC2 reports shutting-down or terminated ──►
//   finalizer removed, claim record and drain record deleted.

import type { Node, Pod, VolumeAttachment } from '../apis/core/v1';
import { parseDurationSeconds } from '../apis/duration';
import { KUBE, METRIC } from '../contracts';
import type { KubeClient } from '../kube/types';
import { isKubeApiError, MULTIPLE_PDBS_REFUSAL } from '../kube/types';
import type { NodeClaimRecord } from '../nodeclaim/record';
import type { Clock, Sleep } from '../providers/clock';
import type { DrainRecord, NodeClaimStore, StateStore } from '../providers/state';
import { claimsOfStayingPods, NO_DEADLINE, planDrain, volumesToAwait } from '../termination/plan';
import { DISRUPTED_NO_SCHEDULE, podKey } from '../termination/pods';
import { type NodeClaimObjects, nodeClaimEvent, nodeEvent, recorderFor } from './events';
import type { ClaimInstances } from './instances';
import { deletionTimestamp, finalizers, nodeCondition, resourceVersion } from './objects';
import type { Telemetry } from './telemetry';

/** A drain record is refreshed while its drain goes on; one untouched this long is stale. */
export const DRAIN_RECORD_TTL_MS = 24 * 60 * 60 * 1000;
/** The label that takes a draining node out of load-balancer target groups (corev1.LabelNodeExcludeBalancers). */
export const EXCLUDE_FROM_LOAD_BALANCERS = 'node.kubernetes.io/exclude-from-external-load-balancers';
/** Backoff of a pod whose eviction a PodDisruptionBudget refused: doubling from 1 s up to 10 s. */
export const EVICTION_BACKOFF = { baseMs: 1_000, maxMs: 10_000 } as const;
/** EC2 states in which the instance is gone as far as termination is concerned (the AWS provider's NotFound). */
const GONE_STATES = new Set(['shutting-down', 'terminated']);

export interface TerminationDeps extends Telemetry {
  kube: Pick<
    KubeClient,
    | 'getNode'
    | 'patchNode'
    | 'listPods'
    | 'evictPod'
    | 'deletePod'
    | 'deleteNode'
    | 'listVolumeAttachments'
    | 'getPersistentVolumeClaim'
    | 'createEvent'
  >;
  instances: Pick<ClaimInstances, 'byIds' | 'terminate'>;
  state: Pick<StateStore, 'getDrain' | 'putDrain' | 'deleteDrain'>;
  /** The NodeClaim records; absent (tests, old callers), claims are not marked and the NodePool's grace applies. */
  records?: Pick<NodeClaimStore, 'getNodeClaim' | 'markNodeClaimForDeletion' | 'deleteNodeClaim'>;
  clock: Clock;
  /** NodeClaim objects, where Karpenter's CRDs are installed: the claim gets the Node's TerminationGracePeriodExpiring. */
  nodeClaimObjects?: NodeClaimObjects;
}

export interface TerminationStart {
  nodeName: string;
  instanceId: string;
  /** The claim of the instance, when known: its record is marked for deletion and gives the deadline. */
  nodeClaimName?: string;
  /** 'deletion', an interruption kind, 'Drifted', 'Expired', 'Empty', 'Underutilized', … */
  reason: string;
  /** The NodePool's terminationGracePeriod, for a claim without a record. */
  fallbackGraceMs?: number;
  /**
   * Node repair's forceful termination (upstream's termination-timestamp annotation set to now): the
   * deadline is now, whatever the grace period, and an earlier drain's later deadline is brought forward.
   */
  forceful?: boolean;
}

export type BeginDeps = Pick<TerminationDeps, 'log' | 'metrics' | 'records' | 'clock'> & {
  kube: Pick<KubeClient, 'deleteNode'>;
  state: Pick<StateStore, 'getDrain' | 'putDrain'>;
};

/** deletionTimestamp + terminationGracePeriod of the claim (Karpenter's nodeTerminationTime). */
export function terminationDeadline(
  record: NodeClaimRecord | undefined,
  fallbackGraceMs: number | undefined,
  now: number,
): number {
  const since = record?.metadata.deletionTimestamp ? Date.parse(record.metadata.deletionTimestamp) : now;
  const grace = record ? parseGrace(record.spec.terminationGracePeriod) : fallbackGraceMs;
  return grace === undefined || !Number.isFinite(since) ? NO_DEADLINE : since + grace;
}

function parseGrace(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = parseDurationSeconds(text);
  return seconds === undefined ? undefined : seconds * 1000;
}

/**
 * The drain record of a node leaving (created once; a repeat returns the first), with the claim's
 * record marked for deletion first so the deadline is the claim's own.
 */
export async function ensureTermination(deps: BeginDeps, start: TerminationStart): Promise<DrainRecord> {
  const existing = await deps.state.getDrain(start.nodeName);
  const now = deps.clock();
  if (existing && start.forceful && existing.deadline > now) {
    const forced = { ...existing, reason: start.reason, deadline: now };
    await deps.state.putDrain(forced);
    deps.log.info('termination made forceful', { node: start.nodeName, reason: start.reason });
    return forced;
  }
  if (existing) return existing;
  const claim = start.nodeClaimName ? await deps.records?.markNodeClaimForDeletion(start.nodeClaimName) : undefined;
  const record: DrainRecord = {
    nodeName: start.nodeName,
    instanceId: start.instanceId,
    ...(start.nodeClaimName ? { nodeClaimName: start.nodeClaimName } : {}),
    reason: start.reason,
    phase: 'cordoned',
    startedAt: now,
    deadline: start.forceful ? now : terminationDeadline(claim, start.fallbackGraceMs, now),
    expiresAt: now + DRAIN_RECORD_TTL_MS,
  };
  await deps.state.putDrain(record);
  deps.log.info('termination started', {
    node: start.nodeName,
    instanceId: start.instanceId,
    nodeclaim: start.nodeClaimName,
    reason: start.reason,
    deadline: record.deadline === NO_DEADLINE ? 'none' : new Date(record.deadline).toISOString(),
  });
  return record;
}

/**
 * The termination path's entry, for every way a node leaves: claim marked for deletion, drain record,
 * Node deleted (our finalizer keeps it until the instance is gone). Idempotent.
 */
export async function beginTermination(deps: BeginDeps, start: TerminationStart): Promise<DrainRecord> {
  const record = await ensureTermination(deps, start);
  await deps.kube.deleteNode(start.nodeName);
  return record;
}

export interface TerminationStep {
  record: DrainRecord;
  /** Pods evicted or deleted in this step. */
  evicted: Pod[];
  /** The instance is gone, the finalizer off, the records deleted. */
  finished: boolean;
}

/** Takes one step of the node's termination; call again (now or in a later invocation) until finished. */
export async function stepTermination(deps: TerminationDeps, record: DrainRecord): Promise<TerminationStep> {
  const node = await deps.kube.getNode(record.nodeName);
  let current = record;
  const evicted: Pod[] = [];
  if (node && current.phase !== 'terminating') {
    if (!deletionTimestamp(node)) await deps.kube.deleteNode(node.metadata.name);
    const drained = await drainStep(deps, node, current, evicted);
    current = drained.record;
    if (!drained.done) {
      // A dead instance cannot finish its pods: past NotReady and gone, there is nothing to wait for.
      if (!(await instanceGoneAndNodeDown(deps, node, current))) {
        return { record: await save(deps, record, current), evicted, finished: false };
      }
      deps.log.warn('instance gone while draining, finishing without the pods', { node: node.metadata.name });
    } else {
      deps.metrics.record(METRIC.drains, 'Count', 1, { reason: current.reason });
    }
    current = { ...current, phase: 'terminating' };
  }
  if (current.phase !== 'terminating') current = { ...current, phase: 'terminating' };
  if (await ensureInstanceTerminated(deps, current)) {
    await finish(deps, current, node);
    return { record: current, evicted, finished: true };
  }
  return { record: await save(deps, record, current), evicted, finished: false };
}

/** Writes the record when it changed, and keeps a long drain's record from expiring under it. */
async function save(deps: TerminationDeps, before: DrainRecord, after: DrainRecord): Promise<DrainRecord> {
  const now = deps.clock();
  const refresh = after.expiresAt - now < DRAIN_RECORD_TTL_MS / 2;
  const next = refresh ? { ...after, expiresAt: now + DRAIN_RECORD_TTL_MS } : after;
  if (next !== before && JSON.stringify(next) !== JSON.stringify(before)) await deps.state.putDrain(next);
  return next;
}

/** The disrupted taint and the exclude-from-load-balancers label (Karpenter's Terminator.Taint). */
async function taint(deps: TerminationDeps, node: Node): Promise<void> {
  const taints = node.spec?.taints ?? [];
  const tainted = taints.some((t) => t.key === DISRUPTED_NO_SCHEDULE.key && t.effect === DISRUPTED_NO_SCHEDULE.effect);
  const labelled = node.metadata.labels?.[EXCLUDE_FROM_LOAD_BALANCERS] === 'karpenter';
  if (tainted && labelled) return;
  await deps.kube.patchNode(node.metadata.name, {
    metadata: { labels: { [EXCLUDE_FROM_LOAD_BALANCERS]: 'karpenter' } },
    ...(tainted
      ? {}
      : { spec: { taints: [...taints.filter((t) => t.key !== DISRUPTED_NO_SCHEDULE.key), DISRUPTED_NO_SCHEDULE] } }),
  });
  deps.log.info('tainted node', { node: node.metadata.name, taint: `${DISRUPTED_NO_SCHEDULE.key}:NoSchedule` });
}

/** One drain pass; done when no drainable pod is left and no awaited VolumeAttachment. */
async function drainStep(
  deps: TerminationDeps,
  node: Node,
  record: DrainRecord,
  evicted: Pod[],
): Promise<{ record: DrainRecord; done: boolean }> {
  const name = node.metadata.name;
  const events = recorderFor(deps.kube, deps.clock, deps.log);
  await taint(deps, node);
  const now = deps.clock();
  const pods = (await deps.kube.listPods({ fieldSelector: `spec.nodeName=${name}` })).items;
  const pass = planDrain({ pods, now, deadline: record.deadline });
  if (pass.deletions.length > 0) {
    const expiring = {
      type: 'Warning',
      reason: 'TerminationGracePeriodExpiring',
      message: `All pods will be deleted by ${iso(record.deadline)}`,
    } as const;
    await events.publish(nodeEvent(name, expiring.type, expiring.reason, expiring.message));
    const claim = record.nodeClaimName
      ? await nodeClaimEvent(deps.nodeClaimObjects, deps.log, record.nodeClaimName, expiring)
      : undefined;
    if (claim) await events.publish(claim);
  }
  for (const { pod, gracePeriodSeconds } of pass.deletions) {
    await deps.kube.deletePod(pod.metadata.namespace ?? 'default', pod.metadata.name, gracePeriodSeconds);
    evicted.push(pod);
    deps.metrics.record(METRIC.podsDrained, 'Count', 1, { reason: record.reason });
    await events.publish({
      involvedObject: podObject(pod),
      type: 'Normal',
      reason: 'Disrupted',
      message: `Deleting the pod to accommodate the terminationTime ${iso(record.deadline)} of the node. The pod was granted ${gracePeriodSeconds} seconds of grace-period of its ${pod.spec.terminationGracePeriodSeconds ?? 30} terminationGracePeriodSeconds. This bypasses the PDB of the pod and the do-not-disrupt annotation.`,
    });
    deps.log.info('deleting pod', { node: name, pod: podKey(pod), gracePeriodSeconds });
  }
  const backoff = await evict(deps, record, pass.evictions, evicted);
  const next: DrainRecord = { ...record, phase: 'draining' };
  if (Object.keys(backoff).length > 0) next.evictionBackoff = backoff;
  else delete next.evictionBackoff;
  if (pass.waiting > 0) {
    if (pass.doNotDisrupt.length > 0) {
      deps.log.info('waiting on do-not-disrupt pods', { node: name, pods: pass.doNotDisrupt.map(podKey) });
    }
    return { record: next, done: false };
  }
  // Past the terminationGracePeriod nothing holds the instance any more: no need to look.
  const awaited = now < record.deadline ? await blockingVolumeAttachments(deps, name, pods, now) : [];
  if (awaited.length > 0) {
    const names = awaited.map((a) => a.metadata.name);
    const more = names.length > 5 ? ` and ${names.length - 5} other(s)` : '';
    await events.publish(
      nodeEvent(
        name,
        'Normal',
        'AwaitingVolumeDetachment',
        `Awaiting deletion of bound volumeattachments (${names.slice(0, 5).join(', ')}${more})`,
      ),
    );
    return { record: next, done: false };
  }
  return { record: next, done: true };
}

/**
 * The node's VolumeAttachments the drain waits for: all but those of the volumes of pods it leaves in
 * place, found through their PersistentVolumeClaims (a claim gone is skipped, as upstream does).
 */
async function blockingVolumeAttachments(
  deps: TerminationDeps,
  nodeName: string,
  pods: readonly Pod[],
  now: number,
): Promise<VolumeAttachment[]> {
  const attachments = (await deps.kube.listVolumeAttachments()).items;
  const onNode = volumesToAwait({ nodeName, attachments, nonBlockingVolumes: new Set() });
  if (onNode.length === 0) return [];
  const nonBlocking = new Set<string>();
  for (const ref of claimsOfStayingPods(pods, now)) {
    const volume = (await deps.kube.getPersistentVolumeClaim(ref.namespace, ref.name))?.spec?.volumeName;
    if (volume) nonBlocking.add(volume);
  }
  return volumesToAwait({ nodeName, attachments: onNode, nonBlockingVolumes: nonBlocking });
}

/** Evicts the wave's pods not in backoff; returns the backoff of those a PodDisruptionBudget refused. */
async function evict(
  deps: TerminationDeps,
  record: DrainRecord,
  pods: readonly Pod[],
  evicted: Pod[],
): Promise<NonNullable<DrainRecord['evictionBackoff']>> {
  const events = recorderFor(deps.kube, deps.clock, deps.log);
  const previous = record.evictionBackoff ?? {};
  const next: NonNullable<DrainRecord['evictionBackoff']> = {};
  for (const pod of pods) {
    const key = podKey(pod);
    const now = deps.clock();
    const held = previous[key];
    if (held && now < held.retryAt) {
      next[key] = held;
      continue;
    }
    // One attempt: the backoff lives in the record, so no invocation sleeps on a budget.
    const outcome = await deps.kube.evictPod(pod.metadata.namespace ?? 'default', pod.metadata.name, now);
    if (outcome.kind === 'evicted') {
      evicted.push(pod);
      deps.metrics.record(METRIC.podsDrained, 'Count', 1, { reason: record.reason });
      await events.publish({
        involvedObject: podObject(pod),
        type: 'Normal',
        reason: 'Evicted',
        message: `Evicted pod: ${evictionReason(record.reason)}`,
      });
      continue;
    }
    const attempts = (held?.attempts ?? 0) + 1;
    const delay = Math.min(EVICTION_BACKOFF.maxMs, EVICTION_BACKOFF.baseMs * 2 ** (attempts - 1));
    next[key] = { attempts, retryAt: now + delay };
    await events.publish(
      nodeEvent(
        record.nodeName,
        'Warning',
        'FailedDraining',
        outcome.message === MULTIPLE_PDBS_REFUSAL
          ? `Failed to drain node, Pod ${key}: eviction does not support multiple PDBs`
          : `Failed to drain node, Pod ${key}: evicting pod violates a PDB (${outcome.message})`,
      ),
    );
    deps.log.info('eviction blocked', { node: record.nodeName, pod: key, attempts, reason: outcome.message });
  }
  return next;
}

async function instanceGoneAndNodeDown(deps: TerminationDeps, node: Node, record: DrainRecord): Promise<boolean> {
  if (nodeCondition(node, 'Ready')?.status === 'True') return false;
  if (!record.instanceId) return true;
  const instance = (await deps.instances.byIds([record.instanceId])).get(record.instanceId);
  return instance === undefined || GONE_STATES.has(instance.state);
}

/** Karpenter's EnsureTerminated: TerminateInstances until EC2 says the instance is going or gone. */
async function ensureInstanceTerminated(deps: TerminationDeps, record: DrainRecord): Promise<boolean> {
  if (!record.instanceId) return true;
  const instance = (await deps.instances.byIds([record.instanceId])).get(record.instanceId);
  if (instance === undefined || GONE_STATES.has(instance.state)) return true;
  await deps.instances.terminate([record.instanceId]);
  deps.log.info('instance terminating', {
    node: record.nodeName,
    instanceId: record.instanceId,
    state: instance.state,
  });
  return false;
}

async function finish(deps: TerminationDeps, record: DrainRecord, node: Node | undefined): Promise<void> {
  if (node) {
    try {
      await removeFinalizer(deps, node);
    } catch (error) {
      if (!isKubeApiError(error, 404)) throw error;
    }
  }
  if (record.nodeClaimName) await deps.records?.deleteNodeClaim(record.nodeClaimName);
  await deps.state.deleteDrain(record.nodeName);
  deps.metrics.record(METRIC.nodesTerminated, 'Count', 1, { reason: record.reason });
  deps.log.info('node terminated', {
    node: record.nodeName,
    instanceId: record.instanceId,
    reason: record.reason,
    seconds: Math.round((deps.clock() - record.startedAt) / 1000),
  });
}

async function removeFinalizer(deps: TerminationDeps, node: Node): Promise<void> {
  // Re-read: the node seen at the start of the step is stale by now (taint and label patches).
  const fresh = (await deps.kube.getNode(node.metadata.name)) ?? node;
  const current = finalizers(fresh);
  if (!current.includes(KUBE.terminationFinalizer)) return;
  const version = resourceVersion(fresh);
  await deps.kube.patchNode(fresh.metadata.name, {
    metadata: {
      finalizers: current.filter((f) => f !== KUBE.terminationFinalizer),
      ...(version ? { resourceVersion: version } : {}),
    },
  });
}

/**
 * Steps until the termination finishes or `until` passes, pausing `pollMs` between steps that wait.
 * The interruption function uses it for a head start; the watcher resumes whatever is left.
 */
export async function driveTermination(
  deps: TerminationDeps & { sleep: Sleep },
  record: DrainRecord,
  options: { until: number; pollMs: number },
): Promise<TerminationStep> {
  const evicted: Pod[] = [];
  let current = record;
  while (deps.clock() < options.until) {
    const step = await stepTermination(deps, current);
    evicted.push(...step.evicted);
    current = step.record;
    if (step.finished) return { record: current, evicted, finished: true };
    if (deps.clock() + options.pollMs >= options.until) break;
    await deps.sleep(options.pollMs);
  }
  return { record: current, evicted, finished: false };
}

function podObject(pod: Pod): { kind: 'Pod'; name: string; namespace: string; uid?: string } {
  return {
    kind: 'Pod',
    name: pod.metadata.name,
    namespace: pod.metadata.namespace ?? 'default',
    ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}),
  };
}

/** Karpenter's evictionReason: the claim's disruption reason, else a forceful termination. */
const DISRUPTION_REASONS = new Set(['Drifted', 'Expired', 'Empty', 'Underutilized']);
function evictionReason(reason: string): string {
  return DISRUPTION_REASONS.has(reason) ? reason : 'Forceful Termination';
}

function iso(epochMs: number): string {
  return epochMs === NO_DEADLINE ? 'never' : new Date(epochMs).toISOString();
}
