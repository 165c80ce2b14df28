import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import { resolveInstanceTypes } from '../../shared/instancetypes/resolve';
import { syntheticCatalog } from '../../shared/instancetypes/synthetic';
import type { InstanceType, Resources } from '../../shared/instancetypes/types';
import {
  classLowerBound,
  fractionalLowerBound,
  podsLowerBound,
  singleInstanceBound,
  solveCoveringLP,
  totalDemand,
} from '../../shared/scheduling/lowerbound';

const GiB = 2 ** 30;

function type(
  name: string,
  cpu: number,
  memoryGiB: number,
  price: number,
  extra: Resources = {},
  available = true,
): InstanceType {
  const allocatable = { cpu: cpu * 1000, memory: memoryGiB * GiB, pods: 110, ...extra };
  return {
    name,
    labels: {},
    capacity: allocatable,
    overhead: { kubeReserved: {}, systemReserved: {}, evictionThreshold: {} },
    allocatable,
    offerings: [
      { zone: 'z1', capacityType: 'on-demand', price, available },
      { zone: 'z2', capacityType: 'spot', price: price * 2, available },
    ],
    info: {
      name,
      arch: 'amd64',
      vcpu: cpu,
      memoryMiB: memoryGiB * 1024,
      maximumNetworkInterfaces: 1,
      ipv4PerInterface: 1,
      gpus: 0,
      offerings: [],
    },
  };
}

const cpuHeavy = type('c.xlarge', 4, 8, 1);
const memHeavy = type('r.large', 2, 16, 1);
const general = type('m.xlarge', 4, 16, 1.25);

