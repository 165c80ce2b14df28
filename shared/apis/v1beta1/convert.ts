// v1beta1 → v1 conversion: what Karpenter's conversion webhook and its v1 migration guide do, as one
// pure function over a set of manifests. The set matters: v1 moved kubelet settings from the NodePool
// to the EC2NodeClass, so a NodePool can only be converted together with the class it references.
// Notes and warnings come back as data; the caller decides where to print them.

import type { Problem } from '../problems';
import { isObject, type JsonObject } from '../v1/schema';
import { NODECLASS_API_VERSION, NODECLASS_GROUP, NODEPOOL_API_VERSION } from '../v1/types';
import { V1_VALIDATORS } from '../v1/validation';
import { V1BETA1_NODECLASS_API_VERSION, V1BETA1_NODEPOOL_API_VERSION } from './types';

export interface ConversionInput {
  object: JsonObject;
  /** Where the object came from, for messages. */
  file?: string;
}

export interface ConversionResult {
  /** Converted objects (and untouched non-v1beta1 ones) in input order, plus classes split off for kubelet. */
  objects: ConversionInput[];
  /** Errors (input that cannot be converted, or output that is not valid v1) and warnings. */
  problems: Problem[];
  /** What changed and why, one line each: `FILE: Kind/name: text`. */
  notes: string[];
}

/** The v1beta1 IMDS default; v1 lowered it to 1. */
export const V1BETA1_HOP_LIMIT = 2;

const UBUNTU_ERROR =
  'amiFamily Ubuntu cannot be converted: Karpenter v1 removed the Ubuntu family. Before converting, pin the Ubuntu AMI: set amiSelectorTerms to [{id: ami-...}] and either amiFamily: AL2 (its bootstrap.sh userData works with the EKS Ubuntu AMIs) or amiFamily: Custom with your own userData; then run karpless convert again';

const ALIAS_FAMILY: Readonly<Record<string, string>> = {
  AL2: 'al2',
  AL2023: 'al2023',
  Bottlerocket: 'bottlerocket',
  Windows2019: 'windows2019',
  Windows2022: 'windows2022',
  Windows2025: 'windows2025',
};

function objectName(object: JsonObject): string {
  const name = isObject(object.metadata) ? object.metadata.name : undefined;
  return `${String(object.kind)}/${typeof name === 'string' ? name : '(unnamed)'}`;
}

function nameOf(object: JsonObject): string {
  return isObject(object.metadata) && typeof object.metadata.name === 'string' ? object.metadata.name : '';
}

function asObject(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

/** Stable JSON with sorted keys: two kubelet blocks are "the same setting" when this matches. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function without(object: JsonObject, ...fields: string[]): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object)) if (!fields.includes(key)) out[key] = value;
  return out;
}

interface Context {
  problems: Problem[];
  notes: string[];
}

function reporter(ctx: Context, input: ConversionInput, object: string) {
  const where = { ...(input.file ? { file: input.file } : {}), object };
  const prefix = `${input.file ? `${input.file}: ` : ''}${object}: `;
  return {
    error: (message: string, path?: string) =>
      ctx.problems.push({ severity: 'error', ...where, message, ...(path ? { path } : {}) }),
    warn: (message: string, path?: string) =>
      ctx.problems.push({ severity: 'warning', ...where, message, ...(path ? { path } : {}) }),
    note: (message: string) => ctx.notes.push(`${prefix}${message}`),
  };
}

// ---------------------------------------------------------------------------------------------
// NodePool

interface ConvertedNodePool {
  object: JsonObject;
  /** Referenced EC2NodeClass name when the reference is to an EC2NodeClass. */
  nodeClassName: string | undefined;
  kubelet: JsonObject | undefined;
}

