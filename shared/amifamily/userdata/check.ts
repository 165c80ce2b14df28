// Checks an EC2NodeClass's custom userData when the configuration is loaded (validate, plan, synth),
// so malformed MIME or Bottlerocket TOML fails before deployment instead of at the first launch.
// It renders with stand-in cluster values through the same code the launch path uses.

import { resolveAMIFamily } from '../../apis/v1/amifamily';
import type { EC2NodeClass } from '../../apis/v1/types';
import { droppedKubernetesSettings } from './bottlerocket';
import { renderUserData, UserDataError } from './index';

export interface UserDataIssue {
  path: string;
  message: string;
  severity: 'error' | 'warning';
}

export function checkCustomUserData(nodeClass: EC2NodeClass): UserDataIssue[] {
  const customUserData = nodeClass.spec.userData;
  const family = resolveAMIFamily(nodeClass);
  if (customUserData === undefined || family === undefined || family === 'Custom') return [];
  const issues: UserDataIssue[] = [];
  try {
    renderUserData({
      family,
      clusterName: 'validation',
      clusterEndpoint: 'https://validation.invalid',
      caBundle: 'Y2EtYnVuZGxlCg==',
      clusterCIDR: '10.100.0.0/16',
      kubelet: {
        ...nodeClass.spec.kubelet,
        maxPods: nodeClass.spec.kubelet?.maxPods ?? 110,
        clusterDNS: ['10.100.0.10'],
      },
      taints: [],
      labels: {},
      capacityType: 'on-demand',
      customUserData,
    });
  } catch (error) {
    if (!(error instanceof UserDataError) || !error.field.startsWith('spec.userData')) throw error;
    issues.push({ path: error.field, message: `${error.reason} (no node would join with it)`, severity: 'error' });
  }
  if (family === 'Bottlerocket') {
    for (const key of droppedKubernetesSettings(customUserData)) {
      issues.push({
        path: 'spec.userData',
        message: `settings.kubernetes.${key} is not a Bottlerocket kubernetes setting and is dropped, as Karpenter drops it`,
        severity: 'warning',
      });
    }
  }
  return issues;
}
