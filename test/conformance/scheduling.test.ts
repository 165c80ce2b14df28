// The scheduler conformance suite: every case translated from Karpenter's scheduler tests must come out
// of karpless' plan as upstream expects (see README.md). To adopt a new Karpenter release, re-read the
// upstream tests, add or change cases, see what fails.

import { describe, expect, it } from 'vitest';
import { disagreements, loadSchedulingCases, plan } from './scheduling-suite';

const cases = loadSchedulingCases();
const comparable = cases.filter((c) => c.incomparable === undefined);

describe.each([...new Set(cases.map((c) => c.file))])('scheduling conformance: %s', (file) => {
  const inFile = comparable.filter((c) => c.file === file);
  it.each(inFile.map((c) => [`${c.source.path.split('/').pop()}:${c.line ?? '?'} ${c.it}`, c] as const))(
    '%s',
    (_, c) => {
      expect(disagreements(c, plan(c))).toEqual([]);
    },
  );
});

describe('scheduling conformance summary', () => {
  it('agrees on every comparable upstream case', () => {
    const agreeing = comparable.filter((c) => disagreements(c, plan(c)).length === 0).length;
    const lines = new Set(cases.filter((c) => c.line !== undefined).map((c) => `${c.source.path}:${c.line}`));
    console.log(
      `scheduling conformance: ${agreeing}/${comparable.length} comparable upstream cases agree (${cases.length - comparable.length} not comparable; ${lines.size} upstream It lines)`,
    );
    expect(agreeing).toBe(comparable.length);
    expect(comparable.length).toBeGreaterThan(0);
  });
});
