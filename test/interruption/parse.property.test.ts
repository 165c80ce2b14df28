import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ParseResult, parseInterruption } from '../../shared/interruption';
import { mutate, mutationArb, randomInput } from '../helpers/mutate';

const DIR = join(import.meta.dirname, '../fixtures/events');
const TEXTS = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => readFileSync(join(DIR, f), 'utf8'));
const EVENTS = TEXTS.map((t) => JSON.parse(t) as unknown);
const KINDS = new Set([
  'SpotInterruption',
  'RebalanceRecommendation',
  'InstanceStateChange',
  'ScheduledChange',
  'CapacityReservationInterruption',
  'Unknown',
]);

function wellFormed(result: ParseResult): void {
  if (result.ok) {
    expect(KINDS.has(result.message.kind)).toBe(true);
    expect(['CordonAndDrain', 'NoAction']).toContain(result.message.action);
    for (const id of result.message.instanceIds) expect(id).toMatch(/^i-[0-9a-f]+$/);
    expect(Number.isFinite(result.message.time)).toBe(true);
    if (result.message.action === 'CordonAndDrain') expect(result.message.instanceIds.length).toBeGreaterThan(0);
  } else {
    expect(typeof result.error).toBe('string');
    expect(result.error.length).toBeGreaterThan(0);
    expect(result.error.length).toBeLessThan(400);
  }
}

const RUNS = { numRuns: 300 };

describe('parseInterruption never throws', () => {
  it('on random values and text', () => {
    fc.assert(
      fc.property(randomInput, (input) => wellFormed(parseInterruption(input))),
      RUNS,
    );
  });

  it('on mutated sample events, as objects and as JSON text', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EVENTS),
        fc.array(mutationArb, { minLength: 1, maxLength: 4 }),
        (event, mutations) => {
          const mutated = mutate(event, mutations);
          wellFormed(parseInterruption(mutated));
          wellFormed(parseInterruption(JSON.stringify(mutated) ?? ''));
        },
      ),
      RUNS,
    );
  });

  it('on truncated sample events, which are errors unless nothing was cut', () => {
    fc.assert(
      fc.property(fc.constantFrom(...TEXTS), fc.nat(), (text, n) => {
        const cut = text.trimEnd().slice(0, n % text.trimEnd().length);
        const result = parseInterruption(cut);
        wellFormed(result);
        if (cut.trim() !== '') expect(result.ok).toBe(false);
      }),
      RUNS,
    );
  });

  it('with a mutated detail of a known kind: either a message or an error naming a field', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(
          ...EVENTS.filter((e) => (e as { 'detail-type': string })['detail-type'] !== 'EC2 AMI State Change'),
        ),
        fc.array(mutationArb, { minLength: 1, maxLength: 3 }),
        (event, mutations) => {
          const e = event as Record<string, unknown>;
          const result = parseInterruption({ ...e, detail: mutate(e.detail, mutations) });
          wellFormed(result);
          if (!result.ok) expect(result.error).toMatch(/^[^:]+: (detail|id|time|resources)/);
        },
      ),
      RUNS,
    );
  });
});
