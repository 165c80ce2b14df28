import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Pod, PodSpec } from '../../shared/apis/core/v1';
import type { NodePool } from '../../shared/apis/v1/types';
import { type ExistingNode, type SchedulingInput, solve } from '../../shared/scheduling';
import { podRequests } from '../../shared/scheduling/resources';
import { instanceType, nodePool, pod, standardTypes } from './helpers';
import { violations } from './invariants';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

const kinds = [
  'generic',
  'zoneSpread',
  'hostSpread',
  'hostAnti',
  'zoneAnti',
  'zoneAffinity',
  'preferredAnti',
  'softSpread',
] as const;

const groupArb = fc.record({
  kind: fc.constantFrom(...kinds),
  count: fc.integer({ min: 1, max: 12 }),
  cpu: fc.constantFrom('100m', '250m', '500m', '1', '1500m', '3', '7'),
  memory: fc.constantFrom('100Mi', '512Mi', '1Gi', '4Gi', '12Gi', '40Gi'),
  maxSkew: fc.integer({ min: 1, max: 2 }),
  arch: fc.constantFrom(undefined, 'amd64', 'arm64'),
  tolerateGpu: fc.boolean(),
  gpu: fc.constantFrom(0, 0, 0, 1),
});

const poolArb = fc.record({
  arch: fc.constantFrom(undefined, ['amd64'], ['arm64'], ['amd64', 'arm64']),
  categories: fc.constantFrom(undefined, ['c', 'm'], ['r'], ['c', 'm', 'r', 'g']),
  gpuTaint: fc.boolean(),
  cpuLimit: fc.constantFrom(undefined, '16', '64', '1000'),
  nodesLimit: fc.constantFrom(undefined, '2', '20'),
  weight: fc.integer({ min: 0, max: 3 }),
});

type Group = typeof groupArb extends fc.Arbitrary<infer T> ? T : never;
type PoolSpec = typeof poolArb extends fc.Arbitrary<infer T> ? T : never;

function podsFor(groups: Group[]): Pod[] {
  const out: Pod[] = [];
  groups.forEach((g, gi) => {
    const app = `g${gi}`;
    const selector = { matchLabels: { app } };
    const spec: Partial<PodSpec> = {};
    if (g.arch) spec.nodeSelector = { 'kubernetes.io/arch': g.arch };
    if (g.tolerateGpu) spec.tolerations = [{ key: 'nvidia.com/gpu', operator: 'Exists' }];
    switch (g.kind) {
      case 'zoneSpread':
      case 'hostSpread':
      case 'softSpread':
        spec.topologySpreadConstraints = [
          {
            maxSkew: g.maxSkew,
            topologyKey: g.kind === 'hostSpread' ? HOST : ZONE,
            whenUnsatisfiable: g.kind === 'softSpread' ? 'ScheduleAnyway' : 'DoNotSchedule',
            labelSelector: selector,
          },
        ];
        break;
      case 'hostAnti':
      case 'zoneAnti':
        spec.affinity = {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { topologyKey: g.kind === 'hostAnti' ? HOST : ZONE, labelSelector: selector },
            ],
          },
        };
        break;
      case 'preferredAnti':
        spec.affinity = {
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, podAffinityTerm: { topologyKey: HOST, labelSelector: selector } },
            ],
          },
        };
        break;
      case 'zoneAffinity':
        spec.affinity = {
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: ZONE, labelSelector: selector }],
          },
        };
        break;
    }
    for (let i = 0; i < g.count; i++) {
      out.push(
        pod(`${app}-${i}`, {
          labels: { app },
          cpu: g.cpu,
          memory: g.memory,
          ...(g.gpu ? { extra: { 'nvidia.com/gpu': String(g.gpu) } } : {}),
          ...spec,
        }),
      );
    }
  });
  return out;
}

