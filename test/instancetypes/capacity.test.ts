import { describe, expect, it } from 'vitest';
import type { AMIFamily, EC2NodeClass, KubeletConfiguration } from '../../shared/apis/v1/types';
import {
  type CatalogInstanceType,
  eniLimitedPods,
  type InstanceType,
  kubeReservedCPU,
  kubeReservedMemory,
  memoryCapacity,
  resolveInstanceTypes,
  resourceAmount,
} from '../../shared/instancetypes';
import { catalogType, GI, M5_XLARGE, M6G_XLARGE, M6IDN_32XLARGE, MI, nodeClass, T3_LARGE } from './helpers';

function resolveOne(info: CatalogInstanceType, nc: EC2NodeClass = nodeClass()): InstanceType {
  const [resolved] = resolveInstanceTypes({ version: 1, region: 'us-east-1', instanceTypes: [info] }, nc);
  if (!resolved) throw new Error(`${info.name} was not resolved`);
  return resolved;
}

function withKubelet(kubelet: KubeletConfiguration, family: AMIFamily = 'AL2023'): EC2NodeClass {
  return nodeClass(family, { kubelet });
}

describe('the worked example of reference §5 (m5.xlarge: 4 vCPU, 16384 MiB, 4 ENIs × 15 IPs)', () => {
  const m5 = resolveOne(M5_XLARGE);

  it('has 58 pods from the ENI formula', () => {
    expect(m5.capacity.pods).toBe(58);
  });

  it('reserves 80m CPU, 893Mi memory and 1Gi ephemeral storage for the kubelet', () => {
    expect(m5.overhead.kubeReserved).toEqual({ cpu: 80, memory: 893 * MI, 'ephemeral-storage': GI });
  });

  it('takes the 7.5% VM overhead off memory capacity: 16384 − 1229 = 15155Mi', () => {
    expect(m5.capacity.memory).toBe(15155 * MI);
  });

  it('leaves 15155 − 893 − 100 = 14162Mi allocatable memory', () => {
    expect(m5.overhead.evictionThreshold.memory).toBe(100 * MI);
    expect(m5.allocatable.memory).toBe(14162 * MI);
  });

  it('has 4000m capacity and 3920m allocatable CPU, 20Gi root storage minus 1Gi and 10%', () => {
    expect(m5.capacity.cpu).toBe(4000);
    expect(m5.allocatable.cpu).toBe(3920);
    expect(m5.capacity['ephemeral-storage']).toBe(20 * GI);
    expect(m5.allocatable['ephemeral-storage']).toBe(20 * GI - GI - Math.ceil(2 * GI));
  });
});

