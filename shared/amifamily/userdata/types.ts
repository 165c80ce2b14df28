import type { KubeletConfiguration, Taint } from '../../apis/v1/types';

/** The renderer's input after labels and taints are settled (what each family formats). */
export interface FamilyInput {
  clusterName: string;
  clusterEndpoint: string;
  caBundle: string;
  clusterCIDR?: string;
  kubelet: KubeletConfiguration;
  taints: Taint[];
  labels: Record<string, string>;
  instanceStorePolicy?: 'RAID0';
  customUserData?: string;
  bottlerocketVersion?: string;
}