function poolsFor(specs: PoolSpec[]): NodePool[] {
  return specs.map((p, i) =>
    nodePool(`pool-${i}`, {
      weight: p.weight,
      requirements: [
        ...(p.arch ? [{ key: 'kubernetes.io/arch', operator: 'In' as const, values: [...p.arch] }] : []),
        ...(p.categories
          ? [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In' as const, values: [...p.categories] }]
          : []),
      ],
      ...(p.gpuTaint ? { taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' as const }] } : {}),
      limits: { ...(p.cpuLimit ? { cpu: p.cpuLimit } : {}), ...(p.nodesLimit ? { nodes: p.nodesLimit } : {}) },
    }),
  );
}

const types = () => [
  ...standardTypes(),
  instanceType('g5.xlarge', { cpu: 4, memoryGiB: 16, extra: { 'nvidia.com/gpu': 1 }, category: 'g' }),
  instanceType('g5.12xlarge', { cpu: 48, memoryGiB: 192, extra: { 'nvidia.com/gpu': 4 }, category: 'g' }),
];

const existingArb = fc.array(
  fc.record({
    zone: fc.constantFrom('zone-a', 'zone-b', 'zone-c'),
    cpu: fc.integer({ min: 1, max: 8 }),
    tainted: fc.boolean(),
  }),
  { maxLength: 3 },
);

const daemonArb = fc.array(
  fc.record({
    cpu: fc.constantFrom('50m', '200m'),
    arch: fc.constantFrom(undefined, 'arm64'),
    tolerateAll: fc.boolean(),
  }),
  {
    maxLength: 2,
  },
);

describe('solve (property)', () => {
  it('places every pod once or explains it, and every placement holds every hard constraint', () => {
    fc.assert(
      fc.property(
        fc.array(groupArb, { minLength: 1, maxLength: 6 }),
        fc.array(poolArb, { minLength: 0, maxLength: 3 }),
        existingArb,
        daemonArb,
        (groups, poolSpecs, existingSpecs, daemonSpecs) => {
          const nodePools = poolsFor(poolSpecs);
          const existingNodes: ExistingNode[] = existingSpecs.map((e, i) => ({
            name: `node-${i}`,
            labels: { [ZONE]: e.zone, [HOST]: `node-${i}`, 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux' },
            taints: e.tainted ? [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] : [],
            allocatable: { cpu: e.cpu * 1000, memory: e.cpu * 4 * 2 ** 30, pods: 20 },
            pods: [],
          }));
          const daemonSets = daemonSpecs.map((d, i) =>
            pod(`ds-${i}`, {
              cpu: d.cpu,
              memory: '64Mi',
              ...(d.arch ? { nodeSelector: { 'kubernetes.io/arch': d.arch } } : {}),
              ...(d.tolerateAll ? { tolerations: [{ operator: 'Exists' as const }] } : {}),
            }),
          );
          const input: SchedulingInput = {
            pods: podsFor(groups),
            nodePools,
            instanceTypes: Object.fromEntries(nodePools.map((p) => [p.metadata.name, types()])),
            existingNodes,
            daemonSets,
          };
          const result = solve(input);
          expect(violations(input, result)).toEqual([]);

          // Existing capacity first: a pod with no constraints never gets a new claim while an
          // untainted existing node still has room for it.
          const free = new Map(
            existingNodes.map((n) => {
              const placed = result.existingNodes.find((e) => e.name === n.name)?.pods ?? [];
              const left = { ...n.allocatable };
              for (const p of placed) for (const [r, v] of Object.entries(podRequests(p))) left[r] = (left[r] ?? 0) - v;
              return [n, left];
            }),
          );
          for (const claim of result.nodeClaims) {
            for (const p of claim.pods) {
              const s = p.spec;
              if (s.nodeSelector || s.affinity || s.topologySpreadConstraints) continue;
              for (const [node, left] of free) {
                if (node.taints.length > 0) continue;
                const fits = Object.entries(podRequests(p)).every(([r, v]) => v <= (left[r] ?? 0));
                expect(fits, `${p.metadata.name} got a new claim while ${node.name} had room`).toBe(false);
              }
            }
          }
        },
      ),
      { numRuns: 150, seed: 20260601 },
    );
    // 150 solves take a few seconds alone; on a loaded machine they need more than vitest's default 5 s.
  }, 60_000);

  it('never exceeds NodePool limits, counting existing usage', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 4, max: 40 }),
        fc.integer({ min: 0, max: 4 }),
        (count, limit, used) => {
          const nodePools = [nodePool('general', { limits: { cpu: String(limit) } })];
          const input: SchedulingInput = {
            pods: Array.from({ length: count }, (_, i) => pod(`p-${i}`, { cpu: '1', memory: '1Gi' })),
            nodePools,
            instanceTypes: { general: standardTypes() },
            nodePoolUsage: { general: { cpu: used * 1000 } },
          };
          const result = solve(input);
          expect(violations(input, result)).toEqual([]);
          const charged = result.nodeClaims.reduce(
            (sum, c) => sum + Math.max(...c.instanceTypes.map((t) => t.capacity.cpu ?? 0)),
            0,
          );
          expect(charged + used * 1000).toBeLessThanOrEqual(limit * 1000);
          if (result.unschedulable.length > 0) expect(result.unschedulable[0]!.reasons[0]).toMatch(/limits exhausted/);
        },
      ),
      { numRuns: 100, seed: 7 },
    );
  });
});
