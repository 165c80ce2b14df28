// A small field table: one description of a JSON shape that both checks values (with field paths in
// the problems) and renders as JSON Schema (draft 2020-12). The notice's validator and
// docs/notice.schema.json come from the same table, so they cannot disagree.

/** `name` makes the schema emit the field once under `$defs` and refer to it elsewhere. */
export type Field = FieldShape & { name?: string };

type FieldShape =
  | {
      kind: 'string';
      description?: string;
      minLength?: number;
      maxLength?: number;
      enum?: readonly string[];
      /** A regular expression the whole value must match (anchored). */
      pattern?: string;
      /** Shown in the problem when the pattern does not match. */
      patternHint?: string;
      format?: 'date-time';
    }
  | { kind: 'integer'; description?: string; minimum?: number; maximum?: number }
  | { kind: 'array'; description?: string; items: Field; minItems?: number; maxItems?: number }
  | {
      kind: 'object';
      description?: string;
      properties: Readonly<Record<string, Field>>;
      required?: readonly string[];
      /** Closed objects refuse properties they do not list; open ones ignore them. */
      closed?: boolean;
    }
  | {
      kind: 'map';
      description?: string;
      keys: Extract<FieldShape, { kind: 'string' }>;
      values: Field;
      maxProperties?: number;
    };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const compiled = new Map<string, RegExp>();
function regex(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    re = new RegExp(pattern);
    compiled.set(pattern, re);
  }
  return re;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

function checkString(field: Extract<Field, { kind: 'string' }>, value: string, path: string, out: string[]): void {
  if (field.enum && !field.enum.includes(value)) {
    out.push(`${path}: must be one of ${field.enum.join(', ')}, got ${quote(value)}`);
    return;
  }
  if (field.minLength !== undefined && value.length < field.minLength) {
    out.push(
      field.minLength === 1
        ? `${path}: must not be empty`
        : `${path}: must be at least ${field.minLength} characters, got ${value.length}`,
    );
  }
  if (field.maxLength !== undefined && value.length > field.maxLength) {
    out.push(`${path}: must be at most ${field.maxLength} characters, got ${value.length}`);
    return;
  }
  if (field.pattern !== undefined && !regex(field.pattern).test(value)) {
    out.push(`${path}: ${quote(value)} is not ${field.patternHint ?? `of the form ${field.pattern}`}`);
  }
  if (field.format === 'date-time' && (!RFC3339.test(value) || Number.isNaN(Date.parse(value)))) {
    out.push(`${path}: ${quote(value)} is not an RFC 3339 time such as 2026-11-30T12:00:00Z`);
  }
}

