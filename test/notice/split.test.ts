import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_ENTRY_BYTES,
  mergeNotices,
  NoticeSplitError,
  splitNotice,
  validateNotice,
} from '../../shared/notice';
import { daemonSet, notice, noticePod } from './helpers';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');
const many = (n: number) => Array.from({ length: n }, (_, i) => noticePod(i));

describe('splitNotice', () => {
  it('returns a notice that fits alone and unchanged', () => {
    const detail = notice(many(3));
    expect(splitNotice(detail)).toEqual([detail]);
  });

  it('stays under 256 KiB minus headroom by default', () => {
    expect(DEFAULT_MAX_ENTRY_BYTES).toBe(256 * 1024 - 1024);
  });

  it('splits into valid parts under the limit that share a batch id and keep the pod order', () => {
    const detail = notice(many(200), [daemonSet('aws-node'), daemonSet('kube-proxy')]);
    const parts = splitNotice(detail, 20_000);
    expect(parts.length).toBeGreaterThan(3);
    const batchIds = new Set(parts.map((p) => p.part?.batchId));
    expect(batchIds.size).toBe(1);
    parts.forEach((p, i) => {
      expect(bytes(p)).toBeLessThanOrEqual(20_000);
      expect(p.part).toMatchObject({ index: i, count: parts.length });
      expect(validateNotice(p).ok).toBe(true);
      // Small DaemonSets ride along in every part: any part alone knows the per-node overhead.
      expect(p.daemonSets).toEqual(detail.daemonSets);
    });
    expect(parts.flatMap((p) => p.pods)).toEqual(detail.pods);
  });

  it('gives the same parts when the same observation is split again', () => {
    const detail = notice(many(100));
    expect(splitNotice(detail, 10_000)).toEqual(splitNotice(structuredClone(detail), 10_000));
    const later = { ...detail, observedAt: '2026-11-30T12:00:05Z' };
    expect(splitNotice(later, 10_000)[0]?.part?.batchId).not.toBe(splitNotice(detail, 10_000)[0]?.part?.batchId);
  });

  it('packs DaemonSets like pods when they are too large to repeat', () => {
    const big = Array.from({ length: 40 }, (_, i) => daemonSet(`ds-${i}-${'x'.repeat(150)}`));
    const detail = notice(many(20), big);
    const parts = splitNotice(detail, 8_000);
    for (const p of parts) expect(bytes(p)).toBeLessThanOrEqual(8_000);
    expect(parts.flatMap((p) => p.daemonSets)).toEqual(big);
    expect(mergeNotices(parts)).toEqual(detail);
  });

  it('names the pod that cannot fit any entry', () => {
    const detail = notice([
      noticePod(0, { labels: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`note-${i}`, 'y'.repeat(60)])) }),
      noticePod(1),
    ]);
    expect(() => splitNotice(detail, 900)).toThrow(NoticeSplitError);
    expect(() => splitNotice(detail, 900)).toThrow(
      /^pod shop\/web-0 alone serializes to \d+ bytes; one entry holds at most \d+$/,
    );
  });
});

describe('mergeNotices', () => {
  it('puts split parts back together whatever order they arrive in', () => {
    const detail = notice(many(150));
    const parts = splitNotice(detail, 15_000);
    expect(mergeNotices([...parts].reverse())).toEqual(detail);
  });

  it('deduplicates pods by uid: the latest observation wins, the first position stays', () => {
    const early = { ...notice([noticePod(1), noticePod(2, { priority: 1 })]), observedAt: '2026-11-30T12:00:00Z' };
    const late = {
      ...notice([noticePod(2, { priority: 9 }), noticePod(3)], [daemonSet('aws-node', '200m')]),
      observedAt: '2026-11-30T12:00:03Z',
    };
    const merged = mergeNotices([late, early]);
    expect(merged.pods.map((p) => [p.uid, p.priority])).toEqual([
      ['uid-1', undefined],
      ['uid-2', 9],
      ['uid-3', undefined],
    ]);
    expect(merged.observedAt).toBe('2026-11-30T12:00:03Z');
    expect(merged.daemonSets).toEqual([daemonSet('aws-node', '200m')]);
    expect(merged.part).toBeUndefined();
  });

  it('unions DaemonSets by namespace and name', () => {
    const merged = mergeNotices([notice([], [daemonSet('a')]), notice([], [daemonSet('b'), daemonSet('a')])]);
    expect(merged.daemonSets.map((d) => d.name)).toEqual(['a', 'b']);
  });

  it('refuses notices of two clusters and an empty batch', () => {
    expect(() => mergeNotices([notice([]), { ...notice([]), cluster: 'other' }])).toThrow('clusters prod and other');
    expect(() => mergeNotices([])).toThrow('no notices');
  });
});
