// Taints and tolerations with the kube-scheduler's matching rules (k8s.io/api core/v1 ToleratesTaint).

import type { Toleration } from '../apis/core/v1';
import type { Taint } from '../apis/v1/types';

/** Whether one toleration lets a pod onto a node with this taint. */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect !== undefined && toleration.effect !== taint.effect) return false;
  if (toleration.key === undefined || toleration.key === '') {
    // An empty key with Exists tolerates everything; an empty key with Equal matches nothing real.
    return toleration.operator === 'Exists';
  }
  if (toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  return (toleration.value ?? '') === (taint.value ?? '');
}

export function tolerates(tolerations: readonly Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}

/**
 * The first taint that keeps the pod off: NoSchedule and NoExecute always, PreferNoSchedule until the
 * last relaxation step says the pod may tolerate it (Karpenter's ToleratePreferNoSchedule).
 */
export function untoleratedTaint(
  tolerations: readonly Toleration[] | undefined,
  taints: readonly Taint[],
  toleratePreferNoSchedule: boolean,
): Taint | undefined {
  for (const taint of taints) {
    if (taint.effect === 'PreferNoSchedule' && toleratePreferNoSchedule) continue;
    if (!tolerates(tolerations, taint)) return taint;
  }
  return undefined;
}

/** `key=value:Effect`, as kubectl prints taints. */
export function formatTaint(taint: Taint): string {
  return `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}
