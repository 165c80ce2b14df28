// The Lambda bundles alias the SDK clients to tree-shaken copies (infra/lean-sdk.ts). This proves on
// moto that a bundle built exactly as deployed sends and parses the same as the real packages, for
// requests, responses, dates, nested lists and modeled errors, with credentials from the environment.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { esbuildApiOptions } from '../../infra/bundling';
import { inlineComputedKeys } from '../../infra/lean-sdk';
import { motoAccount, randomAccountId } from './helpers';
import { probe } from './support/sdk-probe';

const work = mkdtempSync(join(tmpdir(), 'karpless-lean-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('lean SDK copies in the Lambda bundles', () => {
  it('inlines only computed keys that name a string constant of the module', () => {
    const source = 'const _a = "ec2QueryName";\nconst _b = 3;\nexport var X$ = [{ [_a]: `Tag`, [_b]: 1, [_c]: 2 }];';
    expect(inlineComputedKeys(source)).toBe(
      'const _a = "ec2QueryName";\nconst _b = 3;\nexport var X$ = [{ "ec2QueryName": `Tag`, [_b]: 1, [_c]: 2 }];',
    );
  });

  it('bundled, answers every call exactly as the unbundled SDK does', async () => {
    const { endpoint } = motoAccount();
    const outfile = join(work, 'probe.mjs');
    const result = await build({
      ...esbuildApiOptions(),
      entryPoints: [join(import.meta.dirname, 'support', 'sdk-probe.ts')],
      outfile,
      metafile: true,
    });
    const inputs = Object.keys(result.metafile.inputs);
    // The copies, not the packages, went into the bundle.
    expect(inputs.some((f) => f.includes('karpless-lean-sdk') && f.includes('client-ec2'))).toBe(true);
    expect(inputs.some((f) => /node_modules\/@aws-sdk\/client-ec2\//.test(f))).toBe(false);
    // Lambda's environment credentials, not the SDK's whole default chain.
    expect(inputs.some((f) => f.includes('lambda-credentials'))).toBe(true);
    expect(inputs.some((f) => f.includes('nested-clients'))).toBe(false);
    const ec2Schemas = Object.entries(
      result.metafile.outputs[Object.keys(result.metafile.outputs).find((k) => k.endsWith('.mjs')) ?? '']?.inputs ?? {},
    ).find(([f]) => f.includes('client-ec2') && f.endsWith('schemas_0.js'));
    expect(ec2Schemas?.[1].bytesInOutput).toBeLessThan(150_000);

    const bundled = spawnSync(process.execPath, [outfile, endpoint, randomAccountId(), 'env-credentials'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AWS_SESSION_TOKEN: 'token',
      },
    });
    expect(bundled.stderr).toBe('');
    expect(bundled.status).toBe(0);
    const unbundled = await probe(endpoint, randomAccountId());
    expect(JSON.parse(bundled.stdout)).toEqual(JSON.parse(JSON.stringify(unbundled)));
    expect(unbundled.ec2Error).toMatch(/^InvalidLaunchTemplateName/);
    expect(unbundled.fleetErrors).toBe(0);
    expect(unbundled.ambientSubnets).toBe(1);
  });
});
