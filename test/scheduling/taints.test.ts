import { describe, expect, it } from 'vitest';
import type { Toleration } from '../../shared/apis/core/v1';
import type { Taint } from '../../shared/apis/v1/types';
import { formatTaint, toleratesTaint, untoleratedTaint } from '../../shared/scheduling/taints';

const gpu: Taint = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' };

describe('toleratesTaint', () => {
  it.each<[string, Toleration, boolean]>([
    ['Equal with the same value', { key: 'nvidia.com/gpu', operator: 'Equal', value: 'true' }, true],
    ['Equal by default', { key: 'nvidia.com/gpu', value: 'true' }, true],
    ['Equal with another value', { key: 'nvidia.com/gpu', value: 'false' }, false],
    ['Exists on the key', { key: 'nvidia.com/gpu', operator: 'Exists' }, true],
    ['Exists with an empty key (tolerates all)', { operator: 'Exists' }, true],
    ['another key', { key: 'other', operator: 'Exists' }, false],
    ['the same effect', { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }, true],
    ['another effect', { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoExecute' }, false],
  ])('%s: %s', (_, toleration, expected) => {
    expect(toleratesTaint(toleration, gpu)).toBe(expected);
  });
});

describe('untoleratedTaint', () => {
  it.each<[Taint['effect'], boolean, boolean]>([
    ['NoSchedule', false, true],
    ['NoSchedule', true, true],
    ['NoExecute', false, true],
    ['NoExecute', true, true],
    ['PreferNoSchedule', false, true],
    ['PreferNoSchedule', true, false],
  ])('%s with toleratePreferNoSchedule=%s blocks: %s', (effect, tolerateSoft, blocks) => {
    const taint: Taint = { key: 'dedicated', value: 'x', effect };
    expect(untoleratedTaint([], [taint], tolerateSoft) !== undefined).toBe(blocks);
  });

  it('formats like kubectl', () => {
    expect(formatTaint(gpu)).toBe('nvidia.com/gpu=true:NoSchedule');
    expect(formatTaint({ key: 'a', effect: 'NoExecute' })).toBe('a:NoExecute');
  });
});