/** Appends the problems of `value` against `field` to `out`; `limit` stops a flood of them. */
export function checkField(field: Field, value: unknown, path: string, out: string[], limit = 100): void {
  if (out.length >= limit) return;
  switch (field.kind) {
    case 'string':
      if (typeof value !== 'string') out.push(`${path}: must be a string, got ${typeName(value)}`);
      else checkString(field, value, path, out);
      return;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        out.push(`${path}: must be an integer, got ${typeof value === 'number' ? String(value) : typeName(value)}`);
      } else if (field.minimum !== undefined && value < field.minimum) {
        out.push(`${path}: must be at least ${field.minimum}, got ${value}`);
      } else if (field.maximum !== undefined && value > field.maximum) {
        out.push(`${path}: must be at most ${field.maximum}, got ${value}`);
      }
      return;
    case 'array': {
      if (!Array.isArray(value)) {
        out.push(`${path}: must be an array, got ${typeName(value)}`);
        return;
      }
      if (field.minItems !== undefined && value.length < field.minItems) {
        out.push(`${path}: must have at least ${field.minItems} item${field.minItems === 1 ? '' : 's'}`);
      }
      if (field.maxItems !== undefined && value.length > field.maxItems) {
        out.push(`${path}: must have at most ${field.maxItems} items, got ${value.length}`);
        return;
      }
      for (let i = 0; i < value.length && out.length < limit; i++)
        checkField(field.items, value[i], `${path}[${i}]`, out, limit);
      return;
    }
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        out.push(`${path}: must be an object, got ${typeName(value)}`);
        return;
      }
      const record = value as Record<string, unknown>;
      for (const key of field.required ?? []) {
        if (!Object.hasOwn(record, key) || record[key] === undefined) out.push(`${path}.${key}: required`);
      }
      for (const key of Object.keys(record)) {
        if (out.length >= limit) return;
        const child = Object.hasOwn(field.properties, key) ? field.properties[key] : undefined;
        if (child) {
          if (record[key] !== undefined) checkField(child, record[key], `${path}.${key}`, out, limit);
        } else if (field.closed) {
          out.push(`${path}: unknown field ${quote(key)} (known: ${Object.keys(field.properties).join(', ')})`);
        }
      }
      return;
    }
    case 'map': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        out.push(`${path}: must be an object of ${field.values.kind}s, got ${typeName(value)}`);
        return;
      }
      const entries = Object.entries(value as Record<string, unknown>);
      if (field.maxProperties !== undefined && entries.length > field.maxProperties) {
        out.push(`${path}: must have at most ${field.maxProperties} entries, got ${entries.length}`);
        return;
      }
      for (const [key, v] of entries) {
        if (out.length >= limit) return;
        const keyPath = `${path}[${JSON.stringify(key)}]`;
        checkField(field.keys, key, `${keyPath} (key)`, out, limit);
        checkField(field.values, v, keyPath, out, limit);
      }
      return;
    }
  }
}

/**
 * The field as a JSON Schema (draft 2020-12). Named fields go to `defs` once and are referenced as
 * `#/$defs/<name>`; the caller puts `defs` under `$defs` of the root.
 */
export function toJsonSchema(field: Field, defs?: Record<string, unknown>): Record<string, unknown> {
  if (field.name !== undefined && defs) {
    const ref = { $ref: `#/$defs/${field.name}` };
    if (Object.hasOwn(defs, field.name)) return ref;
    defs[field.name] = {};
    defs[field.name] = schemaOf(field, defs);
    return ref;
  }
  return schemaOf(field, defs);
}

function schemaOf(field: Field, defs: Record<string, unknown> | undefined): Record<string, unknown> {
  const description = field.description !== undefined ? { description: field.description } : {};
  switch (field.kind) {
    case 'string':
      return {
        type: 'string',
        ...description,
        ...(field.enum ? { enum: [...field.enum] } : {}),
        ...(field.minLength !== undefined ? { minLength: field.minLength } : {}),
        ...(field.maxLength !== undefined ? { maxLength: field.maxLength } : {}),
        ...(field.pattern !== undefined ? { pattern: field.pattern } : {}),
        ...(field.format !== undefined ? { format: field.format } : {}),
      };
    case 'integer':
      return {
        type: 'integer',
        ...description,
        ...(field.minimum !== undefined ? { minimum: field.minimum } : {}),
        ...(field.maximum !== undefined ? { maximum: field.maximum } : {}),
      };
    case 'array':
      return {
        type: 'array',
        ...description,
        items: toJsonSchema(field.items, defs),
        ...(field.minItems !== undefined ? { minItems: field.minItems } : {}),
        ...(field.maxItems !== undefined ? { maxItems: field.maxItems } : {}),
      };
    case 'object':
      return {
        type: 'object',
        ...description,
        properties: Object.fromEntries(Object.entries(field.properties).map(([k, f]) => [k, toJsonSchema(f, defs)])),
        ...(field.required && field.required.length > 0 ? { required: [...field.required] } : {}),
        ...(field.closed ? { additionalProperties: false } : {}),
      };
    case 'map':
      return {
        type: 'object',
        ...description,
        propertyNames: toJsonSchema(field.keys, defs),
        additionalProperties: toJsonSchema(field.values, defs),
        ...(field.maxProperties !== undefined ? { maxProperties: field.maxProperties } : {}),
      };
  }
}