function convertNodePool(input: ConversionInput, ctx: Context): ConvertedNodePool {
  const source = input.object;
  const report = reporter(ctx, input, objectName(source));
  const spec = asObject(source.spec);
  const template = asObject(spec.template);
  const templateSpec = asObject(template.spec);
  const disruption = isObject(spec.disruption) ? spec.disruption : undefined;

  const ref = asObject(templateSpec.nodeClassRef);
  const refApiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : `${NODECLASS_GROUP}/v1beta1`;
  const nodeClassRef: JsonObject = {
    group: refApiVersion.split('/')[0] ?? NODECLASS_GROUP,
    kind: typeof ref.kind === 'string' ? ref.kind : 'EC2NodeClass',
    name: ref.name,
    ...without(ref, 'apiVersion', 'kind', 'name'),
  };
  const isEC2NodeClassRef = nodeClassRef.group === NODECLASS_GROUP && nodeClassRef.kind === 'EC2NodeClass';

  const newTemplateSpec: JsonObject = {
    ...without(templateSpec, 'nodeClassRef', 'kubelet', 'resources'),
    nodeClassRef,
  };
  if (templateSpec.resources !== undefined) {
    report.note(
      'dropped spec.template.spec.resources: v1 NodePool templates have no resources (Karpenter never used them)',
    );
  }
  if (disruption?.expireAfter !== undefined) {
    newTemplateSpec.expireAfter = disruption.expireAfter;
    report.note('moved spec.disruption.expireAfter to spec.template.spec.expireAfter');
  }

  const newSpec: JsonObject = { ...spec, template: { ...template, spec: newTemplateSpec } };
  if (disruption) {
    const newDisruption: JsonObject = without(disruption, 'expireAfter');
    if (disruption.consolidationPolicy === 'WhenUnderutilized') {
      newDisruption.consolidationPolicy = 'WhenEmptyOrUnderutilized';
      report.note('consolidationPolicy WhenUnderutilized is now WhenEmptyOrUnderutilized');
    }
    // v1 requires consolidateAfter; v1beta1 forbade it with WhenUnderutilized, which consolidated at once.
    if (newDisruption.consolidateAfter === undefined) newDisruption.consolidateAfter = '0s';
    newSpec.disruption = newDisruption;
  }

  const kubelet = isObject(templateSpec.kubelet) ? templateSpec.kubelet : undefined;
  if (kubelet && !isEC2NodeClassRef) {
    report.error(
      'spec.template.spec.kubelet cannot be moved: v1 keeps kubelet settings on the EC2NodeClass, and this NodePool references no EC2NodeClass',
      'spec.template.spec.kubelet',
    );
  }
  return {
    object: { ...source, apiVersion: NODEPOOL_API_VERSION, spec: newSpec },
    nodeClassName: isEC2NodeClassRef && typeof ref.name === 'string' ? ref.name : undefined,
    kubelet,
  };
}

// ---------------------------------------------------------------------------------------------
// EC2NodeClass

