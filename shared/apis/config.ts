// A karpless configuration: the NodePools and EC2NodeClasses a user gives, validated and defaulted.
// CONTRACT (used by plan, status, userdata, launch-template, synth and the Lambdas): keep these
// exported names and shapes stable.

import { type LoadedDocument, readManifestFiles } from './load';
import { ConfigurationError, type Problem } from './problems';
import type { EC2NodeClass, NodePool } from './v1/types';

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

/** Validates and defaults parsed documents. */
export function buildConfiguration(
  documents: readonly LoadedDocument[],
  options: ConfigurationOptions,
): ConfigurationResult {
  // Placeholder until full validation lands: accepts Karpenter kinds as they are.
  const result: ConfigurationResult = {
    config: { nodePools: [], nodeClasses: [] },
    problems: [],
    notes: [],
    others: [],
  };
  for (const doc of documents) {
    if (doc.object.kind === 'NodePool') result.config.nodePools.push(doc.object as unknown as NodePool);
    else if (doc.object.kind === 'EC2NodeClass') result.config.nodeClasses.push(doc.object as unknown as EC2NodeClass);
    else result.others.push(doc);
  }
  void options;
  return result;
}

/** Reads FILE|DIR paths and builds the configuration; file syntax errors are included as problems. */
export function loadConfiguration(paths: readonly string[], options: ConfigurationOptions): ConfigurationResult {
  const loaded = readManifestFiles(paths);
  const result = buildConfiguration(loaded.documents, options);
  result.problems.unshift(...loaded.problems);
  return result;
}

/** Like loadConfiguration with strict references, but throws ConfigurationError when any error exists. */
export function requireConfiguration(paths: readonly string[]): ConfigurationResult {
  const result = loadConfiguration(paths, { strictReferences: true });
  if (result.problems.some((p) => p.severity === 'error')) throw new ConfigurationError(result.problems);
  return result;
}
