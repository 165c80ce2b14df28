import { describe, expect, it } from 'vitest';
import type { LoadedDocument } from '../../shared/apis/load';
import { collectWorkloads, MAX_PODS_PER_PLAN, MAX_PODS_PER_WORKLOAD } from '../../shared/workloads';

// Small caps keep the boundary rows fast; the billion-replica rows run against the real ones.
const caps = { perWorkload: 50, perPlan: 80 };

const spec = { containers: [{ name: 'c', resources: { requests: { cpu: '10m' } } }] };
const doc = (object: Record<string, unknown>): LoadedDocument => ({ file: 'in.yaml', line: 1, object });
const deployment = (name: string, replicas: number) =>
  doc({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas, template: { spec } } });
const job = (name: string, parallelism: number) =>
  doc({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { parallelism, template: { spec } } });
const pods = (count: number) =>
  Array.from({ length: count }, (_, i) => doc({ kind: 'Pod', metadata: { name: `p${i}` }, spec }));

const capError = (field: string, count: number) =>
  `${field}: Invalid value: ${count}: karpless plans at most ${caps.perWorkload} pods per workload`;
const planError = `the inputs hold more than ${caps.perPlan} pods, the most karpless plans at once: split them`;

describe('scale: caps with the number in the error instead of a crash or an exhausted heap', () => {
  it.each<[string, LoadedDocument[], { pending: number; problem?: string }]>([
    ['the most replicas one workload may have', [deployment('d', 50)], { pending: 50 }],
    ['one replica more', [deployment('d', 51)], { pending: 0, problem: capError('spec.replicas', 51) }],
    ['two billion replicas', [deployment('d', 2_000_000_000)], { pending: 0, problem: capError('spec.replicas', 2e9) }],
    ['a Job beyond the cap', [job('j', 10 ** 9)], { pending: 0, problem: capError('spec.parallelism', 1e9) }],
    [
      'replicas beyond int32',
      [deployment('d', 2 ** 31)],
      { pending: 0, problem: 'spec.replicas: Invalid value: 2147483648: must be between 0 and 2147483647, inclusive' },
    ],
    ['workloads that together reach the plan cap', [deployment('a', 50), deployment('b', 30)], { pending: 80 }],
    [
      'workloads that together pass the plan cap',
      [deployment('a', 50), deployment('b', 31)],
      { pending: 50, problem: planError },
    ],
    ['pods that pass the plan cap', pods(81), { pending: 80, problem: planError }],
  ])('%s', (_, documents, expected) => {
    const set = collectWorkloads(documents, caps);
    expect(set.pending.length).toBe(expected.pending);
    const lines = set.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
    expect(lines).toEqual(expected.problem ? [expected.problem] : []);
  });

  it('checks replicas against the stated caps before making a pod: 2e9 replicas fail at once', () => {
    const set = collectWorkloads([deployment('d', 2_000_000_000)]);
    expect(set.pending).toEqual([]);
    expect(set.problems.map((p) => p.message)).toEqual([
      `Invalid value: 2000000000: karpless plans at most ${MAX_PODS_PER_WORKLOAD} pods per workload`,
    ]);
    expect(MAX_PODS_PER_PLAN).toBeGreaterThan(MAX_PODS_PER_WORKLOAD);
  });
});
