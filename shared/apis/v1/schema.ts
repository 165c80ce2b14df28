// A small declarative schema engine, the TypeScript stand-in for a CRD's structural OpenAPI schema plus
// its CEL rules. `check` walks a value against a schema and returns every issue at once, each with the
// dotted path of the field (`spec.template.spec.requirements[0].operator`), the way a strict API server
// reports them. Rules (CEL equivalents) are plain functions that see the value only when its JSON type
// matches the schema, so they never have to re-check types the schema already reported.

import { isQuantity } from '../quantity';

export interface FieldIssue {
  path: string;
  message: string;
  /** Absent means error. Warnings flag input upstream accepts but that is probably a mistake. */
  severity?: 'warning';
}

export type JsonObject = Record<string, unknown>;
export type Rule<T> = ((value: T, path: string) => FieldIssue[]) & {
  /** The same rule as the CRD's CEL expression, where one exists (x-kubernetes-validations). */
  cel?: CelRule;
};

export interface CelRule {
  rule: string;
  message: string;
  /** A field path relative to the object the rule sits on (`.weight`), where the API server reports it. */
  fieldPath?: string;
}

/** Marks a rule with its CEL equivalent, so the generated CRD enforces what the validator does. */
export function cel<T>(check: Rule<T>, expression: CelRule): Rule<T> {
  return Object.assign((value: T, path: string) => check(value, path), { cel: expression });
}

interface WithRules<T> {
  rules?: readonly Rule<T>[];
}

export interface ObjectSchema extends WithRules<JsonObject> {
  type: 'object';
  properties: Readonly<Record<string, Schema>>;
  required?: readonly string[];
}

/** A map with free keys (labels, tags, resource lists). */
export interface MapSchema extends WithRules<JsonObject> {
  type: 'map';
  values: Schema;
  /** Checks each key; its issues are reported at `path[key]`. */
  keys?: StringSchema;
  maxProperties?: number;
}

export interface ArraySchema extends WithRules<unknown[]> {
  type: 'array';
  items: Schema;
  minItems?: number;
  maxItems?: number;
}

export interface StringSchema extends WithRules<string> {
  type: 'string';
  enum?: readonly string[];
  /** Values outside the enum that deserve their own explanation (e.g. a removed option). */
  removed?: Readonly<Record<string, string>>;
  pattern?: RegExp;
  /** Replaces the generic "should match" text when the pattern says little to a person. */
  patternMessage?: string;
  minLength?: number;
  maxLength?: number;
}

export interface IntegerSchema extends WithRules<number> {
  type: 'integer';
  minimum?: number;
  maximum?: number;
}

export interface BooleanSchema {
  type: 'boolean';
}

/** int-or-string holding a Kubernetes resource quantity ("2", 500m, 16Gi). */
export interface QuantitySchema extends WithRules<string | number> {
  type: 'quantity';
}

/** Anything goes (status, free-form metadata fields). */
export interface AnySchema {
  type: 'any';
}

export type Schema =
  | ObjectSchema
  | MapSchema
  | ArraySchema
  | StringSchema
  | IntegerSchema
  | BooleanSchema
  | QuantitySchema
  | AnySchema;

// ---------------------------------------------------------------------------------------------
// Builders keep the schema tables short.

export const object = (
  properties: Record<string, Schema>,
  options: Omit<ObjectSchema, 'type' | 'properties'> = {},
): ObjectSchema => ({ type: 'object', properties, ...options });
export const map = (values: Schema, options: Omit<MapSchema, 'type' | 'values'> = {}): MapSchema => ({
  type: 'map',
  values,
  ...options,
});
export const array = (items: Schema, options: Omit<ArraySchema, 'type' | 'items'> = {}): ArraySchema => ({
  type: 'array',
  items,
  ...options,
});
export const string = (options: Omit<StringSchema, 'type'> = {}): StringSchema => ({ type: 'string', ...options });
export const integer = (options: Omit<IntegerSchema, 'type'> = {}): IntegerSchema => ({ type: 'integer', ...options });
export const boolean = (): BooleanSchema => ({ type: 'boolean' });
export const quantity = (options: Omit<QuantitySchema, 'type'> = {}): QuantitySchema => ({
  type: 'quantity',
  ...options,
});
export const any = (): AnySchema => ({ type: 'any' });
export const enumOf = (values: readonly string[], options: Omit<StringSchema, 'type' | 'enum'> = {}): StringSchema =>
  string({ enum: values, ...options });

/** A rule with one message that fails when `ok` is false; `field` narrows the reported path. */
export function rule<T>(message: string, ok: (value: T) => boolean, field?: string): Rule<T> {
  return (value, path) => (ok(value) ? [] : [{ path: field ? joinPath(path, field) : path, message }]);
}

// ---------------------------------------------------------------------------------------------
// Paths and value helpers shared with rule functions.

