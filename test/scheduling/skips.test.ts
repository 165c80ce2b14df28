import { describe, expect, it } from 'vitest';
import { ConflictSkips, FullSkips, firstClear } from '../../shared/scheduling/packing/skips';

describe('claim skips', () => {
  it('finds the first claim that is neither known to conflict nor known full, across words', () => {
    const conflicts = new ConflictSkips();
    const full = new FullSkips().of(1, 0);
    for (let i = 0; i < 40; i++) i % 2 === 0 ? conflicts.add(1, i) : full.mark(i);
    expect(firstClear(conflicts.of(1), full.bits, 0)).toBe(40);
    expect(firstClear(conflicts.of(1), new Uint32Array(0), 1)).toBe(1);
    // Another requirement set knows none of these conflicts.
    expect(firstClear(conflicts.of(2), new Uint32Array(0), 3)).toBe(3);
    full.mark(40);
    conflicts.add(1, 41);
    expect(firstClear(conflicts.of(1), full.bits, 7)).toBe(42);
  });

  it('forgets that a claim was full once its requirements or cap change, for every request vector', () => {
    const skips = new FullSkips();
    const a = skips.of(1, 0);
    const b = skips.of(2, 3);
    for (const m of [a, b]) for (let i = 0; i < 5; i++) m.mark(i);
    skips.lapse(2);
    expect(firstClear(new Uint32Array(0), a.bits, 0)).toBe(2);
    expect(firstClear(new Uint32Array(0), b.bits, 0)).toBe(2);
    expect(firstClear(new Uint32Array(0), a.bits, 3)).toBe(5);
    // Marked again after the change, it is skipped again.
    a.mark(2);
    expect(firstClear(new Uint32Array(0), a.bits, 0)).toBe(5);
  });
});
