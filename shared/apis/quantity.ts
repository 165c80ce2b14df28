// Kubernetes resource quantities ("500m", "16Gi", "1e3") as plain numbers in base units.
// Numbers are doubles: exact for every size a node can have (bytes below 2^53, millicores).

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The Kubernetes quantity grammar (sign, digits, optional fraction, suffix or exponent). */
export const QUANTITY_PATTERN = /^([+-]?[0-9.]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

export function isQuantity(text: string): boolean {
  return parseQuantityOrUndefined(text) !== undefined;
}

export function parseQuantityOrUndefined(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isFinite(text) ? text : undefined;
  const match = QUANTITY_PATTERN.exec(text.trim());
  if (!match) return undefined;
  const [, digits = '', suffix = ''] = match;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(digits)) return undefined;
  const value = Number(digits);
  if (suffix.startsWith('e') || suffix.startsWith('E')) return value * 10 ** Number(suffix.slice(1));
  const scale = BINARY[suffix] ?? DECIMAL[suffix];
  return scale === undefined ? undefined : value * scale;
}

/** Parses a quantity; throws an Error naming the text when it is not one. */
export function parseQuantity(text: string | number): number {
  const value = parseQuantityOrUndefined(text);
  if (value === undefined) throw new Error(`"${text}" is not a valid resource quantity (examples: 500m, 2, 16Gi)`);
  return value;
}

export const MiB = 2 ** 20;
export const GiB = 2 ** 30;
