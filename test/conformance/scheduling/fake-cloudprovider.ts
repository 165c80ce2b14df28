// Karpenter's fake cloud provider (kubernetes-sigs/karpenter pkg/cloudprovider/fake) as the scheduler
// suites see it: the six instance types its GetInstanceTypes returns, with their offerings, labels,
// prices (PriceFromResources) and the 100m / 10Mi kube-reserved overhead of NewInstanceType, plus the
// InstanceTypes(n) and InstanceTypesAssorted() lists the suites swap in.

import type { InstanceType, Offering } from '../../../shared/instancetypes/types';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

export const FAKE_ZONES = ['test-zone-1', 'test-zone-2', 'test-zone-3'];

export interface FakeOptions {
  cpu?: number;
  memoryGiB?: number;
  pods?: number;
  arch?: string;
  /** WithOperatingSystems with one system (a karpless type has one `kubernetes.io/os`). */
  os?: string;
  /** WithRequirements: single-valued labels added to the type's own. */
  labels?: Record<string, string>;
  extra?: Record<string, number>;
  offerings?: {
    zone: string;
    capacityType: 'spot' | 'on-demand' | 'reserved';
    price?: number;
    available?: boolean;
    /** A reserved offering's capacity reservation (Karpenter's `karpenter.k8s.aws/capacity-reservation-id`). */
    reservationId?: string;
    /** How many instances the reservation can still start. */
    reservationCapacity?: number;
  }[];
}

/** fake.NewInstanceType: 4 cpu, 4Gi, 5 pods by default; spot in zones 1-2, on-demand in zones 1-3. */
export function fakeInstanceType(name: string, o: FakeOptions = {}): InstanceType {
  const cpu = o.cpu ?? 4;
  const memoryGiB = o.memoryGiB ?? 4;
  const capacity: Record<string, number> = {
    cpu: cpu * 1000,
    memory: memoryGiB * GiB,
    pods: o.pods ?? 5,
    ...(o.extra ?? {}),
  };
  // PriceFromResources: 0.1 per cpu, 0.1 per 1e9 bytes of memory, 1.0 per GPU-vendor device.
  const gpus = Object.keys(o.extra ?? {}).filter((k) => k === 'fake.com/vendor-a' || k === 'fake.com/vendor-b');
  const price = 0.1 * cpu + (0.1 * capacity.memory!) / 1e9 + gpus.length;
  const offerings: Offering[] = (
    o.offerings ?? [
      { zone: 'test-zone-1', capacityType: 'spot' },
      { zone: 'test-zone-2', capacityType: 'spot' },
      { zone: 'test-zone-1', capacityType: 'on-demand' },
      { zone: 'test-zone-2', capacityType: 'on-demand' },
      { zone: 'test-zone-3', capacityType: 'on-demand' },
    ]
  ).map((x) => ({
    zone: x.zone,
    capacityType: x.capacityType,
    price: x.price ?? price,
    available: x.available ?? true,
    ...(x.reservationId !== undefined ? { reservationId: x.reservationId, reservationType: 'default' as const } : {}),
    ...(x.reservationCapacity !== undefined ? { reservationCapacity: x.reservationCapacity } : {}),
  }));
  const large = cpu > 4 && memoryGiB > 8;
  const allocatable = { ...capacity, cpu: capacity.cpu! - 100, memory: capacity.memory! - 10 * MiB };
  return {
    name,
    labels: {
      'node.kubernetes.io/instance-type': name,
      'kubernetes.io/arch': o.arch ?? 'amd64',
      // Upstream's default types list several operating systems (linux, windows, darwin); a karpless type has one.
      'kubernetes.io/os': o.os ?? 'linux',
      size: large ? 'large' : 'small',
      ...(large ? { special: 'optional' } : {}),
      integer: String(cpu),
      ...(o.labels ?? {}),
    },
    capacity,
    overhead: { kubeReserved: { cpu: 100, memory: 10 * MiB }, systemReserved: {}, evictionThreshold: {} },
    allocatable,
    offerings,
    info: {
      name,
      arch: (o.arch ?? 'amd64') === 'arm64' ? 'arm64' : 'amd64',
      vcpu: cpu,
      memoryMiB: memoryGiB * 1024,
      maximumNetworkInterfaces: 1,
      ipv4PerInterface: o.pods ?? 5,
      gpus: 0,
      offerings: offerings.map((x) => ({ ...x })),
    },
  } as InstanceType;
}

/** fake.InstanceTypes(n): `fake-it-i` with i+1 cpu, 2(i+1) GiB and 10(i+1) pods. */
export function fakeInstanceTypesN(n: number): InstanceType[] {
  return Array.from({ length: n }, (_, i) =>
    fakeInstanceType(`fake-it-${i}`, { cpu: i + 1, memoryGiB: (i + 1) * 2, pods: (i + 1) * 10 }),
  );
}

/** The default fake.CloudProvider.GetInstanceTypes list. */
export function fakeInstanceTypes(): InstanceType[] {
  return [
    fakeInstanceType('default-instance-type'),
    fakeInstanceType('small-instance-type', { cpu: 2, memoryGiB: 2 }),
    fakeInstanceType('gpu-vendor-instance-type', { extra: { 'fake.com/vendor-a': 2 } }),
    fakeInstanceType('gpu-vendor-b-instance-type', { extra: { 'fake.com/vendor-b': 2 } }),
    fakeInstanceType('arm-instance-type', { arch: 'arm64', cpu: 16, memoryGiB: 128 }),
    fakeInstanceType('single-pod-instance-type', { pods: 1 }),
  ];
}

/**
 * fake.InstanceTypesAssorted(): one type per combination of cpu (1-64), memory (1-128 GiB), zone, capacity
 * type, operating system and arch, each with its single offering priced by PriceFromResources.
 */
export function fakeInstanceTypesAssorted(): InstanceType[] {
  const types: InstanceType[] = [];
  for (const cpu of [1, 2, 4, 8, 16, 32, 64])
    for (const memoryGiB of [1, 2, 4, 8, 16, 32, 64, 128])
      for (const zone of FAKE_ZONES)
        for (const capacityType of ['spot', 'on-demand'] as const)
          for (const os of ['linux', 'windows'])
            for (const arch of ['amd64', 'arm64'])
              types.push(
                fakeInstanceType(`${cpu}-cpu-${memoryGiB}-mem-${arch}-${os}-${zone}-${capacityType}`, {
                  cpu,
                  memoryGiB,
                  arch,
                  os,
                  offerings: [{ zone, capacityType }],
                }),
              );
  return types;
}
