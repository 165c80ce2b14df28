// A karpless configuration: the NodePools and EC2NodeClasses a user gives, validated and defaulted,
// from documents already parsed. No file or YAML reading here: the Lambdas validate the bundled
// JSON document with this module alone, so the YAML parser stays out of their bundles.

import type { UserDataIssue } from '../amifamily/userdata/check';
import type { LoadedDocument } from './load';
import type { Problem } from './problems';
import { defaultEC2NodeClass, defaultNodePool } from './v1/defaults';
import { isObject } from './v1/schema';
import {
  type EC2NodeClass,
  NODECLASS_GROUP,
  NODECLASS_V1BETA1_API_VERSION,
  NODEPOOL_GROUP,
  NODEPOOL_V1BETA1_API_VERSION,
  type NodePool,
} from './v1/types';
import { V1_VALIDATORS } from './v1/validation';

export interface Configuration {
  nodePools: NodePool[];
  nodeClasses: EC2NodeClass[];
}

export interface ConfigurationResult {
  /** Valid, defaulted objects (objects with errors are left out). */
  config: Configuration;
  /** Errors and warnings, each naming file, object and field. */
  problems: Problem[];
  /** Notes for stderr, e.g. "skipped Deployment/web (not a Karpenter kind)". */
  notes: string[];
  /** Documents that are not NodePool/EC2NodeClass/NodeClaim (callers may use them, e.g. plan). */
  others: LoadedDocument[];
}

export interface ConfigurationOptions {
  /**
   * When true (plan, synth, lambdas) a NodePool whose nodeClassRef names no given EC2NodeClass is an
   * error; when false (validate) it is a warning.
   */
  strictReferences: boolean;
}

const KARPENTER_GROUPS = new Set([NODEPOOL_GROUP, NODECLASS_GROUP]);
const V1BETA1_VERSIONS = new Set([NODEPOOL_V1BETA1_API_VERSION, NODECLASS_V1BETA1_API_VERSION]);
const V1ALPHA5_KINDS = new Set(['Provisioner', 'AWSNodeTemplate', 'Machine']);

function objectName(object: Record<string, unknown>): string {
  const metadata = object.metadata;
  const name = isObject(metadata) ? metadata.name : undefined;
  return `${String(object.kind)}/${typeof name === 'string' && name !== '' ? name : '(unnamed)'}`;
}

/** The API server drops nulls of non-nullable fields (`field:` with no value in YAML); so do we. */
function pruneNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pruneNulls);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) if (entry !== null) out[key] = pruneNulls(entry);
  return out;
}

function groupOf(apiVersion: unknown): string {
  return typeof apiVersion === 'string' ? (apiVersion.split('/')[0] ?? '') : '';
}

/** Problems of an EC2NodeClass's custom userData (../amifamily/userdata/check). */
export type UserDataCheck = (nodeClass: EC2NodeClass) => UserDataIssue[];

/**
 * Validates and defaults parsed documents. The userData check is given by the caller: it renders
 * userData, which needs the YAML and TOML writers, and the functions that only read the bundled,
 * synth-validated document should not carry them.
 */
export function validateConfiguration(
  documents: readonly LoadedDocument[],
  options: ConfigurationOptions,
  checkCustomUserData: UserDataCheck,
): ConfigurationResult {
  const result: ConfigurationResult = {
    config: { nodePools: [], nodeClasses: [] },
    problems: [],
    notes: [],
    others: [],
  };
  const seen = new Map<string, string>();
  const nodeClassNames = new Set<string>();
  const nodePools: { doc: LoadedDocument; nodePool: NodePool; object: string }[] = [];

  for (const doc of documents) {
    const { kind, apiVersion } = doc.object;
    const object = objectName(doc.object);
    const problem = (message: string, path?: string, severity: Problem['severity'] = 'error'): void => {
      result.problems.push({ severity, file: doc.file, object, message, ...(path ? { path } : {}) });
    };
    const validator = typeof kind === 'string' ? V1_VALIDATORS[kind] : undefined;
    const isKarpenterGroup = KARPENTER_GROUPS.has(groupOf(apiVersion));

    if (typeof apiVersion === 'string' && V1BETA1_VERSIONS.has(apiVersion)) {
      problem(
        `${apiVersion} is not supported: convert it to v1 with \`karpless convert ${doc.file} > ${doc.file.replace(/\.(ya?ml|json)$/i, '')}.v1.yaml\` (give the NodePools and their EC2NodeClasses together)`,
        'apiVersion',
      );
      continue;
    }
    if (typeof kind === 'string' && isKarpenterGroup && V1ALPHA5_KINDS.has(kind)) {
      problem(
        `${kind} (${String(apiVersion)}) was removed in Karpenter v0.33: migrate it to v1beta1 NodePool/EC2NodeClass (karpenter-convert), then run \`karpless convert\``,
        'kind',
      );
      continue;
    }
    if (!validator) {
      result.others.push(doc);
      result.notes.push(`${doc.file}: skipped ${object} (not a Karpenter v1 kind)`);
      continue;
    }
    if (apiVersion !== validator.apiVersion) {
      problem(
        `Unsupported value: ${JSON.stringify(apiVersion ?? null)}: supported values: "${validator.apiVersion}"`,
        'apiVersion',
      );
      continue;
    }

    const issues = validator.validate(doc.object);
    for (const issue of issues) problem(issue.message, issue.path || undefined, issue.severity ?? 'error');
    const duplicateOf = seen.get(object);
    if (duplicateOf !== undefined) {
      problem(
        `duplicate ${kind} name: ${object} is also defined in ${duplicateOf}; names must be unique per kind`,
        'metadata.name',
      );
      continue;
    }
    seen.set(object, doc.file);
    if (kind === 'EC2NodeClass') nodeClassNames.add(object.slice('EC2NodeClass/'.length));
    if (issues.some((issue) => issue.severity !== 'warning')) continue;

    const clean = pruneNulls(doc.object);
    if (kind === 'NodePool') nodePools.push({ doc, nodePool: defaultNodePool(clean as NodePool), object });
    else if (kind === 'EC2NodeClass') {
      const nodeClass = defaultEC2NodeClass(clean as EC2NodeClass);
      const userDataIssues = checkCustomUserData(nodeClass);
      for (const issue of userDataIssues) problem(issue.message, issue.path, issue.severity);
      if (userDataIssues.every((issue) => issue.severity === 'warning')) result.config.nodeClasses.push(nodeClass);
    } else
      result.notes.push(
        `${doc.file}: ${object} is valid; NodeClaims are created by karpless, so it is not part of the configuration`,
      );
  }

  // Cross-object: each NodePool must name an EC2NodeClass given alongside it.
  for (const { doc, nodePool, object } of nodePools) {
    const ref = nodePool.spec.template.spec.nodeClassRef;
    const severity = options.strictReferences ? 'error' : 'warning';
    const path = 'spec.template.spec.nodeClassRef';
    let message: string | undefined;
    if (ref.group !== NODECLASS_GROUP || ref.kind !== 'EC2NodeClass') {
      message = `karpless provisions only EC2NodeClass nodes: set group: ${NODECLASS_GROUP} and kind: EC2NodeClass (got group: ${ref.group}, kind: ${ref.kind})`;
    } else if (!nodeClassNames.has(ref.name)) {
      message = `EC2NodeClass/${ref.name} is not among the given manifests: add the file that defines it, or fix the name`;
    }
    if (message) result.problems.push({ severity, file: doc.file, object, path, message });
    if (!message || severity === 'warning') result.config.nodePools.push(nodePool);
  }
  return result;
}
