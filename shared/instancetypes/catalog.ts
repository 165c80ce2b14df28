// The catalog JSON (built-in snapshot and `--catalog FILE`): parsing with errors that name the entry
// and the field, so a hand-written catalog can be fixed without reading this code.

import { readFileSync } from 'node:fs';
import { formatProblem, type Problem } from '../apis/problems';
import builtInSnapshot from './data/us-east-1.json';
import type { Catalog, CatalogInstanceType, CatalogOffering } from './types';

/** The catalog format version this code reads and the generator writes. */
export const CATALOG_VERSION = 1;

/** Raised for a catalog that does not follow the documented format (docs/catalog.md). */
export class CatalogError extends Error {
  override readonly name = 'CatalogError';
  constructor(
    readonly source: string,
    readonly problems: readonly Problem[],
  ) {
    super(`invalid instance-type catalog ${source}:\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}`);
  }
}

type Json = Record<string, unknown>;

const ARCHES = ['amd64', 'arm64'];
const CAPACITY_TYPES = ['spot', 'on-demand', 'reserved'];
const MAX_REPORTED_PROBLEMS = 50;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

class Checker {
  readonly problems: Problem[] = [];
  constructor(readonly source: string) {}

  report(object: string | undefined, path: string, message: string): void {
    const problem: Problem = { severity: 'error', file: this.source, path, message };
    if (object !== undefined) problem.object = object;
    this.problems.push(problem);
  }
}

// Field checks: each returns whether the value is acceptable and reports otherwise.
type FieldKind = 'string' | 'boolean' | 'count' | 'positive' | 'number' | 'quantities';

function checkField(kind: FieldKind, value: unknown): string | undefined {
  switch (kind) {
    case 'string':
      return typeof value === 'string' && value.length > 0 ? undefined : 'must be a non-empty string';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'count':
      return Number.isInteger(value) && (value as number) >= 0 ? undefined : 'must be a whole number ≥ 0';
    case 'positive':
      return Number.isInteger(value) && (value as number) > 0 ? undefined : 'must be a whole number > 0';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? undefined : 'must be a number ≥ 0';
    case 'quantities':
      return isObject(value) && Object.values(value).every((v) => typeof v === 'string')
        ? undefined
        : 'must map resource names to quantity strings, e.g. {"cpu": "4", "memory": "16Gi"}';
  }
}

const REQUIRED_FIELDS: [keyof CatalogInstanceType, FieldKind][] = [
  ['vcpu', 'positive'],
  ['memoryMiB', 'positive'],
  ['maximumNetworkInterfaces', 'count'],
  ['ipv4PerInterface', 'count'],
  ['gpus', 'count'],
];

const OPTIONAL_FIELDS: [keyof CatalogInstanceType, FieldKind][] = [
  ['gpuName', 'string'],
  ['gpuManufacturer', 'string'],
  ['gpuMemoryMiB', 'count'],
  ['acceleratorName', 'string'],
  ['acceleratorManufacturer', 'string'],
  ['acceleratorCount', 'count'],
  ['neuronCoresPerDevice', 'count'],
  ['efaMaxInterfaces', 'count'],
  ['localNvmeGB', 'count'],
  ['instanceStorageGB', 'count'],
  ['hypervisor', 'string'],
  ['cpuManufacturer', 'string'],
  ['cpuSustainedClockSpeedMhz', 'count'],
  ['bareMetal', 'boolean'],
  ['networkBandwidthMbps', 'count'],
  ['ebsBandwidthMbps', 'count'],
  ['encryptionInTransitSupported', 'boolean'],
  ['maxPods', 'count'],
  ['capacity', 'quantities'],
];

const OVERHEAD_PARTS = ['kubeReserved', 'systemReserved', 'evictionThreshold'];

function checkOffering(check: Checker, object: string, path: string, raw: unknown): void {
  if (!isObject(raw)) {
    check.report(object, path, `must be an object {zone, capacityType, price, available}, got ${describe(raw)}`);
    return;
  }
  for (const [field, kind] of [
    ['zone', 'string'],
    ['price', 'number'],
    ['available', 'boolean'],
  ] as const) {
    const problem = checkField(kind, raw[field]);
    if (problem) check.report(object, `${path}.${field}`, `${problem}, got ${describe(raw[field])}`);
  }
  if (raw.zoneID !== undefined && checkField('string', raw.zoneID))
    check.report(object, `${path}.zoneID`, `must be a non-empty string, got ${describe(raw.zoneID)}`);
  if (!CAPACITY_TYPES.includes(raw.capacityType as string))
    check.report(
      object,
      `${path}.capacityType`,
      `must be one of ${CAPACITY_TYPES.join(', ')}, got ${describe(raw.capacityType)}`,
    );
}

