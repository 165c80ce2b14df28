// Mutations of valid JSON documents for the fuzz tests: drop a field, change its type, put in a huge
// string, null, an array or a number, anywhere in the tree.
import fc from 'fast-check';

export type Mutation = { at: number; op: 'drop' | 'string' | 'huge' | 'null' | 'array' | 'number' | 'object' | 'bool' };

export const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('drop', 'string', 'huge', 'null', 'array', 'number', 'object', 'bool'),
});

const HUGE = 'x'.repeat(300 * 1024);

type Slot = { parent: Record<string, unknown> | unknown[]; key: string | number };

function slots(value: unknown, out: Slot[] = []): Slot[] {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push({ parent: value, key: i });
      slots(v, out);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push({ parent: value as Record<string, unknown>, key: k });
      slots(v, out);
    }
  }
  return out;
}

/** A mutated deep copy of `doc`. */
export function mutate<T>(doc: T, mutations: readonly Mutation[]): unknown {
  const copy: unknown = structuredClone(doc);
  for (const m of mutations) {
    const all = slots(copy);
    const slot = all[m.at % Math.max(all.length, 1)];
    if (!slot) continue;
    const set = (v: unknown) => {
      (slot.parent as Record<string | number, unknown>)[slot.key] = v;
    };
    switch (m.op) {
      case 'drop':
        if (Array.isArray(slot.parent)) slot.parent.splice(slot.key as number, 1);
        else delete slot.parent[slot.key as string];
        break;
      case 'string':
        set('surprise');
        break;
      case 'huge':
        set(HUGE);
        break;
      case 'null':
        set(null);
        break;
      case 'array':
        set([1, 'two', null]);
        break;
      case 'number':
        set(-1.5);
        break;
      case 'object':
        set({ unexpected: true });
        break;
      case 'bool':
        set(false);
        break;
    }
  }
  return copy;
}

/** Random JSON-ish input: any value, JSON text, or arbitrary text. */
export const randomInput: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything(),
  fc.jsonValue(),
  fc.json(),
  fc.string(),
  fc.string({ unit: 'binary' }),
);
