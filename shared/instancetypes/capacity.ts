// Capacity, overhead and allocatable of one instance type, as Karpenter computes them
// (reference §5; AWS pkg/providers/instancetype/types.go). Pure functions of the catalog entry and
// the NodeClass settings, exported one by one so the launch path can reuse max-pods.

import { parseQuantity } from '../apis/quantity';
import type { AMIFamily, BlockDeviceMapping, KubeletConfiguration, NetworkInterface } from '../apis/v1/types';
import { amiFamilyFeatures } from './family';
import type { CatalogInstanceType, Overhead, Resources } from './types';

const MI = 2 ** 20;
const GI = 2 ** 30;

/** Karpenter's --vm-memory-overhead-percent default. */
export const DEFAULT_VM_MEMORY_OVERHEAD_PERCENT = 0.075;
/** Memory Graviton reserves for CMA that the kubelet never sees. */
export const ARM64_CMA_RESERVED_MIB = 64;
/** Pods per node when the family does not derive density from ENIs. */
export const DEFAULT_MAX_PODS = 110;

export const RESOURCE_CPU = 'cpu';
export const RESOURCE_MEMORY = 'memory';
export const RESOURCE_EPHEMERAL_STORAGE = 'ephemeral-storage';
export const RESOURCE_PODS = 'pods';
export const RESOURCE_NVIDIA_GPU = 'nvidia.com/gpu';
export const RESOURCE_AMD_GPU = 'amd.com/gpu';
export const RESOURCE_HABANA_GAUDI = 'habana.ai/gaudi';
export const RESOURCE_AWS_NEURON = 'aws.amazon.com/neuron';
export const RESOURCE_AWS_NEURON_CORE = 'aws.amazon.com/neuroncore';
export const RESOURCE_EFA = 'vpc.amazonaws.com/efa';
export const RESOURCE_PRIVATE_IPV4_ADDRESS = 'vpc.amazonaws.com/PrivateIPv4Address';

export const EVICTION_MEMORY_AVAILABLE = 'memory.available';
export const EVICTION_NODEFS_AVAILABLE = 'nodefs.available';

/** The NodeClass settings (and Karpenter flags) that shape capacity and overhead. */
export interface CapacitySettings {
  amiFamily: AMIFamily;
  kubelet?: KubeletConfiguration | undefined;
  blockDeviceMappings?: BlockDeviceMapping[] | undefined;
  instanceStorePolicy?: 'RAID0' | undefined;
  networkInterfaces?: NetworkInterface[] | undefined;
  /** Karpenter's --reserved-enis (default 0). */
  reservedENIs?: number | undefined;
  /** Karpenter's --vm-memory-overhead-percent (default 0.075). */
  vmMemoryOverheadPercent?: number | undefined;
}

/**
 * A quantity as an integer amount in our base units: millicores for cpu, otherwise the value rounded
 * up (Kubernetes rounds fractional amounts up). Throws on text that is not a quantity.
 */
export function resourceAmount(resource: string, quantity: string | number): number {
  const value = parseQuantity(quantity);
  return ceilExact(resource === RESOURCE_CPU ? value * 1000 : value);
}

/** Resource list of quantity strings → Resources in base units. */
export function resourceAmounts(list: Record<string, string> | undefined): Resources {
  const out: Resources = {};
  for (const [name, quantity] of Object.entries(list ?? {})) out[name] = resourceAmount(name, quantity);
  return out;
}

// Float noise (0.1 × 1000 = 100.00000000000001) must not round a whole amount up.
function ceilExact(value: number): number {
  return Math.ceil(Number(value.toPrecision(15)));
}

/** Number of efa-only interfaces the NodeClass puts on network card 0: they take an ENI but no IPs. */
export function efaOnlyInterfacesOnCard0(networkInterfaces: readonly NetworkInterface[] | undefined): number {
  return (networkInterfaces ?? []).filter((n) => n.networkCardIndex === 0 && n.interfaceType === 'efa-only').length;
}