describe('eniLimitedPods', () => {
  it.each([
    ['m5.xlarge (4 × 15)', M5_XLARGE, 0, 0, 58],
    ['t3.large (3 × 12)', T3_LARGE, 0, 0, 35],
    ['m6idn.32xlarge (8 × 50)', M6IDN_32XLARGE, 0, 0, 394],
    ['m6idn.32xlarge with one efa-only interface on card 0', M6IDN_32XLARGE, 0, 1, 345],
    ['m5.xlarge with 1 reserved ENI', M5_XLARGE, 1, 0, 44],
    ['all ENIs reserved', T3_LARGE, 3, 0, 0],
    ['more ENIs reserved than exist', T3_LARGE, 5, 0, 0],
  ])('%s → %i pods', (_, info, reserved, efaOnly, pods) => {
    expect(eniLimitedPods(info, reserved, efaOnly)).toBe(pods);
  });

  it('counts efa-only interfaces on card 0 from the NodeClass networkInterfaces', () => {
    const nc = nodeClass('AL2023', {
      networkInterfaces: [
        { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
        { networkCardIndex: 0, deviceIndex: 1, interfaceType: 'efa-only' },
        { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' },
      ],
    });
    const resolved = resolveOne(M6IDN_32XLARGE, nc);
    expect(resolved.capacity.pods).toBe(345);
    // The NodeClass's interface list decides how many EFA devices there are.
    expect(resolved.capacity['vpc.amazonaws.com/efa']).toBe(2);
  });

  it('uses --reserved-enis for capacity but not for kube-reserved memory', () => {
    const [resolved] = resolveInstanceTypes({ version: 1, region: 'r', instanceTypes: [M5_XLARGE] }, nodeClass(), {
      reservedENIs: 1,
    });
    expect(resolved?.capacity.pods).toBe(44);
    expect(resolved?.overhead.kubeReserved.memory).toBe(893 * MI);
  });
});

describe('kubeReservedCPU bands (6% / 1% / 0.5% / 0.25%)', () => {
  it.each([
    [0, 0],
    [500, 30],
    [1000, 60],
    [2000, 70],
    [3000, 75],
    [4000, 80],
    [8000, 90],
    [16000, 110],
    [96000, 310],
    [128000, 390],
  ])('%im → %im', (cpu, reserved) => {
    expect(kubeReservedCPU(cpu)).toBe(reserved);
  });
});

describe('kubeReservedMemory = 11 × pods + 255 MiB', () => {
  it.each([
    [29, 574],
    [58, 893],
    [110, 1465],
    [394, 4589],
  ])('%i pods → %i MiB', (pods, mib) => {
    expect(kubeReservedMemory(pods)).toBe(mib * MI);
  });
});

describe('memory capacity', () => {
  it.each([
    ['amd64 16384 MiB', M5_XLARGE, 15155],
    // The CMA reservation comes off before the VM overhead is taken: 16320 − ceil(1224) = 15096.
    ['arm64 16384 MiB', M6G_XLARGE, 15096],
    ['amd64 8192 MiB', T3_LARGE, 7577],
  ])('%s → %i MiB', (_, info, mib) => {
    expect(memoryCapacity(info)).toBe(mib * MI);
  });

  it('takes 64 MiB more off arm64 before the VM overhead (so 59 MiB less capacity here)', () => {
    const amd = resolveOne(M5_XLARGE);
    const arm = resolveOne(M6G_XLARGE);
    expect(memoryCapacity({ memoryMiB: 16384 - 64, arch: 'amd64' })).toBe(arm.capacity.memory);
    expect((amd.capacity.memory ?? 0) - (arm.capacity.memory ?? 0)).toBe(59 * MI);
    expect(arm.allocatable.memory).toBe((15096 - 893 - 100) * MI);
  });

  it('honours --vm-memory-overhead-percent', () => {
    expect(memoryCapacity(M5_XLARGE, 0)).toBe(16384 * MI);
    const [resolved] = resolveInstanceTypes({ version: 1, region: 'r', instanceTypes: [M5_XLARGE] }, nodeClass(), {
      vmMemoryOverheadPercent: 0.1,
    });
    expect(resolved?.capacity.memory).toBe((16384 - 1639) * MI);
  });
});

describe('kubelet overrides', () => {
  // m5.xlarge under AL2023 unless the family says otherwise.
  it.each<[string, KubeletConfiguration, AMIFamily, Partial<Record<string, number>>]>([
    ['maxPods sets pod capacity', { maxPods: 110 }, 'AL2023', { pods: 110 }],
    // AL2/AL2023 size kube-reserved memory for the ENI-limited density whatever maxPods says.
    ['maxPods leaves AL2023 kube-reserved memory at the ENI count', { maxPods: 110 }, 'AL2023', { krMemory: 893 }],
    ['maxPods leaves AL2 kube-reserved memory at the ENI count', { maxPods: 20 }, 'AL2', { krMemory: 893 }],
    [
      'maxPods sizes Bottlerocket kube-reserved memory',
      { maxPods: 110 },
      'Bottlerocket',
      { pods: 110, krMemory: 1465 },
    ],
    ['podsPerCore caps pods at podsPerCore × vCPU', { podsPerCore: 4 }, 'AL2023', { pods: 16, krMemory: 893 }],
    ['podsPerCore above the ENI count changes nothing', { podsPerCore: 50 }, 'AL2023', { pods: 58 }],
    ['podsPerCore caps maxPods too', { maxPods: 100, podsPerCore: 10 }, 'AL2023', { pods: 40 }],
    ['Bottlerocket ignores podsPerCore', { podsPerCore: 4 }, 'Bottlerocket', { pods: 58, krMemory: 893 }],
    ['Windows applies podsPerCore', { podsPerCore: 4 }, 'Windows2022', { pods: 16, krMemory: 431 }],
    ['kubeReserved cpu replaces the band value', { kubeReserved: { cpu: '200m' } }, 'AL2023', { krCPU: 200 }],
    [
      'kubeReserved memory replaces 11 × pods + 255',
      { kubeReserved: { memory: '1Gi' } },
      'AL2023',
      { krMemory: 1024, krCPU: 80, allocMemory: 15155 - 1024 - 100 },
    ],
    [
      'systemReserved is subtracted per key',
      { systemReserved: { cpu: '100m', memory: '1Gi' } },
      'AL2023',
      { allocCPU: 3820, allocMemory: 14162 - 1024 },
    ],
    [
      'evictionHard memory.available as a quantity',
      { evictionHard: { 'memory.available': '500Mi' } },
      'AL2023',
      { allocMemory: 15155 - 893 - 500 },
    ],
    [
      'evictionHard memory.available 100% disables the threshold',
      { evictionHard: { 'memory.available': '100%' } },
      'AL2023',
      { allocMemory: 15155 - 893 },
    ],
    [
      'evictionSoft does not change allocatable',
      { evictionSoft: { 'memory.available': '1Gi' } },
      'AL2023',
      { allocMemory: 14162 },
    ],
  ])('%s', (_, kubelet, family, expected) => {
    const t = resolveOne(M5_XLARGE, withKubelet(kubelet, family));
    const actual: Record<string, number | undefined> = {
      pods: t.capacity.pods,
      krMemory: (t.overhead.kubeReserved.memory ?? 0) / MI,
      krCPU: t.overhead.kubeReserved.cpu,
      allocCPU: t.allocatable.cpu,
      allocMemory: (t.allocatable.memory ?? 0) / MI,
    };
    for (const [key, value] of Object.entries(expected)) expect(actual[key], key).toBe(value);
  });

  it('evictionHard memory.available as a percentage of memory capacity', () => {
    const t = resolveOne(M5_XLARGE, withKubelet({ evictionHard: { 'memory.available': '10%' } }));
    expect(t.overhead.evictionThreshold.memory).toBe(Math.ceil((15155 * MI) / 10));
  });

  it.each([
    ['a quantity', '5Gi', 5 * GI],
    ['a percentage', '15%', Math.ceil((20 * GI * 15) / 100)],
    ['100% (disabled)', '100%', 0],
  ])('evictionHard nodefs.available as %s', (_, value, threshold) => {
    const t = resolveOne(M5_XLARGE, withKubelet({ evictionHard: { 'nodefs.available': value } }));
    expect(t.overhead.evictionThreshold['ephemeral-storage']).toBe(threshold);
    expect(t.allocatable['ephemeral-storage']).toBe(20 * GI - GI - threshold);
  });

  it('names the NodeClass and field of a value that is not a quantity', () => {
    expect(() => resolveOne(M5_XLARGE, withKubelet({ kubeReserved: { memory: 'lots' } }))).toThrow(
      /EC2NodeClass\/default: spec\.kubelet\.kubeReserved\.memory: "lots" is not a resource quantity/,
    );
    expect(() => resolveOne(M5_XLARGE, withKubelet({ evictionHard: { 'nodefs.available': 'ten%' } }))).toThrow(
      /spec\.kubelet\.evictionHard\.nodefs\.available: "ten%" is neither a quantity/,
    );
  });
});

describe('AMI families', () => {
  it.each<[AMIFamily, number, number]>([
    ['AL2', 58, 893],
    ['AL2023', 58, 893],
    ['Bottlerocket', 58, 893],
    ['Custom', 58, 893],
    ['Windows2019', 110, 1465],
    ['Windows2022', 110, 1465],
    ['Windows2025', 110, 1465],
  ])('%s: %i pods, %i MiB kube-reserved memory', (family, pods, krMemory) => {
    const t = resolveOne(M5_XLARGE, nodeClass(family));
    expect(t.capacity.pods).toBe(pods);
    expect(t.overhead.kubeReserved.memory).toBe(krMemory * MI);
  });

  it('gives Windows nodes private IPv4 addresses as a resource', () => {
    expect(resolveOne(M5_XLARGE, nodeClass('Windows2022')).capacity['vpc.amazonaws.com/PrivateIPv4Address']).toBe(14);
    expect(resolveOne(M5_XLARGE).capacity['vpc.amazonaws.com/PrivateIPv4Address']).toBeUndefined();
  });

  it('lets options.amiFamily override the NodeClass', () => {
    const [t] = resolveInstanceTypes({ version: 1, region: 'r', instanceTypes: [M5_XLARGE] }, nodeClass('AL2023'), {
      amiFamily: 'Windows2019',
    });
    expect(t?.capacity.pods).toBe(110);
    expect(t?.labels['kubernetes.io/os']).toBe('windows');
  });
});

describe('ephemeral-storage precedence', () => {
  const nvme = catalogType({ name: 'm5d.xlarge', localNvmeGB: 150 });
  const hdd = catalogType({ name: 'd2.xlarge', instanceStorageGB: 6144 });
  it.each<[string, CatalogInstanceType, EC2NodeClass, number]>([
    ['AL2023 default root volume', M5_XLARGE, nodeClass('AL2023'), 20 * GI],
    ['Bottlerocket default data volume', M5_XLARGE, nodeClass('Bottlerocket'), 20 * GI],
    ['Windows default root volume', M5_XLARGE, nodeClass('Windows2022'), 50 * GI],
    ['Custom without mappings', M5_XLARGE, nodeClass('Custom'), 20 * GI],
    ['RAID0 uses the NVMe instance store', nvme, nodeClass('AL2023', { instanceStorePolicy: 'RAID0' }), 150e9],
    ['RAID0 uses any instance store', hdd, nodeClass('AL2023', { instanceStorePolicy: 'RAID0' }), 6144e9],
    [
      'RAID0 without instance store falls through to the root volume',
      M5_XLARGE,
      nodeClass('AL2023', { instanceStorePolicy: 'RAID0' }),
      20 * GI,
    ],
    [
      'the rootVolume mapping beats the family device',
      M5_XLARGE,
      nodeClass('AL2023', {
        blockDeviceMappings: [
          { deviceName: '/dev/xvda', ebs: { volumeSize: '50Gi' } },
          { deviceName: '/dev/xvdc', rootVolume: true, ebs: { volumeSize: '200Gi' } },
        ],
      }),
      200 * GI,
    ],
    [
      'AL2023 mapping on /dev/xvda',
      M5_XLARGE,
      nodeClass('AL2023', { blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '100Gi' } }] }),
      100 * GI,
    ],
    [
      'Bottlerocket mapping on /dev/xvdb (not the OS volume)',
      M5_XLARGE,
      nodeClass('Bottlerocket', {
        blockDeviceMappings: [
          { deviceName: '/dev/xvda', ebs: { volumeSize: '4Gi' } },
          { deviceName: '/dev/xvdb', ebs: { volumeSize: '80Gi' } },
        ],
      }),
      80 * GI,
    ],
    [
      'a mapping on another device leaves the family default',
      M5_XLARGE,
      nodeClass('AL2023', { blockDeviceMappings: [{ deviceName: '/dev/xvdz', ebs: { volumeSize: '100Gi' } }] }),
      20 * GI,
    ],
    [
      'Custom uses the last mapping',
      M5_XLARGE,
      nodeClass('Custom', {
        blockDeviceMappings: [
          { deviceName: '/dev/xvda', ebs: { volumeSize: '10Gi' } },
          { deviceName: '/dev/xvdb', ebs: { volumeSize: '70G' } },
        ],
      }),
      70e9,
    ],
  ])('%s', (_, info, nc, bytes) => {
    const t = resolveOne(info, nc);
    expect(t.capacity['ephemeral-storage']).toBe(bytes);
    expect(t.overhead.evictionThreshold['ephemeral-storage']).toBe(Math.ceil(bytes / 10));
  });
});

