// Label requirements as sets, Karpenter's pkg/scheduling/requirement(s).go: every operator becomes a set
// of allowed values plus whether a node *without* the label qualifies, so intersection and compatibility
// are plain set operations and every combination of operators composes the same way.

import type { NodeSelectorRequirement } from '../apis/core/v1';
import {
  LABEL_ARCH,
  LABEL_CAPACITY_TYPE,
  LABEL_HOSTNAME,
  LABEL_INSTANCE_TYPE,
  LABEL_NODEPOOL,
  LABEL_OS,
  LABEL_REGION,
  LABEL_ZONE,
  LABEL_ZONE_ID,
} from '../apis/v1/labels';
import type { NodeSelectorRequirementWithMinValues, RequirementOperator } from '../apis/v1/types';

export {
  LABEL_ARCH,
  LABEL_CAPACITY_TYPE,
  LABEL_HOSTNAME,
  LABEL_INSTANCE_TYPE,
  LABEL_NODEPOOL,
  LABEL_OS,
  LABEL_REGION,
  LABEL_ZONE,
  LABEL_ZONE_ID,
};

/** Keys whose values come from the instance type or its offerings, so a NodePool need not name them. */
const WELL_KNOWN = new Set([
  LABEL_ZONE,
  LABEL_ZONE_ID,
  LABEL_REGION,
  LABEL_CAPACITY_TYPE,
  LABEL_HOSTNAME,
  LABEL_INSTANCE_TYPE,
  LABEL_ARCH,
  LABEL_OS,
  'node.kubernetes.io/windows-build',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
]);

/**
 * Deprecated and aliased keys a pod may still select on, and the stable key Karpenter reads instead
 * (NormalizedLabels of kubernetes-sigs/karpenter pkg/apis/v1/labels.go, plus the EBS CSI zone key the
 * AWS provider adds): `beta.kubernetes.io/arch In [arm64]` is `kubernetes.io/arch In [arm64]`.
 */
export const NORMALIZED_LABELS: Readonly<Record<string, string>> = {
  'failure-domain.beta.kubernetes.io/zone': LABEL_ZONE,
  'failure-domain.beta.kubernetes.io/region': LABEL_REGION,
  'beta.kubernetes.io/arch': LABEL_ARCH,
  'beta.kubernetes.io/os': LABEL_OS,
  'beta.kubernetes.io/instance-type': LABEL_INSTANCE_TYPE,
  'topology.ebs.csi.aws.com/zone': LABEL_ZONE,
};

/** The key a requirement is read under: the stable key for a deprecated alias, else the key itself. */
export function normalizedKey(key: string): string {
  return NORMALIZED_LABELS[key] ?? key;
}

/** Whether a label is defined by the instance type / offering (Karpenter's WellKnownLabels). */
export function isWellKnownLabel(key: string): boolean {
  return WELL_KNOWN.has(key) || key.startsWith('karpenter.k8s.aws/');
}

/**
 * One key's allowed values. `complement` false: exactly `values`; true: anything but `values`.
 * `gte`/`lte` are inclusive integer bounds (Gt/Lt are converted, as Karpenter does). `absent` says
 * whether a node that lacks the label satisfies it (NotIn and DoesNotExist do, In/Exists/Gt/Lt don't).
 */
export interface Requirement {
  readonly key: string;
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  readonly gte: number;
  readonly lte: number;
  readonly absent: boolean;
  readonly minValues?: number;
}

const NO_VALUES: ReadonlySet<string> = new Set();

function integerValue(values: readonly string[] | undefined, key: string, operator: string): number {
  const text = values?.[0];
  const value = text === undefined ? Number.NaN : Number(text);
  if (!Number.isInteger(value)) {
    throw new Error(
      `requirement ${key} ${operator} needs a single integer value (got ${JSON.stringify(values ?? [])})`,
    );
  }
  return value;
}

function make(
  key: string,
  complement: boolean,
  values: ReadonlySet<string>,
  gte: number,
  lte: number,
  absent: boolean,
  minValues: number | undefined,
): Requirement {
  return minValues === undefined
    ? { key, complement, values, gte, lte, absent }
    : { key, complement, values, gte, lte, absent, minValues };
}

