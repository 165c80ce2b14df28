// The Kubernetes calls karpless makes, as a port: the watcher, provision, interruption and
// lifecycle code ask for Pick<KubeClient, …>; shared/kube/client.ts implements it over node:https
// with an EKS token, and test/support/kube/ holds the fake API server it is tested against.

import type {
  LabelSelector,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
  VolumeAttachment,
  Workload,
} from '../apis/core/v1';
import type { Taint } from '../apis/v1/types';

export interface ListOptions {
  fieldSelector?: string;
  labelSelector?: string;
  /** Page size; the client follows `continue` until the list is complete. */
  limit?: number;
  /**
   * '0': any recent state will do, served from the API server's watch cache instead of a quorum read
   * of etcd; the server then answers in one response, whatever the limit. Unset: the latest state.
   */
  resourceVersion?: string;
}

export interface ObjectList<T> {
  items: T[];
  /** The list's resourceVersion: where a watch continues from. */
  resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions extends ListOptions {
  resourceVersion: string;
  /** Server-side timeout of the watch request. */
  timeoutSeconds: number;
  /** Aborts the watch early (the handler is running out of time). */
  signal?: AbortSignal;
}

/**
 * The outcome of one watch request: 'expired' is 410 Gone (re-list), 'closed' is a normal end
 * (timeout or abort) with the last resourceVersion seen, including bookmarks.
 */
export type WatchResult = { kind: 'closed'; resourceVersion: string } | { kind: 'expired' };

/** A JSON merge patch (application/merge-patch+json) of a Node. */
export type NodePatch = {
  metadata?: {
    labels?: Record<string, string | null>;
    annotations?: Record<string, string | null>;
    /** Replaces the whole list; send with resourceVersion so a concurrent change yields 409. */
    finalizers?: string[] | null;
    resourceVersion?: string;
  };
  spec?: { taints?: Taint[] | null; unschedulable?: boolean | null };
};

/** The eviction subresource's answer (500) for a pod selected by more than one PodDisruptionBudget. */
export const MULTIPLE_PDBS =
  'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';
/** What evictPod's blocked outcome says then (Karpenter's words). */
export const MULTIPLE_PDBS_REFUSAL = 'eviction does not support multiple PDBs';

export type EvictionOutcome =
  /** Eviction created (201) or the pod is already gone (404). */
  | { kind: 'evicted' }
  /** A PodDisruptionBudget refused it (429) until the deadline passed, or several select the pod. */
  | { kind: 'blocked'; message: string };

/** The fields of a policy/v1 PodDisruptionBudget karpless reads: which pods, and what it allows now. */
export interface PodDisruptionBudget {
  metadata: { name: string; namespace?: string };
  spec?: {
    selector?: LabelSelector;
    /** AlwaysAllow lets unready pods be evicted whatever the budget says. */
    unhealthyPodEvictionPolicy?: 'IfHealthyBudget' | 'AlwaysAllow';
    minAvailable?: number | string;
    maxUnavailable?: number | string;
  };
  status?: { disruptionsAllowed?: number };
}

/** The fields of a coordination.k8s.io/v1 Lease karpless reads: who holds it and when it was renewed. */
export interface Lease {
  metadata: { name: string; namespace?: string };
  spec?: { holderIdentity?: string | null; leaseDurationSeconds?: number | null; renewTime?: string | null };
}

export interface KubeClient {
  listPods(options?: ListOptions): Promise<ObjectList<Pod>>;
  watchPods(options: WatchOptions, onEvent: (event: WatchEvent<Pod>) => void): Promise<WatchResult>;
  listNodes(options?: ListOptions): Promise<ObjectList<Node>>;
  watchNodes(options: WatchOptions, onEvent: (event: WatchEvent<Node>) => void): Promise<WatchResult>;
  /** undefined when the node does not exist (404). */
  getNode(name: string): Promise<Node | undefined>;
  listDaemonSets(options?: ListOptions): Promise<ObjectList<Workload>>;
  /** Merge-patches a node; throws KubeApiError (409 on a stale resourceVersion, 404 when gone). */
  patchNode(name: string, patch: NodePatch): Promise<Node>;
  /**
   * Evicts through policy/v1 Eviction, retrying 429 (PodDisruptionBudget) with backoff until
   * `deadline` (epoch ms). Callers never pass DaemonSet or mirror pods (see isEvictable).
   */
  evictPod(namespace: string, name: string, deadline: number): Promise<EvictionOutcome>;
  /** Deletes a node; a node already gone is not an error. */
  deleteNode(name: string): Promise<void>;
  /**
   * Deletes a pod with `gracePeriodSeconds` (bypassing PodDisruptionBudgets, as a drain whose
   * terminationGracePeriod runs out must); a pod already gone is not an error.
   */
  deletePod(namespace: string, name: string, gracePeriodSeconds: number): Promise<void>;
  /** Every storage.k8s.io/v1 VolumeAttachment (the API has no field selector on spec.nodeName). */
  listVolumeAttachments(options?: ListOptions): Promise<ObjectList<VolumeAttachment>>;
  /** Records a core/v1 Event about a Node or Pod (what `kubectl describe` shows). */
  createEvent(event: KubeEvent): Promise<void>;
  /** Every PodDisruptionBudget of the cluster (consolidation checks them before choosing a node). */
  listPodDisruptionBudgets(options?: ListOptions): Promise<ObjectList<PodDisruptionBudget>>;
  /** Volume topology (the provision decision): claims, volumes and classes, all namespaces. */
  listPersistentVolumeClaims(options?: ListOptions): Promise<ObjectList<PersistentVolumeClaim>>;
  listPersistentVolumes(options?: ListOptions): Promise<ObjectList<PersistentVolume>>;
  /**
   * One claim, or undefined when it does not exist: a drain reads the claims of the pods it leaves on
   * the node, whose volumes it does not wait to detach.
   */
  getPersistentVolumeClaim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;

  listStorageClasses(options?: ListOptions): Promise<ObjectList<StorageClass>>;
  /** Leases of every namespace (leader election: whether another controller is running). */
  listLeases(options?: ListOptions): Promise<ObjectList<Lease>>;
}

/** What karpless says in an Event: about which object, Normal or Warning, why (CamelCase) and what. */
export interface KubeEvent {
  /** apiVersion defaults to v1 (Nodes, Pods); NodeClaims are karpenter.sh/v1. */
  involvedObject: {
    kind: 'Node' | 'Pod' | 'NodeClaim';
    apiVersion?: string;
    name: string;
    namespace?: string;
    uid?: string;
  };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** A Kubernetes `Status` answer, kept whole so callers can branch on code and reason. */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  constructor(
    /** "PATCH /api/v1/nodes/ip-10-0-0-1" */
    readonly request: string,
    readonly code: number,
    /** Status.reason, e.g. NotFound, Conflict, TooManyRequests, Expired. */
    readonly reason: string,
    message: string,
  ) {
    super(`${request}: ${code} ${reason}: ${message}`);
  }
}

export function isKubeApiError(error: unknown, code?: number): error is KubeApiError {
  return error instanceof KubeApiError && (code === undefined || error.code === code);
}

/**
 * No usable answer from the API server: the connection failed, or the connect or request timeout
 * passed. `request` names the endpoint ("GET https://…/api/v1/pods"); such calls are worth retrying later.
 */
export class KubeTransportError extends Error {
  override readonly name = 'KubeTransportError';
  constructor(
    readonly request: string,
    /** 'connect' when nothing reached the server; 'request' when it may have. */
    readonly phase: 'connect' | 'request',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${request}: ${message}`, options);
  }
}
