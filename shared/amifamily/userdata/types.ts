import type { KubeletConfiguration, Taint } from '../../apis/v1/types';

/** The renderer's input after labels and taints are settled (what each family formats). */
export interface FamilyInput {
  clusterName: string;
  clusterEndpoint: string;
  /** Base64 PEM of the cluster CA. */
  caBundle: string;
  clusterCIDR?: string;
  /** Already filled: maxPods always set, clusterDNS defaulted. */
  kubelet: KubeletConfiguration;
  /** NodeClaim taints then startupTaints; karpenter.sh/unregistered is added by the renderer. */
  taints: Taint[];
  /** NodeClaim labels; the renderer adds capacity-type/do-not-sync-taints and drops restricted ones. */
  labels: Record<string, string>;
  instanceStorePolicy?: 'RAID0';
  customUserData?: string;
  /** Decides the RAID0 bind form for Bottlerocket. */
  bottlerocketVersion?: string;
}
