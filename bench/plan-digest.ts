// The plans solve() makes for every bench mix, reduced to one digest per mix: a speed-up of the
// scheduler must leave each unchanged (issue 23, item 7). `tsx bench/plan-digest.ts [--sizes …] [--out f]`
// prints `<suite>/<mix>/<pods> <sha256>`; two runs (before and after a change) are compared with diff.
// Only the decision is digested: claim order, pool, offering, the instance types in order, requirements,
// pods by name, and the unschedulable pods with their reasons.

import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolveInstanceTypes } from '../shared/instancetypes/resolve';
import { podKey, type SchedulingInput, type SchedulingResult, solve } from '../shared/scheduling';
import { mixedInput, mixedPods } from './mixed';
import { makeDiversePods, makeGenericPods, BENCH_NODE_CLASS as nodeClass } from './pods';
import { SIZES, type Suite, setup } from './run';

/** A canonical text of the plan: any decision that differs changes it. */
export function planText(result: SchedulingResult): string {
  const claims = result.nodeClaims.map((c) => ({
    pool: c.nodePool,
    offering: [c.offering.instanceType, c.offering.zone, c.offering.capacityType, c.offering.price],
    types: c.instanceTypes.map((t) => t.name),
    requirements: c.requirements,
    requests: c.requests,
    pods: c.pods.map(podKey),
  }));
  const existing = result.existingNodes.map((e) => ({ name: e.name, pods: e.pods.map(podKey) }));
  const unschedulable = result.unschedulable.map((u) => [podKey(u.pod), u.reasons, u.reservedOffering ?? false]);
  return JSON.stringify({ claims, existing, unschedulable, total: result.totalPrice });
}

export function planDigest(result: SchedulingResult): string {
  return createHash('sha256').update(planText(result)).digest('hex').slice(0, 16);
}

/** Every mix of `npm run bench` at these sizes, as the bench builds it. */
export function* benchInputs(sizes: readonly number[]): Generator<[string, () => SchedulingInput]> {
  for (const suite of ['karpenter-shape', 'us-east-1'] as Suite[]) {
    const s = setup(suite);
    const types = resolveInstanceTypes(s.catalog, nodeClass);
    const name = s.nodePool.metadata.name;
    for (const size of sizes) {
      for (const [mix, make] of [
        ['diverse', makeDiversePods],
        ['generic', makeGenericPods],
      ] as const) {
        yield [
          `${suite}/${mix}/${size}`,
          () => ({ pods: make(size), nodePools: [s.nodePool], instanceTypes: { [name]: types } }),
        ];
      }
    }
  }
  const seen = new Set<number>();
  for (const size of sizes) {
    const pods = mixedPods(size);
    if (seen.has(pods.length)) continue;
    seen.add(pods.length);
    yield [`mixed/mixed/${pods.length}`, () => mixedInput(mixedPods(size))];
  }
}

function main(args: string[]): void {
  const at = args.indexOf('--sizes');
  const sizes = at >= 0 ? (args[at + 1] ?? '').split(',').map(Number) : SIZES;
  const outAt = args.indexOf('--out');
  const lines: string[] = [];
  for (const [label, input] of benchInputs(sizes)) {
    const line = `${label} ${planDigest(solve(input()))}`;
    console.log(line);
    lines.push(line);
  }
  if (outAt >= 0) writeFileSync(args[outAt + 1] ?? 'plans.txt', `${lines.join('\n')}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