/** Converts one API requirement (NodePool or node affinity) to its set form. */
export function requirementFrom(r: {
  key: string;
  operator: RequirementOperator | NodeSelectorRequirement['operator'];
  values?: string[];
  minValues?: number;
}): Requirement {
  const values = new Set(r.values ?? []);
  const inf = Number.POSITIVE_INFINITY;
  const key = normalizedKey(r.key);
  switch (r.operator) {
    case 'In':
      return make(key, false, values, -inf, inf, false, r.minValues);
    case 'NotIn':
      return make(key, true, values, -inf, inf, true, r.minValues);
    case 'Exists':
      return make(key, true, NO_VALUES, -inf, inf, false, r.minValues);
    case 'DoesNotExist':
      return make(key, false, NO_VALUES, -inf, inf, true, r.minValues);
    case 'Gt':
      return make(key, true, NO_VALUES, integerValue(r.values, key, 'Gt') + 1, inf, false, r.minValues);
    case 'Gte':
      return make(key, true, NO_VALUES, integerValue(r.values, key, 'Gte'), inf, false, r.minValues);
    case 'Lt':
      return make(key, true, NO_VALUES, -inf, integerValue(r.values, key, 'Lt') - 1, false, r.minValues);
    case 'Lte':
      return make(key, true, NO_VALUES, -inf, integerValue(r.values, key, 'Lte'), false, r.minValues);
    default:
      throw new Error(`requirement ${r.key}: unknown operator ${String(r.operator)}`);
  }
}

/** `key In [value]`: a node label, a nodeSelector entry or a NodePool template label. */
export function requirementIn(key: string, ...values: string[]): Requirement {
  return make(
    normalizedKey(key),
    false,
    new Set(values),
    Number.NEGATIVE_INFINITY,
    Number.POSITIVE_INFINITY,
    false,
    undefined,
  );
}

export const doesNotExist = (key: string): Requirement => requirementFrom({ key, operator: 'DoesNotExist' });

function hasBounds(r: Requirement): boolean {
  return r.gte !== Number.NEGATIVE_INFINITY || r.lte !== Number.POSITIVE_INFINITY;
}

function withinBounds(r: Requirement, value: string): boolean {
  if (!hasBounds(r)) return true;
  const n = Number(value);
  return Number.isInteger(n) && n >= r.gte && n <= r.lte;
}

/** Whether a node whose label is `value` (undefined: no such label) satisfies the requirement. */
export function allows(r: Requirement, value: string | undefined): boolean {
  if (value === undefined) return r.absent;
  if (!withinBounds(r, value)) return false;
  return r.complement ? !r.values.has(value) : r.values.has(value);
}

/** True when no node can satisfy it: no value qualifies and the label may not be absent either. */
export function isEmpty(r: Requirement): boolean {
  if (r.absent) return false;
  return r.complement ? r.gte > r.lte : r.values.size === 0;
}

/** The set intersection; minValues is the larger of the two. */
export function intersect(a: Requirement, b: Requirement): Requirement {
  const gte = Math.max(a.gte, b.gte);
  const lte = Math.min(a.lte, b.lte);
  const absent = a.absent && b.absent;
  const minValues = a.minValues === undefined ? b.minValues : Math.max(a.minValues, b.minValues ?? 0);
  const inf = Number.POSITIVE_INFINITY;
  const bounds = make(a.key, true, NO_VALUES, gte, lte, true, undefined);
  const keep = (v: string) => withinBounds(bounds, v);
  if (a.complement && b.complement) {
    const values =
      a.values.size === 0 ? b.values : b.values.size === 0 ? a.values : new Set([...a.values, ...b.values]);
    return make(a.key, true, values, gte, lte, absent, minValues);
  }
  const [included, other] = a.complement ? [b, a] : [a, b];
  const values = new Set<string>();
  for (const v of included.values) {
    if (keep(v) && (other.complement ? !other.values.has(v) : other.values.has(v))) values.add(v);
  }
  return make(a.key, false, values, -inf, inf, absent, minValues);
}

/** Whether some node could satisfy both (Karpenter's Intersects for one key). */
export function compatible(a: Requirement, b: Requirement): boolean {
  return !isEmpty(intersect(a, b));
}

function sortValues(values: Iterable<string>): string[] {
  return [...values].sort((x, y) => {
    const nx = Number(x);
    const ny = Number(y);
    return Number.isFinite(nx) && Number.isFinite(ny) ? nx - ny : x < y ? -1 : x > y ? 1 : 0;
  });
}