function checkInstanceType(check: Checker, index: number, raw: unknown, seen: Map<string, number>): void {
  const path = `instanceTypes[${index}]`;
  if (!isObject(raw)) {
    check.report(undefined, path, `must be an object describing one instance type, got ${describe(raw)}`);
    return;
  }
  const name = raw.name;
  const object = typeof name === 'string' && name.length > 0 ? `InstanceType/${name}` : undefined;
  if (object === undefined)
    check.report(undefined, `${path}.name`, `must be a non-empty string, got ${describe(name)}`);
  else if (/\s/.test(name as string)) check.report(object, `${path}.name`, 'must not contain spaces');
  else {
    const first = seen.get(name as string);
    if (first !== undefined) check.report(object, `${path}.name`, `duplicates instanceTypes[${first}]`);
    else seen.set(name as string, index);
  }
  if (!ARCHES.includes(raw.arch as string)) {
    const hint = raw.arch === 'x86_64' ? ' (use the Kubernetes name amd64 for x86_64)' : '';
    check.report(object, `${path}.arch`, `must be amd64 or arm64, got ${describe(raw.arch)}${hint}`);
  }
  for (const [field, kind] of REQUIRED_FIELDS) {
    const problem = checkField(kind, raw[field]);
    if (problem) check.report(object, `${path}.${field}`, `${problem}, got ${describe(raw[field])}`);
  }
  for (const [field, kind] of OPTIONAL_FIELDS) {
    if (raw[field] === undefined) continue;
    const problem = checkField(kind, raw[field]);
    if (problem) check.report(object, `${path}.${field}`, `${problem}, got ${describe(raw[field])}`);
  }
  if (raw.overhead !== undefined) {
    if (!isObject(raw.overhead))
      check.report(object, `${path}.overhead`, `must be an object {${OVERHEAD_PARTS.join(', ')}}`);
    else
      for (const [part, value] of Object.entries(raw.overhead)) {
        if (!OVERHEAD_PARTS.includes(part))
          check.report(object, `${path}.overhead.${part}`, `unknown part; use ${OVERHEAD_PARTS.join(', ')}`);
        else if (checkField('quantities', value))
          check.report(object, `${path}.overhead.${part}`, checkField('quantities', value) as string);
      }
  }
  if (!Array.isArray(raw.offerings)) {
    check.report(
      object,
      `${path}.offerings`,
      `must be a list of {zone, capacityType, price, available}, got ${describe(raw.offerings)}`,
    );
    return;
  }
  const keys = new Set<string>();
  raw.offerings.forEach((offering, i) => {
    checkOffering(check, object ?? path, `${path}.offerings[${i}]`, offering);
    if (isObject(offering)) {
      const key = `${String(offering.zone)}/${String(offering.capacityType)}`;
      if (keys.has(key)) check.report(object, `${path}.offerings[${i}]`, `duplicates the ${key} offering`);
      keys.add(key);
    }
  });
}

/**
 * Validates catalog JSON and returns it typed. Every problem is reported at once (up to 50), each
 * naming the entry and the field; `source` names the file in messages.
 */
export function parseCatalog(json: unknown, source: string): Catalog {
  const check = new Checker(source);
  if (!isObject(json)) {
    check.report(undefined, '', `must be a JSON object {version, region, instanceTypes}, got ${describe(json)}`);
    throw new CatalogError(source, check.problems);
  }
  if (json.version !== CATALOG_VERSION)
    check.report(
      undefined,
      'version',
      `must be ${CATALOG_VERSION} (the format this karpless reads), got ${describe(json.version)}`,
    );
  if (checkField('string', json.region))
    check.report(undefined, 'region', `must be a region name such as us-east-1, got ${describe(json.region)}`);
  if (json.generatedAt !== undefined && typeof json.generatedAt !== 'string')
    check.report(undefined, 'generatedAt', 'must be a string (an RFC 3339 time)');
  if (json.notes !== undefined && !(Array.isArray(json.notes) && json.notes.every((n) => typeof n === 'string')))
    check.report(undefined, 'notes', 'must be a list of strings');
  if (!Array.isArray(json.instanceTypes)) {
    check.report(undefined, 'instanceTypes', `must be a list of instance types, got ${describe(json.instanceTypes)}`);
  } else {
    const seen = new Map<string, number>();
    json.instanceTypes.forEach((entry, i) => {
      checkInstanceType(check, i, entry, seen);
    });
    if (json.instanceTypes.length === 0)
      check.report(undefined, 'instanceTypes', 'must list at least one instance type');
  }
  if (check.problems.length > 0) {
    const shown = check.problems.slice(0, MAX_REPORTED_PROBLEMS);
    if (check.problems.length > shown.length)
      shown.push({
        severity: 'error',
        file: source,
        message: `… and ${check.problems.length - shown.length} more problems`,
      });
    throw new CatalogError(source, shown);
  }
  return json as unknown as Catalog;
}

/** Reads and validates a catalog file; JSON syntax errors name the file too. */
export function readCatalogFile(path: string): Catalog {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CatalogError(path, [{ severity: 'error', file: path, message: `cannot read the catalog: ${reason}` }]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CatalogError(path, [{ severity: 'error', file: path, message: `not valid JSON: ${reason}` }]);
  }
  return parseCatalog(json, path);
}

/** Where the embedded snapshot says it comes from, for messages. */
export const BUILT_IN_CATALOG_SOURCE = 'built-in catalog (shared/instancetypes/data/us-east-1.json)';

/**
 * The embedded us-east-1 snapshot. It is not re-validated here (about 80 ms of a Lambda cold start):
 * the generator and the tests validate it. Callers must not mutate it.
 */
export function loadBuiltInCatalog(): Catalog {
  return builtInSnapshot as Catalog;
}

export type { CatalogOffering };
