// Parts of one split notice planned together (issue 23). The watcher splits an observation too large
// for one PutEvents entry into parts (shared/notice/split.ts), and the FIFO queue hands the function
// at most ten messages at a time, so a 20,000-pod burst reaches it over several invocations. A part
// whose observation is not complete is kept in the state table and acknowledged; the invocation that
// brings the last part plans the whole observation in one decision. The wait is bounded: a part that
// never arrives (an entry lost on its way) does not hold the others back longer than
// NOTICE_PART_WAIT_MS. The next invocation after that (the watcher notices the pending pods again
// every run) plans what arrived and says which parts are missing. Kept parts are deleted once their
// decision succeeded; a decision that fails leaves them for its retry.

import { REGISTRATION_TTL_MS } from '../contracts';
import type { PodsUnschedulableDetail } from '../notice/types';
import type { Clock } from '../providers/clock';
import type { NoticePartRecord, NoticePartState } from '../providers/state';
import type { RuntimeLog } from './telemetry';

/** How long kept parts wait for the rest of their observation (Karpenter's batch waits 10 s at most). */
export const NOTICE_PART_WAIT_MS = 20_000;

export interface PartsVerdict {
  /** What to plan now: whole notices, complete observations, and observations past the wait. */
  ready: PodsUnschedulableDetail[];
  /** Parts that arrived now and wait for the rest of their observation. */
  keep: NoticePartRecord[];
  /** Kept parts planned now: deleted once the decision succeeded. */
  planned: { batchId: string; indexes: number[] }[];
  /** Observations planned without some parts. */
  incomplete: { batchId: string; missing: number[]; waitedMs: number }[];
  /** Observations still waiting, with what they have. */
  waiting: { batchId: string; have: number; count: number }[];
}

interface Observation {
  count: number;
  parts: Map<number, PodsUnschedulableDetail>;
  kept: number[];
  /** When its first kept part arrived (absent: none kept before this invocation). */
  since?: number;
}

function observations(
  incoming: readonly PodsUnschedulableDetail[],
  kept: readonly NoticePartRecord[],
): Map<string, Observation> {
  const out = new Map<string, Observation>();
  const of = (batchId: string, count: number): Observation => {
    let o = out.get(batchId);
    if (!o) {
      o = { count, parts: new Map(), kept: [] };
      out.set(batchId, o);
    }
    return o;
  };
  for (const record of kept) {
    const o = of(record.batchId, record.count);
    o.parts.set(record.index, JSON.parse(record.detail) as PodsUnschedulableDetail);
    o.kept.push(record.index);
    o.since = Math.min(o.since ?? record.receivedAt, record.receivedAt);
  }
  for (const detail of incoming) {
    if (detail.part) of(detail.part.batchId, detail.part.count).parts.set(detail.part.index, detail);
  }
  return out;
}

/** What to plan now and what to keep, from the notices that arrived and the parts kept before. Pure. */
export function assembleParts(
  incoming: readonly PodsUnschedulableDetail[],
  kept: readonly NoticePartRecord[],
  now: number,
  waitMs: number = NOTICE_PART_WAIT_MS,
): PartsVerdict {
  const verdict: PartsVerdict = {
    ready: incoming.filter((d) => !d.part || d.part.count <= 1),
    keep: [],
    planned: [],
    incomplete: [],
    waiting: [],
  };
  for (const [batchId, o] of observations(
    incoming.filter((d) => d.part && d.part.count > 1),
    kept,
  )) {
    const indexes = [...o.parts.keys()].sort((a, b) => a - b);
    const complete = indexes.length >= o.count;
    const waited = o.since === undefined ? 0 : now - o.since;
    if (complete || waited >= waitMs) {
      verdict.ready.push(...indexes.map((i) => o.parts.get(i) as PodsUnschedulableDetail));
      if (o.kept.length > 0) verdict.planned.push({ batchId, indexes: [...o.kept].sort((a, b) => a - b) });
      if (!complete) {
        const missing = Array.from({ length: o.count }, (_, i) => i).filter((i) => !o.parts.has(i));
        verdict.incomplete.push({ batchId, missing, waitedMs: waited });
      }
      continue;
    }
    const since = o.since ?? now;
    for (const index of indexes) {
      if (o.kept.includes(index)) continue;
      verdict.keep.push({
        batchId,
        index,
        count: o.count,
        detail: JSON.stringify(o.parts.get(index)),
        receivedAt: since,
        expiresAt: now + REGISTRATION_TTL_MS,
      });
    }
    verdict.waiting.push({ batchId, have: indexes.length, count: o.count });
  }
  return verdict;
}

export interface NoticePartsDeps {
  parts: NoticePartState;
  clock: Clock;
  log: RuntimeLog;
  waitMs?: number;
}

export interface GatheredNotices {
  /** The notices to plan in this invocation's one decision (possibly none). */
  ready: PodsUnschedulableDetail[];
  /** Deletes the kept parts the decision planned: call once it succeeded. */
  planned(): Promise<void>;
}

/**
 * The notices of this invocation with the parts kept before: complete observations to plan, the
 * rest kept (written before the invocation acknowledges their messages, so none is lost).
 */
export async function gatherNotices(
  deps: NoticePartsDeps,
  incoming: readonly PodsUnschedulableDetail[],
): Promise<GatheredNotices> {
  const kept = await deps.parts.noticeParts();
  const verdict = assembleParts(incoming, kept, deps.clock(), deps.waitMs);
  await Promise.all(verdict.keep.map((part) => deps.parts.putNoticePart(part)));
  for (const w of verdict.waiting) {
    deps.log.info('notice parts kept until their observation is complete', { ...w });
  }
  for (const i of verdict.incomplete) {
    deps.log.warn('notice parts never arrived: planning the observation with the parts that did', {
      batchId: i.batchId,
      missing: i.missing,
      waitedMs: i.waitedMs,
    });
  }
  return {
    ready: verdict.ready,
    planned: async () => {
      await Promise.all(verdict.planned.map((p) => deps.parts.deleteNoticeParts(p.batchId, p.indexes)));
    },
  };
}