export function joinPath(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`;
}
export const indexPath = (path: string, index: number): string => `${path}[${index}]`;
export const keyPath = (path: string, key: string): string => `${path}[${key}]`;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** CEL's has(): set and not null (the API server prunes nulls of non-nullable fields). */
export function has(value: JsonObject, field: string): boolean {
  return value[field] !== undefined && value[field] !== null;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asObjects(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** JSON text of a value for messages, the way the API server quotes the offending value. */
export function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' && Number.isInteger(value) ? 'integer' : typeof value;
}

// One grammar for every quantity: apimachinery's resource.Quantity (shared/apis/quantity.ts).
export function isQuantityText(text: string): boolean {
  return isQuantity(text);
}

// ---------------------------------------------------------------------------------------------
// The walker.

/** Checks `value` against `schema`; `path` is where the value sits in its object. */
export function check(schema: Schema, value: unknown, path: string): FieldIssue[] {
  switch (schema.type) {
    case 'any':
      return [];
    case 'object':
      return checkObject(schema, value, path);
    case 'map':
      return checkMap(schema, value, path);
    case 'array':
      return checkArray(schema, value, path);
    case 'string':
      return checkString(schema, value, path);
    case 'integer':
      return checkInteger(schema, value, path);
    case 'boolean':
      return typeof value === 'boolean' ? [] : [wrongType(value, 'boolean', path)];
    case 'quantity':
      return checkQuantity(schema, value, path);
  }
}

function wrongType(value: unknown, expected: string, path: string): FieldIssue {
  return { path, message: `Invalid value: ${show(value)}: must be of type ${expected}, not ${typeName(value)}` };
}

function runRules<T>(rules: readonly Rule<T>[] | undefined, value: T, path: string): FieldIssue[] {
  return rules ? rules.flatMap((r) => r(value, path)) : [];
}

function checkObject(schema: ObjectSchema, value: unknown, path: string): FieldIssue[] {
  if (!isObject(value)) return [wrongType(value, 'object', path)];
  const issues: FieldIssue[] = [];
  for (const [field, fieldValue] of Object.entries(value)) {
    const fieldSchema = schema.properties[field];
    const fieldPath = joinPath(path, field);
    if (!fieldSchema) issues.push({ path: fieldPath, message: `unknown field "${field}"` });
    else if (fieldValue !== null) issues.push(...check(fieldSchema, fieldValue, fieldPath));
  }
  for (const field of schema.required ?? []) {
    if (!has(value, field)) issues.push({ path: joinPath(path, field), message: 'Required value' });
  }
  return [...issues, ...runRules(schema.rules, value, path)];
}

function checkMap(schema: MapSchema, value: unknown, path: string): FieldIssue[] {
  if (!isObject(value)) return [wrongType(value, 'object', path)];
  const issues: FieldIssue[] = [];
  const entries = Object.entries(value);
  if (schema.maxProperties !== undefined && entries.length > schema.maxProperties) {
    issues.push({ path, message: `Too many: ${entries.length}: must have at most ${schema.maxProperties} items` });
  }
  for (const [key, entry] of entries) {
    const entryPath = keyPath(path, key);
    if (schema.keys) issues.push(...checkString(schema.keys, key, entryPath));
    if (entry !== null) issues.push(...check(schema.values, entry, entryPath));
  }
  return [...issues, ...runRules(schema.rules, value, path)];
}

function checkArray(schema: ArraySchema, value: unknown, path: string): FieldIssue[] {
  if (!Array.isArray(value)) return [wrongType(value, 'array', path)];
  const issues: FieldIssue[] = [];
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    issues.push({ path, message: `Invalid value: ${value.length}: must have at least ${schema.minItems} items` });
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    issues.push({ path, message: `Too many: ${value.length}: must have at most ${schema.maxItems} items` });
  }
  value.forEach((item, index) => {
    issues.push(...check(schema.items, item, indexPath(path, index)));
  });
  return [...issues, ...runRules(schema.rules, value, path)];
}

function checkString(schema: StringSchema, value: unknown, path: string): FieldIssue[] {
  if (typeof value !== 'string') return [wrongType(value, 'string', path)];
  const removed = schema.removed?.[value];
  if (removed !== undefined) return [{ path, message: removed }];
  const issues: FieldIssue[] = [];
  if (schema.enum && !schema.enum.includes(value)) {
    const supported = schema.enum.map((v) => `"${v}"`).join(', ');
    issues.push({ path, message: `Unsupported value: ${show(value)}: supported values: ${supported}` });
  }
  if (schema.minLength !== undefined && value.length < schema.minLength) {
    issues.push({ path, message: `Invalid value: ${show(value)}: should be at least ${schema.minLength} chars long` });
  }
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    issues.push({ path, message: `Too long: may not be more than ${schema.maxLength} bytes` });
  }
  if (schema.pattern && !schema.pattern.test(value)) {
    const expectation = schema.patternMessage ?? `should match '${schema.pattern.source}'`;
    issues.push({ path, message: `Invalid value: ${show(value)}: ${expectation}` });
  }
  return [...issues, ...runRules(schema.rules, value, path)];
}

function checkInteger(schema: IntegerSchema, value: unknown, path: string): FieldIssue[] {
  if (typeof value !== 'number' || !Number.isInteger(value)) return [wrongType(value, 'integer', path)];
  const issues: FieldIssue[] = [];
  if (schema.minimum !== undefined && value < schema.minimum) {
    issues.push({ path, message: `Invalid value: ${value}: should be greater than or equal to ${schema.minimum}` });
  }
  if (schema.maximum !== undefined && value > schema.maximum) {
    issues.push({ path, message: `Invalid value: ${value}: should be less than or equal to ${schema.maximum}` });
  }
  return [...issues, ...runRules(schema.rules, value, path)];
}

function checkQuantity(schema: QuantitySchema, value: unknown, path: string): FieldIssue[] {
  const valid =
    (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && isQuantityText(value));
  if (!valid) {
    return [{ path, message: `Invalid value: ${show(value)}: must be a resource quantity (examples: 500m, 2, 16Gi)` }];
  }
  return runRules(schema.rules, value as string | number, path);
}