/**
 * VPC CNI pod density: usable ENIs × (IPv4 per ENI − 1) + 2, where usable ENIs are the default card's
 * interfaces minus reserved ones and minus efa-only interfaces on card 0.
 */
export function eniLimitedPods(
  info: Pick<CatalogInstanceType, 'maximumNetworkInterfaces' | 'ipv4PerInterface'>,
  reservedENIs = 0,
  efaOnlyInterfaces = 0,
): number {
  const usable = Math.max(info.maximumNetworkInterfaces - reservedENIs - efaOnlyInterfaces, 0);
  if (usable === 0) return 0;
  return usable * (info.ipv4PerInterface - 1) + 2;
}

/** Pod capacity: kubelet maxPods, else the family default (ENI formula or 110), capped by podsPerCore. */
export function podsCapacity(info: CatalogInstanceType, settings: CapacitySettings): number {
  const features = amiFamilyFeatures(settings.amiFamily);
  const maxPods = settings.kubelet?.maxPods;
  let count: number;
  if (maxPods !== undefined) count = maxPods;
  else if (info.maxPods !== undefined) count = info.maxPods;
  else if (features.eniLimitedPodDensity)
    count = eniLimitedPods(info, settings.reservedENIs ?? 0, efaOnlyInterfacesOnCard0(settings.networkInterfaces));
  else count = DEFAULT_MAX_PODS;
  const podsPerCore = settings.kubelet?.podsPerCore ?? 0;
  if (podsPerCore > 0 && features.podsPerCoreEnabled) count = Math.min(podsPerCore * info.vcpu, count);
  return count;
}

/**
 * Memory capacity in bytes: the Graviton CMA reservation comes off first, then the VM overhead is
 * taken as a whole number of MiB rounded up (16384 MiB → 16384 − 1229 = 15155 MiB).
 */
export function memoryCapacity(
  info: Pick<CatalogInstanceType, 'memoryMiB' | 'arch'>,
  vmMemoryOverheadPercent = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
): number {
  const mib = info.memoryMiB - (info.arch === 'arm64' ? ARM64_CMA_RESERVED_MIB : 0);
  return (mib - Math.ceil(mib * vmMemoryOverheadPercent)) * MI;
}

/**
 * Ephemeral storage in bytes, by precedence: RAID0 instance store, the rootVolume mapping, the
 * family's ephemeral device (Custom: the last mapping), the family default volume.
 */
export function ephemeralStorageCapacity(
  info: Pick<CatalogInstanceType, 'instanceStorageGB' | 'localNvmeGB'>,
  settings: Pick<CapacitySettings, 'amiFamily' | 'blockDeviceMappings' | 'instanceStorePolicy'>,
): number {
  const features = amiFamilyFeatures(settings.amiFamily);
  const instanceStoreGB = info.instanceStorageGB ?? info.localNvmeGB;
  if (settings.instanceStorePolicy === 'RAID0' && instanceStoreGB !== undefined) return instanceStoreGB * 1e9;
  const mappings = settings.blockDeviceMappings ?? [];
  if (mappings.length > 0) {
    const root = mappings.find((m) => m.rootVolume)?.ebs?.volumeSize;
    if (root !== undefined) return resourceAmount(RESOURCE_EPHEMERAL_STORAGE, root);
    if (settings.amiFamily === 'Custom') {
      // A custom AMI's volumes are unknown; Karpenter assumes the last mapping holds the kubelet's data.
      const last = mappings[mappings.length - 1]?.ebs?.volumeSize;
      return last === undefined ? features.defaultEphemeralStorage : resourceAmount(RESOURCE_EPHEMERAL_STORAGE, last);
    }
    const device = mappings.find((m) => m.deviceName === features.ephemeralBlockDevice)?.ebs?.volumeSize;
    if (device !== undefined) return resourceAmount(RESOURCE_EPHEMERAL_STORAGE, device);
  }
  return features.defaultEphemeralStorage;
}

