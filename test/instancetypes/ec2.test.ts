import type { InstanceTypeInfo, InstanceTypeOffering } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { parseCatalog } from '../../shared/instancetypes';
import {
  buildCatalogSnapshot,
  catalogInstanceTypeFromEC2,
  formatCatalog,
  networkBandwidthMbps,
  SPOT_PRICED_AS_ON_DEMAND_NOTE,
} from '../../shared/instancetypes/ec2';

// Shapes as DescribeInstanceTypes returns them (trimmed from moto's us-east-1 data).
const G5_XLARGE: InstanceTypeInfo = {
  InstanceType: 'g5.xlarge',
  BareMetal: false,
  Hypervisor: 'nitro',
  VCpuInfo: { DefaultVCpus: 4 },
  MemoryInfo: { SizeInMiB: 16384 },
  ProcessorInfo: { Manufacturer: 'AMD', SupportedArchitectures: ['x86_64'], SustainedClockSpeedInGhz: 3.3 },
  GpuInfo: { Gpus: [{ Count: 1, Manufacturer: 'NVIDIA', MemoryInfo: { SizeInMiB: 22888 }, Name: 'A10G' }] },
  InstanceStorageInfo: { TotalSizeInGB: 250, NvmeSupport: 'required' },
  EbsInfo: { EbsOptimizedSupport: 'default', EbsOptimizedInfo: { MaximumBandwidthInMbps: 3500 } },
  NetworkInfo: {
    DefaultNetworkCardIndex: 0,
    MaximumNetworkInterfaces: 4,
    Ipv4AddressesPerInterface: 15,
    EncryptionInTransitSupported: true,
    NetworkPerformance: 'Up to 10 Gigabit',
    NetworkCards: [{ NetworkCardIndex: 0, MaximumNetworkInterfaces: 4, BaselineBandwidthInGbps: 2.5 }],
  },
  SupportedUsageClasses: ['on-demand', 'spot'],
  SupportedVirtualizationTypes: ['hvm'],
};

const M6IDN_32XLARGE: InstanceTypeInfo = {
  InstanceType: 'm6idn.32xlarge',
  VCpuInfo: { DefaultVCpus: 128 },
  MemoryInfo: { SizeInMiB: 524288 },
  ProcessorInfo: { Manufacturer: 'Intel', SupportedArchitectures: ['x86_64'] },
  NetworkInfo: {
    DefaultNetworkCardIndex: 0,
    MaximumNetworkInterfaces: 16,
    Ipv4AddressesPerInterface: 50,
    EfaInfo: { MaximumEfaInterfaces: 2 },
    NetworkPerformance: '200 Gigabit',
    NetworkCards: [
      { NetworkCardIndex: 0, MaximumNetworkInterfaces: 8, BaselineBandwidthInGbps: 200 },
      { NetworkCardIndex: 1, MaximumNetworkInterfaces: 8, BaselineBandwidthInGbps: 200 },
    ],
  },
  SupportedUsageClasses: ['on-demand'],
  SupportedVirtualizationTypes: ['hvm'],
};

const INF2_XLARGE: InstanceTypeInfo = {
  InstanceType: 'inf2.xlarge',
  VCpuInfo: { DefaultVCpus: 4 },
  MemoryInfo: { SizeInMiB: 16384 },
  ProcessorInfo: { SupportedArchitectures: ['x86_64'] },
  InferenceAcceleratorInfo: { Accelerators: [{ Count: 1, Manufacturer: 'AWS', Name: 'Inferentia2' }] },
  NeuronInfo: { NeuronDevices: [{ Count: 1, Name: 'Inferentia2', CoreInfo: { Count: 2 } }] },
  NetworkInfo: { MaximumNetworkInterfaces: 4, Ipv4AddressesPerInterface: 15 },
  SupportedUsageClasses: ['on-demand', 'spot'],
};

const D2_XLARGE: InstanceTypeInfo = {
  InstanceType: 'd2.xlarge',
  VCpuInfo: { DefaultVCpus: 4 },
  MemoryInfo: { SizeInMiB: 31232 },
  ProcessorInfo: { SupportedArchitectures: ['x86_64'] },
  InstanceStorageInfo: { TotalSizeInGB: 6144, NvmeSupport: 'unsupported' },
  NetworkInfo: { MaximumNetworkInterfaces: 4, Ipv4AddressesPerInterface: 15 },
};

