// The NodeClaimsLaunched event of one decision, cut into parts that each fit one PutEvents entry. A
// 10,000-pod burst makes a detail of about half a megabyte, past EventBridge's 256 KB per entry (and
// per call), so the lists are spread over as many parts as they need; every part carries the
// decision's header and the totals, and says which part it is, so a consumer can tell when it has
// them all. The claims themselves are in their NodeClaim records: the event is a notification. Pure.

import type { NodeClaimsLaunchedDetail } from './provision';

/**
 * The budget of one part's JSON. PutEvents counts the detail plus source, detail-type and resources
 * against 256 KB; a part stays well under so the envelope and a long pod name never tip it over.
 */
export const LAUNCHED_PART_MAX_BYTES = 200 * 1024;

/** Reasons kept per pod: the first ones say why; a pod with hundreds says nothing more with all. */
const MAX_REASONS = 20;
const MAX_REASON_CHARS = 1_000;

export interface LaunchedTotals {
  nodeClaims: number;
  inFlight: number;
  unschedulable: number;
  ignored: number;
}

/** One part of a decision's NodeClaimsLaunched event. */
export interface NodeClaimsLaunchedPart extends NodeClaimsLaunchedDetail {
  /** 1-based; `count` parts make the decision. */
  part: { index: number; count: number };
  /** The whole decision's list lengths, so each part reads as a summary too. */
  totals: LaunchedTotals;
}

type ListKey = 'nodeClaims' | 'inFlight' | 'unschedulable' | 'ignored';
const LISTS: readonly ListKey[] = ['nodeClaims', 'inFlight', 'unschedulable', 'ignored'];

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

function trimmed(detail: NodeClaimsLaunchedDetail): NodeClaimsLaunchedDetail {
  return {
    ...detail,
    unschedulable: detail.unschedulable.map((u) => ({
      pod: u.pod,
      reasons: u.reasons
        .slice(0, MAX_REASONS)
        .map((r) => (r.length > MAX_REASON_CHARS ? `${r.slice(0, MAX_REASON_CHARS)}…` : r)),
    })),
  };
}

/**
 * The detail in parts of at most `maxBytes` of JSON each, lists in order, each item whole. A decision
 * that fits is one part. An item that alone is over the budget (a claim with tens of thousands of
 * pods) goes alone in its part with its pod list cut to fit, the count of the rest in `podsOmitted`.
 */
export function splitLaunchedDetail(
  detail: NodeClaimsLaunchedDetail,
  maxBytes = LAUNCHED_PART_MAX_BYTES,
): NodeClaimsLaunchedPart[] {
  const full = trimmed(detail);
  const totals: LaunchedTotals = {
    nodeClaims: full.nodeClaims.length,
    inFlight: full.inFlight.length,
    unschedulable: full.unschedulable.length,
    ignored: full.ignored.length,
  };
  const empty = (): NodeClaimsLaunchedDetail => ({
    ...full,
    nodeClaims: [],
    inFlight: [],
    unschedulable: [],
    ignored: [],
  });
  // Header, totals and the part counter with room for large numbers.
  const overhead = bytes({ ...empty(), part: { index: 99_999, count: 99_999 }, totals });
  const parts: NodeClaimsLaunchedDetail[] = [];
  let current = empty();
  let size = overhead;
  let items = 0;
  const push = (key: ListKey, item: unknown, itemBytes: number) => {
    if (items > 0 && size + itemBytes > maxBytes) {
      parts.push(current);
      current = empty();
      size = overhead;
      items = 0;
    }
    (current[key] as unknown[]).push(item);
    size += itemBytes;
    items++;
  };
  for (const key of LISTS) {
    for (const item of full[key] as unknown[]) {
      // +1 for the comma between items.
      const itemBytes = bytes(item) + 1;
      push(
        key,
        itemBytes + overhead > maxBytes ? shrink(item, maxBytes - overhead) : item,
        Math.min(itemBytes, maxBytes - overhead),
      );
    }
  }
  parts.push(current);
  return parts.map((p, i) => ({ ...p, part: { index: i + 1, count: parts.length }, totals }));
}

/** An item too large for any part: its pod list cut until it fits, the rest counted. */
function shrink(item: unknown, budget: number): unknown {
  const record = item as { pods?: unknown[] };
  if (!Array.isArray(record.pods)) return item;
  let keep = record.pods.length;
  let candidate: unknown = item;
  while (keep > 0) {
    keep = Math.floor(keep / 2);
    candidate = { ...record, pods: record.pods.slice(0, keep), podsOmitted: record.pods.length - keep };
    if (bytes(candidate) + 1 <= budget) return candidate;
  }
  return candidate;
}
