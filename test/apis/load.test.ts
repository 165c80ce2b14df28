import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../shared/apis/load';

describe('parseManifests', () => {
  it('reads every document of a multi-document YAML file with its starting line', () => {
    const text = 'kind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata: {name: b}\n';
    const result = parseManifests(text, 'm.yaml');
    expect(result.problems).toEqual([]);
    expect(result.documents.map((d) => [d.object.kind, d.line])).toEqual([
      ['A', 1],
      ['B', 4],
    ]);
  });

  it('expands kind: List and *List kinds into their items', () => {
    const text = JSON.stringify({ kind: 'PodList', items: [{ kind: 'Pod' }, { kind: 'Pod' }] });
    expect(parseManifests(text, 'p.json').documents).toHaveLength(2);
  });

  it('reports a YAML syntax error with the file and line', () => {
    const result = parseManifests('kind: A\nmetadata:\n  name: [unclosed\n', 'bad.yaml');
    expect(result.documents).toEqual([]);
    expect(result.problems[0]).toMatchObject({ severity: 'error', file: 'bad.yaml' });
    expect(result.problems[0]?.line).toBeGreaterThanOrEqual(3);
  });

  it('skips empty documents', () => {
    expect(parseManifests('---\n---\nkind: A\n', 'x.yaml').documents).toHaveLength(1);
  });
});
