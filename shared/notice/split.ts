// One observation → PutEvents entries under the size limit, and a batch of entries → one notice.
// Splitting packs pods greedily in order; DaemonSets ride along in every part while they are small
// (so any part alone still knows the per-node overhead), otherwise they are packed like pods.

import { createHash } from 'node:crypto';
import { MAX_NOTICE_BYTES } from './schema';
import type { NoticeDaemonSet, NoticePod, PodsUnschedulableDetail } from './types';

/**
 * Room left for what PutEvents counts beside the detail (source, detail-type, resources, time) and
 * for the `part` field, so each entry's total stays under 256 KiB.
 */
export const ENVELOPE_HEADROOM_BYTES = 1024;
export const DEFAULT_MAX_ENTRY_BYTES = MAX_NOTICE_BYTES - ENVELOPE_HEADROOM_BYTES;

// The part field's largest serialized form: {"index":…,"count":…,"batchId":"<16 hex>"} and a comma.
const PART_BYTES = 80;

export class NoticeSplitError extends Error {}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

function batchIdOf(detail: PodsUnschedulableDetail): string {
  const hash = createHash('sha256').update(detail.cluster).update('\0').update(detail.observedAt);
  for (const pod of detail.pods) hash.update('\0').update(pod.uid);
  return hash.digest('hex').slice(0, 16);
}

type Item = { pod: NoticePod } | { daemonSet: NoticeDaemonSet };

/**
 * Splits one observation into details that each serialize (with their `part`) to at most
 * `maxEntryBytes`. A notice that fits is returned alone and unchanged. The batchId is derived from
 * the observation, so splitting it again yields the same parts. Throws NoticeSplitError when one
 * pod or DaemonSet alone cannot fit.
 */
export function splitNotice(
  detail: PodsUnschedulableDetail,
  maxEntryBytes: number = DEFAULT_MAX_ENTRY_BYTES,
): PodsUnschedulableDetail[] {
  const { part: _ignored, ...whole } = detail;
  if (bytesOf(whole) <= maxEntryBytes) return [whole];
  const base = bytesOf({ ...whole, pods: [], daemonSets: [] }) + PART_BYTES;
  const dsBytes = bytesOf(whole.daemonSets) - 2;
  const replicate = dsBytes <= (maxEntryBytes - base) / 2;
  const items: Item[] = [
    ...(replicate ? [] : whole.daemonSets.map((daemonSet) => ({ daemonSet }))),
    ...whole.pods.map((pod) => ({ pod })),
  ];
  const fixed = base + (replicate ? dsBytes : 0);
  const groups: { pods: NoticePod[]; daemonSets: NoticeDaemonSet[] }[] = [];
  let current = { pods: [] as NoticePod[], daemonSets: [] as NoticeDaemonSet[] };
  let size = fixed;
  for (const item of items) {
    const itemBytes = bytesOf('pod' in item ? item.pod : item.daemonSet) + 1; // the separating comma
    if (fixed + itemBytes > maxEntryBytes) {
      const what =
        'pod' in item
          ? `pod ${item.pod.namespace}/${item.pod.name}`
          : `DaemonSet ${item.daemonSet.namespace}/${item.daemonSet.name}`;
      throw new NoticeSplitError(
        `${what} alone serializes to ${itemBytes} bytes; one entry holds at most ${maxEntryBytes - fixed}`,
      );
    }
    if (size + itemBytes > maxEntryBytes && current.pods.length + current.daemonSets.length > 0) {
      groups.push(current);
      current = { pods: [], daemonSets: [] };
      size = fixed;
    }
    if ('pod' in item) current.pods.push(item.pod);
    else current.daemonSets.push(item.daemonSet);
    size += itemBytes;
  }
  groups.push(current);
  const batchId = batchIdOf(whole);
  return groups.map((g, index) => ({
    cluster: whole.cluster,
    observedAt: whole.observedAt,
    pods: g.pods,
    daemonSets: replicate ? whole.daemonSets : g.daemonSets,
    part: { index, count: groups.length, batchId },
  }));
}

function order(a: PodsUnschedulableDetail, b: PodsUnschedulableDetail): number {
  const at = Date.parse(a.observedAt) - Date.parse(b.observedAt);
  if (at !== 0 && !Number.isNaN(at)) return at;
  const batch = (a.part?.batchId ?? '').localeCompare(b.part?.batchId ?? '');
  return batch !== 0 ? batch : (a.part?.index ?? 0) - (b.part?.index ?? 0);
}

/**
 * Merges a batch of notices of one cluster into one: pods deduplicated by uid and DaemonSets by
 * namespace/name, the latest observation's copy winning while keeping the first-seen order. The
 * result has the latest observedAt and no part. Throws on notices of different clusters (the
 * provision queue groups messages by cluster, so that is a routing bug).
 */
export function mergeNotices(details: readonly PodsUnschedulableDetail[]): PodsUnschedulableDetail {
  const first = details[0];
  if (!first) throw new Error('mergeNotices: no notices to merge');
  const other = details.find((d) => d.cluster !== first.cluster);
  if (other) throw new Error(`mergeNotices: notices of clusters ${first.cluster} and ${other.cluster} in one batch`);
  const sorted = [...details].sort(order);
  const pods = new Map<string, NoticePod>();
  const daemonSets = new Map<string, NoticeDaemonSet>();
  for (const d of sorted) {
    for (const pod of d.pods) pods.set(pod.uid, pod);
    for (const ds of d.daemonSets) daemonSets.set(`${ds.namespace}/${ds.name}`, ds);
  }
  const latest = sorted[sorted.length - 1] ?? first;
  return {
    cluster: first.cluster,
    observedAt: latest.observedAt,
    pods: [...pods.values()],
    daemonSets: [...daemonSets.values()],
  };
}
