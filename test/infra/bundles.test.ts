// Every Lambda bundle within its size budget, built as deployed: once with esbuild's API and the
// options the construct uses, once through the CDK construct's own local bundling (the esbuild CLI
// with the lean-SDK aliases passed as arguments), so a broken alias fails here and not at deploy.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { esbuildApiOptions, MAX_BUNDLE_BYTES } from '../../infra/bundling';
import { KarplessFunction } from '../../infra/function';
import { CONFIG_FILE_NAME } from '../../shared/contracts';

const ROOT = join(import.meta.dirname, '..', '..');
const HANDLERS = readdirSync(join(ROOT, 'lambdas')).filter((name) =>
  existsSync(join(ROOT, 'lambdas', name, 'handler.ts')),
);
const work = mkdtempSync(join(tmpdir(), 'karpless-bundles-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('Lambda bundles', () => {
  it.each(HANDLERS)('%s stays within the bundle budget and carries no full SDK client', async (name) => {
    const result = await build({
      ...esbuildApiOptions(),
      entryPoints: [join(ROOT, 'lambdas', name, 'handler.ts')],
      write: false,
      outfile: join(work, name, 'index.mjs'),
      metafile: true,
    });
    const code = result.outputFiles.find((f) => f.path.endsWith('.mjs'));
    expect(code?.contents.length).toBeGreaterThan(10_000);
    expect(code?.contents.length).toBeLessThanOrEqual(MAX_BUNDLE_BYTES);
    const originals = Object.keys(result.metafile.inputs).filter((f) =>
      /node_modules\/@aws-sdk\/(client-|nested-clients|credential-provider-node)/.test(f),
    );
    expect(originals).toEqual([]);
  });

  it('the construct bundles through the lean copies too', () => {
    const outdir = join(work, 'cdk.out');
    const configurationFile = join(work, 'karpless.json');
    writeFileSync(configurationFile, JSON.stringify({ nodePools: [], nodeClasses: [] }));
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundles', { env: { account: '111111111111', region: 'us-west-2' } });
    new KarplessFunction(stack, 'Watcher', {
      entry: join(ROOT, 'lambdas', 'watcher', 'handler.ts'),
      configurationFile,
      timeout: Duration.seconds(10),
      memorySizeMiB: 256,
      environment: {},
      logRetention: RetentionDays.ONE_WEEK,
    });
    app.synth();
    const assets = readdirSync(outdir).filter((d) => d.startsWith('asset.'));
    expect(assets).toHaveLength(1);
    const bundle = join(outdir, assets[0] ?? '', 'index.mjs');
    expect(statSync(bundle).size).toBeLessThanOrEqual(MAX_BUNDLE_BYTES);
    // Only the full EC2 schemas module carries operations karpless never calls.
    const code = readFileSync(bundle, 'utf8');
    expect(code).toContain('CreateFleet');
    expect(code).not.toContain('AcceptAddressTransfer');
    expect(readFileSync(join(outdir, assets[0] ?? '', CONFIG_FILE_NAME), 'utf8')).toContain('nodePools');
  }, 120_000);
});
