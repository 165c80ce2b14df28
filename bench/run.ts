// `npm run bench`: Karpenter's scheduling benchmark shape (reference §7) run through karpless' solve,
// against the 400 synthetic types and against the built-in us-east-1 catalog, and the mixed workloads
// of issue 10 (GPU + CPU, zone spread, hostname anti-affinity, selectors, two NodePools). Prints pods/s,
// nodes, price, the ratio to the LP lower bound and to the Karpenter reference (bench/reference.ts,
// up to REFERENCE_MAX_PODS pods), then the runtime, burst and scale benchmarks and the Lambda bundles
// (bench/bundles.ts).
// Only `solve` is timed, as upstream times only Scheduler.Solve; pods and instance types are built
// before the clock starts.
//
//   npm run bench -- [--sizes 1,100,1000] [--suites karpenter-shape,us-east-1,mixed] [--runs N] [--record]
//   A run prints its figures and changes no file: the tracked bench/results.json and bench/bundles.json
//   hold the figures of a recorded run on an idle machine. --record writes them: a full run replaces
//   both, a partial run replaces only the measured suites and sizes in results.json.
//   --merge (a partial --record without the runtime benchmark) and --write (replace results.json with
//   this run's figures, partial or not) are kept for older notes.

import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pod } from '../shared/apis/core/v1';
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_ZONE } from '../shared/apis/v1/labels';
import type { NodePool, NodeSelectorRequirementWithMinValues } from '../shared/apis/v1/types';
import { loadBuiltInCatalog } from '../shared/instancetypes/catalog';
import { resolveInstanceTypes } from '../shared/instancetypes/resolve';
import { syntheticCatalog } from '../shared/instancetypes/synthetic';
import type { Catalog, InstanceType } from '../shared/instancetypes/types';
import { type SchedulingInput, type SchedulingResult, solve } from '../shared/scheduling';
import { podsLowerBound } from '../shared/scheduling/lowerbound';
import { allows, requirementFrom } from '../shared/scheduling/requirements';
import { podRequests } from '../shared/scheduling/resources';
import { planLowerBound } from './bound';
import { mixedInput, mixedPods } from './mixed';
import { makeDiversePods, makeGenericPods, BENCH_NODE_CLASS as nodeClass } from './pods';
import { referencePlan } from './reference';
import { runRuntimeBenchmarks } from './runtime';

export const SIZES = [1, 100, 1000, 5000, 10000, 20000];
export type Suite = 'karpenter-shape' | 'us-east-1' | 'mixed';
const SUITES: Suite[] = ['karpenter-shape', 'us-east-1', 'mixed'];
/** The reference re-scans every claim for every pod, as Karpenter does: at 5,000 pods it takes minutes. */
const REFERENCE_MAX_PODS = 1000;

export interface Measurement {
  podsPerSecond: number;
  nodes: number;
  price: number;
  lowerBound: number;
  unschedulable: number;
  /** The Karpenter reference's price for the same pods; absent above REFERENCE_MAX_PODS. */
  reference?: number;
}

/** One line of bench/results.json: the keys of issue 3, then the generic-only mix beside it. */
export interface ResultEntry extends Measurement {
  suite: Suite;
  pods: number;
  /** The generic-only mix beside the diverse one; absent for the mixed suite, which has one mix. */
  generic?: Measurement;
}

function nodePool(name: string, requirements: NodeSelectorRequirementWithMinValues[]): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: { requirements, nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
      },
      // Upstream's benchmark limits: large enough never to bind.
      limits: { cpu: '10000000', memory: '10000000Gi' },
    },
  };
}

export interface SuiteSetup {
  nodePool: NodePool;
  catalog: Catalog;
}

