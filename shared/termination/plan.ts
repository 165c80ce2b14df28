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

/** A PersistentVolumeClaim a pod mounts, by namespace and name. */
export interface ClaimRef {
  namespace: string;
  name: string;
}

/**
 * The claims mounted by the node's pods the drain leaves in place (not drainable: tolerating the
 * disrupted taint, mirror pods, pods stuck terminating). Their volumes never detach while the node
 * lives, so their VolumeAttachments do not hold the termination (Karpenter's nonBlockingVolumes). A
 * generic ephemeral volume's claim is named `<pod>-<volume>`.
 */
export function claimsOfStayingPods(pods: readonly Pod[], now: number): ClaimRef[] {
  const claims = new Map<string, ClaimRef>();
  for (const pod of pods) {
    if (isDrainable(pod, now)) continue;
    const namespace = pod.metadata.namespace ?? 'default';
    for (const volume of pod.spec.volumes ?? []) {
      const name =
        volume.persistentVolumeClaim?.claimName ??
        (volume.ephemeral !== undefined ? `${pod.metadata.name}-${volume.name}` : undefined);
      if (name !== undefined) claims.set(`${namespace}/${name}`, { namespace, name });
    }
  }
  return [...claims.values()];
}

export interface VolumeInput {
  nodeName: string;
  attachments: readonly VolumeAttachment[];
  /** PersistentVolume names bound to the claims of pods the drain leaves (see claimsOfStayingPods). */
  nonBlockingVolumes: ReadonlySet<string>;
}

/**
 * The node's VolumeAttachments the drain waits for: those of a PersistentVolume, except the volumes
 * of pods the drain leaves in place (Karpenter's blockingVolumeAttachments).
 */
export function volumesToAwait(input: VolumeInput): VolumeAttachment[] {
  return input.attachments.filter((a) => {
    const volume = a.spec?.source?.persistentVolumeName;
    return a.spec?.nodeName === input.nodeName && volume !== undefined && !input.nonBlockingVolumes.has(volume);
  });
}
