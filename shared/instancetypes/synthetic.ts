// Karpenter's scheduling-benchmark catalog (kubernetes-sigs/karpenter fake.InstanceTypes), so our
// benchmark runs the same shape as upstream's: fake-it-<i> with i+1 vCPU, 2(i+1) GiB and 10(i+1) pods.

import type { Catalog, CatalogInstanceType, CatalogOffering } from './types';

export const SYNTHETIC_REGION = 'test-region';
export const SYNTHETIC_ZONES = ['test-zone-1', 'test-zone-2', 'test-zone-3'] as const;

const GI = 2 ** 30;

/** Upstream's priceFromResources: 0.1 per vCPU plus 0.1 per decimal GB of memory. */
export function syntheticPrice(vcpu: number, memoryBytes: number): number {
  return 0.1 * vcpu + (0.1 * memoryBytes) / 1e9;
}

function syntheticInstanceType(i: number): CatalogInstanceType {
  const vcpu = i + 1;
  const memoryGiB = 2 * (i + 1);
  const pods = 10 * (i + 1);
  const price = syntheticPrice(vcpu, memoryGiB * GI);
  const offering = (zone: string, capacityType: CatalogOffering['capacityType']): CatalogOffering => ({
    zone,
    capacityType,
    price,
    available: true,
  });
  return {
    name: `fake-it-${i}`,
    arch: 'amd64',
    vcpu,
    memoryMiB: memoryGiB * 1024,
    maximumNetworkInterfaces: 0,
    ipv4PerInterface: 0,
    gpus: 0,
    maxPods: pods,
    // Fake types have exactly these resources: no VM overhead, no ephemeral storage.
    capacity: { cpu: String(vcpu), memory: `${memoryGiB}Gi`, pods: String(pods) },
    overhead: { kubeReserved: { cpu: '100m', memory: '10Mi' } },
    offerings: [
      offering('test-zone-1', 'spot'),
      offering('test-zone-2', 'spot'),
      offering('test-zone-1', 'on-demand'),
      offering('test-zone-2', 'on-demand'),
      offering('test-zone-3', 'on-demand'),
    ],
  };
}

/** The benchmark catalog: `count` fake types (400 upstream), spot + on-demand in zones 1-2, on-demand in 3. */
export function syntheticCatalog(count = 400): Catalog {
  return {
    version: 1,
    region: SYNTHETIC_REGION,
    notes: ["Karpenter's scheduling benchmark instance types (fake.InstanceTypes)"],
    instanceTypes: Array.from({ length: count }, (_, i) => syntheticInstanceType(i)),
  };
}
