// Kubernetes resource quantities ("500m", "16Gi", "1e3", "1E") as plain numbers in base units, read
// as apimachinery's resource.ParseQuantity reads them. Numbers are doubles: exact for every size a node
// can have (bytes below 2^53, millicores); beyond that they are correctly rounded, never misread.
//
// Grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go):
//   quantity        ::= signedNumber suffix
//   signedNumber    ::= number | sign number          sign ::= "+" | "-"
//   number          ::= digits | digits "." digits | digits "." | "." digits
//   suffix          ::= binarySI | decimalExponent | decimalSI
//   binarySI        ::= Ki | Mi | Gi | Ti | Pi | Ei
//   decimalSI       ::= n | u | m | "" | k | M | G | T | P | E
//   decimalExponent ::= ("e" | "E") sign? digits      (the parser takes whole exponents only)
// No whitespace anywhere. As the API server does, a non-zero amount below one nano-unit is rounded up
// to 1n and an amount beyond 2^63-1 is capped there.

const BINARY_EXPONENT: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_EXPONENT: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** The grammar above as one expression: sign, whole part, fraction, suffix. */
export const QUANTITY_PATTERN = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

/** The largest amount a quantity holds (int64's maximum); larger ones are capped to it. */
export const MAX_QUANTITY = 2 ** 63 - 1;
const NANO = 1e-9;
// resource.Quantity keeps the exponent as an int32; a longer one is not a number Kubernetes can hold.
const MAX_EXPONENT = 2 ** 31 - 1;

export type QuantityParse = { ok: true; value: number } | { ok: false; reason: string };

/** Parses a quantity, or says why the text is not one. Numbers (YAML `cpu: 2`) are taken as written. */
export function parseQuantityResult(text: string | number): QuantityParse {
  if (typeof text === 'number') {
    if (!Number.isFinite(text)) return { ok: false, reason: 'is not a finite number' };
    return { ok: true, value: bound(text) };
  }
  if (text === '') return { ok: false, reason: 'is not a valid resource quantity: it is empty' };
  const match = QUANTITY_PATTERN.exec(text);
  if (!match)
    return { ok: false, reason: 'is not a valid resource quantity: digits with an optional sign, fraction and unit' };
  const [, sign = '', whole = '', fraction, suffix = ''] = match;
  if (whole === '' && (fraction === undefined || fraction === '')) {
    return { ok: false, reason: 'is not a valid resource quantity: it has no digits' };
  }
  const mantissa = `${sign}${whole || '0'}.${fraction ?? ''}0`;
  const binary = BINARY_EXPONENT[suffix];
  if (binary !== undefined) return { ok: true, value: bound(Number(mantissa) * 2 ** binary) };
  let exponent = DECIMAL_EXPONENT[suffix];
  if (exponent === undefined) {
    exponent = Number(suffix.slice(1));
    if (Math.abs(exponent) > MAX_EXPONENT)
      return { ok: false, reason: 'is not a valid resource quantity: its exponent is out of range' };
  }
  // One decimal string, so the double is the correctly rounded value of the whole quantity.
  return { ok: true, value: bound(Number(`${mantissa}e${exponent}`)) };
}

function bound(value: number): number {
  const magnitude = Math.abs(value);
  if (magnitude > MAX_QUANTITY) return Math.sign(value) * MAX_QUANTITY;
  if (magnitude > 0 && magnitude < NANO) return Math.sign(value) * NANO;
  return value === 0 ? 0 : value;
}

export function isQuantity(text: string | number): boolean {
  return parseQuantityResult(text).ok;
}

export function parseQuantityOrUndefined(text: string | number): number | undefined {
  const parsed = parseQuantityResult(text);
  return parsed.ok ? parsed.value : undefined;
}

/** Parses a quantity; throws an Error naming the text when it is not one. */
export function parseQuantity(text: string | number): number {
  const parsed = parseQuantityResult(text);
  if (!parsed.ok) throw new Error(`"${text}" is not a valid resource quantity (examples: 500m, 2, 16Gi)`);
  return parsed.value;
}

// Resources the API server holds to whole numbers (validation.IsIntegerResourceName): extended
// resources (a domain other than kubernetes.io, e.g. nvidia.com/gpu), hugepages aside, and pods.
function isIntegerResource(resource: string): boolean {
  if (resource === 'pods') return true;
  if (resource.startsWith('hugepages-') || !resource.includes('/')) return false;
  const domain = resource.slice(0, resource.indexOf('/'));
  return !(domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io') || domain === 'requests');
}

/**
 * What the API server says about one entry of a pod's requests, limits or overhead, or undefined when
 * it accepts it: a quantity (string or number), not negative, whole for integer resources.
 */
export function resourceQuantityProblem(resource: string, value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') {
    return `must be a quantity such as 500m, 2 or 16Gi, not ${describe(value)}`;
  }
  const parsed = parseQuantityResult(value);
  if (!parsed.ok) return `${JSON.stringify(value)} ${parsed.reason} (examples: 500m, 2, 16Gi, 1E)`;
  if (parsed.value < 0) return `${JSON.stringify(value)} must be greater than or equal to 0`;
  if (isIntegerResource(resource) && !Number.isInteger(parsed.value)) {
    return `${JSON.stringify(value)} must be an integer: ${resource} is counted in whole units`;
  }
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}

export const MiB = 2 ** 20;
export const GiB = 2 ** 30;
