// The instance-type model shared by the packer, the catalog and the launch path.
// Resource amounts are integers in base units: cpu in millicores, memory and storage in bytes,
// everything else (pods, nvidia.com/gpu, …) as counts.

export type CapacityType = 'spot' | 'on-demand' | 'reserved';
export type Arch = 'amd64' | 'arm64';

/** Resource name → amount (cpu in millicores, bytes for memory/storage, counts otherwise). */
export type Resources = Record<string, number>;

/** One entry of the catalog JSON (the built-in snapshot and `--catalog FILE` share this format). */
export interface CatalogInstanceType {
  name: string;
  arch: Arch;
  vcpu: number;
  memoryMiB: number;
  maximumNetworkInterfaces: number;
  ipv4PerInterface: number;
  /** Number of GPUs (0 when none). */
  gpus: number;
  gpuName?: string;
  gpuManufacturer?: string;
  gpuMemoryMiB?: number;
  /** Neuron/Inferentia devices. */
  acceleratorName?: string;
  acceleratorManufacturer?: string;
  acceleratorCount?: number;
  neuronCoresPerDevice?: number;
  efaMaxInterfaces?: number;
  /** Total NVMe instance-store size in GB. */
  localNvmeGB?: number;
  hypervisor?: string;
  cpuManufacturer?: string;
  bareMetal?: boolean;
  networkBandwidthMbps?: number;
  encryptionInTransitSupported?: boolean;
  /** Total instance-store size in GB of any disk kind (HDD too); ephemeral storage under RAID0. Defaults to localNvmeGB. */
  instanceStorageGB?: number;
  /** Sustained clock speed in MHz (instance-cpu-sustained-clock-speed-mhz). */
  cpuSustainedClockSpeedMhz?: number;
  /** Maximum EBS bandwidth in Mbps when EBS-optimized by default (instance-ebs-bandwidth). */
  ebsBandwidthMbps?: number;
  /**
   * Pod density of this type in place of the family default (ENI formula or 110). kubelet maxPods and
   * podsPerCore still apply on top. For types whose density is known rather than derived.
   */
  maxPods?: number;
  /**
   * Exact capacity as quantity strings ({cpu: "4", memory: "8Gi", pods: "40"}). When present it replaces
   * the computed capacity entirely (no VM overhead, no ENI formula): for synthetic or measured types.
   */
  capacity?: Record<string, string>;
  /**
   * Exact overhead as quantity strings. When present it replaces the computed overhead entirely (a
   * missing part counts as zero) and kubelet reservations are ignored: Karpenter's fake benchmark types
   * reserve 100m/10Mi and nothing else.
   */
  overhead?: {
    kubeReserved?: Record<string, string>;
    systemReserved?: Record<string, string>;
    evictionThreshold?: Record<string, string>;
  };
  offerings: CatalogOffering[];
}

export interface CatalogOffering {
  zone: string;
  zoneID?: string;
  capacityType: CapacityType;
  /** USD per hour. */
  price: number;
  available: boolean;
}

export interface Catalog {
  /** Format version of this JSON. */
  version: number;
  region: string;
  generatedAt?: string;
  /** Human-readable notes about where prices come from (e.g. spot priced as on-demand offline). */
  notes?: string[];
  instanceTypes: CatalogInstanceType[];
}

export interface Offering {
  zone: string;
  zoneID?: string;
  capacityType: CapacityType;
  price: number;
  available: boolean;
  /** Reserved offerings: the capacity reservation (cr-…) that backs this offering. */
  reservationId?: string;
  /** Reserved offerings: an ordinary ODCR ("default") or a capacity block. */
  reservationType?: 'default' | 'capacity-block';
  /** Reserved offerings: the reservation may be reclaimed (interruptible capacity reservation). */
  reservationInterruptible?: boolean;
  /** Reserved offerings: instances the reservation can still start. */
  reservationCapacity?: number;
}

export interface Overhead {
  kubeReserved: Resources;
  systemReserved: Resources;
  evictionThreshold: Resources;
}

/**
 * An instance type resolved against an EC2NodeClass (AMI family, kubelet settings): Karpenter's
 * cloudprovider.InstanceType. `labels` holds the single-valued well-known labels; zone and
 * capacity-type live in the offerings.
 */
export interface InstanceType {
  name: string;
  labels: Record<string, string>;
  capacity: Resources;
  overhead: Overhead;
  /** capacity − kubeReserved − systemReserved − evictionThreshold. */
  allocatable: Resources;
  offerings: Offering[];
  info: CatalogInstanceType;
}
