// The scheduler conformance suite: every case translated from Karpenter's scheduler tests must come out
// of karpless' plan as upstream expects (see README.md). To adopt a new Karpenter release, re-read the
// upstream tests, add or change cases, see what fails.

import { describe, expect, it } from 'vitest';
import { disagreements, loadSchedulingCases, plan } from './scheduling-suite';

const cases = loadSchedulingCases();
const comparable = cases.filter((c) => c.incomparable === undefined && c.untranslated === undefined);

/** Ginkgo specs (Its and table Entries) of each upstream file at the commit the files name. */
const UPSTREAM_SPECS: Record<string, number> = {
  'pkg/controllers/provisioning/scheduling/suite_test.go': 211,
  'pkg/controllers/provisioning/scheduling/topology_test.go': 103,
  'pkg/controllers/provisioning/scheduling/instance_selection_test.go': 36,
};

describe.each([...new Set(comparable.map((c) => c.file))])('scheduling conformance: %s', (file) => {
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
    const incomparable = cases.filter((c) => c.incomparable !== undefined).length;
    const untranslated = cases.filter((c) => c.untranslated !== undefined).length;
    console.log(
      `scheduling conformance: ${agreeing}/${comparable.length} comparable upstream cases agree (${incomparable} not comparable, ${untranslated} listed but not translated yet; ${lines.size} upstream spec lines)`,
    );
    expect(agreeing).toBe(comparable.length);
    expect(comparable.length).toBeGreaterThan(0);
  });
});

describe('scheduling conformance coverage', () => {
  it.each(Object.entries(UPSTREAM_SPECS))('translates or lists, with why, every spec of %s', (path, specs) => {
    const inFile = cases.filter((c) => c.source.path === path);
    expect(inFile.every((c) => c.line !== undefined)).toBe(true);
    expect(new Set(inFile.map((c) => c.line)).size).toBe(specs);
    for (const c of inFile.filter((x) => x.incomparable !== undefined || x.untranslated !== undefined)) {
      expect(`${c.incomparable ?? ''}${c.untranslated ?? ''}`.length, c.it).toBeGreaterThan(20);
    }
  });
});
