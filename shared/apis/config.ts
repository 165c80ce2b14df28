// Manifest files read into a configuration: the CLI and synth side of ./configuration.
// CONTRACT (used by plan, status, userdata, launch-template, synth and the Lambdas): keep these
// exported names and shapes stable.

import { checkCustomUserData } from '../amifamily/userdata/check';
import { type ConfigurationOptions, type ConfigurationResult, validateConfiguration } from './configuration';
import type { LoadedDocument } from './load';
import { readManifestFiles } from './load';
import { ConfigurationError } from './problems';

export type {
  Configuration,
  ConfigurationOptions,
  ConfigurationResult,
} from './configuration';

/** Validates and defaults parsed documents, custom userData included. */
export function buildConfiguration(
  documents: readonly LoadedDocument[],
  options: ConfigurationOptions,
): ConfigurationResult {
  return validateConfiguration(documents, options, checkCustomUserData);
}

const KARPENTER_KINDS: ReadonlySet<string> = new Set(['NodePool', 'EC2NodeClass', 'NodeClaim']);

/** Reads FILE|DIR paths and builds the configuration; file syntax errors are included as problems. */
export function loadConfiguration(paths: readonly string[], options: ConfigurationOptions): ConfigurationResult {
  const loaded = readManifestFiles(paths);
  const result = buildConfiguration(loaded.documents, options);
  result.problems.unshift(...loaded.problems);
  // A mistyped directory or a chart with no Karpenter objects must not pass as "valid".
  if (loaded.problems.length === 0 && !loaded.documents.some((d) => KARPENTER_KINDS.has(String(d.object.kind)))) {
    result.problems.push({
      severity: 'error',
      file: paths.join(', '),
      message: 'no NodePool, EC2NodeClass or NodeClaim found (directories are read for *.yaml, *.yml and *.json)',
    });
  }
  return result;
}

/** Like loadConfiguration with strict references, but throws ConfigurationError when any error exists. */
export function requireConfiguration(paths: readonly string[]): ConfigurationResult {
  const result = loadConfiguration(paths, { strictReferences: true });
  if (result.problems.some((p) => p.severity === 'error')) throw new ConfigurationError(result.problems);
  return result;
}
