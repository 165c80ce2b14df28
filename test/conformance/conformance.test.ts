// The conformance suite: every case translated from Karpenter's API tests must be judged by karpless
// as Karpenter judges it (admission, plus its runtime validation where Karpenter applies one). To
// adopt a new Karpenter release, re-read the upstream tests, add or change cases, see what fails.

import { describe, expect, it } from 'vitest';
import { buildConfiguration } from '../../shared/apis/config';
import type { LoadedDocument } from '../../shared/apis/load';
import { V1_VALIDATORS } from '../../shared/apis/v1/validation';
import { type ConformanceCase, loadCases, type Outcome, upstreamOutcome } from './suite';

const cases = loadCases();

/** karpless's verdict on one object on its own: any error (warnings aside) refuses it. */
function karplessOutcome(object: Record<string, unknown>): Outcome {
  const validator = V1_VALIDATORS[String(object.kind)];
  if (!validator) throw new Error(`no validator for kind ${String(object.kind)}`);
  return validator.validate(object).some((issue) => issue.severity !== 'warning') ? 'reject' : 'accept';
}

/**
 * karpless's verdict on the case. A second create of the same name is refused as a duplicate name
 * when both objects are given together; karpless has no update rules (manifests are applied whole),
 * so an update is judged as the create of the updated object.
 */
function judge(c: ConformanceCase): Outcome {
  if (c.dependsOn === 'second-create' && c.first) {
    const doc = (object: Record<string, unknown>, line: number): LoadedDocument => ({
      file: 'case.yaml',
      line,
      object,
    });
    const result = buildConfiguration([doc(c.first, 1), doc(c.object, 2)], { strictReferences: false });
    return result.problems.some((p) => p.severity === 'error') ? 'reject' : 'accept';
  }
  return karplessOutcome(c.object);
}

const comparable = cases.filter((c) => c.incomparable === undefined);

describe.each([...new Set(cases.map((c) => c.file))])('conformance: %s', (file) => {
  const inFile = comparable.filter((c) => c.file === file);
  it.each(inFile.map((c) => [c.line === undefined ? c.it : `L${c.line} ${c.it}`, c] as const))('%s', (_, c) => {
    if (c.dependsOn && c.first) expect(karplessOutcome(c.first), 'the first object').toBe('accept');
    expect(judge(c)).toBe(upstreamOutcome(c));
  });
});

describe('conformance summary', () => {
  it('agrees on every comparable upstream case', () => {
    const agreeing = comparable.filter((c) => judge(c) === upstreamOutcome(c)).length;
    const sources = [
      ...new Set(cases.map((c) => `${c.source.repo}/${c.source.path}@${c.source.commit.split(' ')[0]}`)),
    ];
    const lines = new Set(cases.filter((c) => c.line !== undefined).map((c) => `${c.file}:${c.line}`));
    console.log(
      `conformance: ${agreeing}/${comparable.length} comparable upstream cases agree (${cases.length - comparable.length} not comparable; ${lines.size} upstream It/Entry lines from ${sources.length} sources)`,
    );
    expect(agreeing).toBe(comparable.length);
    expect(cases.length).toBeGreaterThan(0);
  });
});
