// Karpenter v1 API types (karpenter.sh/v1 NodePool and NodeClaim, karpenter.k8s.aws/v1 EC2NodeClass).
// Field names and optionality follow the upstream CRDs of Karpenter v1.14.1 so that users' YAML maps
// one to one. Types describe the object *after* defaults are applied where noted ("defaulted").

export const NODEPOOL_GROUP = 'karpenter.sh';
export const NODECLASS_GROUP = 'karpenter.k8s.aws';
export const NODEPOOL_API_VERSION = 'karpenter.sh/v1';
export const NODECLAIM_API_VERSION = 'karpenter.sh/v1';
export const NODECLASS_API_VERSION = 'karpenter.k8s.aws/v1';
export const NODEPOOL_V1BETA1_API_VERSION = 'karpenter.sh/v1beta1';
export const NODECLASS_V1BETA1_API_VERSION = 'karpenter.k8s.aws/v1beta1';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
  timeAdded?: string;
}

export type RequirementOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

/** NodeSelectorRequirementWithMinValues. */
export interface NodeSelectorRequirementWithMinValues {
  key: string;
  operator: RequirementOperator;
  values?: string[];
  minValues?: number;
}

export interface NodeClassReference {
  group: string;
  kind: string;
  name: string;
}

/** Resource list: resource name → quantity string ("4", "16Gi", "500m"). */
export type ResourceList = Record<string, string>;

export interface NodeClaimTemplateSpec {
  taints?: Taint[];
  startupTaints?: Taint[];
  requirements: NodeSelectorRequirementWithMinValues[];
  nodeClassRef: NodeClassReference;
  /** defaulted: 720h; "Never" disables expiry. */
  expireAfter?: string;
  terminationGracePeriod?: string;
}

export interface NodeClaimTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: NodeClaimTemplateSpec;
}

export type DisruptionReason = 'Underutilized' | 'Empty' | 'Drifted';
export type ConsolidationPolicy = 'WhenEmpty' | 'WhenEmptyOrUnderutilized' | 'Balanced';

export interface Budget {
  /** defaulted: "10%". */
  nodes: string;
  schedule?: string;
  duration?: string;
  reasons?: DisruptionReason[];
}

export interface Disruption {
  /** defaulted: "0s". */
  consolidateAfter: string;
  /** defaulted: WhenEmptyOrUnderutilized. */
  consolidationPolicy?: ConsolidationPolicy;
  /** defaulted: [{nodes: "10%"}]. */
  budgets?: Budget[];
}

export interface NodePoolSpec {
  template: NodeClaimTemplate;
  disruption?: Disruption;
  limits?: ResourceList;
  weight?: number;
  replicas?: number;
}

export interface NodePool {
  apiVersion: typeof NODEPOOL_API_VERSION;
  kind: 'NodePool';
  metadata: ObjectMeta;
  spec: NodePoolSpec;
}

