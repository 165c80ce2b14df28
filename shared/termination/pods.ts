// Which pods a drain waits for, evicts, deletes and leaves alone: Karpenter's pod predicates
// (pkg/utils/pod: IsDrainable, IsEvictable, IsWaitingEviction, IsStuckTerminating) and the
// terminator's grouping into eviction waves. Pure.

import type { Pod } from '../apis/core/v1';
import type { Taint } from '../apis/v1/types';
import { KUBE } from '../contracts';
import { tolerates } from '../scheduling/taints';

/** The taint a draining node carries; pods that tolerate it stay (they would be scheduled straight back). */
export const DISRUPTED_NO_SCHEDULE: Taint = { key: KUBE.disruptedTaintKey, effect: 'NoSchedule' };

/** A pod terminating this long past its deletionTimestamp is stuck: the drain stops waiting for it. */
export const STUCK_TERMINATING_MS = 60_000;

/** What the API server defaults spec.terminationGracePeriodSeconds to. */
export const DEFAULT_POD_GRACE_SECONDS = 30;

const CRITICAL_PRIORITY_CLASSES = new Set(['system-cluster-critical', 'system-node-critical']);

export function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

export function isTerminating(pod: Pod): boolean {
  return pod.metadata.deletionTimestamp !== undefined;
}

/** Neither finished nor being deleted. */
export function isActive(pod: Pod): boolean {
  return !isTerminal(pod) && !isTerminating(pod);
}

/**
 * The pod's deletionTimestamp (its delete time plus its grace period) passed more than a minute ago:
 * the kubelet is not going to finish it, and the drain goes on without it.
 */
export function isStuckTerminating(pod: Pod, now: number): boolean {
  const at = pod.metadata.deletionTimestamp;
  return at !== undefined && now - Date.parse(at) > STUCK_TERMINATING_MS;
}

export function isOwnedByDaemonSet(pod: Pod): boolean {
  return (pod.metadata.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet');
}

/** Mirror (static) pods: the kubelet owns them and the API server refuses to evict them. */
export function isOwnedByNode(pod: Pod): boolean {
  return (
    (pod.metadata.ownerReferences ?? []).some((o) => o.kind === 'Node') ||
    pod.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined
  );
}

export function toleratesDisruptedTaint(pod: Pod): boolean {
  return tolerates(pod.spec.tolerations, DISRUPTED_NO_SCHEDULE);
}

export function isCritical(pod: Pod): boolean {
  return CRITICAL_PRIORITY_CLASSES.has(pod.spec.priorityClassName ?? '');
}

export function hasDoNotDisrupt(pod: Pod): boolean {
  return pod.metadata.annotations?.[KUBE.doNotDisruptAnnotation] === 'true';
}

/**
 * A pod the drain must see gone: it does not tolerate the disrupted taint, is not a mirror pod and is
 * not stuck terminating. do-not-disrupt pods are drainable too: the drain waits for them, it just does
 * not evict them.
 */
export function isDrainable(pod: Pod, now: number): boolean {
  return !toleratesDisruptedTaint(pod) && !isStuckTerminating(pod, now) && !isOwnedByNode(pod);
}

/** Still on the node as far as the drain is concerned: not finished, and drainable. */
export function isWaitingEviction(pod: Pod, now: number): boolean {
  return !isTerminal(pod) && isDrainable(pod, now);
}

/** A pod the Eviction API may be called for now: active, not tolerating the taint, not a mirror pod. */
export function isEvictable(pod: Pod): boolean {
  return isActive(pod) && !toleratesDisruptedTaint(pod) && !isOwnedByNode(pod);
}

/**
 * The eviction waves in Karpenter's order (the kubelet's graceful node shutdown order): non-critical
 * pods, non-critical DaemonSet pods, critical pods, critical DaemonSet pods. A wave starts only once
 * the ones before it are gone.
 */
export function evictionWaves(pods: readonly Pod[]): [Pod[], Pod[], Pod[], Pod[]] {
  const waves: [Pod[], Pod[], Pod[], Pod[]] = [[], [], [], []];
  for (const pod of pods) {
    const [nonCritical, nonCriticalDaemon, critical, criticalDaemon] = waves;
    const daemon = isOwnedByDaemonSet(pod);
    if (isCritical(pod)) (daemon ? criticalDaemon : critical).push(pod);
    else (daemon ? nonCriticalDaemon : nonCritical).push(pod);
  }
  return waves;
}

/** namespace/name. */
export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}
