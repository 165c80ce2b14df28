// `npm run bench` (second part): each Lambda bundle built exactly as deployed (infra/bundling.ts),
// its size, and the time Node takes to load it beside a bare `node -e ''`: the part of a cold start
// that our code controls. Writes bench/bundles.json with --record.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { esbuildApiOptions, MAX_BUNDLE_BYTES } from '../infra/bundling';
import { CONFIG_FILE_NAME, ENV } from '../shared/contracts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = 15;

export interface BundleFigures {
  function: string;
  bytes: number;
  gzipBytes: number;
  /** Median wall time of `node` importing the bundle, ms. */
  loadMs: number;
  /** loadMs / the median of a bare `node -e ''`. */
  loadRatio: number;
}

function medianWallMs(args: string[], env: NodeJS.ProcessEnv): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const start = process.hrtime.bigint();
    const run = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (run.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${run.stderr}`);
    if (i >= 2) times.push(ms);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

export async function measureBundles(): Promise<BundleFigures[]> {
  const lambdas = join(ROOT, 'lambdas');
  const names = readdirSync(lambdas).filter((n) => existsSync(join(lambdas, n, 'handler.ts')));
  const work = mkdtempSync(join(tmpdir(), 'karpless-bundles-'));
  const env = {
    ...process.env,
    [ENV.clusterName]: 'bench',
    [ENV.stateTable]: 'bench',
    [ENV.noticeBus]: 'bench',
    [ENV.configFile]: join(work, CONFIG_FILE_NAME),
    AWS_REGION: 'us-west-2',
  };
  writeFileSync(join(work, CONFIG_FILE_NAME), JSON.stringify({ nodePools: [], nodeClasses: [] }));
  try {
    const bare = medianWallMs(['-e', ''], env);
    const figures: BundleFigures[] = [];
    for (const name of names) {
      const outfile = join(work, name, 'index.mjs');
      await build({
        ...esbuildApiOptions(),
        entryPoints: [join(lambdas, name, 'handler.ts')],
        outfile,
      });
      const code = readFileSync(outfile);
      const loadMs = medianWallMs(['--input-type=module', '-e', `await import(${JSON.stringify(outfile)})`], env);
      figures.push({
        function: name,
        bytes: code.length,
        gzipBytes: gzipSync(code).length,
        loadMs: Math.round(loadMs),
        loadRatio: Math.round((loadMs / bare) * 100) / 100,
      });
    }
    console.log(`bare node -e '': ${Math.round(bare)} ms (median of ${RUNS})`);
    return figures;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Measures and prints the bundles; writes bench/bundles.json only when recording (`--record`). */
export async function runBundleBenchmark(record: boolean): Promise<void> {
  console.log('karpless Lambda bundles (esbuild as deployed; load = import of the bundle by node)\n');
  const figures = await measureBundles();
  console.log('FUNCTION      BYTES      GZIP     LOAD MS  × BARE');
  for (const f of figures) {
    console.log(
      `${f.function.padEnd(13)} ${String(f.bytes).padStart(9)} ${String(f.gzipBytes).padStart(9)} ${String(f.loadMs).padStart(8)} ${f.loadRatio.toFixed(2).padStart(7)}`,
    );
  }
  const over = figures.filter((f) => f.bytes > MAX_BUNDLE_BYTES);
  if (over.length > 0)
    console.log(`\nover the ${MAX_BUNDLE_BYTES}-byte budget: ${over.map((f) => f.function).join(', ')}`);
  const slow = figures.filter((f) => f.loadRatio > 3);
  if (slow.length > 0) console.log(`loads slower than 3× bare node: ${slow.map((f) => f.function).join(', ')}`);
  const out = join(ROOT, 'bench', 'bundles.json');
  if (!record) {
    console.log(`\nnot recorded: ${out} left as it was (add --record to write these figures)`);
    return;
  }
  writeFileSync(out, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`\nwrote ${out}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runBundleBenchmark(process.argv.includes('--record'));
}