export interface NodeClaimSpec extends NodeClaimTemplateSpec {
  resources?: { requests?: ResourceList };
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface NodeClaim {
  apiVersion: typeof NODECLAIM_API_VERSION;
  kind: 'NodeClaim';
  metadata: ObjectMeta;
  spec: NodeClaimSpec;
  status?: {
    nodeName?: string;
    providerID?: string;
    imageID?: string;
    capacity?: ResourceList;
    allocatable?: ResourceList;
    conditions?: Condition[];
  };
}

// ---------------------------------------------------------------------------------------------
// EC2NodeClass

export type AMIFamily = 'AL2' | 'AL2023' | 'Bottlerocket' | 'Custom' | 'Windows2019' | 'Windows2022' | 'Windows2025';

export interface SubnetSelectorTerm {
  tags?: Record<string, string>;
  id?: string;
}

export interface SecurityGroupSelectorTerm {
  tags?: Record<string, string>;
  id?: string;
  name?: string;
}

export interface CapacityReservationSelectorTerm {
  tags?: Record<string, string>;
  id?: string;
  ownerID?: string;
  instanceMatchCriteria?: 'open' | 'targeted';
}

export interface PlacementGroupSelector {
  name?: string;
  id?: string;
}

export interface AMISelectorTerm {
  alias?: string;
  tags?: Record<string, string>;
  id?: string;
  name?: string;
  owner?: string;
  ssmParameter?: string;
}

export interface KubeletConfiguration {
  clusterDNS?: string[];
  maxPods?: number;
  podsPerCore?: number;
  systemReserved?: Record<string, string>;
  kubeReserved?: Record<string, string>;
  evictionHard?: Record<string, string>;
  evictionSoft?: Record<string, string>;
  evictionSoftGracePeriod?: Record<string, string>;
  evictionMaxPodGracePeriod?: number;
  imageGCHighThresholdPercent?: number;
  imageGCLowThresholdPercent?: number;
  cpuCFSQuota?: boolean;
}

export type VolumeType = 'standard' | 'io1' | 'io2' | 'gp2' | 'sc1' | 'st1' | 'gp3';

export interface BlockDevice {
  deleteOnTermination?: boolean;
  encrypted?: boolean;
  iops?: number;
  kmsKeyID?: string;
  snapshotID?: string;
  throughput?: number;
  volumeInitializationRate?: number;
  /** Quantity string: Gi, G, Ti or T units. */
  volumeSize?: string;
  volumeType?: VolumeType;
}

export interface BlockDeviceMapping {
  deviceName?: string;
  ebs?: BlockDevice;
  rootVolume?: boolean;
}

export interface NetworkInterface {
  networkCardIndex: number;
  deviceIndex: number;
  interfaceType: 'interface' | 'efa-only';
}

export interface MetadataOptions {
  /** defaulted: enabled. */
  httpEndpoint?: 'enabled' | 'disabled';
  /** defaulted: disabled. */
  httpProtocolIPv6?: 'enabled' | 'disabled';
  /** defaulted: 1. */
  httpPutResponseHopLimit?: number;
  /** defaulted: required. */
  httpTokens?: 'required' | 'optional';
}

export interface ConnectionTracking {
  tcpEstablishedTimeout?: number;
  udpStreamTimeout?: number;
  udpTimeout?: number;
}

export interface EC2NodeClassSpec {
  subnetSelectorTerms: SubnetSelectorTerm[];
  securityGroupSelectorTerms: SecurityGroupSelectorTerm[];
  capacityReservationSelectorTerms?: CapacityReservationSelectorTerm[];
  placementGroupSelector?: PlacementGroupSelector;
  associatePublicIPAddress?: boolean;
  ipPrefixCount?: number;
  amiSelectorTerms: AMISelectorTerm[];
  amiFamily?: AMIFamily;
  userData?: string;
  role?: string;
  instanceProfile?: string;
  tags?: Record<string, string>;
  kubelet?: KubeletConfiguration;
  blockDeviceMappings?: BlockDeviceMapping[];
  instanceStorePolicy?: 'RAID0';
  networkInterfaces?: NetworkInterface[];
  detailedMonitoring?: boolean;
  /** defaulted: see MetadataOptions. */
  metadataOptions?: MetadataOptions;
  connectionTracking?: ConnectionTracking;
  context?: string;
  cpuOptions?: { nestedVirtualization?: 'enabled' | 'disabled' };
}

export interface EC2NodeClassStatus {
  subnets?: { id: string; zone: string; zoneID?: string }[];
  securityGroups?: { id: string; name?: string }[];
  amis?: { id: string; name?: string; deprecated?: boolean; requirements: NodeSelectorRequirementWithMinValues[] }[];
  /** The reservations capacityReservationSelectorTerms selected (Karpenter v1.3+). */
  capacityReservations?: {
    id: string;
    availabilityZone: string;
    instanceType: string;
    ownerID: string;
    instanceMatchCriteria: 'open' | 'targeted';
    reservationType: 'default' | 'capacity-block';
    interruptible?: boolean;
    state: 'active' | 'expiring';
    endTime?: string;
  }[];
  /** The group placementGroupSelector resolved to (Karpenter v1.14). */
  placementGroups?: { id: string; name: string; strategy: string; state: string; partitionCount?: number }[];
  instanceProfile?: string;
  conditions?: Condition[];
}

export interface EC2NodeClass {
  apiVersion: typeof NODECLASS_API_VERSION;
  kind: 'EC2NodeClass';
  metadata: ObjectMeta;
  spec: EC2NodeClassSpec;
  status?: EC2NodeClassStatus;
}

export type KarpenterObject = NodePool | NodeClaim | EC2NodeClass;
