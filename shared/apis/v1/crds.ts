// Karpenter v1's CustomResourceDefinitions, generated from karpless's own schema tables
// (validation.ts): the structural OpenAPI schema of each kind, the CEL rules the tables carry
// (`cel()`), the CRD defaults (defaults.ts), the status subresource and upstream's printer columns.
// Group, kind, version and names are Karpenter's, so a cluster that already has Karpenter's CRDs keeps
// them and karpless reads and writes the same objects. Pure: scripts/generate-crds.ts writes them
// to infra/kubernetes/crds/, and a test holds the files equal to this output.

import {
  DEFAULT_BUDGET_NODES,
  DEFAULT_CONSOLIDATE_AFTER,
  DEFAULT_CONSOLIDATION_POLICY,
  DEFAULT_EXPIRE_AFTER,
  DEFAULT_METADATA_OPTIONS,
} from './defaults';
import type { Schema } from './schema';
import { V1_SCHEMAS } from './validation';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'date' | 'boolean' | 'number';
  jsonPath: string;
  priority?: number;
  description?: string;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories: string[];
    };
    scope: 'Cluster';
    versions: {
      name: string;
      served: true;
      storage: true;
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: OpenApiSchema };
      subresources: { status: Record<string, never> };
    }[];
  };
}

export type OpenApiSchema = { [key: string]: unknown };

const READY = '.status.conditions[?(@.type=="Ready")].status';
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const label = (key: string) => `.metadata.labels.${key.replace(/\./g, '\\.')}`;

interface KindSpec {
  kind: 'NodePool' | 'NodeClaim' | 'EC2NodeClass';
  group: string;
  plural: string;
  shortNames?: string[];
  columns: PrinterColumn[];
  /** CRD defaults at schema paths (dotted, from the object root). */
  defaults: Record<string, unknown>;
  description: string;
}

