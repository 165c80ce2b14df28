import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { benchInputs, planDigest } from '../../bench/plan-digest';
import { solve } from '../../shared/scheduling';

// The scheduler's speed-ups must not change a decision (issue 23): every bench mix at these sizes is
// planned exactly as recorded in plans.golden.txt. 5,000 pods takes the path the 20,000-pod figures
// take (the priced greedy alone, every post pass); 100 and 1,000 also the Karpenter-order plans.
// A change that improves plans on purpose records the new digests:
//   npx tsx bench/plan-digest.ts --sizes 100,1000,5000 --out test/bench/plans.golden.txt
const GOLDEN = new URL('./plans.golden.txt', import.meta.url);

const recorded = new Map(
  readFileSync(GOLDEN, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' ') as [string, string]),
);

describe('the plans of the bench mixes', () => {
  const inputs = [...benchInputs([100, 1000, 5000])];

  it('covers every recorded mix', () => {
    expect(inputs.map(([label]) => label).sort()).toEqual([...recorded.keys()].sort());
  });

  it.each(inputs)('%s is planned as recorded', (label, input) => {
    expect(planDigest(solve(input()))).toBe(recorded.get(label));
  });
});