describe('fractionalLowerBound', () => {
  it.each([
    ['one type, cpu-bound', { cpu: 10_000, memory: 1 * GiB }, [cpuHeavy], 2.5],
    ['one type, memory-bound', { cpu: 1000, memory: 40 * GiB }, [cpuHeavy], 5],
    // 4a + 2b ≥ 6 cpu and 8a + 16b ≥ 24 GiB meet at a = b = 1: $2, cheaper than 3 of either alone.
    ['a mix of two types beats either alone', { cpu: 6000, memory: 24 * GiB }, [cpuHeavy, memHeavy], 2],
    // The specialists cover 4 cpu + 16 GiB with 2/3 of each (4/3); the general type does it for 1.25.
    [
      'a balanced type beats the mix when cheaper',
      { cpu: 4000, memory: 16 * GiB },
      [cpuHeavy, memHeavy, general],
      1.25,
    ],
    [
      'the mix beats a balanced type when that is dearer',
      { cpu: 4000, memory: 16 * GiB },
      [cpuHeavy, memHeavy, type('m', 4, 16, 1.5)],
      4 / 3,
    ],
    ['pod slots bind when pods are tiny', { cpu: 100, memory: GiB, pods: 220 }, [cpuHeavy], 2],
    ['nothing asked costs nothing', {}, [cpuHeavy], 0],
  ])('%s', (_, demand, types, price) => {
    expect(fractionalLowerBound(demand, types).price).toBeCloseTo(price, 9);
  });

  it('uses the cheapest available offering and ignores types with none available', () => {
    const unavailable = type('cheap-but-gone', 4, 16, 0.01, {}, false);
    expect(fractionalLowerBound({ cpu: 4000 }, [unavailable, general]).price).toBeCloseTo(1.25, 9);
  });

  it('is infinite when a demanded resource is offered by no type', () => {
    const result = fractionalLowerBound({ cpu: 1000, 'nvidia.com/gpu': 1 }, [cpuHeavy, memHeavy]);
    expect(result).toEqual({ price: Number.POSITIVE_INFINITY, mix: [] });
  });

  it('covers an extended resource with the types that have it', () => {
    const gpu = type('g.xlarge', 4, 16, 0.5, { 'nvidia.com/gpu': 1 });
    expect(fractionalLowerBound({ cpu: 1000, 'nvidia.com/gpu': 3 }, [cpuHeavy, gpu]).price).toBeCloseTo(1.5, 9);
  });

  it('reports the optimal fractional mix', () => {
    const { mix } = fractionalLowerBound({ cpu: 6000, memory: 24 * GiB }, [cpuHeavy, memHeavy, type('m', 4, 16, 2)]);
    expect(mix.map((m) => m.instanceType).sort()).toEqual(['c.xlarge', 'r.large']);
    for (const m of mix) expect(m.count).toBeCloseTo(1, 9);
  });

  it('subtracts per-node overhead from every type', () => {
    // 4000m − 1000m overhead leaves 3000m: 6000m needs 2 instances.
    expect(fractionalLowerBound({ cpu: 6000 }, [cpuHeavy], { overhead: { cpu: 1000 } }).price).toBeCloseTo(2, 9);
  });

  it('needs minNodes instances whatever their size (pods that repel each other per node)', () => {
    const small = type('t.small', 1, 2, 0.1);
    expect(fractionalLowerBound({ cpu: 300 }, [small, general], { minNodes: 3 }).price).toBeCloseTo(0.3, 9);
    expect(fractionalLowerBound({ cpu: 300 }, [small, general]).price).toBeCloseTo(0.03, 9);
  });

  it('equals the best of every single type and pair for two resources (brute force)', () => {
    const arbitraryType = fc.record({
      cpu: fc.integer({ min: 1, max: 64 }),
      memory: fc.integer({ min: 1, max: 256 }),
      price: fc.integer({ min: 1, max: 1000 }),
    });
    fc.assert(
      fc.property(
        fc.array(arbitraryType, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 2000 }),
        (specs, cpu, memory) => {
          const types = specs.map((s, i) => type(`t${i}`, s.cpu, s.memory, s.price / 100));
          const bound = fractionalLowerBound({ cpu: cpu * 1000, memory: memory * GiB }, types).price;
          let best = Number.POSITIVE_INFINITY;
          for (const a of specs) {
            best = Math.min(best, (a.price / 100) * Math.max(cpu / a.cpu, memory / a.memory));
            for (const b of specs) {
              // Both constraints tight: solve the 2×2 system for nonnegative counts.
              const det = a.cpu * b.memory - b.cpu * a.memory;
              if (det === 0) continue;
              const x = (cpu * b.memory - b.cpu * memory) / det;
              const y = (a.cpu * memory - cpu * a.memory) / det;
              if (x >= 0 && y >= 0) best = Math.min(best, (x * a.price + y * b.price) / 100);
            }
          }
          expect(bound).toBeCloseTo(best, 6);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never exceeds the price of a real integral plan: whole instances of one type', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ cpu: fc.integer({ min: 1, max: 16 }), memory: fc.integer({ min: 1, max: 64 }) }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.array(fc.record({ cpu: fc.integer({ min: 1, max: 4000 }), memory: fc.integer({ min: 1, max: 8192 }) }), {
          minLength: 1,
          maxLength: 40,
        }),
        (specs, pods) => {
          const types = specs.map((s, i) => type(`t${i}`, s.cpu, s.memory, s.cpu * 0.05 + s.memory * 0.01));
          const requests = pods.map((p) => ({ cpu: p.cpu, memory: p.memory * 2 ** 20 }));
          const bound = fractionalLowerBound(totalDemand(requests), types).price;
          for (const t of types) {
            // First-fit of the pods onto instances of t (a real plan when every pod fits one).
            if (requests.some((r) => r.cpu > (t.allocatable.cpu ?? 0) || r.memory > (t.allocatable.memory ?? 0)))
              continue;
            const bins: { cpu: number; memory: number; pods: number }[] = [];
            for (const r of requests) {
              const bin = bins.find(
                (b) =>
                  b.cpu + r.cpu <= (t.allocatable.cpu ?? 0) &&
                  b.memory + r.memory <= (t.allocatable.memory ?? 0) &&
                  b.pods < (t.allocatable.pods ?? 0),
              );
              if (bin) {
                bin.cpu += r.cpu;
                bin.memory += r.memory;
                bin.pods++;
              } else bins.push({ cpu: r.cpu, memory: r.memory, pods: 1 });
            }
            expect(bound).toBeLessThanOrEqual(bins.length * (t.offerings[0]?.price ?? 0) + 1e-9);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('fractionalLowerBound on the benchmark catalog', () => {
  // 400 types whose resources are all proportional: a massively degenerate LP, where rounding once
  // drifted the tableau into a false "infeasible".
  const nodeClass = {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }], subnetSelectorTerms: [], securityGroupSelectorTerms: [] },
  } as const satisfies EC2NodeClass;
  const types = resolveInstanceTypes(syntheticCatalog(400), nodeClass);
  const demand = { cpu: 62_050, memory: 151.2 * GiB, pods: 100 };

  it('stays finite and grows with the number of nodes required', () => {
    let previous = 0;
    for (const minNodes of [0, 1, 5, 10, 20, 30, 60]) {
      const { price } = fractionalLowerBound(demand, types, { minNodes });
      expect(price).toBeGreaterThanOrEqual(previous - 1e-9);
      expect(Number.isFinite(price)).toBe(true);
      previous = price;
    }
  });

  it('is the cost of the demand at the cheapest rate per unit, the largest type (least overhead)', () => {
    const largest = types.at(-1) as InstanceType;
    const price = largest.offerings[0]?.price ?? 0;
    const need = Math.max(
      demand.cpu / (largest.allocatable.cpu ?? 1),
      demand.memory / (largest.allocatable.memory ?? 1),
      demand.pods / (largest.allocatable.pods ?? 1),
    );
    expect(fractionalLowerBound(demand, types).price).toBeCloseTo(need * price, 6);
  });
});

describe('singleInstanceBound', () => {
  const small = type('small', 2, 4, 0.1);
  const big = type('big', 16, 64, 1);

  it.each([
    ['the cheapest type fitting the hardest pod', [{ cpu: 500 }, { cpu: 8000, memory: GiB }], 1],
    ['the small type when every pod fits it', [{ cpu: 500 }, { cpu: 1000, memory: GiB }], 0.1],
    ['Infinity when a pod fits no type', [{ cpu: 64_000 }], Number.POSITIVE_INFINITY],
    ['0 without pods', [], 0],
  ])('is %s', (_, requests, expected) => {
    expect(singleInstanceBound(requests, [small, big])).toBe(expected);
  });

  it('counts per-node overhead against the pod', () => {
    expect(singleInstanceBound([{ cpu: 1500 }], [small, big], { overhead: { cpu: 1000 } })).toBe(1);
  });
});

describe('podsLowerBound', () => {
  it('takes whole instances for a lone pod and the LP for many', () => {
    const small = type('small', 2, 4, 0.1);
    const big = type('big', 16, 64, 0.5);
    // One pod: the LP buys 1/32 of big (0.016), but some instance must be bought whole: small, 0.1.
    expect(podsLowerBound([{ cpu: 1000 }], [small, big])).toBeCloseTo(0.1, 9);
    // 64 such pods: the LP's 4 bigs (2.0) beat any single instance.
    expect(
      podsLowerBound(
        Array.from({ length: 64 }, () => ({ cpu: 1000 })),
        [small, big],
      ),
    ).toBeCloseTo(2, 9);
  });
});

describe('totalDemand', () => {
  it('sums requests and counts one pod slot per pod', () => {
    expect(
      totalDemand([
        { cpu: 100, memory: 5, pods: 1 },
        { cpu: 200, 'nvidia.com/gpu': 1 },
      ]),
    ).toEqual({
      cpu: 300,
      memory: 5,
      pods: 2,
      'nvidia.com/gpu': 1,
    });
  });
});

describe('classLowerBound', () => {
  const arm = type('arm.xlarge', 4, 16, 1);
  const amd = type('amd.xlarge', 4, 16, 2);

  it('charges a class restricted to dearer types for them, the others for the cheap ones', () => {
    // The amd-only class needs one amd instance ($2), the other one arm instance ($1).
    const { price: bound } = classLowerBound([
      { demand: { cpu: 4000 }, instanceTypes: [amd] },
      { demand: { cpu: 4000 }, instanceTypes: [arm, amd] },
    ]);
    expect(bound).toBeCloseTo(3, 9);
  });

  it('does not add classes up when they could share instances', () => {
    // Separately: 1.25 (cpu class) + 1.25 (memory class), but one m.xlarge holds both.
    const { price: bound } = classLowerBound([
      { demand: { cpu: 4000 }, instanceTypes: [general] },
      { demand: { memory: 16 * GiB }, instanceTypes: [general] },
    ]);
    expect(bound).toBeCloseTo(1.25, 9);
  });

  it('keeps the largest minNodes of the classes', () => {
    const small = type('t.small', 1, 2, 0.1);
    const { price: bound } = classLowerBound([
      { demand: { cpu: 100 }, instanceTypes: [small], minNodes: 4 },
      { demand: { cpu: 100 }, instanceTypes: [small], minNodes: 2 },
    ]);
    expect(bound).toBeCloseTo(0.4, 9);
  });
});

describe('solveCoveringLP', () => {
  it('returns undefined when a resource cannot be covered', () => {
    expect(
      solveCoveringLP(
        [1, 1],
        [
          [1, 0],
          [2, 0],
        ],
        2,
      ),
    ).toBeUndefined();
  });

  it('solves a degenerate problem without cycling', () => {
    // Three identical types and a redundant third resource.
    const result = solveCoveringLP(
      [1, 1, 1],
      [
        [1, 1, 1],
        [1, 1, 1],
        [1, 1, 1],
      ],
      3,
    );
    expect(result?.value).toBeCloseTo(1, 9);
    expect(result?.x.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  });
});
