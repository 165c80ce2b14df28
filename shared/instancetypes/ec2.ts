// EC2 DescribeInstanceTypes / DescribeInstanceTypeOfferings output → catalog entries. Pure, so the
// snapshot generator and a live provider share one conversion.

import type { InstanceTypeInfo, InstanceTypeOffering } from '@aws-sdk/client-ec2';
import { CATALOG_VERSION } from './catalog';
import type { Arch, Catalog, CatalogInstanceType, CatalogOffering } from './types';

/** Said in every snapshot built without spot price history. */
export const SPOT_PRICED_AS_ON_DEMAND_NOTE =
  'spot prices unknown offline: priced as on-demand, as Karpenter does at start';

const KUBE_ARCH: Record<string, Arch> = { x86_64: 'amd64', arm64: 'arm64' };

/** The Kubernetes architecture of a type: the first one EC2 lists that Kubernetes knows. */
export function kubeArch(info: InstanceTypeInfo): Arch | undefined {
  for (const arch of info.ProcessorInfo?.SupportedArchitectures ?? []) {
    const kube = KUBE_ARCH[arch];
    if (kube) return kube;
  }
  return undefined;
}

/**
 * Baseline network bandwidth in Mbps, standing in for Karpenter's generated table (built from the EC2
 * documentation's baseline column): a fixed "N Gigabit" or "Nx M Gigabit" rating when EC2 gives one,
 * else the network cards' baseline ("Up to 10 Gigabit" types burst above it).
 */
export function networkBandwidthMbps(info: InstanceTypeInfo): number | undefined {
  const network = info.NetworkInfo;
  const fixed = /^(?:(\d+)x\s*)?(\d+(?:\.\d+)?)\s*Gigabit$/.exec(network?.NetworkPerformance?.trim() ?? '');
  if (fixed?.[2]) return Math.round(Number(fixed[1] ?? 1) * Number(fixed[2]) * 1000);
  const cards = network?.NetworkCards ?? [];
  const baseline = cards.reduce((sum, card) => sum + (card.BaselineBandwidthInGbps ?? 0), 0);
  return baseline > 0 ? Math.round(baseline * 1000) : undefined;
}

function defaultCardInterfaces(info: InstanceTypeInfo): number {
  const network = info.NetworkInfo;
  // The VPC CNI only uses the default network card.
  const card = network?.NetworkCards?.find((c) => c.NetworkCardIndex === (network.DefaultNetworkCardIndex ?? 0));
  return card?.MaximumNetworkInterfaces ?? network?.MaximumNetworkInterfaces ?? 0;
}

/**
 * One catalog entry, without offerings. Fields that EC2 leaves out (or that are zero/false) are left
 * out, which the catalog format reads as zero/false, keeping the snapshot small.
 */
export function catalogInstanceTypeFromEC2(info: InstanceTypeInfo): Omit<CatalogInstanceType, 'offerings'> | undefined {
  const name = info.InstanceType;
  const arch = kubeArch(info);
  const vcpu = info.VCpuInfo?.DefaultVCpus;
  const memoryMiB = info.MemoryInfo?.SizeInMiB;
  if (!name || !arch || !vcpu || !memoryMiB) return undefined;
  const gpus = info.GpuInfo?.Gpus ?? [];
  const entry: Omit<CatalogInstanceType, 'offerings'> = {
    name,
    arch,
    vcpu,
    memoryMiB,
    maximumNetworkInterfaces: defaultCardInterfaces(info),
    ipv4PerInterface: info.NetworkInfo?.Ipv4AddressesPerInterface ?? 0,
    gpus: gpus.reduce((sum, gpu) => sum + (gpu.Count ?? 0), 0),
  };
  // Karpenter labels GPU name/manufacturer/memory only when the type has exactly one GPU kind.
  const gpu = gpus.length === 1 ? gpus[0] : undefined;
  if (gpu?.Name) entry.gpuName = gpu.Name;
  if (gpu?.Manufacturer) entry.gpuManufacturer = gpu.Manufacturer;
  if (gpu?.MemoryInfo?.SizeInMiB) entry.gpuMemoryMiB = gpu.MemoryInfo.SizeInMiB;
  const neuron = info.NeuronInfo?.NeuronDevices ?? [];
  const inference = info.InferenceAcceleratorInfo?.Accelerators ?? [];
  if (neuron.length === 1 && neuron[0]) {
    const device = neuron[0];
    if (device.Name) entry.acceleratorName = device.Name;
    entry.acceleratorManufacturer = 'AWS';
    entry.acceleratorCount = device.Count ?? 0;
    if (device.CoreInfo?.Count) entry.neuronCoresPerDevice = device.CoreInfo.Count;
  } else if (neuron.length === 0 && inference.length === 1 && inference[0]) {
    const accelerator = inference[0];
    if (accelerator.Name) entry.acceleratorName = accelerator.Name;
    if (accelerator.Manufacturer) entry.acceleratorManufacturer = accelerator.Manufacturer;
    entry.acceleratorCount = accelerator.Count ?? 0;
  }
  const efa = info.NetworkInfo?.EfaInfo?.MaximumEfaInterfaces;
  if (efa) entry.efaMaxInterfaces = efa;
  const storage = info.InstanceStorageInfo;
  if (storage?.TotalSizeInGB) {
    if (storage.NvmeSupport !== 'unsupported') entry.localNvmeGB = storage.TotalSizeInGB;
    else entry.instanceStorageGB = storage.TotalSizeInGB;
  }
  if (info.Hypervisor) entry.hypervisor = info.Hypervisor;
  if (info.ProcessorInfo?.Manufacturer) entry.cpuManufacturer = info.ProcessorInfo.Manufacturer;
  const ghz = info.ProcessorInfo?.SustainedClockSpeedInGhz;
  if (ghz) entry.cpuSustainedClockSpeedMhz = Math.round(ghz * 1000);
  if (info.BareMetal) entry.bareMetal = true;
  const bandwidth = networkBandwidthMbps(info);
  if (bandwidth !== undefined) entry.networkBandwidthMbps = bandwidth;
  const ebs = info.EbsInfo;
  if (ebs?.EbsOptimizedSupport === 'default' && ebs.EbsOptimizedInfo?.MaximumBandwidthInMbps)
    entry.ebsBandwidthMbps = ebs.EbsOptimizedInfo.MaximumBandwidthInMbps;
  if (info.NetworkInfo?.EncryptionInTransitSupported) entry.encryptionInTransitSupported = true;
  return entry;
}

