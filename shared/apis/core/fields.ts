// Field checks shared by the pod, workload and node validators: the shapes and name formats
// Kubernetes' apimachinery validation applies (qualified names, label values, DNS labels, int32s),
// reported through one callback as `path: message` so that every problem is found in one pass.

export type Report = (path: string, message: string) => void;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `a.b` or `a[0]`; an empty parent gives the field alone. */
export function join(path: string, field: string | number): string {
  if (typeof field === 'number') return `${path}[${field}]`;
  return path === '' ? field : `${path}.${field}`;
}

/** The JSON type of a value, as the API server names it in decoding errors. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  return `a ${typeof value}`;
}

/** A short, single-line rendering of a user value for messages (long values are cut); never throws. */
export function show(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // A map whose toString is not a function (e.g. `{toString: 0}`) makes String() throw too.
    text = typeName(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** String(value), or the value's type when String() throws (a map whose toString is not a function). */
function plainText(value: unknown): string {
  try {
    return String(value);
  } catch {
    return typeName(value);
  }
}

export const INT32_MAX = 2 ** 31 - 1;

/** The map at `path`, or undefined (reporting it when present but not a map). */
export function record(value: unknown, path: string, report: Report): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (isRecord(value)) return value;
  report(path, `must be a map (an object with named fields), not ${typeName(value)}`);
  return undefined;
}

/** The list at `path`, or undefined (reporting it when present but not a list). */
export function list(value: unknown, path: string, report: Report): unknown[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value;
  report(path, `must be a list, not ${typeName(value)}`);
  return undefined;
}

/** Reports a present value that is not a string; true when the value is a string. */
export function optionalString(value: unknown, path: string, report: Report): value is string {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return true;
  report(path, `must be a string, not ${typeName(value)}`);
  return false;
}

export function requiredString(value: unknown, path: string, report: Report): value is string {
  if (value === undefined || value === null || value === '') {
    report(path, 'Required value');
    return false;
  }
  return optionalString(value, path, report);
}

export function oneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  path: string,
  report: Report,
): value is T {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return true;
  report(path, `Unsupported value: ${show(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`);
  return false;
}

/** An integer in [min, max] (the API's int32 fields); reports fractions, strings and out-of-range values. */
export function integer(value: unknown, path: string, report: Report, min: number, max = INT32_MAX): value is number {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    report(path, `Invalid value: ${show(value)}: must be a whole number`);
    return false;
  }
  if (value < min || value > max) {
    const range =
      max === INT32_MAX && value < min ? `greater than or equal to ${min}` : `between ${min} and ${max}, inclusive`;
    report(path, `Invalid value: ${value}: must be ${range}`);
    return false;
  }
  return true;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

export function dnsLabelProblem(text: string): string | undefined {
  if (text.length > 63) return 'must be no more than 63 characters';
  if (!DNS_LABEL.test(text)) {
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  }
  return undefined;
}

export function dnsSubdomainProblem(text: string): string | undefined {
  if (text.length > 253) return 'must be no more than 253 characters';
  if (!DNS_SUBDOMAIN.test(text)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** A label key or resource name: `[prefix/]name` (validation.IsQualifiedName). */
export function qualifiedNameProblem(text: string): string | undefined {
  const slash = text.indexOf('/');
  const prefix = slash >= 0 ? text.slice(0, slash) : undefined;
  const name = slash >= 0 ? text.slice(slash + 1) : text;
  if (prefix !== undefined) {
    if (prefix === '') return 'prefix part must be non-empty';
    const problem = dnsSubdomainProblem(prefix);
    if (problem) return `prefix part ${problem}`;
  }
  if (name === '') return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!QUALIFIED_NAME_PART.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

export function labelValueProblem(text: string): string | undefined {
  if (text === '') return undefined;
  if (text.length > 63) return 'must be no more than 63 characters';
  if (!QUALIFIED_NAME_PART.test(text)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

export function qualifiedName(value: unknown, path: string, report: Report): value is string {
  if (!requiredString(value, path, report)) return false;
  const problem = qualifiedNameProblem(value);
  if (problem) report(path, `Invalid value: ${show(value)}: ${problem}`);
  return problem === undefined;
}

/** A map of label keys to label values (metadata.labels, nodeSelector, matchLabels). */
export function labels(value: unknown, path: string, report: Report): void {
  const map = record(value, path, report);
  if (!map) return;
  for (const [key, v] of Object.entries(map)) {
    const problem = qualifiedNameProblem(key);
    if (problem) report(path, `Invalid value: ${show(key)}: ${problem}`);
    if (typeof v !== 'string') {
      report(join(path, key), `must be a string, not ${typeName(v)} (quote it: "${plainText(v)}")`);
      continue;
    }
    const valueProblem = labelValueProblem(v);
    if (valueProblem) report(join(path, key), `Invalid value: ${show(v)}: ${valueProblem}`);
  }
}

/** A list of strings (namespaces, matchLabelKeys, values). */
export function strings(value: unknown, path: string, report: Report): string[] | undefined {
  const items = list(value, path, report);
  if (!items) return undefined;
  let ok = true;
  items.forEach((item, i) => {
    if (typeof item !== 'string') {
      report(join(path, i), `must be a string, not ${typeName(item)}`);
      ok = false;
    }
  });
  return ok ? (items as string[]) : undefined;
}

/** Calls `check` with each item of the list at `path` and the item's path (reporting a non-list). */
export function eachItem(
  value: unknown,
  path: string,
  report: Report,
  check: (item: unknown, itemPath: string) => unknown,
): void {
  const items = list(value, path, report);
  if (!items) return;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    // A null item (`- ~` or an empty `-` in YAML) is no object at all; record() would skip it silently.
    if (item === undefined || item === null) report(join(path, i), 'must not be null');
    else check(item, join(path, i));
  }
}

/** Reports fields the API's type does not have, as a strict API server does (kubectl's default). */
export function knownFields(
  map: Record<string, unknown>,
  known: ReadonlySet<string>,
  path: string,
  report: Report,
): void {
  for (const key of Object.keys(map)) {
    if (!known.has(key))
      report(join(path, key), 'unknown field: not part of this Kubernetes object (check spelling and nesting)');
  }
}

export const fieldSet = (...names: string[]): ReadonlySet<string> => new Set(names);

/** The map at `path` with only the given fields, or undefined (see record and knownFields). */
export function typed(
  value: unknown,
  known: ReadonlySet<string>,
  path: string,
  report: Report,
): Record<string, unknown> | undefined {
  const map = record(value, path, report);
  if (map) knownFields(map, known, path, report);
  return map;
}
