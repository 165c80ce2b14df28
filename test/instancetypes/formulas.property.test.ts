import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AMIFamily } from '../../shared/apis/v1/types';
import {
  type CatalogInstanceType,
  capacitySettings,
  computeAllocatable,
  computeCapacity,
  computeOverhead,
  kubeReservedCPU,
} from '../../shared/instancetypes';
import { catalogType, nodeClass } from './helpers';

const FAMILIES: AMIFamily[] = ['AL2', 'AL2023', 'Bottlerocket', 'Custom', 'Windows2022'];

const instanceType = fc.record({
  vcpu: fc.integer({ min: 1, max: 448 }),
  memoryMiB: fc.integer({ min: 512, max: 24 * 1024 * 1024 }),
  maximumNetworkInterfaces: fc.integer({ min: 1, max: 16 }),
  ipv4PerInterface: fc.integer({ min: 2, max: 50 }),
  arch: fc.constantFrom('amd64' as const, 'arm64' as const),
});

describe('formula properties', () => {
  it('kube-reserved CPU never decreases with more CPU and stays within 6%', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 500_000 }), fc.integer({ min: 0, max: 10_000 }), (cpu, more) => {
        expect(kubeReservedCPU(cpu + more)).toBeGreaterThanOrEqual(kubeReservedCPU(cpu));
        expect(kubeReservedCPU(cpu)).toBeLessThanOrEqual(cpu * 0.06);
      }),
    );
  });

  it('allocatable is capacity minus the three overhead parts, in whole units, for every family', () => {
    fc.assert(
      fc.property(
        instanceType,
        fc.constantFrom(...FAMILIES),
        fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
        (shape, family, podsPerCore) => {
          const info: CatalogInstanceType = catalogType({ name: 'x.large', ...shape });
          const settings = capacitySettings(nodeClass(family, podsPerCore ? { kubelet: { podsPerCore } } : {}));
          const capacity = computeCapacity(info, settings);
          const overhead = computeOverhead(info, settings, capacity);
          const allocatable = computeAllocatable(capacity, overhead);
          for (const [name, amount] of Object.entries(capacity)) {
            expect(Number.isInteger(amount), name).toBe(true);
            const reserved =
              (overhead.kubeReserved[name] ?? 0) +
              (overhead.systemReserved[name] ?? 0) +
              (overhead.evictionThreshold[name] ?? 0);
            expect(allocatable[name]).toBe(amount - reserved);
          }
          expect(capacity.cpu).toBe(shape.vcpu * 1000);
          expect(capacity.memory).toBeLessThan(shape.memoryMiB * 2 ** 20);
          expect(capacity.pods).toBeGreaterThan(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