function convertEC2NodeClass(input: ConversionInput, ctx: Context): JsonObject | undefined {
  const source = input.object;
  const report = reporter(ctx, input, objectName(source));
  const spec = asObject(source.spec);
  const newSpec: JsonObject = { ...spec };

  if (spec.amiFamily === 'Ubuntu') {
    report.error(UBUNTU_ERROR, 'spec.amiFamily');
    return undefined;
  }
  const terms = Array.isArray(spec.amiSelectorTerms) ? spec.amiSelectorTerms : [];
  let family = typeof spec.amiFamily === 'string' ? spec.amiFamily : undefined;
  if (family === undefined) {
    family = 'AL2';
    newSpec.amiFamily = 'AL2';
    report.note(
      'amiFamily was unset, which v1beta1 treated as AL2: made it explicit (v1 requires it without an alias)',
    );
  }
  if (terms.length === 0) {
    const aliasFamily = ALIAS_FAMILY[family];
    if (aliasFamily === undefined) {
      report.error(
        `amiFamily ${family} needs amiSelectorTerms: give the AMIs to use (e.g. [{id: ami-...}])`,
        'spec.amiSelectorTerms',
      );
      return undefined;
    }
    const alias = `${aliasFamily}@latest`;
    newSpec.amiSelectorTerms = [{ alias }];
    report.warn(
      `amiSelectorTerms set to [{alias: ${alias}}], the v1 form of "the latest EKS-optimized ${family} AMI"; pin a version in production (e.g. ${aliasFamily === 'al2023' ? 'al2023@v20240807' : `${aliasFamily}@<version>`}) so a new AMI release does not drift and replace every node`,
      'spec.amiSelectorTerms',
    );
  }

  const metadataOptions = asObject(spec.metadataOptions);
  if (metadataOptions.httpPutResponseHopLimit === undefined) {
    newSpec.metadataOptions = {
      httpEndpoint: 'enabled',
      httpProtocolIPv6: 'disabled',
      httpPutResponseHopLimit: V1BETA1_HOP_LIMIT,
      httpTokens: 'required',
      ...metadataOptions,
    };
    report.note(
      `set metadataOptions.httpPutResponseHopLimit: ${V1BETA1_HOP_LIMIT} explicitly, the v1beta1 default. v1 defaults to 1 so that pods without hostNetwork cannot reach IMDS and use the node's IAM role; keep 2 while pods that read IMDS (e.g. AWS Load Balancer Controller, EBS CSI driver) need it, then lower it to 1`,
    );
  }
  return { ...source, apiVersion: NODECLASS_API_VERSION, spec: newSpec };
}

// ---------------------------------------------------------------------------------------------
// The whole set

interface ClassEntry {
  index: number;
  input: ConversionInput;
  object: JsonObject;
}

function uniqueName(base: string, taken: Set<string>): string {
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  taken.add(name);
  return name;
}

/**
 * Moves each NodePool's kubelet to its EC2NodeClass. NodePools that share a class but differ in kubelet
 * get one class per distinct setting (the first setting keeps the original class), with rewritten refs.
 */
function moveKubelet(
  pools: { input: ConversionInput; converted: ConvertedNodePool; index: number }[],
  classes: Map<string, ClassEntry>,
  output: (ConversionInput | undefined)[],
  ctx: Context,
): void {
  const takenNames = new Set(classes.keys());
  const byClass = new Map<string, typeof pools>();
  for (const pool of pools) {
    const className = pool.converted.nodeClassName;
    if (className === undefined) continue;
    const entry = classes.get(className);
    if (!entry) {
      if (pool.converted.kubelet) {
        reporter(ctx, pool.input, objectName(pool.input.object)).error(
          `spec.template.spec.kubelet cannot be moved: v1 keeps kubelet settings on the EC2NodeClass, and EC2NodeClass/${className} (v1beta1) is not among the inputs; convert the NodePool together with its EC2NodeClass`,
          'spec.template.spec.kubelet',
        );
      }
      continue;
    }
    byClass.set(className, [...(byClass.get(className) ?? []), pool]);
  }

  const extraClasses = new Map<number, ConversionInput[]>();
  for (const [className, sharing] of byClass) {
    const entry = classes.get(className) as ClassEntry;
    const settings = new Map<string, typeof sharing>();
    for (const pool of sharing) {
      const key = canonical(pool.converted.kubelet);
      settings.set(key, [...(settings.get(key) ?? []), pool]);
    }
    let first = true;
    for (const group of settings.values()) {
      const kubelet = group[0]?.converted.kubelet;
      const poolNames = group.map((p) => `NodePool/${nameOf(p.converted.object)}`).join(', ');
      if (first) {
        first = false;
        if (kubelet) {
          entry.object = { ...entry.object, spec: { ...asObject(entry.object.spec), kubelet } };
          reporter(ctx, entry.input, objectName(entry.object)).note(`spec.kubelet moved here from ${poolNames}`);
        }
        continue;
      }
      const newName = uniqueName(`${className}-${nameOf(group[0]?.converted.object ?? {})}`, takenNames);
      const baseSpec = without(asObject(entry.object.spec), 'kubelet');
      const split: JsonObject = {
        ...entry.object,
        metadata: { ...asObject(entry.object.metadata), name: newName },
        spec: kubelet ? { ...baseSpec, kubelet } : baseSpec,
      };
      extraClasses.set(entry.index, [...(extraClasses.get(entry.index) ?? []), { ...entry.input, object: split }]);
      for (const pool of group) {
        const spec = asObject(pool.converted.object.spec);
        const template = asObject(spec.template);
        const templateSpec = asObject(template.spec);
        pool.converted.object = {
          ...pool.converted.object,
          spec: {
            ...spec,
            template: {
              ...template,
              spec: { ...templateSpec, nodeClassRef: { ...asObject(templateSpec.nodeClassRef), name: newName } },
            },
          },
        };
        output[pool.index] = { ...pool.input, object: pool.converted.object };
      }
      reporter(ctx, entry.input, objectName(entry.object)).note(
        `NodePools sharing this EC2NodeClass have different kubelet settings, and v1 keeps kubelet on the EC2NodeClass: created EC2NodeClass/${newName} (a copy${kubelet ? ' with their kubelet' : ' without kubelet'}) for ${poolNames}, whose nodeClassRef now names it`,
      );
    }
  }
  for (const entry of classes.values()) output[entry.index] = { ...entry.input, object: entry.object };
  // Split-off classes follow their original so related objects stay together in the output.
  const withExtras: (ConversionInput | undefined)[] = [];
  output.forEach((item, index) => {
    withExtras.push(item, ...(extraClasses.get(index) ?? []));
  });
  output.splice(0, output.length, ...withExtras);
}

