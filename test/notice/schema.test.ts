import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DETAIL_TYPE, EVENT_SOURCE } from '../../shared/contracts';
import { NOTICE_DETAIL, noticeJsonSchema, validateNotice } from '../../shared/notice';

const FILE = join(import.meta.dirname, '../../docs/notice.schema.json');

describe('docs/notice.schema.json', () => {
  it('is what the validator’s field table generates (run npx tsx scripts/notice-schema.ts when this fails)', () => {
    expect(JSON.parse(readFileSync(FILE, 'utf8'))).toEqual(noticeJsonSchema());
  });

  it('is draft 2020-12, closed at the notice level and refers to every definition it declares', () => {
    const schema = noticeJsonSchema();
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(['cluster', 'observedAt', 'pods', 'daemonSets']);
    const text = JSON.stringify(schema);
    const defs = Object.keys(schema.$defs as object);
    expect(defs).toEqual(
      expect.arrayContaining(['NoticePod', 'NoticeDaemonSet', 'Toleration', 'Affinity', 'ResourceList']),
    );
    for (const name of defs) expect(text).toContain(`"$ref":"#/$defs/${name}"`);
    for (const ref of text.matchAll(/"#\/\$defs\/([A-Za-z]+)"/g)) expect(defs).toContain(ref[1]);
  });

  it('lists the same notice fields the validator checks', () => {
    const schema = noticeJsonSchema() as { properties: Record<string, unknown> };
    expect(NOTICE_DETAIL.kind).toBe('object');
    if (NOTICE_DETAIL.kind === 'object')
      expect(Object.keys(schema.properties)).toEqual(Object.keys(NOTICE_DETAIL.properties));
  });
});

describe('docs/notice.md', () => {
  it('shows a detail and a PutEvents entry that validate', () => {
    const md = readFileSync(join(import.meta.dirname, '../../docs/notice.md'), 'utf8');
    const blocks = [...md.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] ?? ''));
    expect(blocks).toHaveLength(2);
    expect(validateNotice(blocks[0])).toEqual({ ok: true, detail: blocks[0] });
    const [entry] = blocks[1];
    expect(entry).toMatchObject({ Source: EVENT_SOURCE, DetailType: DETAIL_TYPE.podsUnschedulable });
    expect(validateNotice(JSON.parse(entry.Detail)).ok).toBe(true);
  });
});
