// The claim's last pod event (CORE nodeclaim/podevents: status.lastPodEventTime), which
// consolidateAfter counts from: a pod bound to the node, finished on it, or deleted from it. Upstream
// watches pods; karpless compares what each disruption run sees on the node with what the previous
// run saw (a digest kept on the claim record), so an event is dated within one run interval. Pure.

import { createHash } from 'node:crypto';
import type { Pod } from '../apis/core/v1';
import type { NodeClaimRecord } from '../nodeclaim/record';

/** The digest of the pods the previous run saw on the claim's node. */
export const POD_EVENTS_ANNOTATION = 'karpless.io/pod-events';

function terminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** What changes on every pod event: which pods are there, and which finished or are being deleted. */
export function podEventDigest(pods: readonly Pod[]): string {
  const entries = pods
    .filter((p) => !(p.metadata.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet'))
    .map(
      (p) =>
        `${p.metadata.namespace ?? 'default'}/${p.metadata.name}/${p.metadata.uid ?? ''}:${terminal(p) ? 'T' : ''}${p.metadata.deletionTimestamp ? 'D' : ''}`,
    )
    .sort();
  return createHash('sha256').update(entries.join('\n')).digest('hex').slice(0, 16);
}

/**
 * The record with its pod-event digest and lastPodEventTime moved on, or undefined when nothing
 * changed. The first digest only starts the comparison: an event before it is not known.
 */
export function withPodEvents(record: NodeClaimRecord, pods: readonly Pod[], now: number): NodeClaimRecord | undefined {
  const digest = podEventDigest(pods);
  const previous = record.metadata.annotations[POD_EVENTS_ANNOTATION];
  if (previous === digest) return undefined;
  const metadata = {
    ...record.metadata,
    annotations: { ...record.metadata.annotations, [POD_EVENTS_ANNOTATION]: digest },
  };
  if (previous === undefined) return { ...record, metadata };
  return { ...record, metadata, status: { ...record.status, lastPodEventTime: new Date(now).toISOString() } };
}
