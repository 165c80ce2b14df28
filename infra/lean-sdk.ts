// Copies of the AWS SDK clients that esbuild can tree-shake, for the Lambda bundles only.
//
// Each SDK v3 client keeps every operation's schema in one module (dist-es/schemas/schemas_0.js).
// Those schemas are plain arrays and objects, but their object keys are computed from module
// constants (`{ [_xN]: _tS }`), and esbuild cannot prove a computed key free of side effects, so it
// keeps all of them: 552 KB of EC2 schemas for the dozen calls we make. Replacing each computed key
// by the string constant it names changes no value and lets esbuild drop what no command reaches.
// The copies live under node_modules/.cache and are aliased in place of the real packages at
// bundling; tests and tsx keep importing the real ones.

import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Bump when the transformation changes, so stale copies are not reused. */
const TRANSFORM_VERSION = 1;
const SCHEMAS_MODULE = join('dist-es', 'schemas', 'schemas_0.js');

/** `[_xN]: v` → `"xmlName": v`, for every key naming a string constant of the module. */
export function inlineComputedKeys(source: string): string {
  const constants = new Map<string, string>();
  for (const match of source.matchAll(/^const (_\w+) = ("(?:[^"\\\n]|\\.)*");$/gm)) {
    const [, name, literal] = match;
    if (name && literal) constants.set(name, literal);
  }
  return source.replace(/\[(_\w+)\]:/g, (key, name: string) => {
    const literal = constants.get(name);
    return literal === undefined ? key : `${literal}:`;
  });
}

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target);
    else if (entry.isFile()) copyFileSync(source, target);
  }
}

function leanCopy(packageDir: string, cacheDir: string, name: string, version: string): string {
  const dir = join(cacheDir, `${name.replace('/', '__')}@${version}-t${TRANSFORM_VERSION}`);
  if (existsSync(join(dir, 'package.json'))) return dir;
  // Build beside the final place and rename: parallel synths and test workers may race here.
  const work = `${dir}.${process.pid}.${Date.now()}`;
  copyTree(join(packageDir, 'dist-es'), join(work, 'dist-es'));
  const schemas = join(work, SCHEMAS_MODULE);
  writeFileSync(schemas, inlineComputedKeys(readFileSync(schemas, 'utf8')));
  copyFileSync(join(packageDir, 'package.json'), join(work, 'package.json'));
  try {
    renameSync(work, dir);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    if (!existsSync(join(dir, 'package.json'))) throw error;
  }
  return dir;
}

/**
 * esbuild aliases from each `@aws-sdk/client-*` package we depend on to its lean copy. The copy sits
 * inside the project's node_modules, so its own imports (`@smithy/*`) resolve exactly as the
 * original's do.
 */
export function leanSdkAliases(projectRoot: string): Record<string, string> {
  const require = createRequire(join(projectRoot, 'package.json'));
  const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const cacheDir = join(projectRoot, 'node_modules', '.cache', 'karpless-lean-sdk');
  const aliases: Record<string, string> = {};
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (!name.startsWith('@aws-sdk/client-')) continue;
    const packageDir = dirname(require.resolve(`${name}/package.json`));
    if (!existsSync(join(packageDir, SCHEMAS_MODULE))) continue;
    const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    aliases[name] = leanCopy(packageDir, cacheDir, name, version);
  }
  return aliases;
}