/** Converts every v1beta1 NodePool and EC2NodeClass in `inputs`; other objects pass through unchanged. */
export function convertV1beta1(inputs: readonly ConversionInput[]): ConversionResult {
  const ctx: Context = { problems: [], notes: [] };
  const output: (ConversionInput | undefined)[] = [];
  const pools: { input: ConversionInput; converted: ConvertedNodePool; index: number }[] = [];
  const classes = new Map<string, ClassEntry>();

  inputs.forEach((input, index) => {
    const { kind, apiVersion } = input.object;
    const report = reporter(ctx, input, objectName(input.object));
    if (apiVersion === V1BETA1_NODEPOOL_API_VERSION && kind === 'NodePool') {
      const converted = convertNodePool(input, ctx);
      pools.push({ input, converted, index });
      output.push({ ...input, object: converted.object });
    } else if (apiVersion === V1BETA1_NODECLASS_API_VERSION && kind === 'EC2NodeClass') {
      const converted = convertEC2NodeClass(input, ctx);
      output.push(converted ? { ...input, object: converted } : undefined);
      if (converted) classes.set(nameOf(converted), { index, input, object: converted });
    } else if (apiVersion === V1BETA1_NODEPOOL_API_VERSION && kind === 'NodeClaim') {
      output.push(undefined);
      report.note('left out: NodeClaims are created by the controller, not converted');
    } else {
      output.push(input);
      const karpenterV1 = typeof kind === 'string' && V1_VALIDATORS[kind]?.apiVersion === apiVersion;
      report.note(karpenterV1 ? 'already v1, unchanged' : 'not a Karpenter v1beta1 kind, passed through unchanged');
    }
  });
  moveKubelet(pools, classes, output, ctx);

  const objects = output.filter((o): o is ConversionInput => o !== undefined);
  // The output must be valid v1; anything that is not (a v1beta1 field value v1 rejects) is an error here.
  for (const item of objects) {
    const validator = V1_VALIDATORS[String(item.object.kind)];
    if (!validator || item.object.apiVersion !== validator.apiVersion) continue;
    const report = reporter(ctx, item, objectName(item.object));
    for (const issue of validator.validate(item.object)) {
      if (issue.severity === 'warning') report.warn(issue.message, issue.path);
      else report.error(`${issue.message} (in the converted v1 object)`, issue.path);
    }
  }
  return { objects, problems: ctx.problems, notes: ctx.notes };
}
