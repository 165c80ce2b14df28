import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isQuantity,
  MAX_QUANTITY,
  parseQuantity,
  parseQuantityResult,
  resourceQuantityProblem,
} from '../../shared/apis/quantity';

// The pattern Kubernetes publishes for quantities in OpenAPI schemas (apimachinery's
// resource.Quantity OpenAPIDefinition). It also lets through fractional exponents ("1e1.5"),
// which ParseQuantity itself then refuses, so the reference below excludes those.
const K8S_OPENAPI_PATTERN =
  /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;
const FRACTIONAL_EXPONENT = /[eE][+-]?[0-9]*\.[0-9]*$/;

describe('quantities as resource.ParseQuantity reads them', () => {
  it.each([
    ['1E', 1e18],
    ['2E', 2e18],
    ['1Ei', 2 ** 60],
    ['1P', 1e15],
    ['1Pi', 2 ** 50],
    ['500m', 0.5],
    ['100n', 1e-7],
    ['5u', 5e-6],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1e-3', 0.001],
    ['+1.5Gi', 1.5 * 2 ** 30],
    ['1.', 1],
    ['.5k', 500],
    ['-1', -1],
    ['-500m', -0.5],
    ['007', 7],
    ['0.0000000001', 1e-9],
    ['1e-20', 1e-9],
    ['9223372036854775807', MAX_QUANTITY],
    ['10E', MAX_QUANTITY],
    ['8Ei', MAX_QUANTITY],
    ['1e400', MAX_QUANTITY],
    [2, 2],
    [0.25, 0.25],
  ])('%j is %d', (text, expected) => {
    expect(parseQuantity(text)).toBe(expected);
  });

  it.each([
    '',
    ' 1',
    '1 ',
    '1 Gi',
    '.',
    '+',
    '-',
    'e3',
    '1e',
    '1e1.5',
    '1.2.3',
    '1Gb',
    '1K',
    '1KiB',
    '1gi',
    '1EE',
    '1e3Gi',
    '0x10',
    '1_000',
    '∞',
    Number.NaN,
    Number.POSITIVE_INFINITY,
  ])('%j is not a quantity', (text) => {
    expect(isQuantity(text)).toBe(false);
    expect(() => parseQuantity(text)).toThrow(/not a valid resource quantity/);
  });

  const alphabet = fc.constantFrom(...'0123456789.+-eEinumkKMGTP x'.split(''));
  it('accepts exactly the published grammar (whole exponents only)', () => {
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 8 }), (text) => {
        const expected = K8S_OPENAPI_PATTERN.test(text) && !FRACTIONAL_EXPONENT.test(text);
        expect(isQuantity(text)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  const digits = (min: number) =>
    fc.string({ unit: fc.constantFrom(...'0123456789'.split('')), minLength: min, maxLength: 6 });
  const suffixes = fc.constantFrom('', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei');
  const powers: Record<string, [number, number]> = {
    '': [0, 0],
    n: [-9, 0],
    u: [-6, 0],
    m: [-3, 0],
    k: [3, 0],
    M: [6, 0],
    G: [9, 0],
    T: [12, 0],
    P: [15, 0],
    E: [18, 0],
    Ki: [0, 10],
    Mi: [0, 20],
    Gi: [0, 30],
    Ti: [0, 40],
    Pi: [0, 50],
    Ei: [0, 60],
  };

  it('values every generated quantity as sign × digits × 10^e × 2^b, nano-rounded and capped', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('', '+', '-'),
        digits(1),
        fc.option(digits(0)),
        fc.oneof(
          suffixes,
          fc.integer({ min: -30, max: 30 }).map((e) => `e${e}`),
        ),
        (sign, whole, fraction, suffix) => {
          const text = `${sign}${whole}${fraction === null ? '' : `.${fraction}`}${suffix}`;
          const [ten, two] = suffix.startsWith('e') ? [Number(suffix.slice(1)), 0] : (powers[suffix] ?? [0, 0]);
          const allDigits = `${whole}${fraction ?? ''}`;
          let magnitude = Number(`${allDigits}e${ten - (fraction ?? '').length}`) * 2 ** two;
          if (magnitude > MAX_QUANTITY) magnitude = MAX_QUANTITY;
          if (magnitude > 0 && magnitude < 1e-9) magnitude = 1e-9;
          const expected = sign === '-' && magnitude !== 0 ? -magnitude : magnitude;
          const parsed = parseQuantityResult(text);
          expect(parsed).toEqual({ ok: true, value: expected });
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('resource quantities in a pod, as the API server validates them', () => {
  it.each([
    ['cpu', '500m', undefined],
    ['memory', '1Ei', undefined],
    ['memory', 0, undefined],
    ['cpu', '-1', /"-1" must be greater than or equal to 0/],
    ['memory', '-1Gi', /must be greater than or equal to 0/],
    ['nvidia.com/gpu', '0.5', /must be an integer: nvidia.com\/gpu is counted in whole units/],
    ['nvidia.com/gpu', '1', undefined],
    ['pods', '1.5', /must be an integer/],
    ['hugepages-2Mi', '1Mi', undefined],
    ['cpu', 'big', /"big" is not a valid resource quantity/],
    ['cpu', '', /"" is not a valid resource quantity: it is empty/],
    ['cpu', { a: 1 }, /not a map/],
    ['cpu', [1], /not a list/],
    ['cpu', null, /not null/],
    ['cpu', true, /not a boolean/],
  ])('%s: %j', (resource, value, expected) => {
    const problem = resourceQuantityProblem(resource, value);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });
});