describe('extended resources', () => {
  it.each<[string, CatalogInstanceType, Record<string, number>]>([
    [
      'NVIDIA GPUs',
      catalogType({ name: 'p4d.24xlarge', gpus: 8, gpuManufacturer: 'NVIDIA', efaMaxInterfaces: 4 }),
      { 'nvidia.com/gpu': 8, 'vpc.amazonaws.com/efa': 4 },
    ],
    ['a GPU count alone counts as NVIDIA', catalogType({ name: 'x1.gpu', gpus: 2 }), { 'nvidia.com/gpu': 2 }],
    ['AMD GPUs', catalogType({ name: 'g4ad.xlarge', gpus: 1, gpuManufacturer: 'AMD' }), { 'amd.com/gpu': 1 }],
    [
      'Habana Gaudi',
      catalogType({ name: 'dl1.24xlarge', gpus: 8, gpuManufacturer: 'Habana' }),
      { 'habana.ai/gaudi': 8 },
    ],
    [
      'Neuron devices and cores',
      catalogType({
        name: 'trn1.32xlarge',
        acceleratorName: 'Trainium',
        acceleratorManufacturer: 'AWS',
        acceleratorCount: 16,
        neuronCoresPerDevice: 2,
      }),
      { 'aws.amazon.com/neuron': 16, 'aws.amazon.com/neuroncore': 32 },
    ],
    ['no accelerators', M5_XLARGE, {}],
  ])('%s', (_, info, expected) => {
    const capacity = resolveOne(info).capacity;
    const extended = Object.fromEntries(
      Object.entries(capacity).filter(([k]) => !['cpu', 'memory', 'ephemeral-storage', 'pods'].includes(k)),
    );
    expect(extended).toEqual(expected);
    for (const [name, amount] of Object.entries(expected)) expect(resolveOne(info).allocatable[name]).toBe(amount);
  });
});

