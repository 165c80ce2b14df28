// karpless against the Karpenter reference (bench/reference.ts) on generated workloads mixing GPU and
// CPU pods, zone and hostname spread, hostname anti-affinity, selectors and several NodePools: every
// plan feasible by the independent checker, none dearer than Karpenter's own plan for it (1% slack), and
// all of them together clearly cheaper.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referencePlan } from '../../bench/reference';
import type { Pod, PodSpec } from '../../shared/apis/core/v1';
import type { NodePool } from '../../shared/apis/v1/types';
import { type SchedulingInput, solve } from '../../shared/scheduling';
import { instanceType, nodePool, pod, standardTypes } from './helpers';
import { violations } from './invariants';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';
const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' as const };

const groupArb = fc.record({
  kind: fc.constantFrom('plain', 'plain', 'zoneSpread', 'hostAnti', 'hostSpread', 'gpu'),
  count: fc.integer({ min: 1, max: 14 }),
  cpu: fc.constantFrom('100m', '250m', '500m', '1', '1500m', '3'),
  memory: fc.constantFrom('128Mi', '512Mi', '1Gi', '2Gi', '6Gi', '12Gi'),
  arch: fc.constantFrom(undefined, undefined, 'amd64', 'arm64'),
  category: fc.constantFrom(undefined, undefined, 'c', 'r'),
});

const poolArb = fc.record({
  categories: fc.constantFrom(undefined, ['c', 'm'], ['m', 'r'], ['c', 'm', 'r']),
  arch: fc.constantFrom(undefined, ['amd64'], ['arm64']),
  weight: fc.integer({ min: 0, max: 2 }),
});

type Group = typeof groupArb extends fc.Arbitrary<infer T> ? T : never;
type PoolSpec = typeof poolArb extends fc.Arbitrary<infer T> ? T : never;

function podsFor(groups: Group[]): Pod[] {
  return groups.flatMap((g, gi) => {
    const app = `g${gi}`;
    const selector = { matchLabels: { app } };
    const spec: Partial<PodSpec> = {};
    const nodeSelector: Record<string, string> = {};
    if (g.arch && g.kind !== 'gpu') nodeSelector['kubernetes.io/arch'] = g.arch;
    if (g.category && g.kind !== 'gpu') nodeSelector['karpenter.k8s.aws/instance-category'] = g.category;
    if (Object.keys(nodeSelector).length > 0) spec.nodeSelector = nodeSelector;
    if (g.kind === 'zoneSpread' || g.kind === 'hostSpread')
      spec.topologySpreadConstraints = [
        {
          maxSkew: 1,
          topologyKey: g.kind === 'zoneSpread' ? ZONE : HOST,
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: selector,
        },
      ];
    if (g.kind === 'hostAnti')
      spec.affinity = {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: HOST, labelSelector: selector }],
        },
      };
    if (g.kind === 'gpu') spec.tolerations = [{ key: 'nvidia.com/gpu', operator: 'Exists' }];
    return Array.from({ length: g.count }, (_, i) =>
      pod(`${app}-${i}`, {
        labels: { app },
        cpu: g.cpu,
        memory: g.memory,
        ...(g.kind === 'gpu' ? { extra: { 'nvidia.com/gpu': '1' } } : {}),
        ...spec,
      }),
    );
  });
}

/** The CPU pools generated, plus one tainted GPU pool. */
function poolsFor(specs: PoolSpec[]): NodePool[] {
  const cpu = specs.map((p, i) =>
    nodePool(`pool-${i}`, {
      weight: p.weight,
      requirements: [
        ...(p.arch ? [{ key: 'kubernetes.io/arch', operator: 'In' as const, values: [...p.arch] }] : []),
        ...(p.categories
          ? [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In' as const, values: [...p.categories] }]
          : []),
      ],
    }),
  );
  const gpu = nodePool('gpu', {
    weight: 5,
    taints: [GPU_TAINT],
    requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['g'] }],
  });
  return [...cpu, gpu];
}

const types = () => [
  ...standardTypes(),
  instanceType('g5.xlarge', { cpu: 4, memoryGiB: 16, extra: { 'nvidia.com/gpu': 1 }, category: 'g', price: 1.0 }),
  instanceType('g5.12xlarge', { cpu: 48, memoryGiB: 192, extra: { 'nvidia.com/gpu': 4 }, category: 'g', price: 5.7 }),
];

