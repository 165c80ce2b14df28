import { describe, expect, it } from 'vitest';
import { mergeResults, type ResultEntry } from '../../bench/run';

const entry = (suite: ResultEntry['suite'], pods: number, price: number): ResultEntry => ({
  suite,
  pods,
  podsPerSecond: 1,
  nodes: 1,
  price,
  lowerBound: 1,
  unschedulable: 0,
});

describe('bench results --merge', () => {
  it('replaces the measured suites and sizes in place, adds new ones before the runtime figures, keeps the rest', () => {
    const current = [entry('mixed', 90, 1), entry('mixed', 990, 2), { suite: 'runtime', provision: [] }];
    const merged = mergeResults(current, [entry('mixed', 990, 3), entry('us-east-1', 5000, 4)]);
    expect(merged).toEqual([
      entry('mixed', 90, 1),
      entry('mixed', 990, 3),
      entry('us-east-1', 5000, 4),
      { suite: 'runtime', provision: [] },
    ]);
  });
});