function gpusBy(info: CatalogInstanceType, manufacturer: string): number {
  if (info.gpus <= 0) return 0;
  // A catalog entry with only a GPU count is, in practice, NVIDIA.
  const actual = (info.gpuManufacturer ?? 'nvidia').toLowerCase();
  return actual === manufacturer ? info.gpus : 0;
}

function neuronDevices(info: CatalogInstanceType): number {
  return (info.acceleratorManufacturer ?? '').toLowerCase() === 'aws' ? (info.acceleratorCount ?? 0) : 0;
}

/**
 * Capacity in base units. Extended resources (GPUs, Neuron, EFA) appear only when non-zero. A catalog
 * entry with an explicit `capacity` is taken as it is.
 */
export function computeCapacity(info: CatalogInstanceType, settings: CapacitySettings): Resources {
  if (info.capacity) return resourceAmounts(info.capacity);
  const features = amiFamilyFeatures(settings.amiFamily);
  const capacity: Resources = {
    [RESOURCE_CPU]: info.vcpu * 1000,
    [RESOURCE_MEMORY]: memoryCapacity(info, settings.vmMemoryOverheadPercent),
    [RESOURCE_EPHEMERAL_STORAGE]: ephemeralStorageCapacity(info, settings),
    [RESOURCE_PODS]: podsCapacity(info, settings),
  };
  const extended: Resources = {
    [RESOURCE_NVIDIA_GPU]: gpusBy(info, 'nvidia'),
    [RESOURCE_AMD_GPU]: gpusBy(info, 'amd'),
    [RESOURCE_HABANA_GAUDI]: gpusBy(info, 'habana'),
    [RESOURCE_AWS_NEURON]: neuronDevices(info),
    [RESOURCE_AWS_NEURON_CORE]: neuronDevices(info) * (info.neuronCoresPerDevice ?? 0),
    // An explicit networkInterfaces list decides how many EFA devices the node gets.
    [RESOURCE_EFA]: settings.networkInterfaces
      ? settings.networkInterfaces.filter((n) => n.interfaceType === 'efa-only').length
      : (info.efaMaxInterfaces ?? 0),
    [RESOURCE_PRIVATE_IPV4_ADDRESS]: features.os === 'windows' ? Math.max(info.ipv4PerInterface - 1, 0) : 0,
  };
  for (const [name, amount] of Object.entries(extended)) if (amount > 0) capacity[name] = amount;
  return capacity;
}

const CPU_BANDS: readonly { start: number; end: number; fraction: number }[] = [
  { start: 0, end: 1000, fraction: 0.06 },
  { start: 1000, end: 2000, fraction: 0.01 },
  { start: 2000, end: 4000, fraction: 0.005 },
  { start: 4000, end: 2 ** 31, fraction: 0.0025 },
];

/** kube-reserved CPU in millicores: 6% of the first core, 1% of the second, 0.5% up to 4, 0.25% above. */
export function kubeReservedCPU(cpuMillicores: number): number {
  let reserved = 0;
  for (const band of CPU_BANDS) {
    if (cpuMillicores < band.start) break;
    const span = Math.min(cpuMillicores, band.end) - band.start;
    // Truncated per band, as Karpenter's int64 conversion does.
    reserved += Math.trunc(span * band.fraction);
  }
  return reserved;
}

/** kube-reserved memory in bytes: 11 MiB per pod plus 255 MiB. */
export function kubeReservedMemory(pods: number): number {
  return (11 * pods + 255) * MI;
}

/**
 * The pod count kube-reserved memory is sized for: AL2/AL2023/Custom use the ENI-limited density
 * (with no reserved ENIs) whatever maxPods says; Bottlerocket and Windows use the pod capacity.
 */