describe('catalogInstanceTypeFromEC2', () => {
  it('keeps what the labels and formulas need from a GPU type', () => {
    expect(catalogInstanceTypeFromEC2(G5_XLARGE)).toEqual({
      name: 'g5.xlarge',
      arch: 'amd64',
      vcpu: 4,
      memoryMiB: 16384,
      maximumNetworkInterfaces: 4,
      ipv4PerInterface: 15,
      gpus: 1,
      gpuName: 'A10G',
      gpuManufacturer: 'NVIDIA',
      gpuMemoryMiB: 22888,
      localNvmeGB: 250,
      hypervisor: 'nitro',
      cpuManufacturer: 'AMD',
      cpuSustainedClockSpeedMhz: 3300,
      networkBandwidthMbps: 2500,
      ebsBandwidthMbps: 3500,
      encryptionInTransitSupported: true,
    });
  });

  it("counts only the default network card's interfaces", () => {
    expect(catalogInstanceTypeFromEC2(M6IDN_32XLARGE)).toMatchObject({
      maximumNetworkInterfaces: 8,
      efaMaxInterfaces: 2,
    });
  });

  it('describes Neuron devices from NeuronInfo', () => {
    expect(catalogInstanceTypeFromEC2(INF2_XLARGE)).toMatchObject({
      acceleratorName: 'Inferentia2',
      acceleratorManufacturer: 'AWS',
      acceleratorCount: 1,
      neuronCoresPerDevice: 2,
    });
  });

  it('keeps non-NVMe instance store apart from the local-nvme label', () => {
    const entry = catalogInstanceTypeFromEC2(D2_XLARGE);
    expect(entry?.instanceStorageGB).toBe(6144);
    expect(entry?.localNvmeGB).toBeUndefined();
  });

  it.each<[string, InstanceTypeInfo]>([
    ['i386 only', { ...D2_XLARGE, ProcessorInfo: { SupportedArchitectures: ['i386'] } }],
    ['no vCPU count', { ...D2_XLARGE, VCpuInfo: {} }],
    ['no name', { ...D2_XLARGE, InstanceType: undefined }],
  ])('skips a type with %s', (_, info) => {
    expect(catalogInstanceTypeFromEC2(info)).toBeUndefined();
  });

  it.each<[string, string | undefined, number[], number | undefined]>([
    ['a burstable rating uses the card baseline', 'Up to 10 Gigabit', [0.75], 750],
    ['a fixed rating', '25 Gigabit', [25], 25000],
    ['a fixed rating over several cards', '200 Gigabit', [200, 200], 200000],
    ['a multiplied rating', '4x 100 Gigabit', [100, 100, 100, 100], 400000],
    ['a named rating uses the baselines', 'Moderate', [1.25], 1250],
    ['no information', undefined, [], undefined],
  ])('network bandwidth: %s', (_, performance, baselines, mbps) => {
    const info: InstanceTypeInfo = {
      NetworkInfo: {
        ...(performance ? { NetworkPerformance: performance } : {}),
        NetworkCards: baselines.map((b, i) => ({ NetworkCardIndex: i, BaselineBandwidthInGbps: b })),
      },
    };
    expect(networkBandwidthMbps(info)).toBe(mbps);
  });
});

describe('buildCatalogSnapshot', () => {
  const offerings: InstanceTypeOffering[] = [
    { InstanceType: 'g5.xlarge', LocationType: 'availability-zone', Location: 'us-east-1b' },
    { InstanceType: 'g5.xlarge', LocationType: 'availability-zone', Location: 'us-east-1a' },
    { InstanceType: 'm6idn.32xlarge', LocationType: 'availability-zone', Location: 'us-east-1a' },
    { InstanceType: 'inf2.xlarge', LocationType: 'availability-zone', Location: 'us-east-1a' },
  ];
  const catalog = buildCatalogSnapshot({
    region: 'us-east-1',
    instanceTypes: [
      M6IDN_32XLARGE,
      G5_XLARGE,
      INF2_XLARGE,
      D2_XLARGE,
      { ...D2_XLARGE, InstanceType: 'm1.large', SupportedVirtualizationTypes: ['paravirtual'] },
    ],
    offerings,
    onDemandPrices: { 'g5.xlarge': 1.006, 'm6idn.32xlarge': 12.7, 'd2.xlarge': 0.69, 'm1.large': 0.1 },
    generatedAt: '2026-12-02T00:00:00Z',
    notes: ['test'],
  });

  it('keeps priced hvm types that some zone offers, sorted by name', () => {
    // inf2.xlarge has no price, d2.xlarge no zone, m1.large is paravirtual here.
    expect(catalog.instanceTypes.map((t) => t.name)).toEqual(['g5.xlarge', 'm6idn.32xlarge']);
  });

  it('offers on-demand everywhere and spot where supported, spot at the on-demand price', () => {
    expect(catalog.instanceTypes[0]?.offerings).toEqual([
      { zone: 'us-east-1a', capacityType: 'on-demand', price: 1.006, available: true },
      { zone: 'us-east-1a', capacityType: 'spot', price: 1.006, available: true },
      { zone: 'us-east-1b', capacityType: 'on-demand', price: 1.006, available: true },
      { zone: 'us-east-1b', capacityType: 'spot', price: 1.006, available: true },
    ]);
    expect(catalog.instanceTypes[1]?.offerings.map((o) => o.capacityType)).toEqual(['on-demand']);
  });

  it('says that spot is priced as on-demand', () => {
    expect(catalog.notes).toEqual(['test', SPOT_PRICED_AS_ON_DEMAND_NOTE]);
    expect(catalog).toMatchObject({ version: 1, region: 'us-east-1', generatedAt: '2026-12-02T00:00:00Z' });
  });

  it('formats one type per line as JSON the catalog parser accepts', () => {
    const text = formatCatalog(catalog);
    expect(text.split('\n').filter((l) => l.startsWith('{"name":'))).toHaveLength(2);
    expect(parseCatalog(JSON.parse(text), 'snapshot')).toEqual(catalog);
  });
});
