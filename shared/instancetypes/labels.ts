// The single-valued well-known labels of an instance type (reference §5, AWS computeRequirements).
// Zone, zone-id and capacity-type vary per offering and live there instead.

import {
  LABEL_ARCH,
  LABEL_CAPACITY_TYPE,
  LABEL_INSTANCE_TYPE,
  LABEL_OS,
  LABEL_REGION,
  LABEL_WINDOWS_BUILD,
  LABEL_ZONE,
  LABEL_ZONE_ID,
} from '../apis/v1/labels';
import type { AMIFamily } from '../apis/v1/types';
import { amiFamilyFeatures } from './family';
import type { CatalogInstanceType } from './types';

export {
  LABEL_ARCH,
  LABEL_CAPACITY_TYPE,
  LABEL_INSTANCE_TYPE,
  LABEL_OS,
  LABEL_REGION,
  LABEL_WINDOWS_BUILD,
  LABEL_ZONE,
  LABEL_ZONE_ID,
};

const AWS = 'karpenter.k8s.aws';
export const LABEL_INSTANCE_CATEGORY = `${AWS}/instance-category`;
export const LABEL_INSTANCE_FAMILY = `${AWS}/instance-family`;
export const LABEL_INSTANCE_GENERATION = `${AWS}/instance-generation`;
export const LABEL_INSTANCE_SIZE = `${AWS}/instance-size`;
export const LABEL_INSTANCE_CPU = `${AWS}/instance-cpu`;
export const LABEL_INSTANCE_CPU_MANUFACTURER = `${AWS}/instance-cpu-manufacturer`;
export const LABEL_INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ = `${AWS}/instance-cpu-sustained-clock-speed-mhz`;
export const LABEL_INSTANCE_MEMORY = `${AWS}/instance-memory`;
export const LABEL_INSTANCE_NETWORK_BANDWIDTH = `${AWS}/instance-network-bandwidth`;
export const LABEL_INSTANCE_EBS_BANDWIDTH = `${AWS}/instance-ebs-bandwidth`;
export const LABEL_INSTANCE_LOCAL_NVME = `${AWS}/instance-local-nvme`;
export const LABEL_INSTANCE_HYPERVISOR = `${AWS}/instance-hypervisor`;
export const LABEL_INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED = `${AWS}/instance-encryption-in-transit-supported`;
export const LABEL_INSTANCE_CAPABILITY_FLEX = `${AWS}/instance-capability-flex`;
export const LABEL_INSTANCE_GPU_NAME = `${AWS}/instance-gpu-name`;
export const LABEL_INSTANCE_GPU_MANUFACTURER = `${AWS}/instance-gpu-manufacturer`;
export const LABEL_INSTANCE_GPU_COUNT = `${AWS}/instance-gpu-count`;
export const LABEL_INSTANCE_GPU_MEMORY = `${AWS}/instance-gpu-memory`;
export const LABEL_INSTANCE_ACCELERATOR_NAME = `${AWS}/instance-accelerator-name`;
export const LABEL_INSTANCE_ACCELERATOR_MANUFACTURER = `${AWS}/instance-accelerator-manufacturer`;
export const LABEL_INSTANCE_ACCELERATOR_COUNT = `${AWS}/instance-accelerator-count`;

/**
 * Every label key Karpenter knows for AWS instance types, including the per-offering ones. Keys a type
 * does not carry (a CPU type has no gpu-count) behave as DoesNotExist for it.
 */
export const WELL_KNOWN_LABELS: readonly string[] = [
  LABEL_INSTANCE_TYPE,
  LABEL_ARCH,
  LABEL_OS,
  LABEL_ZONE,
  LABEL_REGION,
  LABEL_ZONE_ID,
  LABEL_WINDOWS_BUILD,
  LABEL_CAPACITY_TYPE,
  LABEL_INSTANCE_CATEGORY,
  LABEL_INSTANCE_FAMILY,
  LABEL_INSTANCE_GENERATION,
  LABEL_INSTANCE_SIZE,
  LABEL_INSTANCE_CPU,
  LABEL_INSTANCE_CPU_MANUFACTURER,
  LABEL_INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ,
  LABEL_INSTANCE_MEMORY,
  LABEL_INSTANCE_NETWORK_BANDWIDTH,
  LABEL_INSTANCE_EBS_BANDWIDTH,
  LABEL_INSTANCE_LOCAL_NVME,
  LABEL_INSTANCE_HYPERVISOR,
  LABEL_INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED,
  LABEL_INSTANCE_CAPABILITY_FLEX,
  LABEL_INSTANCE_GPU_NAME,
  LABEL_INSTANCE_GPU_MANUFACTURER,
  LABEL_INSTANCE_GPU_COUNT,
  LABEL_INSTANCE_GPU_MEMORY,
  LABEL_INSTANCE_ACCELERATOR_NAME,
  LABEL_INSTANCE_ACCELERATOR_MANUFACTURER,
  LABEL_INSTANCE_ACCELERATOR_COUNT,
];