describe('catalog overrides', () => {
  it('maxPods replaces the ENI formula, and kubelet maxPods still wins', () => {
    const dense = catalogType({ name: 'x.dense', maxPods: 250 });
    expect(resolveOne(dense).capacity.pods).toBe(250);
    expect(resolveOne(dense).overhead.kubeReserved.memory).toBe(kubeReservedMemory(250));
    expect(resolveOne(dense, withKubelet({ maxPods: 30 })).capacity.pods).toBe(30);
  });

  it('capacity and overhead are taken as they are', () => {
    const exact = catalogType({
      name: 'x.exact',
      capacity: { cpu: '2', memory: '4Gi', pods: '20' },
      overhead: { kubeReserved: { cpu: '100m', memory: '10Mi' } },
    });
    const t = resolveOne(exact, withKubelet({ kubeReserved: { cpu: '1' }, systemReserved: { memory: '1Gi' } }));
    expect(t.capacity).toEqual({ cpu: 2000, memory: 4 * GI, pods: 20 });
    expect(t.allocatable).toEqual({ cpu: 1900, memory: 4 * GI - 10 * MI, pods: 20 });
  });
});

describe('resourceAmount', () => {
  it.each([
    ['cpu', '100m', 100],
    ['cpu', '1.5', 1500],
    ['cpu', '0.1', 100],
    ['cpu', '1m', 1],
    ['memory', '1Gi', GI],
    ['memory', '1.5Gi', 1.5 * GI],
    ['memory', '100M', 100e6],
    ['memory', '1.1Gi', Math.ceil(1.1 * GI)],
    ['pods', '110', 110],
  ])('%s %s → %i', (resource, quantity, amount) => {
    expect(resourceAmount(resource, quantity)).toBe(amount);
  });
});