export function setup(suite: Suite): SuiteSetup {
  if (suite === 'karpenter-shape') return { nodePool: nodePool('default', []), catalog: syntheticCatalog(400) };
  return {
    nodePool: nodePool('general-purpose', [
      { key: LABEL_CAPACITY_TYPE, operator: 'In', values: ['spot', 'on-demand'] },
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
      { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
    ]),
    catalog: loadBuiltInCatalog(),
  };
}

/** The types and offerings a NodePool's requirements allow: what the lower bound may buy. */
export function allowedInstanceTypes(pool: NodePool, types: readonly InstanceType[]): InstanceType[] {
  const requirements = pool.spec.template.spec.requirements.map(requirementFrom);
  const onOffering = requirements.filter((r) => r.key === LABEL_ZONE || r.key === LABEL_CAPACITY_TYPE);
  const onType = requirements.filter((r) => r.key !== LABEL_ZONE && r.key !== LABEL_CAPACITY_TYPE);
  return types.flatMap((type) => {
    if (!onType.every((r) => allows(r, type.labels[r.key]))) return [];
    const offerings = type.offerings.filter((o) =>
      onOffering.every((r) => allows(r, r.key === LABEL_ZONE ? o.zone : o.capacityType)),
    );
    return [{ ...type, offerings }];
  });
}

/** Pods with required hostname anti-affinity against their own labels: each needs a node of its own. */
export function mutuallyRepellingPods(pods: readonly Pod[]): number {
  const groups = new Map<string, number>();
  for (const pod of pods) {
    for (const term of pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      const match = term.labelSelector?.matchLabels;
      if (term.topologyKey !== LABEL_HOSTNAME || !match || term.labelSelector?.matchExpressions?.length) continue;
      if (!Object.entries(match).every(([k, v]) => pod.metadata.labels?.[k] === v)) continue;
      const key = JSON.stringify(Object.entries(match).sort());
      groups.set(key, (groups.get(key) ?? 0) + 1);
    }
  }
  return Math.max(0, ...groups.values());
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function runsFor(pods: number): number {
  if (pods <= 100) return 9;
  if (pods <= 1000) return 5;
  return 3;
}

function measure(pods: Pod[], setupForSuite: SuiteSetup, types: InstanceType[], runs: number): Measurement {
  const pool = setupForSuite.nodePool;
  const allowed = allowedInstanceTypes(pool, types);
  const lowerBound = podsLowerBound(pods.map(podRequests), allowed, { minNodes: mutuallyRepellingPods(pods) });
  return timed(
    () => ({ pods: structuredClone(pods), nodePools: [pool], instanceTypes: { [pool.metadata.name]: types } }),
    lowerBound,
    runs,
  );
}

/** The issue-10 mix: two NodePools over the us-east-1 catalog, bounded per pod's allowed types. */
function measureMixed(count: number, runs: number): Measurement {
  const input = mixedInput(mixedPods(count));
  return timed(() => ({ ...input, pods: structuredClone(input.pods) }), planLowerBound(input), runs);
}

function timed(input: () => SchedulingInput, lowerBound: number, runs: number): Measurement {
  // Each run gets its own copy, made before the clock starts, so nothing a run does to its input
  // (the solver should not, but relaxation rewrites preferences) leaks into the next.
  let result: SchedulingResult = solve(input()); // warm-up: JIT and any caches the solver keeps
  const seconds: number[] = [];
  for (let i = 0; i < runs; i++) {
    const runInput = input();
    const start = performance.now();
    result = solve(runInput);
    seconds.push((performance.now() - start) / 1000);
    // A run past 30 s says enough; more would only make the benchmark unbearable.
    if ((seconds.at(-1) ?? 0) > 30) break;
  }
  const reference = input();
  return {
    podsPerSecond: reference.pods.length / median(seconds),
    nodes: result.nodeClaims.length,
    price: result.totalPrice,
    lowerBound,
    unschedulable: result.unschedulable.length,
    ...(reference.pods.length <= REFERENCE_MAX_PODS ? { reference: referencePlan(reference).totalPrice } : {}),
  };
}

function parseList(args: string[], flag: string): string[] | undefined {
  const index = args.indexOf(flag);
  if (index < 0) return undefined;
  return (args[index + 1] ?? '').split(',').filter((v) => v !== '');
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

function row(cells: (string | number)[]): string {
  const widths = [16, 8, 7, 11, 7, 7, 12, 12, 6, 8];
  return cells.map((c, i) => (i < 2 ? String(c).padEnd(widths[i] ?? 8) : String(c).padStart(widths[i] ?? 8))).join(' ');
}

function printLine(suite: string, mix: string, pods: number, m: Measurement): void {
  const ratio = m.lowerBound > 0 ? (m.price / m.lowerBound).toFixed(3) : '-';
  const vsReference = m.reference ? (m.price / m.reference).toFixed(3) : '-';
  console.log(
    row([
      suite,
      mix,
      pods,
      Math.round(m.podsPerSecond),
      m.nodes,
      m.unschedulable,
      m.price.toFixed(4),
      m.lowerBound.toFixed(4),
      ratio,
      vsReference,
    ]),
  );
}

const rounded = (m: Measurement): Measurement => ({
  podsPerSecond: Math.round(m.podsPerSecond),
  nodes: m.nodes,
  price: round(m.price, 4),
  lowerBound: round(m.lowerBound, 4),
  unschedulable: m.unschedulable,
  ...(m.reference !== undefined ? { reference: round(m.reference, 4) } : {}),
});

function readResults(path: string): { suite: string; pods?: number }[] {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
}

/** The measured entries in place of those of the same suite and size; every other entry (runtime …) kept. */
export function mergeResults<T extends { suite: string; pods?: number }>(
  current: T[],
  measured: ResultEntry[],
): (T | ResultEntry)[] {
  const key = (e: { suite: string; pods?: number }) => `${e.suite}:${e.pods ?? ''}`;
  const fresh = new Map(measured.map((e) => [key(e), e]));
  const merged: (T | ResultEntry)[] = current.map((e) => fresh.get(key(e)) ?? e);
  const seen = new Set(current.map(key));
  // New sizes go before the first entry that is not a scheduling one (the runtime figures stay last).
  const at = merged.findIndex((e) => !(SUITES as string[]).includes(e.suite));
  const added = measured.filter((e) => !seen.has(key(e)));
  merged.splice(at < 0 ? merged.length : at, 0, ...added);
  return merged;
}

function main(args: string[]): void {
  const sizes = parseList(args, '--sizes')?.map(Number) ?? SIZES;
  const suites = (parseList(args, '--suites') as Suite[] | undefined) ?? SUITES;
  const runsFlag = parseList(args, '--runs')?.[0];
  const cpu = cpus()[0]?.model ?? 'unknown cpu';
  console.log(`karpless scheduling benchmark: node ${process.version}, ${cpus().length} × ${cpu}`);
  console.log('pods/s = median of timed solve() runs after one warm-up; ratio = price / LP lower bound\n');
  console.log(row(['SUITE', 'MIX', 'PODS', 'PODS/S', 'NODES', 'UNSCHED', '$/HOUR', 'LOWER BOUND', 'RATIO', 'VS REF']));
  const results: ResultEntry[] = [];
  for (const suite of suites) {
    if (suite === 'mixed') {
      const measured = new Set<number>();
      for (const size of sizes) {
        // Whole copies of the 90-pod mix: the pod count is the nearest multiple of 90.
        const count = mixedPods(size).length;
        if (measured.has(count)) continue;
        measured.add(count);
        const mixed = measureMixed(size, runsFlag ? Number(runsFlag) : runsFor(count));
        printLine(suite, 'mixed', count, mixed);
        results.push({ suite, pods: count, ...rounded(mixed) });
      }
      continue;
    }
    const suiteSetup = setup(suite);
    const types = resolveInstanceTypes(suiteSetup.catalog, nodeClass);
    for (const size of sizes) {
      const runs = runsFor(size);
      const diverse = measure(makeDiversePods(size), suiteSetup, types, runsFlag ? Number(runsFlag) : runs);
      printLine(suite, 'diverse', size, diverse);
      const generic = measure(
        makeGenericPods(size),
        suiteSetup,
        types,
        runsFlag ? Number(runsFlag) : Math.min(runs, 3),
      );
      printLine(suite, 'generic', size, generic);
      results.push({ suite, pods: size, ...rounded(diverse), generic: rounded(generic) });
    }
  }
  console.log('\ngeneric mix, price / lower bound (target ≤ 1.10):');
  for (const suite of suites) {
    const ratios = results
      .flatMap((r) =>
        r.suite === suite && r.generic && r.generic.lowerBound > 0 ? [{ pods: r.pods, generic: r.generic }] : [],
      )
      .map((r) => `${r.pods}: ${(r.generic.price / r.generic.lowerBound).toFixed(3)}`);
    console.log(`  ${suite.padEnd(16)} ${ratios.join(', ')}`);
  }
  console.log('\nprice / Karpenter reference (target ≤ 1.00) and diverse/mixed price / lower bound (target ≤ 1.15):');
  for (const suite of suites) {
    const cells = results
      .filter((r) => r.suite === suite)
      .map(
        (r) =>
          `${r.pods}: ${r.reference ? (r.price / r.reference).toFixed(3) : '-'} / ${r.lowerBound > 0 ? (r.price / r.lowerBound).toFixed(3) : '-'}`,
      );
    console.log(`  ${suite.padEnd(16)} ${cells.join(', ')}`);
  }
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results.json');
  const full = sizes === SIZES && suites === SUITES;
  if (args.includes('--merge') || (args.includes('--record') && !full && !args.includes('--write'))) {
    writeFileSync(out, `${JSON.stringify(mergeResults(readResults(out), results), null, 2)}\n`);
    console.log(`\nmerged into ${out}: these suites and sizes replaced, every other entry kept`);
    return;
  }
  // A plain run leaves the tracked figures alone: they are recorded on purpose, on an idle machine.
  if (args.includes('--write') || args.includes('--record')) {
    writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nwrote ${out}`);
  } else {
    console.log(`\nnot recorded: ${out} left as it was (add --record to write these figures)`);
  }
}

const USAGE =
  'usage: npm run bench -- [--sizes 1,100,1000] [--suites karpenter-shape,us-east-1,mixed] [--runs N] [--record]';
const FLAGS = new Set(['--sizes', '--suites', '--runs', '--record', '--write', '--merge']);

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  // An unknown flag (--help, a typo) must not run the full benchmark and overwrite results.json.
  const unknown = args.find((a) => a.startsWith('-') && !FLAGS.has(a));
  if (unknown) {
    console.error(`${unknown === '--help' || unknown === '-h' ? '' : `unknown flag ${unknown}\n`}${USAGE}`);
    process.exit(unknown === '--help' || unknown === '-h' ? 0 : 2);
  }
  main(args);
  const record = args.includes('--record') || args.includes('--write');
  // --merge is for scheduling figures alone.
  if (!args.includes('--merge')) {
    await runRuntimeBenchmarks(record);
    const { runBurstBenchmarks } = await import('./burst');
    await runBurstBenchmarks(record);
    const { runScaleBenchmark } = await import('./scale');
    await runScaleBenchmark(record);
    // Loaded here: the tests that import this module's helpers need no bundler.
    const { runBundleBenchmark } = await import('./bundles');
    await runBundleBenchmark(record);
  }
}
