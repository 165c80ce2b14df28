// The subset of Kubernetes core/apps/batch v1 types karpless reads: pods and the workloads that
// make them, nodes, and the selector and scheduling constraint shapes. Field names match the API.

import type { ResourceList, Taint } from '../v1/types';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string;
  controller?: boolean;
}

export interface PodMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  ownerReferences?: OwnerReference[];
  /** Changes on every write; a patch that carries it fails with 409 if the object moved on. */
  resourceVersion?: string;
  /**
   * Set when a delete waits on finalizers (or a pod's grace period): for a pod, the time of the
   * delete plus the grace period it was given.
   */
  deletionTimestamp?: string;
  /** The grace period the pod's deletion was given, in seconds. */
  deletionGracePeriodSeconds?: number;
  finalizers?: string[];
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
  preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelector;
  namespaces?: string[];
  namespaceSelector?: LabelSelector;
  topologyKey: string;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

export interface WeightedPodAffinityTerm {
  weight: number;
  podAffinityTerm: PodAffinityTerm;
}

export interface PodAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
  preferredDuringSchedulingIgnoredDuringExecution?: WeightedPodAffinityTerm[];
}

export interface Affinity {
  nodeAffinity?: NodeAffinity;
  podAffinity?: PodAffinity;
  podAntiAffinity?: PodAffinity;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: LabelSelector;
  minDomains?: number;
  nodeAffinityPolicy?: 'Honor' | 'Ignore';
  nodeTaintsPolicy?: 'Honor' | 'Ignore';
  matchLabelKeys?: string[];
}

export interface ContainerPort {
  containerPort: number;
  hostPort?: number;
  /** The host address the hostPort binds; empty or absent is every address (0.0.0.0). */
  hostIP?: string;
  protocol?: string;
}

export interface Container {
  name: string;
  image?: string;
  resources?: { requests?: ResourceList; limits?: ResourceList };
  ports?: ContainerPort[];
  /** Native sidecars (init containers with restartPolicy Always) run beside the app containers. */
  restartPolicy?: 'Always';
}

/** A pod volume; only the kinds that name a PersistentVolumeClaim matter to scheduling. */
export interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  /** A generic ephemeral volume: its PVC is named `<pod>-<volume>` and made by the ephemeral controller. */
  ephemeral?: { volumeClaimTemplate?: unknown };
}

export interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  initContainers?: Container[];
  overhead?: ResourceList;
  /** Pod-level resources (PodLevelResources, beta in 1.34): when set they replace the containers' sum. */
  resources?: { requests?: ResourceList; limits?: ResourceList };
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations?: Toleration[];
  topologySpreadConstraints?: TopologySpreadConstraint[];
  nodeName?: string;
  priority?: number;
  priorityClassName?: string;
  /** Seconds the kubelet waits after SIGTERM before it kills the containers (the API server defaults it to 30). */
  terminationGracePeriodSeconds?: number;
}

export interface Pod {
  apiVersion?: 'v1';
  kind?: 'Pod';
  metadata: PodMeta;
  spec: PodSpec;
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    /** Set by the scheduler while the pod waits for a preemption on that node. */
    nominatedNodeName?: string;
    /** RFC 3339: when the kubelet accepted the pod (do-not-disrupt durations count from it). */
    startTime?: string;
  };
}

export interface PodTemplateSpec {
  metadata?: Omit<PodMeta, 'name'> & { name?: string };
  spec: PodSpec;
}

export interface Workload {
  apiVersion: string;
  kind: 'Deployment' | 'StatefulSet' | 'ReplicaSet' | 'Job' | 'DaemonSet';
  metadata: PodMeta;
  spec: {
    replicas?: number;
    parallelism?: number;
    completions?: number;
    selector?: LabelSelector;
    template: PodTemplateSpec;
  };
}

export interface Node {
  apiVersion?: 'v1';
  kind?: 'Node';
  metadata: PodMeta;
  spec?: { taints?: Taint[]; providerID?: string; unschedulable?: boolean };
  status?: { capacity?: ResourceList; allocatable?: ResourceList; conditions?: NodeCondition[] };
}

export interface NodeCondition {
  /** Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable. */
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

/** The fields of a core/v1 PersistentVolumeClaim that volume topology reads. */
export interface PersistentVolumeClaim {
  metadata: { name: string; namespace?: string; uid?: string };
  spec?: {
    /** Unset or "" means no class: such a claim binds only to a pre-made volume, immediately. */
    storageClassName?: string | null;
    /** The PersistentVolume it is bound to. */
    volumeName?: string;
  };
  status?: { phase?: string };
}

/** The fields of a core/v1 PersistentVolume that volume topology reads. */
export interface PersistentVolume {
  metadata: { name: string; uid?: string };
  spec?: {
    nodeAffinity?: { required?: { nodeSelectorTerms: NodeSelectorTerm[] } };
    storageClassName?: string;
    /** Local and hostPath volumes pin a hostname that a new node will never have. */
    local?: { path?: string };
    hostPath?: { path?: string };
  };
}

export interface TopologySelectorTerm {
  matchLabelExpressions?: { key: string; values: string[] }[];
}

/** The fields of a storage.k8s.io/v1 VolumeAttachment that termination reads: which volume, on which node. */
export interface VolumeAttachment {
  metadata: { name: string; uid?: string };
  spec?: { attacher?: string; nodeName?: string; source?: { persistentVolumeName?: string } };
  status?: { attached?: boolean };
}

/** The fields of a storage.k8s.io/v1 StorageClass that volume topology reads. */
export interface StorageClass {
  metadata: { name: string; annotations?: Record<string, string> };
  provisioner?: string;
  /** Defaults to Immediate. */
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
  allowedTopologies?: TopologySelectorTerm[];
}
