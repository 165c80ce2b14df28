// Loads the conformance fixtures: cases translated from Karpenter's own API tests, each naming its
// upstream file, commit and It, the object as the Go client sends it, and the outcomes upstream
// expects from admission (CRD schema + CEL) and from Karpenter's runtime validation.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export type Outcome = 'accept' | 'reject';

export interface UpstreamSource {
  repo: string;
  path: string;
  commit: string;
}

export interface ConformanceCase {
  file: string;
  source: UpstreamSource;
  /** Describe/Context/It/Entry titles; `[i/n]` marks one of several creates in one It. */
  it: string;
  /** Line of the It or Entry in `source.commit` (absent for cases not taken from a stored copy). */
  line?: number;
  object: Record<string, unknown>;
  admission: Outcome;
  /** RuntimeValidate's outcome, where the It calls it. */
  runtime?: Outcome;
  /** The case is the second create of the same name, or an update of the first object. */
  dependsOn?: 'second-create' | 'update';
  /** The object created before (second-create) or updated (update). */
  first?: Record<string, unknown>;
  /** Not comparable with karpless, and why (version skew, a behaviour karpless does not model). */
  incomparable?: string;
  note?: string;
}

interface RawCase {
  it: string;
  line?: number;
  set?: Record<string, unknown>;
  first?: Record<string, unknown>;
  admission: Outcome;
  runtime?: Outcome;
  dependsOn?: 'second-create' | 'update';
  incomparable?: string;
  note?: string;
}

interface RawFile {
  source: UpstreamSource;
  base: Record<string, unknown>;
  cases: RawCase[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Expands the two shorthands the fixtures use for generated upstream values: `{a*N}` inside a string
 * (randomdata.Alphanumeric(N), lower-cased) and `{repeat: N, item: X}` (a Go loop appending N items,
 * `{i}` in X replaced by the index).
 */
export function expand(value: unknown, index?: number): unknown {
  if (typeof value === 'string') {
    const withIndex = index === undefined ? value : value.replaceAll('{i}', String(index));
    return withIndex.replace(/\{a\*(\d+)\}/g, (_, n: string) => 'a'.repeat(Number(n)));
  }
  if (Array.isArray(value)) return value.map((item) => expand(item, index));
  if (!isRecord(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 2 && typeof value.repeat === 'number' && 'item' in value) {
    return Array.from({ length: value.repeat }, (_, i) => expand(value.item, i));
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [expand(k, index) as string, expand(v, index)]));
}

/** A deep copy of `base` with each dotted field path set to its value (null removes the field). */
export function applySet(base: Record<string, unknown>, set: Record<string, unknown> = {}): Record<string, unknown> {
  const object = structuredClone(base);
  for (const [path, value] of Object.entries(set)) {
    const fields = path.split('.');
    const last = fields.pop() as string;
    let node: Record<string, unknown> = object;
    for (const field of fields) {
      if (!isRecord(node[field])) node[field] = {};
      node = node[field] as Record<string, unknown>;
    }
    if (value === null) delete node[last];
    else node[last] = expand(value);
  }
  return object;
}

export const CASES_DIR = join(import.meta.dirname, 'cases');

export function loadCases(dir = CASES_DIR): ConformanceCase[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .flatMap((file) => {
      const raw = parse(readFileSync(join(dir, file), 'utf8')) as RawFile;
      return raw.cases.map((c) => ({
        file,
        source: raw.source,
        it: c.it,
        ...(c.line !== undefined ? { line: c.line } : {}),
        object: applySet(raw.base, c.set),
        admission: c.admission,
        ...(c.runtime ? { runtime: c.runtime } : {}),
        ...(c.dependsOn ? { dependsOn: c.dependsOn } : {}),
        ...(c.first ? { first: applySet(raw.base, c.first) } : {}),
        ...(c.incomparable ? { incomparable: c.incomparable } : {}),
        ...(c.note ? { note: c.note } : {}),
      }));
    });
}

/** What Karpenter v1.14.1 does with the object overall: refused at admission or by its runtime check. */
export function upstreamOutcome(c: ConformanceCase): Outcome {
  return c.admission === 'reject' || c.runtime === 'reject' ? 'reject' : 'accept';
}