// Karpenter's instanceTypeScheme: m5.large → m, 5; u-6tb1.metal → u, 1; c7i-flex.large → c, 7.
const INSTANCE_TYPE_SCHEME = /(^[a-z]+)(-[0-9]+tb)?([0-9]+).*\./;

function lowerKebabCase(text: string): string {
  return text.replaceAll(' ', '-').toLowerCase();
}

/**
 * The single-valued labels of a type under an AMI family. Windows families label amd64 types
 * `windows` (arm64 types have no Windows AMI and are dropped by resolveInstanceTypes).
 */
export function instanceTypeLabels(
  info: CatalogInstanceType,
  region: string,
  amiFamily: AMIFamily,
): Record<string, string> {
  const features = amiFamilyFeatures(amiFamily);
  const labels: Record<string, string> = {
    [LABEL_INSTANCE_TYPE]: info.name,
    [LABEL_ARCH]: info.arch,
    [LABEL_OS]: features.os,
    [LABEL_REGION]: region,
    [LABEL_INSTANCE_CPU]: String(info.vcpu),
    [LABEL_INSTANCE_MEMORY]: String(info.memoryMiB),
    [LABEL_INSTANCE_HYPERVISOR]: info.hypervisor ?? '',
    [LABEL_INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED]: String(info.encryptionInTransitSupported ?? false),
  };
  if (features.windowsBuild) labels[LABEL_WINDOWS_BUILD] = features.windowsBuild;
  const scheme = INSTANCE_TYPE_SCHEME.exec(info.name);
  if (scheme?.[1] && scheme[3]) {
    labels[LABEL_INSTANCE_CATEGORY] = scheme[1];
    labels[LABEL_INSTANCE_GENERATION] = scheme[3];
  }
  const parts = info.name.split('.');
  if (parts.length === 2 && parts[0] && parts[1]) {
    labels[LABEL_INSTANCE_FAMILY] = parts[0];
    labels[LABEL_INSTANCE_SIZE] = parts[1];
  }
  labels[LABEL_INSTANCE_CAPABILITY_FLEX] = String((parts[0] ?? '').includes('-flex'));
  if (info.localNvmeGB !== undefined) labels[LABEL_INSTANCE_LOCAL_NVME] = String(info.localNvmeGB);
  if (info.networkBandwidthMbps !== undefined)
    labels[LABEL_INSTANCE_NETWORK_BANDWIDTH] = String(info.networkBandwidthMbps);
  if (info.ebsBandwidthMbps !== undefined) labels[LABEL_INSTANCE_EBS_BANDWIDTH] = String(info.ebsBandwidthMbps);
  if (info.cpuManufacturer !== undefined)
    labels[LABEL_INSTANCE_CPU_MANUFACTURER] = lowerKebabCase(info.cpuManufacturer);
  if (info.cpuSustainedClockSpeedMhz !== undefined)
    labels[LABEL_INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ] = String(info.cpuSustainedClockSpeedMhz);
  if (info.gpus > 0) {
    labels[LABEL_INSTANCE_GPU_COUNT] = String(info.gpus);
    if (info.gpuName !== undefined) labels[LABEL_INSTANCE_GPU_NAME] = lowerKebabCase(info.gpuName);
    if (info.gpuManufacturer !== undefined)
      labels[LABEL_INSTANCE_GPU_MANUFACTURER] = lowerKebabCase(info.gpuManufacturer);
    if (info.gpuMemoryMiB !== undefined) labels[LABEL_INSTANCE_GPU_MEMORY] = String(info.gpuMemoryMiB);
  }
  if ((info.acceleratorCount ?? 0) > 0) {
    labels[LABEL_INSTANCE_ACCELERATOR_COUNT] = String(info.acceleratorCount);
    if (info.acceleratorName !== undefined)
      labels[LABEL_INSTANCE_ACCELERATOR_NAME] = lowerKebabCase(info.acceleratorName);
    if (info.acceleratorManufacturer !== undefined)
      labels[LABEL_INSTANCE_ACCELERATOR_MANUFACTURER] = lowerKebabCase(info.acceleratorManufacturer);
  }
  return labels;
}
