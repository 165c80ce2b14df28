// The generated CRDs against the conformance cases (test/conformance: Karpenter's own API tests):
// the structural OpenAPI part of each CRD (types, enums, patterns, lengths, item and property
// counts, required fields, unknown fields as with kubectl's strict field validation) is evaluated
// here. What is checked: a case karpless's validator accepts, the CRD's schema accepts too (the CRDs
// never refuse what karpless would run), and the share of rejected cases the schema alone refuses
// is reported. The CEL rules (x-kubernetes-validations) are not evaluated (no CEL interpreter here):
// each is the twin of a validator rule (`cel()` in validation.ts), and each CRD rule's message is
// checked to be one the validator refuses an upstream case with, so no rule is in the CRD that the
// validator does not enforce.

import { describe, expect, it } from 'vitest';
import { karpenterCrds, type OpenApiSchema } from '../../../shared/apis/v1/crds';
import { V1_VALIDATORS } from '../../../shared/apis/v1/validation';
import { loadCases } from '../../conformance/suite';

const schemas = new Map(
  karpenterCrds().map((crd) => [crd.spec.names.kind, crd.spec.versions[0]?.schema.openAPIV3Schema ?? {}]),
);

/** The structural OpenAPI v3 checks the API server makes, first failure's path or undefined. */
function openApiIssue(schema: OpenApiSchema, value: unknown, path: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (schema['x-kubernetes-preserve-unknown-fields'] && schema.type === undefined) return undefined;
  if (schema['x-kubernetes-int-or-string']) {
    if (typeof value === 'number') return Number.isInteger(value) ? undefined : `${path}: not an integer`;
    if (typeof value !== 'string') return `${path}: not int-or-string`;
    return new RegExp(String(schema.pattern)).test(value) ? undefined : `${path}: pattern`;
  }
  switch (schema.type) {
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return `${path}: not an object`;
      const entries = Object.entries(value as Record<string, unknown>);
      if (typeof schema.maxProperties === 'number' && entries.length > schema.maxProperties)
        return `${path}: maxProperties`;
      for (const field of (schema.required as string[] | undefined) ?? []) {
        if ((value as Record<string, unknown>)[field] === undefined) return `${path}.${field}: required`;
      }
      const properties = schema.properties as Record<string, OpenApiSchema> | undefined;
      const additional = schema.additionalProperties as OpenApiSchema | undefined;
      for (const [key, item] of entries) {
        const next = properties?.[key] ?? additional;
        if (!next) {
          if (schema['x-kubernetes-preserve-unknown-fields'] || (!properties && !additional)) continue;
          return `${path}.${key}: unknown field`;
        }
        const issue = openApiIssue(next, item, `${path}.${key}`);
        if (issue) return issue;
      }
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(value)) return `${path}: not an array`;
      if (typeof schema.minItems === 'number' && value.length < schema.minItems) return `${path}: minItems`;
      if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) return `${path}: maxItems`;
      for (const [i, item] of value.entries()) {
        const issue = openApiIssue(schema.items as OpenApiSchema, item, `${path}[${i}]`);
        if (issue) return issue;
      }
      return undefined;
    }
    case 'string': {
      if (typeof value !== 'string') return `${path}: not a string`;
      if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return `${path}: enum`;
      if (typeof schema.minLength === 'number' && value.length < schema.minLength) return `${path}: minLength`;
      if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return `${path}: maxLength`;
      if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value)) return `${path}: pattern`;
      return undefined;
    }
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) return `${path}: not an integer`;
      if (typeof schema.minimum === 'number' && value < schema.minimum) return `${path}: minimum`;
      if (typeof schema.maximum === 'number' && value > schema.maximum) return `${path}: maximum`;
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `${path}: not a boolean`;
    default:
      return undefined;
  }
}

const cases = loadCases().filter((c) => c.incomparable === undefined && c.dependsOn === undefined);
const judged = cases.map((c) => {
  const kind = String(c.object.kind);
  const validator = V1_VALIDATORS[kind];
  const schema = schemas.get(kind);
  if (!validator || !schema) throw new Error(`no validator or CRD for ${kind}`);
  const rejects = validator.validate(c.object).some((i) => i.severity !== 'warning');
  return { c, rejects, schemaIssue: openApiIssue(schema, c.object, '') };
});

