// One pass of a node's drain as a decision (Karpenter's Terminator.Drain and the termination
// controller's volume wait): which pods to delete now because the terminationGracePeriod is running
// out, which wave to evict, how many pods the drain still waits for, and which VolumeAttachments.
// Pure: shared/runtime/termination.ts carries it out.

import type { Pod, VolumeAttachment } from '../apis/core/v1';
import {
  DEFAULT_POD_GRACE_SECONDS,
  evictionWaves,
  hasDoNotDisrupt,
  isDrainable,
  isEvictable,
  isTerminating,
  isWaitingEviction,
  podKey,
} from './pods';

/** A drain without a terminationGracePeriod has no deadline: PDBs and do-not-disrupt are waited for. */
export const NO_DEADLINE = Number.MAX_SAFE_INTEGER;

export interface PodDeletion {
  pod: Pod;
  /** What the pod is granted: the time left before the node's deadline, in whole seconds. */
  gracePeriodSeconds: number;
}

export interface DrainPass {
  /** Pods deleted (not evicted) now: their whole grace period would outlast the deadline otherwise. */
  deletions: PodDeletion[];
  /** The first wave that still has pods, minus pods already going and do-not-disrupt pods. */
  evictions: Pod[];
  /** Pods the drain still waits for (every wave, including terminating ones). */
  waiting: number;
  /** do-not-disrupt pods the drain waits for without evicting them. */
  doNotDisrupt: Pod[];
}

export interface DrainInput {
  /** The node's pods. */
  pods: readonly Pod[];
  now: number;
  /** Epoch ms by which every pod is deleted (claim deletionTimestamp + terminationGracePeriod), or NO_DEADLINE. */
  deadline: number;
}

/**
 * When the pod must be deleted for its whole grace period to end by the deadline (Karpenter's
 * podDeleteTimeWithGracePeriod); undefined without a deadline.
 */
export function podDeleteTime(pod: Pod, deadline: number): number | undefined {
  if (deadline === NO_DEADLINE) return undefined;
  return deadline - (pod.spec.terminationGracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS) * 1000;
}

export function planDrain(input: DrainInput): DrainPass {
  const { now, deadline } = input;
  const waitingPods = input.pods.filter((p) => isWaitingEviction(p, now));
  const deletions: PodDeletion[] = [];
  const deleted = new Set<string>();
  for (const pod of waitingPods) {
    if (isTerminating(pod)) continue;
    const at = podDeleteTime(pod, deadline);
    if (at === undefined || now < at) continue;
    deletions.push({ pod, gracePeriodSeconds: Math.max(0, Math.floor((deadline - now) / 1000)) });
    deleted.add(podKey(pod));
  }
  const waves = evictionWaves(waitingPods);
  const current = waves.find((wave) => wave.length > 0) ?? [];
  const candidates = current.filter((p) => isEvictable(p) && !deleted.has(podKey(p)));
  return {
    deletions,
    evictions: candidates.filter((p) => !hasDoNotDisrupt(p)),
    waiting: waitingPods.length,
    doNotDisrupt: candidates.filter(hasDoNotDisrupt),
  };
}

export interface VolumeInput {
  nodeName: string;
  attachments: readonly VolumeAttachment[];
  /** The node's pods. */
  pods: readonly Pod[];
  now: number;
}

/**
 * The node's VolumeAttachments the drain waits for. Karpenter leaves out those of pods it does not
 * drain (they stay to the end: DaemonSet pods tolerating the taint, mirror pods, stuck pods), which
 * needs each pod's PersistentVolumeClaim; karpless's role may not read claims, so when such a pod
 * mounts a claim the wait is left to the terminationGracePeriod: none are waited for, and
 * `unattributed` names the pods that made it so.
 */
export function volumesToAwait(input: VolumeInput): { awaited: VolumeAttachment[]; unattributed: Pod[] } {
  const onNode = input.attachments.filter(
    (a) => a.spec?.nodeName === input.nodeName && a.spec?.source?.persistentVolumeName !== undefined,
  );
  const staying = input.pods.filter(
    (p) =>
      !isDrainable(p, input.now) &&
      (p.spec.volumes ?? []).some((v) => v.persistentVolumeClaim !== undefined || v.ephemeral !== undefined),
  );
  if (staying.length > 0) return { awaited: [], unattributed: staying };
  return { awaited: onNode, unattributed: [] };
}