// Workloads that once planned dearer than the reference: Karpenter's emptiest-claim-first order beat the
// priced greedy (small pods spread over the claims of large ones, the zone of a spread pod chosen by its
// claim), or the slack fill refilled a claim it had just emptied as if its price were still paid.
type Loose<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;
const EXAMPLES: [Loose<Group, 'arch' | 'category'>[], Loose<PoolSpec, 'arch' | 'categories'>[]][] = [
  [
    [
      { kind: 'plain', count: 4, cpu: '1500m', memory: '128Mi', arch: 'arm64', category: 'r' },
      { kind: 'hostSpread', count: 6, cpu: '100m', memory: '128Mi' },
      { kind: 'plain', count: 3, cpu: '1', memory: '1Gi' },
      { kind: 'plain', count: 9, cpu: '3', memory: '1Gi', arch: 'amd64', category: 'c' },
      { kind: 'hostSpread', count: 13, cpu: '250m', memory: '12Gi' },
    ],
    [{ categories: ['c', 'm', 'r'], weight: 1 }],
  ],
  [
    [
      { kind: 'plain', count: 4, cpu: '1', memory: '12Gi', arch: 'arm64', category: 'r' },
      { kind: 'zoneSpread', count: 11, cpu: '100m', memory: '1Gi', arch: 'arm64' },
      { kind: 'zoneSpread', count: 7, cpu: '100m', memory: '6Gi', arch: 'amd64' },
      { kind: 'hostAnti', count: 2, cpu: '1', memory: '128Mi', arch: 'amd64', category: 'c' },
    ],
    [
      { categories: ['c', 'm'], weight: 1 },
      { categories: ['c', 'm'], arch: ['amd64'], weight: 1 },
      { categories: ['c', 'm'], weight: 0 },
    ],
  ],
  [
    [
      { kind: 'zoneSpread', count: 14, cpu: '250m', memory: '12Gi', arch: 'amd64', category: 'r' },
      { kind: 'plain', count: 12, cpu: '250m', memory: '2Gi', category: 'c' },
      { kind: 'hostSpread', count: 4, cpu: '1', memory: '12Gi' },
      { kind: 'hostSpread', count: 14, cpu: '1', memory: '6Gi' },
      { kind: 'plain', count: 10, cpu: '1500m', memory: '2Gi', arch: 'arm64' },
    ],
    [{ categories: ['c', 'm', 'r'], arch: ['amd64'], weight: 1 }],
  ],
  [
    [
      { kind: 'zoneSpread', count: 5, cpu: '1', memory: '1Gi' },
      { kind: 'plain', count: 3, cpu: '1500m', memory: '512Mi', category: 'r' },
      { kind: 'zoneSpread', count: 14, cpu: '500m', memory: '512Mi' },
      { kind: 'hostSpread', count: 9, cpu: '500m', memory: '128Mi', arch: 'arm64', category: 'r' },
    ],
    [{ categories: ['c', 'm', 'r'], arch: ['arm64'], weight: 1 }, { weight: 0 }],
  ],
  [
    [
      { kind: 'zoneSpread', count: 4, cpu: '250m', memory: '2Gi', arch: 'arm64' },
      { kind: 'plain', count: 11, cpu: '1500m', memory: '2Gi', arch: 'amd64' },
      { kind: 'plain', count: 10, cpu: '1', memory: '12Gi', arch: 'arm64' },
      { kind: 'plain', count: 7, cpu: '1', memory: '128Mi' },
      { kind: 'plain', count: 5, cpu: '500m', memory: '128Mi' },
    ],
    [
      { arch: ['arm64'], weight: 1 },
      { categories: ['c', 'm'], arch: ['arm64'], weight: 1 },
    ],
  ],
  [
    [
      { kind: 'hostAnti', count: 7, cpu: '1', memory: '12Gi' },
      { kind: 'hostAnti', count: 10, cpu: '1500m', memory: '6Gi' },
      { kind: 'zoneSpread', count: 3, cpu: '500m', memory: '1Gi', category: 'c' },
    ],
    [{ categories: ['c', 'm', 'r'], arch: ['amd64'], weight: 2 }],
  ],
];

describe('solve against the Karpenter reference (property)', () => {
  it('plans every generated workload feasibly, never dearer than Karpenter would (1% slack), and cheaper in total', () => {
    let price = 0;
    let referencePrice = 0;
    fc.assert(
      fc.property(
        fc.array(groupArb, { minLength: 1, maxLength: 6 }),
        fc.array(poolArb, { minLength: 1, maxLength: 3 }),
        (groups, poolSpecs) => {
          const nodePools = poolsFor(poolSpecs);
          const input: SchedulingInput = {
            pods: podsFor(groups),
            nodePools,
            instanceTypes: Object.fromEntries(nodePools.map((p) => [p.metadata.name, types()])),
          };
          const result = solve(input);
          expect(violations(input, result)).toEqual([]);
          const reference = referencePlan(input);
          expect(result.unschedulable.length).toBeLessThanOrEqual(reference.unschedulable.length);
          if (result.unschedulable.length !== reference.unschedulable.length) return;
          expect(result.totalPrice).toBeLessThanOrEqual(reference.totalPrice * 1.01 + 1e-9);
          price += result.totalPrice;
          referencePrice += reference.totalPrice;
        },
      ),
      {
        numRuns: 400,
        seed: 20261203,
        examples: EXAMPLES.map(([groups, pools]): [Group[], PoolSpec[]] => [
          groups.map((g) => ({ arch: undefined, category: undefined, ...g })),
          pools.map((p) => ({ arch: undefined, categories: undefined, ...p })),
        ]),
      },
    );
    expect(price).toBeLessThanOrEqual(0.8 * referencePrice);
  }, 120_000);
});
