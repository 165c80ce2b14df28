import { describe, expect, it } from 'vitest';
import type { RequirementOperator } from '../../shared/apis/v1/types';
import {
  allows,
  compatible,
  describeRequirement,
  intersect,
  isEmpty,
  Requirements,
  requirementFrom,
  toNodeSelectorRequirements,
} from '../../shared/scheduling/requirements';

const req = (operator: RequirementOperator, ...values: string[]) =>
  requirementFrom({ key: 'k', operator, ...(values.length ? { values } : {}) });

describe('requirementFrom / allows', () => {
  it.each([
    ['In', ['a', 'b'], 'a', true],
    ['In', ['a', 'b'], 'c', false],
    ['In', ['a'], undefined, false],
    ['NotIn', ['a'], 'a', false],
    ['NotIn', ['a'], 'b', true],
    ['NotIn', ['a'], undefined, true],
    ['Exists', [], 'x', true],
    ['Exists', [], undefined, false],
    ['DoesNotExist', [], 'x', false],
    ['DoesNotExist', [], undefined, true],
    ['Gt', ['4'], '5', true],
    ['Gt', ['4'], '4', false],
    ['Gt', ['4'], 'abc', false],
    ['Gt', ['4'], undefined, false],
    ['Lt', ['4'], '3', true],
    ['Lt', ['4'], '4', false],
    ['Gte', ['4'], '4', true],
    ['Gte', ['4'], '3', false],
    ['Lte', ['4'], '4', true],
    ['Lte', ['4'], '5', false],
  ] as const)('%s %j admits %j: %s', (operator, values, value, expected) => {
    expect(allows(req(operator, ...values), value)).toBe(expected);
  });

  it('rejects a non-integer bound with the key in the message', () => {
    expect(() => req('Gt', 'x')).toThrow(/k Gt needs a single integer value/);
  });
});

describe('intersect', () => {
  it.each([
    ['In a,b ∩ In b,c', req('In', 'a', 'b'), req('In', 'b', 'c'), ['b'], ['a', 'c']],
    ['In a,b ∩ NotIn a', req('In', 'a', 'b'), req('NotIn', 'a'), ['b'], ['a']],
    ['NotIn a ∩ NotIn b', req('NotIn', 'a'), req('NotIn', 'b'), ['c'], ['a', 'b']],
    ['Exists ∩ In a', req('Exists'), req('In', 'a'), ['a'], ['b']],
    ['Gt 2 ∩ Lt 6', req('Gt', '2'), req('Lt', '6'), ['3', '5'], ['2', '6']],
    ['In 1,5,9 ∩ Gte 5', req('In', '1', '5', '9'), req('Gte', '5'), ['5', '9'], ['1']],
    ['NotIn 4 ∩ Lte 5', req('NotIn', '4'), req('Lte', '5'), ['3', '5'], ['4', '6']],
  ])('%s', (_, a, b, allowed, denied) => {
    const both = [intersect(a, b), intersect(b, a)];
    for (const r of both) {
      for (const v of allowed) expect(allows(r, v)).toBe(true);
      for (const v of denied) expect(allows(r, v)).toBe(false);
    }
  });

  it.each([
    ['In a, In b', req('In', 'a'), req('In', 'b'), false],
    ['In a, NotIn a', req('In', 'a'), req('NotIn', 'a'), false],
    ['Exists, DoesNotExist', req('Exists'), req('DoesNotExist'), false],
    ['NotIn a, DoesNotExist', req('NotIn', 'a'), req('DoesNotExist'), true],
    ['Gt 5, Lt 3', req('Gt', '5'), req('Lt', '3'), false],
    ['Gt 5, In 7', req('Gt', '5'), req('In', '7'), true],
    ['Gte 5, Lte 5', req('Gte', '5'), req('Lte', '5'), true],
  ])('compatible(%s) is %s', (_, a, b, expected) => {
    expect(compatible(a, b)).toBe(expected);
    expect(isEmpty(intersect(a, b))).toBe(!expected);
  });

  it('keeps the larger minValues', () => {
    const a = requirementFrom({ key: 'k', operator: 'Exists', minValues: 2 });
    const b = requirementFrom({ key: 'k', operator: 'NotIn', values: ['x'], minValues: 5 });
    expect(intersect(a, b).minValues).toBe(5);
  });
});

describe('Requirements', () => {
  it('round-trips through the API form with the same meaning', () => {
    const r = Requirements.from([req('NotIn', 'a'), req('Gt', '3')]);
    const back = Requirements.from(r.toNodeSelectorRequirements().map(requirementFrom));
    for (const v of ['a', '3', '4', '9', undefined]) {
      expect(back.matchesLabels(v === undefined ? {} : { k: v })).toBe(
        r.matchesLabels(v === undefined ? {} : { k: v }),
      );
    }
  });

  it('gives equal sets the same key whatever the order', () => {
    const a = Requirements.from([req('In', 'x', 'y'), requirementFrom({ key: 'z', operator: 'Exists' })]);
    const b = Requirements.from([requirementFrom({ key: 'z', operator: 'Exists' }), req('In', 'y', 'x')]);
    expect(a.key).toBe(b.key);
  });

  it.each([
    [req('In', 's390x'), 'k In [s390x]'],
    [req('Gt', '4'), 'k > 4'],
    [req('DoesNotExist'), 'k DoesNotExist'],
  ])('describes %j as %s', (r, text) => {
    expect(describeRequirement(r)).toBe(text);
  });

  it('writes NotIn without bounds as NotIn plus Exists when absence is not allowed', () => {
    const r = intersect(req('NotIn', 'a'), req('Exists'));
    expect(toNodeSelectorRequirements(r).map((x) => x.operator)).toEqual(['NotIn', 'Exists']);
  });
});
