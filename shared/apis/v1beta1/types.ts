// Karpenter v1beta1 API types (karpenter.sh/v1beta1 NodePool, karpenter.k8s.aws/v1beta1 EC2NodeClass),
// the shapes users bring from Karpenter v0.33–v0.37. Only conversion reads them.

import type {
  AMIFamily,
  BlockDeviceMapping,
  Budget,
  KubeletConfiguration,
  MetadataOptions,
  NodeSelectorRequirementWithMinValues,
  ObjectMeta,
  ResourceList,
  SecurityGroupSelectorTerm,
  SubnetSelectorTerm,
  Taint,
} from '../v1/types';

export const V1BETA1_NODEPOOL_API_VERSION = 'karpenter.sh/v1beta1';
export const V1BETA1_NODECLASS_API_VERSION = 'karpenter.k8s.aws/v1beta1';

/** v1beta1 referenced the class by apiVersion; v1 by group. Both apiVersion and kind were optional. */
export interface V1beta1NodeClassReference {
  apiVersion?: string;
  kind?: string;
  name: string;
}

export interface V1beta1NodeClaimTemplateSpec {
  taints?: Taint[];
  startupTaints?: Taint[];
  requirements: NodeSelectorRequirementWithMinValues[];
  /** Accepted but unused in a NodePool template; v1 dropped it. */
  resources?: { requests?: ResourceList };
  /** Moved to EC2NodeClass spec.kubelet in v1. */
  kubelet?: KubeletConfiguration;
  nodeClassRef: V1beta1NodeClassReference;
}

export interface V1beta1Disruption {
  /** Forbidden with WhenUnderutilized, required with WhenEmpty in v1beta1. */
  consolidateAfter?: string;
  consolidationPolicy?: 'WhenEmpty' | 'WhenUnderutilized';
  /** Moved to spec.template.spec.expireAfter in v1. Default 720h. */
  expireAfter?: string;
  budgets?: Budget[];
}

export interface V1beta1NodePool {
  apiVersion: typeof V1BETA1_NODEPOOL_API_VERSION;
  kind: 'NodePool';
  metadata: ObjectMeta;
  spec: {
    template: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec: V1beta1NodeClaimTemplateSpec;
    };
    disruption?: V1beta1Disruption;
    limits?: ResourceList;
    weight?: number;
  };
}

export interface V1beta1AMISelectorTerm {
  tags?: Record<string, string>;
  id?: string;
  name?: string;
  owner?: string;
}

export interface V1beta1EC2NodeClassSpec {
  subnetSelectorTerms: SubnetSelectorTerm[];
  securityGroupSelectorTerms: SecurityGroupSelectorTerm[];
  /** Optional in v1beta1: without terms the family's EKS-optimized AMI (latest) was used. */
  amiSelectorTerms?: V1beta1AMISelectorTerm[];
  /** Defaulted to AL2 by the v1beta1 controller. */
  amiFamily?: AMIFamily | 'Ubuntu';
  userData?: string;
  role?: string;
  instanceProfile?: string;
  tags?: Record<string, string>;
  blockDeviceMappings?: BlockDeviceMapping[];
  instanceStorePolicy?: 'RAID0';
  detailedMonitoring?: boolean;
  associatePublicIPAddress?: boolean;
  /** httpPutResponseHopLimit defaulted to 2 in v1beta1 (1 in v1). */
  metadataOptions?: MetadataOptions;
  context?: string;
}

export interface V1beta1EC2NodeClass {
  apiVersion: typeof V1BETA1_NODECLASS_API_VERSION;
  kind: 'EC2NodeClass';
  metadata: ObjectMeta;
  spec: V1beta1EC2NodeClassSpec;
}