/** Back to API form; a set with bounds and exclusions needs more than one entry. */
export function toNodeSelectorRequirements(r: Requirement): NodeSelectorRequirementWithMinValues[] {
  const minValues = r.minValues === undefined ? {} : { minValues: r.minValues };
  if (!r.complement) {
    if (r.values.size === 0) return [{ key: r.key, operator: 'DoesNotExist' }];
    return [{ key: r.key, operator: 'In', values: sortValues(r.values), ...minValues }];
  }
  const out: NodeSelectorRequirementWithMinValues[] = [];
  if (r.values.size > 0) out.push({ key: r.key, operator: 'NotIn', values: sortValues(r.values), ...minValues });
  if (r.gte !== Number.NEGATIVE_INFINITY) out.push({ key: r.key, operator: 'Gt', values: [String(r.gte - 1)] });
  if (r.lte !== Number.POSITIVE_INFINITY) out.push({ key: r.key, operator: 'Lt', values: [String(r.lte + 1)] });
  if (out.length === 0 && !r.absent) out.push({ key: r.key, operator: 'Exists' });
  if (out.length > 0 && !r.absent && r.values.size > 0 && !hasBounds(r)) {
    // NotIn alone admits nodes without the label; Exists says they don't qualify.
    out.push({ key: r.key, operator: 'Exists' });
  }
  return out;
}

/** Human form for reasons: `kubernetes.io/arch In [s390x]`, `…/instance-generation > 4`. */
export function describeRequirement(r: Requirement): string {
  const parts: string[] = [];
  if (!r.complement) {
    parts.push(r.values.size === 0 ? `${r.key} DoesNotExist` : `${r.key} In [${sortValues(r.values).join(', ')}]`);
  } else {
    if (r.values.size > 0) parts.push(`${r.key} NotIn [${sortValues(r.values).join(', ')}]`);
    if (r.gte !== Number.NEGATIVE_INFINITY) parts.push(`${r.key} > ${r.gte - 1}`);
    if (r.lte !== Number.POSITIVE_INFINITY) parts.push(`${r.key} < ${r.lte + 1}`);
    if (parts.length === 0) parts.push(r.absent ? `${r.key} (any)` : `${r.key} Exists`);
  }
  return parts.join(', ');
}

/** A stable text for one requirement, used to intern requirement sets. */
export function requirementKey(r: Requirement): string {
  const bounds = hasBounds(r) ? `${r.gte},${r.lte}` : '';
  const mv = r.minValues === undefined ? '' : `#${r.minValues}`;
  return `${r.complement ? '!' : ''}${r.absent ? '?' : ''}[${[...r.values].sort().join(',')}]${bounds}${mv}`;
}

/**
 * A set of requirements over distinct keys (Karpenter's Requirements). Immutable: `add` returns a new
 * set. `key` is a canonical text so equal sets can be cached once.
 */
export class Requirements {
  private cachedKey: string | undefined;
  constructor(readonly byKey: ReadonlyMap<string, Requirement> = new Map()) {}

  static from(list: readonly Requirement[]): Requirements {
    const map = new Map<string, Requirement>();
    for (const r of list) {
      const existing = map.get(r.key);
      map.set(r.key, existing ? intersect(existing, r) : r);
    }
    return new Requirements(map);
  }

  get(key: string): Requirement | undefined {
    return this.byKey.get(key);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** The intersection with one more requirement. */
  add(r: Requirement): Requirements {
    const map = new Map(this.byKey);
    const existing = map.get(r.key);
    map.set(r.key, existing ? intersect(existing, r) : r);
    return new Requirements(map);
  }

  /** Whether a node with these labels satisfies every requirement. */
  matchesLabels(labels: Readonly<Record<string, string>>): boolean {
    for (const r of this.byKey.values()) if (!allows(r, labels[r.key])) return false;
    return true;
  }

  /** The first requirement no node can satisfy, if any. */
  firstEmpty(): Requirement | undefined {
    for (const r of this.byKey.values()) if (isEmpty(r)) return r;
    return undefined;
  }

  get key(): string {
    if (this.cachedKey === undefined) {
      const keys = [...this.byKey.keys()].sort();
      this.cachedKey = keys.map((k) => `${k}=${requirementKey(this.byKey.get(k)!)}`).join(';');
    }
    return this.cachedKey;
  }

  toNodeSelectorRequirements(): NodeSelectorRequirementWithMinValues[] {
    const keys = [...this.byKey.keys()].sort();
    return keys.flatMap((k) => toNodeSelectorRequirements(this.byKey.get(k)!));
  }
}
