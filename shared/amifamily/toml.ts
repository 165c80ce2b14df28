// A TOML writer in the style of Go's pelletier/go-toml v2, which Karpenter uses for Bottlerocket:
// literal ('single-quoted') strings where possible, `[a, b]` arrays, and in each table the plain
// values first, then the sub-tables, in the order of the Map given (callers sort map keys and keep
// struct fields in declaration order).

export type TomlValue = string | number | bigint | boolean | Date | TomlFloat | TomlValue[] | TomlMap;
export type TomlMap = Map<string, TomlValue>;

/** A float kept distinct from an integer (TOML `1.0` vs `1`). */
export class TomlFloat {
  constructor(readonly value: number) {}
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;
const NEEDS_BASIC = /['\u0000-\u0008\u000a-\u001f\u007f]/;

function basicString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

export function tomlString(text: string): string {
  return NEEDS_BASIC.test(text) ? basicString(text) : `'${text}'`;
}

export function tomlKey(key: string): string {
  return BARE_KEY.test(key) ? key : tomlString(key);
}

function isTable(value: TomlValue): value is TomlMap {
  return value instanceof Map;
}

function isArrayOfTables(value: TomlValue): value is TomlMap[] {
  return Array.isArray(value) && value.length > 0 && value.every((v) => v instanceof Map);
}

function inlineValue(value: TomlValue): string {
  if (value instanceof TomlFloat) {
    const f = value.value;
    if (Number.isNaN(f)) return 'nan';
    if (!Number.isFinite(f)) return f > 0 ? 'inf' : '-inf';
    return Number.isInteger(f) ? `${f}.0` : String(f);
  }
  if (typeof value === 'string') return tomlString(value);
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : inlineValue(new TomlFloat(value));
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return `[${value.map(inlineValue).join(', ')}]`;
  return `{${[...value].map(([k, v]) => `${tomlKey(k)} = ${inlineValue(v)}`).join(', ')}}`;
}

function emitTable(path: string[], table: TomlMap, lines: string[], header: string | undefined): void {
  if (header !== undefined) {
    if (lines.length > 0) lines.push('');
    lines.push(header);
  }
  const nested: [string, TomlMap | TomlMap[]][] = [];
  for (const [key, value] of table) {
    if (isTable(value) || isArrayOfTables(value)) nested.push([key, value]);
    else lines.push(`${tomlKey(key)} = ${inlineValue(value)}`);
  }
  for (const [key, value] of nested) {
    const childPath = [...path, tomlKey(key)];
    if (isTable(value)) emitTable(childPath, value, lines, `[${childPath.join('.')}]`);
    else for (const element of value) emitTable(childPath, element, lines, `[[${childPath.join('.')}]]`);
  }
}

/** The document text; ends with a newline. */
export function stringifyToml(root: TomlMap): string {
  const lines: string[] = [];
  emitTable([], root, lines, undefined);
  return `${lines.join('\n')}\n`;
}
