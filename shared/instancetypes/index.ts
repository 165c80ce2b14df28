// The instance-type catalog: the built-in snapshot, `--catalog FILE`, and instance types resolved
// against an EC2NodeClass (labels, capacity, overhead, allocatable, offerings).

export { amiFamilyFromAlias, resolveAMIFamily } from '../apis/v1/amifamily';
export {
  ARM64_CMA_RESERVED_MIB,
  type CapacitySettings,
  computeAllocatable,
  computeCapacity,
  computeOverhead,
  DEFAULT_MAX_PODS,
  DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
  EVICTION_MEMORY_AVAILABLE,
  EVICTION_NODEFS_AVAILABLE,
  efaOnlyInterfacesOnCard0,
  eniLimitedPods,
  ephemeralStorageCapacity,
  evictionSignal,
  kubeReservedCPU,
  kubeReservedMemory,
  kubeReservedMemoryPods,
  memoryCapacity,
  podsCapacity,
  RESOURCE_AMD_GPU,
  RESOURCE_AWS_NEURON,
  RESOURCE_AWS_NEURON_CORE,
  RESOURCE_CPU,
  RESOURCE_EFA,
  RESOURCE_EPHEMERAL_STORAGE,
  RESOURCE_HABANA_GAUDI,
  RESOURCE_MEMORY,
  RESOURCE_NVIDIA_GPU,
  RESOURCE_PODS,
  RESOURCE_PRIVATE_IPV4_ADDRESS,
  resourceAmount,
  resourceAmounts,
} from './capacity';
export {
  BUILT_IN_CATALOG_SOURCE,
  CATALOG_VERSION,
  CatalogError,
  loadBuiltInCatalog,
  parseCatalog,
  readCatalogFile,
} from './catalog';
export {
  buildCatalogSnapshot,
  catalogInstanceTypeFromEC2,
  formatCatalog,
  kubeArch,
  networkBandwidthMbps,
  type SnapshotInput,
  SPOT_PRICED_AS_ON_DEMAND_NOTE,
} from './ec2';
export { type AMIFamilyFeatures, amiFamilyFeatures } from './family';
export * from './labels';
export { RESERVED_PRICE_DIVISOR, type ReservedCapacity, reservedOffering, withReservedOfferings } from './reserved';
export { capacitySettings, type ResolveOptions, resolveInstanceTypes } from './resolve';
export { SYNTHETIC_REGION, SYNTHETIC_ZONES, syntheticCatalog, syntheticPrice } from './synthetic';
export type * from './types';
