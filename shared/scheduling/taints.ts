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

/**
 * Taints a node carries while it starts and that go away on their own (Karpenter's KnownEphemeralTaints:
 * the node lifecycle controller's not-ready and unreachable, the cloud provider's uninitialized, our
 * unregistered taint), matched on key and effect as Taint.MatchTaint does.
 */
export const KNOWN_EPHEMERAL_TAINTS: readonly Taint[] = [
  { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
  { key: 'node.cloudprovider.kubernetes.io/uninitialized', effect: 'NoSchedule', value: 'true' },
  { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
];

/** Key prefixes of ephemeral taint families whose suffix a controller picks (the Node Readiness Controller's). */
const EPHEMERAL_TAINT_KEY_PREFIXES = ['readiness.k8s.io/'];

const sameTaint = (a: Taint, b: Taint): boolean => a.key === b.key && a.effect === b.effect;

export function isKnownEphemeralTaint(taint: Taint): boolean {
  return (
    KNOWN_EPHEMERAL_TAINTS.some((t) => sameTaint(t, taint)) ||
    EPHEMERAL_TAINT_KEY_PREFIXES.some((prefix) => taint.key.startsWith(prefix))
  );
}

/**
 * The taints a pod must tolerate to be placed on a node: all of them once it is initialized; before,
 * none of its startup taints and known ephemeral taints, which go when it initializes (Karpenter's
 * StateNode.Taints). Without this a node still starting up would look closed, and a second would launch.
 */
export function schedulingTaints(node: {
  taints: readonly Taint[];
  initialized?: boolean;
  inFlight?: boolean;
  startupTaints?: readonly Taint[];
}): Taint[] {
  const initialized = node.initialized ?? !node.inFlight;
  if (initialized) return [...node.taints];
  const startup = node.startupTaints ?? [];
  return node.taints.filter((t) => !isKnownEphemeralTaint(t) && !startup.some((s) => sameTaint(s, t)));
}