export function kubeReservedMemoryPods(info: CatalogInstanceType, settings: CapacitySettings): number {
  if (!amiFamilyFeatures(settings.amiFamily).eniLimitedMemoryOverhead) return podsCapacity(info, settings);
  return info.maxPods ?? eniLimitedPods(info, 0, efaOnlyInterfacesOnCard0(settings.networkInterfaces));
}

/** An evictionHard value: a quantity, or a percentage of capacity where 100% disables the threshold. */
export function evictionSignal(resource: string, capacity: number, value: string): number {
  const text = value.trim();
  if (text.endsWith('%')) {
    const percent = Number(text.slice(0, -1));
    if (!Number.isFinite(percent)) throw new Error(`"${value}" is not a percentage (examples: 10%, 5.5%)`);
    return Math.ceil((capacity / 100) * (percent === 100 ? 0 : percent));
  }
  return resourceAmount(resource, text);
}

/**
 * Overhead: kube-reserved (CPU bands, memory for pods, 1Gi storage, user keys win), system-reserved
 * (user values only) and the eviction threshold (100Mi memory, 10% storage, evictionHard wins;
 * evictionSoft never changes allocatable). A catalog entry with an explicit `overhead` is taken as it is.
 */
export function computeOverhead(
  info: CatalogInstanceType,
  settings: CapacitySettings,
  capacity: Resources = computeCapacity(info, settings),
): Overhead {
  if (info.overhead) {
    return {
      kubeReserved: resourceAmounts(info.overhead.kubeReserved),
      systemReserved: resourceAmounts(info.overhead.systemReserved),
      evictionThreshold: resourceAmounts(info.overhead.evictionThreshold),
    };
  }
  const kubelet = settings.kubelet;
  const kubeReserved: Resources = {
    [RESOURCE_CPU]: kubeReservedCPU(info.vcpu * 1000),
    [RESOURCE_MEMORY]: kubeReservedMemory(kubeReservedMemoryPods(info, settings)),
    [RESOURCE_EPHEMERAL_STORAGE]: GI,
    ...resourceAmounts(kubelet?.kubeReserved),
  };
  const memory = capacity[RESOURCE_MEMORY] ?? 0;
  const storage = capacity[RESOURCE_EPHEMERAL_STORAGE] ?? 0;
  const evictionThreshold: Resources = {
    [RESOURCE_MEMORY]: 100 * MI,
    [RESOURCE_EPHEMERAL_STORAGE]: Math.ceil((storage / 100) * 10),
  };
  const hard = kubelet?.evictionHard ?? {};
  const memoryAvailable = hard[EVICTION_MEMORY_AVAILABLE];
  if (memoryAvailable !== undefined)
    evictionThreshold[RESOURCE_MEMORY] = evictionSignal(RESOURCE_MEMORY, memory, memoryAvailable);
  const nodefsAvailable = hard[EVICTION_NODEFS_AVAILABLE];
  if (nodefsAvailable !== undefined)
    evictionThreshold[RESOURCE_EPHEMERAL_STORAGE] = evictionSignal(
      RESOURCE_EPHEMERAL_STORAGE,
      storage,
      nodefsAvailable,
    );
  return { kubeReserved, systemReserved: resourceAmounts(kubelet?.systemReserved), evictionThreshold };
}

/**
 * capacity − kubeReserved − systemReserved − evictionThreshold, for the capacity's resources only.
 * Not clamped at zero, as upstream: a negative amount fits nothing.
 */
export function computeAllocatable(capacity: Resources, overhead: Overhead): Resources {
  const allocatable: Resources = {};
  for (const [name, amount] of Object.entries(capacity)) {
    allocatable[name] =
      amount -
      (overhead.kubeReserved[name] ?? 0) -
      (overhead.systemReserved[name] ?? 0) -
      (overhead.evictionThreshold[name] ?? 0);
  }
  return allocatable;
}