const KINDS: KindSpec[] = [
  {
    kind: 'NodePool',
    group: 'karpenter.sh',
    plural: 'nodepools',
    description: 'NodePool is the Schema for the NodePools API',
    columns: [
      { name: 'NodeClass', type: 'string', jsonPath: '.spec.template.spec.nodeClassRef.name' },
      { name: 'Nodes', type: 'string', jsonPath: '.status.resources.nodes' },
      { name: 'Ready', type: 'string', jsonPath: READY },
      AGE,
      { name: 'Weight', type: 'integer', jsonPath: '.spec.weight', priority: 1 },
      { name: 'CPU', type: 'string', jsonPath: '.status.resources.cpu', priority: 1 },
      { name: 'Memory', type: 'string', jsonPath: '.status.resources.memory', priority: 1 },
    ],
    defaults: {
      'spec.disruption': { consolidateAfter: DEFAULT_CONSOLIDATE_AFTER },
      'spec.disruption.consolidationPolicy': DEFAULT_CONSOLIDATION_POLICY,
      'spec.disruption.budgets': [{ nodes: DEFAULT_BUDGET_NODES }],
      'spec.disruption.budgets[].nodes': DEFAULT_BUDGET_NODES,
      'spec.template.spec.expireAfter': DEFAULT_EXPIRE_AFTER,
    },
  },
  {
    kind: 'NodeClaim',
    group: 'karpenter.sh',
    plural: 'nodeclaims',
    description: 'NodeClaim is the Schema for the NodeClaims API',
    columns: [
      { name: 'Type', type: 'string', jsonPath: label('node.kubernetes.io/instance-type') },
      { name: 'Capacity', type: 'string', jsonPath: label('karpenter.sh/capacity-type') },
      { name: 'Zone', type: 'string', jsonPath: label('topology.kubernetes.io/zone') },
      { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
      { name: 'Ready', type: 'string', jsonPath: READY },
      AGE,
      { name: 'ImageID', type: 'string', jsonPath: '.status.imageID', priority: 1 },
      { name: 'ID', type: 'string', jsonPath: '.status.providerID', priority: 1 },
      { name: 'NodePool', type: 'string', jsonPath: label('karpenter.sh/nodepool'), priority: 1 },
      { name: 'NodeClass', type: 'string', jsonPath: '.spec.nodeClassRef.name', priority: 1 },
      { name: 'Drifted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Drifted")].status', priority: 1 },
    ],
    defaults: { 'spec.expireAfter': DEFAULT_EXPIRE_AFTER },
  },
  {
    kind: 'EC2NodeClass',
    group: 'karpenter.k8s.aws',
    plural: 'ec2nodeclasses',
    shortNames: ['ec2nc', 'ec2ncs'],
    description: 'EC2NodeClass is the Schema for the EC2NodeClass API',
    columns: [
      { name: 'Ready', type: 'string', jsonPath: READY },
      AGE,
      { name: 'Role', type: 'string', jsonPath: '.spec.role', priority: 1 },
    ],
    defaults: { 'spec.metadataOptions': { ...DEFAULT_METADATA_OPTIONS } },
  },
];

/** Karpenter's three CRDs, in file order. */
export function karpenterCrds(): CustomResourceDefinition[] {
  return KINDS.map(crdFor);
}

/** The file name upstream gives each CRD (`karpenter.sh_nodepools.yaml`). */
export function crdFileName(crd: CustomResourceDefinition): string {
  return `${crd.spec.group}_${crd.spec.names.plural}.yaml`;
}

function crdFor(spec: KindSpec): CustomResourceDefinition {
  const root = openApi(V1_SCHEMAS[spec.kind], '', spec.defaults) as OpenApiSchema & { properties: OpenApiSchema };
  // The API server owns metadata (name, labels); a CRD may not constrain it beyond its type.
  root.properties.metadata = { type: 'object' };
  root.properties.apiVersion = { type: 'string' };
  root.properties.kind = { type: 'string' };
  root.properties.status = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  root.required = ['spec'];
  root.description = spec.description;
  const singular = spec.kind.toLowerCase();
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${spec.plural}.${spec.group}`,
      annotations: { 'karpless.dev/generated-from': 'shared/apis/v1/validation.ts' },
    },
    spec: {
      group: spec.group,
      names: {
        kind: spec.kind,
        listKind: `${spec.kind}List`,
        plural: spec.plural,
        singular,
        ...(spec.shortNames ? { shortNames: spec.shortNames } : {}),
        categories: ['karpenter'],
      },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          additionalPrinterColumns: spec.columns,
          schema: { openAPIV3Schema: root },
          subresources: { status: {} },
        },
      ],
    },
  };
}

/** The OpenAPI v3 (structural) form of one schema node; `path` is its dotted path for defaults. */
export function openApi(schema: Schema, path: string, defaults: Record<string, unknown>): OpenApiSchema {
  const out = node(schema, path, defaults);
  const value = defaults[path];
  if (value !== undefined) out.default = value;
  const rules = 'rules' in schema ? (schema.rules ?? []) : [];
  const validations = rules.flatMap((r) => (r.cel ? [r.cel] : []));
  if (validations.length > 0) out['x-kubernetes-validations'] = validations.map((v) => ({ ...v }));
  return out;
}

const child = (path: string, field: string) => (path === '' ? field : `${path}.${field}`);

function node(schema: Schema, path: string, defaults: Record<string, unknown>): OpenApiSchema {
  switch (schema.type) {
    case 'object': {
      const properties: OpenApiSchema = {};
      for (const [field, value] of Object.entries(schema.properties)) {
        properties[field] = openApi(value, child(path, field), defaults);
      }
      return {
        type: 'object',
        properties,
        ...(schema.required && schema.required.length > 0 ? { required: [...schema.required] } : {}),
      };
    }
    case 'map':
      return {
        type: 'object',
        additionalProperties: openApi(schema.values, `${path}[]`, defaults),
        ...(schema.maxProperties !== undefined ? { maxProperties: schema.maxProperties } : {}),
      };
    case 'array':
      return {
        type: 'array',
        items: openApi(schema.items, `${path}[]`, defaults),
        ...(schema.minItems !== undefined ? { minItems: schema.minItems } : {}),
        ...(schema.maxItems !== undefined ? { maxItems: schema.maxItems } : {}),
      };
    case 'string':
      return {
        type: 'string',
        ...(schema.enum ? { enum: [...schema.enum] } : {}),
        ...(schema.pattern ? { pattern: schema.pattern.source } : {}),
        ...(schema.minLength !== undefined ? { minLength: schema.minLength } : {}),
        ...(schema.maxLength !== undefined ? { maxLength: schema.maxLength } : {}),
      };
    case 'integer':
      return {
        type: 'integer',
        format: 'int64',
        ...(schema.minimum !== undefined ? { minimum: schema.minimum } : {}),
        ...(schema.maximum !== undefined ? { maximum: schema.maximum } : {}),
      };
    case 'boolean':
      return { type: 'boolean' };
    case 'quantity':
      return {
        anyOf: [{ type: 'integer' }, { type: 'string' }],
        pattern: QUANTITY_PATTERN,
        'x-kubernetes-int-or-string': true,
      };
    case 'any':
      return { 'x-kubernetes-preserve-unknown-fields': true };
  }
}

/** resource.Quantity's grammar, as every Kubernetes CRD writes it. */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** The YAML text of one CRD file, as committed under infra/kubernetes/crds/. */
export function crdFileText(crd: CustomResourceDefinition, stringify: (value: unknown) => string): string {
  return `# Generated by scripts/generate-crds.ts from shared/apis/v1/validation.ts: do not edit.\n---\n${stringify(crd)}`;
}
