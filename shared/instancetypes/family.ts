// The parts of an AMI family's behaviour that change an instance type's capacity and overhead
// (reference §2, "Default block devices and family behaviour").

import type { AMIFamily } from '../apis/v1/types';

export interface AMIFamilyFeatures {
  /** Pods default to the ENI formula; otherwise 110. */
  eniLimitedPodDensity: boolean;
  /** kubeReserved memory uses the ENI-limited pod count whatever maxPods says. */
  eniLimitedMemoryOverhead: boolean;
  podsPerCoreEnabled: boolean;
  /** Device the kubelet's ephemeral storage lives on; undefined for Custom (unknown). */
  ephemeralBlockDevice: string | undefined;
  /** Size of the family's default volume on that device, in bytes. */
  defaultEphemeralStorage: number;
  os: 'linux' | 'windows';
  windowsBuild?: string;
}

const GI = 2 ** 30;

const LINUX_EKS: AMIFamilyFeatures = {
  eniLimitedPodDensity: true,
  eniLimitedMemoryOverhead: true,
  podsPerCoreEnabled: true,
  ephemeralBlockDevice: '/dev/xvda',
  defaultEphemeralStorage: 20 * GI,
  os: 'linux',
};

function windows(build: string): AMIFamilyFeatures {
  return {
    eniLimitedPodDensity: false,
    eniLimitedMemoryOverhead: false,
    podsPerCoreEnabled: true,
    ephemeralBlockDevice: '/dev/sda1',
    defaultEphemeralStorage: 50 * GI,
    os: 'windows',
    windowsBuild: build,
  };
}

const FEATURES: Record<AMIFamily, AMIFamilyFeatures> = {
  AL2: LINUX_EKS,
  AL2023: LINUX_EKS,
  Bottlerocket: {
    eniLimitedPodDensity: true,
    eniLimitedMemoryOverhead: false,
    // Bottlerocket's settings have no pods-per-core, so Karpenter ignores the kubelet field there.
    podsPerCoreEnabled: false,
    ephemeralBlockDevice: '/dev/xvdb',
    defaultEphemeralStorage: 20 * GI,
    os: 'linux',
  },
  Windows2019: windows('10.0.17763'),
  Windows2022: windows('10.0.20348'),
  Windows2025: windows('10.0.26100'),
  Custom: {
    eniLimitedPodDensity: true,
    eniLimitedMemoryOverhead: true,
    podsPerCoreEnabled: true,
    ephemeralBlockDevice: undefined,
    defaultEphemeralStorage: 20 * GI,
    os: 'linux',
  },
};

export function amiFamilyFeatures(family: AMIFamily): AMIFamilyFeatures {
  return FEATURES[family];
}