export interface SnapshotInput {
  region: string;
  instanceTypes: readonly InstanceTypeInfo[];
  /** DescribeInstanceTypeOfferings with LocationType availability-zone. */
  offerings: readonly InstanceTypeOffering[];
  /** On-demand USD per hour by instance type. */
  onDemandPrices: Readonly<Record<string, number>>;
  generatedAt: string;
  notes?: readonly string[];
}

/**
 * A catalog of the hvm x86_64/arm64 types that have an on-demand price and a zone. Each zone offering a type gets
 * an on-demand offering, and a spot one when the type supports spot, both at the on-demand price.
 */
export function buildCatalogSnapshot(input: SnapshotInput): Catalog {
  const zonesByType = new Map<string, Set<string>>();
  for (const offering of input.offerings) {
    if (!offering.InstanceType || !offering.Location) continue;
    if (offering.LocationType && offering.LocationType !== 'availability-zone') continue;
    const zones = zonesByType.get(offering.InstanceType) ?? new Set<string>();
    zones.add(offering.Location);
    zonesByType.set(offering.InstanceType, zones);
  }
  const instanceTypes: CatalogInstanceType[] = [];
  for (const info of input.instanceTypes) {
    if (!(info.SupportedVirtualizationTypes ?? ['hvm']).includes('hvm')) continue;
    const price = info.InstanceType ? input.onDemandPrices[info.InstanceType] : undefined;
    if (price === undefined || !Number.isFinite(price)) continue;
    const entry = catalogInstanceTypeFromEC2(info);
    if (!entry) continue;
    const usage = info.SupportedUsageClasses ?? [];
    const offerings: CatalogOffering[] = [];
    for (const zone of [...(zonesByType.get(entry.name) ?? [])].sort()) {
      if (usage.includes('on-demand')) offerings.push({ zone, capacityType: 'on-demand', price, available: true });
      if (usage.includes('spot')) offerings.push({ zone, capacityType: 'spot', price, available: true });
    }
    // A type no zone offers (e.g. capacity-block only) could never launch from this snapshot.
    if (offerings.length > 0) instanceTypes.push({ ...entry, offerings });
  }
  instanceTypes.sort((a, b) => compareNames(a.name, b.name));
  return {
    version: CATALOG_VERSION,
    region: input.region,
    generatedAt: input.generatedAt,
    notes: [...(input.notes ?? []), SPOT_PRICED_AS_ON_DEMAND_NOTE],
    instanceTypes,
  };
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Catalog JSON with one instance type per line: small, and a regenerated snapshot diffs per type.
 */
export function formatCatalog(catalog: Catalog): string {
  const { instanceTypes, ...header } = catalog;
  const head = JSON.stringify(header).slice(0, -1);
  const lines = instanceTypes.map((t) => JSON.stringify(t));
  return `${head},"instanceTypes":[\n${lines.join(',\n')}\n]}\n`;
}
