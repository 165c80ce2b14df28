// The deployed stack as `cdk synth` builds it: cdk-nag AwsSolutions with zero unacknowledged findings
// and no acknowledgement that matches nothing, cfn-lint clean, and the app's context checks.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildKarplessApp, type KarplessAppResult } from '../../infra/karpless-stack';
import { NO_BUNDLING } from './stack';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

interface Violation {
  ruleName: string;
  violatingConstructs: { constructPath: string }[];
}
interface Report {
  pluginReports: {
    pluginName: string;
    conclusion: string;
    violations: Violation[];
    suppressedViolations: Violation[];
  }[];
}

let outdir: string;
let built: KarplessAppResult;
let template: string;

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'karpless-synth-'));
  built = buildKarplessApp(
    { clusterName: 'demo', manifests: ['examples/manifests'] },
    { outdir, context: NO_BUNDLING },
  );
  built.app.synth();
  template = join(outdir, 'Karpless-demo.template.json');
});

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged finding', () => {
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as Report;
    const nag = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions');
    expect(nag?.violations.map((v) => `${v.ruleName} at ${v.violatingConstructs[0]?.constructPath}`)).toEqual([]);
    expect(nag?.conclusion).toBe('success');
  });

  it('has no acknowledgement that matches no finding', () => {
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as Report;
    const suppressed = new Set(
      (report.pluginReports.find((r) => r.pluginName === 'AwsSolutions')?.suppressedViolations ?? []).flatMap((v) =>
        v.violatingConstructs.map((c) => `${c.constructPath.replace(/\/Resource$/, '')} ${v.ruleName}`),
      ),
    );
    const dead = built.acknowledgements
      .map((a) => `${a.path.replace(/\/Resource$/, '')} ${a.id.replace('AwsSolutions::', '')}`)
      .filter((key) => !suppressed.has(key));
    expect(built.acknowledgements.length).toBeGreaterThan(0);
    expect(dead).toEqual([]);
  });
});

describe('cfn-lint', () => {
  it('finds nothing in the synthesized template (W3005 is CDK’s own redundant DependsOn)', () => {
    const run = spawnSync('cfn-lint', ['--ignore-checks', 'W3005', '--', template], { encoding: 'utf8' });
    if (run.error) throw new Error(`cfn-lint could not run (${run.error.message}): pip install cfn-lint`);
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});

describe('infra/app.ts', () => {
  it('synthesizes the stack the way the CDK CLI runs the app', () => {
    const out = mkdtempSync(join(tmpdir(), 'karpless-cli-synth-'));
    try {
      const run = spawnSync('npx', ['tsx', 'infra/app.ts'], {
        encoding: 'utf8',
        env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ ...NO_BUNDLING, cluster: 'demo' }), CDK_OUTDIR: out },
      });
      expect(run.stderr).not.toMatch(/Error/);
      expect(run.status).toBe(0);
      const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
        artifacts: Record<string, unknown>;
      };
      expect(Object.keys(manifest.artifacts)).toContain('Karpless-demo');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('refuses to synthesize without -c cluster', () => {
    const run = spawnSync('npx', ['tsx', 'infra/app.ts'], {
      encoding: 'utf8',
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify(NO_BUNDLING), CDK_OUTDIR: outdir },
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toBe(
      'context cluster is not set: run `npx cdk deploy -c cluster=NAME` with your EKS cluster name\n',
    );
  });

  it('stops on a bad manifest with its file, object and field alone: no stack trace, no Node banner', () => {
    const dir = mkdtempSync(join(tmpdir(), 'karpless-bad-manifest-'));
    try {
      const bad = join(dir, 'bad.yaml');
      writeFileSync(
        bad,
        readFileSync('examples/manifests/default.yaml', 'utf8').replace(/alias: al2023@\S+/, 'alias: al2023'),
      );
      const run = spawnSync('npx', ['tsx', 'infra/app.ts'], {
        encoding: 'utf8',
        env: {
          ...process.env,
          CDK_CONTEXT_JSON: JSON.stringify({ ...NO_BUNDLING, cluster: 'demo', manifests: bad }),
          CDK_OUTDIR: join(dir, 'out'),
        },
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toBe(
        `invalid configuration:\n  ${bad}: EC2NodeClass/default: spec.amiSelectorTerms[0].alias: 'alias' is improperly formatted, must match the format 'family@version'\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
