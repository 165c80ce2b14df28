// Pods a provision decision could place nowhere, kept in the state table with the decision's reasons
// so the watcher (which may write events; the provision function only reads the cluster) records them
// as FailedScheduling on each pod, as Karpenter's provisioner does. Best effort: the decision stands
// whether or not the record is written.

import { randomUUID } from 'node:crypto';
import type { Pod } from '../apis/core/v1';
import { errorMessage } from '../providers/aws-errors';
import type { UnschedulableState } from '../providers/state';
import { podUid } from './objects';
import type { RuntimeLog } from './telemetry';

/** How long a decision's reasons stand: the watcher notices a still-pending pod again well before. */
export const UNSCHEDULABLE_TTL_MS = 5 * 60_000;

/** Karpenter's event reason and message prefix for a pod no NodePool can take. */
export const FAILED_SCHEDULING = 'FailedScheduling';

export function failedSchedulingMessage(reasons: readonly string[]): string {
  return `Failed to schedule pod, ${reasons.join('; ')}`;
}

/** Writes one record per distinct set of reasons (a Deployment's replicas share one). */
export async function recordUnschedulable(
  deps: { unschedulable?: Pick<UnschedulableState, 'recordUnschedulable'>; log: RuntimeLog },
  pods: readonly { pod: Pod; reasons: string[] }[],
  now: number,
): Promise<void> {
  const store = deps.unschedulable;
  if (!store || pods.length === 0) return;
  const byReasons = new Map<string, { reasons: string[]; podUids: string[] }>();
  for (const { pod, reasons } of pods) {
    const key = JSON.stringify(reasons);
    const group = byReasons.get(key) ?? { reasons, podUids: [] };
    group.podUids.push(podUid(pod));
    byReasons.set(key, group);
  }
  const decision = randomUUID();
  try {
    for (const group of byReasons.values()) {
      await store.recordUnschedulable({ decision, ...group, expiresAt: now + UNSCHEDULABLE_TTL_MS });
    }
  } catch (error) {
    deps.log.warn('recording unschedulable pods for their events failed', {
      pods: pods.length,
      error: errorMessage(error),
    });
  }
}