describe('generated CRDs against the conformance cases', () => {
  it.each(judged.filter((j) => !j.rejects).map((j) => [`L${j.c.line ?? '-'} ${j.c.it}`, j] as const))(
    'the CRD schema accepts what the validator accepts: %s',
    (_, j) => {
      expect(j.schemaIssue).toBeUndefined();
    },
  );

  it('refuses by its OpenAPI schema alone a share of what the validator refuses', () => {
    const rejected = judged.filter((j) => j.rejects);
    const bySchema = rejected.filter((j) => j.schemaIssue !== undefined);
    console.log(
      `crd conformance: the OpenAPI schemas refuse ${bySchema.length}/${rejected.length} cases the validator refuses; the rest are CEL rules, not evaluated here; ${judged.length - rejected.length} accepted cases accepted by both`,
    );
    expect(bySchema.length).toBeGreaterThan(0);
  });
});

/** Every x-kubernetes-validations entry of a schema, with where it sits. */
function celRules(schema: unknown, path = ''): { path: string; rule: string; message: string }[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as Record<string, unknown>;
  const own = ((node['x-kubernetes-validations'] as { rule: string; message: string }[] | undefined) ?? []).map(
    (v) => ({ path, ...v }),
  );
  const children = Object.entries(node).flatMap(([key, value]) => {
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      return Object.entries(value).flatMap(([field, child]) => celRules(child, `${path}.${field}`));
    }
    if (key === 'items' || key === 'additionalProperties') return celRules(value, `${path}[]`);
    return [];
  });
  return [...own, ...children];
}

describe("the CRDs' CEL rules", () => {
  const rules = [...schemas.entries()].flatMap(([kind, schema]) => celRules(schema).map((r) => ({ kind, ...r })));
  // NodePool and NodeClaim share the nodeClassRef rules: a message refused for one kind counts for both.
  const refused = new Set<string>();
  for (const { c } of judged) {
    for (const issue of V1_VALIDATORS[String(c.object.kind)]?.validate(c.object) ?? []) {
      if (issue.severity !== 'warning') refused.add(issue.message);
    }
  }

  it('carry upstream rules on NodePools, NodeClaims and EC2NodeClasses', () => {
    expect(rules.map((r) => `${r.kind}${r.path}: ${r.rule}`)).toEqual(
      expect.arrayContaining([
        'NodePool.spec.disruption.budgets[]: has(self.schedule) == has(self.duration)',
        "NodePool.spec.template.spec.nodeClassRef.kind: self != ''",
        'EC2NodeClass.spec.amiSelectorTerms: self.all(x, has(x.tags) || has(x.id) || has(x.name) || has(x.alias) || has(x.ssmParameter))',
        'NodePool.spec.template.metadata.labels: self.all(x, x != "kubernetes.io/hostname")',
        'NodePool.spec.template.spec.requirements[].key: self != "karpenter.sh/nodepool"',
        "NodeClaim.spec.requirements[]: (self.operator == 'In' && has(self.minValues)) ? (has(self.values) && self.values.size() >= self.minValues) : true",
        "NodePool.spec.template.spec.requirements[]: self.operator == 'In' ? (has(self.values) && self.values.size() != 0) : true",
        "NodeClaim.spec.requirements[]: self.operator == 'In' ? (has(self.values) && self.values.size() != 0) : true",
      ]),
    );
  });

  it("carry the AWS provider's karpenter.k8s.aws label-domain rule wherever upstream puts it", () => {
    const domainRule = rules
      .filter((r) => r.message === 'label domain "karpenter.k8s.aws" is restricted')
      .map((r) => `${r.kind}${r.path}`);
    expect(domainRule).toEqual([
      'NodePool.spec.template.metadata.labels',
      'NodePool.spec.template.spec.requirements[].key',
      'NodeClaim.spec.requirements[].key',
    ]);
  });

  it.each(rules.map((r) => [`${r.kind}${r.path}: ${r.rule}`, r] as const))(
    'refuses only what the validator refuses an upstream case for: %s',
    (_, r) => {
      expect([...refused]).toContain(r.message);
    },
  );
});
