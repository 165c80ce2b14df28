// The KubeClient port over HTTP: the handful of core/v1, apps/v1 and policy/v1 calls karpless makes,
// with pagination, watches, typed errors and the EKS token. Small on purpose (no client library):
// it is bundled into every Lambda.

import type {
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
  VolumeAttachment,
  Workload,
} from '../apis/core/v1';
import { ENV } from '../contracts/index';
import type { EKSApi } from '../providers/ports';
import { HttpEventRecorder } from './events';
import { type RetryPolicy, Transport, type TransportOptions } from './http';
import { HttpKarpenterObjects } from './karpenter';
import { slimNode, slimPod } from './slim';
import { type CredentialsSource, eksTokenSource, type TokenSource } from './token';
import {
  type EvictionOutcome,
  isKubeApiError,
  type KubeClient,
  type KubeEvent,
  type Lease,
  type ListOptions,
  MULTIPLE_PDBS,
  MULTIPLE_PDBS_REFUSAL,
  type NodePatch,
  type ObjectList,
  type PodDisruptionBudget,
  type WatchEvent,
  type WatchOptions,
  type WatchResult,
} from './types';
import { consumeWatch } from './watch';

export interface HttpKubeClientOptions extends TransportOptions {
  /** Epoch milliseconds; eviction deadlines are read against it. */
  now?: () => number;
  /** Backoff between eviction attempts refused by a PodDisruptionBudget. */
  evictionRetry?: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>;
  /** Extra time past a watch's timeoutSeconds before the client gives up on a silent server. */
  watchGraceMs?: number;
}

/** kubectl's page size: big enough to be quick, small enough that one page never strains memory. */
export const DEFAULT_PAGE_SIZE = 500;
const DEFAULT_EVICTION_RETRY = { baseDelayMs: 500, maxDelayMs: 5_000 };
const DEFAULT_WATCH_GRACE_MS = 10_000;
const MERGE_PATCH = 'application/merge-patch+json';

interface RawList<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

export class HttpKubeClient implements KubeClient {
  private readonly transport: Transport;
  private readonly now: () => number;
  private readonly evictionRetry: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>;
  private readonly watchGraceMs: number;

  constructor(options: HttpKubeClientOptions) {
    this.transport = new Transport(options);
    this.now = options.now ?? Date.now;
    this.evictionRetry = options.evictionRetry ?? DEFAULT_EVICTION_RETRY;
    this.watchGraceMs = options.watchGraceMs ?? DEFAULT_WATCH_GRACE_MS;
  }

  get endpoint(): string {
    return this.transport.endpoint.origin;
  }

  /** NodePools, NodeClaims and EC2NodeClasses over the same connection (karpenter.ts). */
  karpenterObjects(): HttpKarpenterObjects {
    return new HttpKarpenterObjects(this.transport);
  }

  /** Deduplicated core/v1 Events over the same connection (events.ts). */
  eventRecorder(now: () => number): HttpEventRecorder {
    return new HttpEventRecorder(this.transport, now);
  }

  /** Frees kept-alive connections (tests, CLI); a Lambda keeps them for the next invocation. */
  close(): void {
    this.transport.close();
  }

  listPods(options: ListOptions = {}): Promise<ObjectList<Pod>> {
    return this.list<Pod>('/api/v1/pods', options, slimPod);
  }

  watchPods(options: WatchOptions, onEvent: (event: WatchEvent<Pod>) => void): Promise<WatchResult> {
    return this.watch<Pod>('/api/v1/pods', options, (event) => onEvent(slimEvent(event, slimPod)));
  }

  listNodes(options: ListOptions = {}): Promise<ObjectList<Node>> {
    return this.list<Node>('/api/v1/nodes', options, slimNode);
  }

  watchNodes(options: WatchOptions, onEvent: (event: WatchEvent<Node>) => void): Promise<WatchResult> {
    return this.watch<Node>('/api/v1/nodes', options, (event) => onEvent(slimEvent(event, slimNode)));
  }

  async getNode(name: string): Promise<Node | undefined> {
    const answer = await this.transport.request({
      method: 'GET',
      path: `/api/v1/nodes/${encodeURIComponent(name)}`,
      retry: 'idempotent',
      accept: [404],
    });
    return answer.status === 404 ? undefined : (answer.body as Node);
  }

  async listDaemonSets(options: ListOptions = {}): Promise<ObjectList<Workload>> {
    const list = await this.list<Workload>('/apis/apps/v1/daemonsets', options);
    // List items carry no kind or apiVersion; the Workload shape needs both.
    for (const item of list.items) {
      item.apiVersion = 'apps/v1';
      item.kind = 'DaemonSet';
    }
    return list;
  }

  async patchNode(name: string, patch: NodePatch): Promise<Node> {
    const answer = await this.transport.request({
      method: 'PATCH',
      path: `/api/v1/nodes/${encodeURIComponent(name)}`,
      body: patch,
      contentType: MERGE_PATCH,
      // A merge patch is idempotent, unless it carries a resourceVersion: repeating one that was
      // applied but whose answer was lost would report a false 409.
      retry: patch.metadata?.resourceVersion === undefined ? 'idempotent' : 'unsent',
    });
    return answer.body as Node;
  }

  async evictPod(namespace: string, name: string, deadline: number): Promise<EvictionOutcome> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/eviction`;
    const body = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } };
    for (let attempt = 0; ; attempt++) {
      try {
        // Evicting twice is harmless (the second finds the pod gone), so transport failures retry.
        await this.transport.request({
          method: 'POST',
          path,
          body,
          retry: 'idempotent',
          noRetryOn429: true,
          noRetryWhen: (status, answer) =>
            status === 500 && (answer as { message?: unknown })?.message === MULTIPLE_PDBS,
        });
        return { kind: 'evicted' };
      } catch (error) {
        if (isKubeApiError(error, 404)) return { kind: 'evicted' };
        // Kubernetes refuses to evict a pod that several PodDisruptionBudgets select, whatever they
        // allow: a drain waits on it as on a budget (Karpenter's FailedDraining), never fails on it.
        if (isKubeApiError(error, 500) && error.message.endsWith(MULTIPLE_PDBS)) {
          return { kind: 'blocked', message: MULTIPLE_PDBS_REFUSAL };
        }
        if (!isKubeApiError(error, 429)) throw error;
        const left = deadline - this.now();
        if (left <= 0) return { kind: 'blocked', message: error.message };
        await this.transport.sleep(Math.min(left, this.transport.backoff(attempt, this.evictionRetry)));
      }
    }
  }

  listPodDisruptionBudgets(options: ListOptions = {}): Promise<ObjectList<PodDisruptionBudget>> {
    return this.list<PodDisruptionBudget>('/apis/policy/v1/poddisruptionbudgets', options);
  }

  listPersistentVolumeClaims(options: ListOptions = {}): Promise<ObjectList<PersistentVolumeClaim>> {
    return this.list<PersistentVolumeClaim>('/api/v1/persistentvolumeclaims', options);
  }

  async getPersistentVolumeClaim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined> {
    const answer = await this.transport.request({
      method: 'GET',
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(name)}`,
      retry: 'idempotent',
      accept: [404],
    });
    return answer.status === 404 ? undefined : (answer.body as PersistentVolumeClaim);
  }

  listPersistentVolumes(options: ListOptions = {}): Promise<ObjectList<PersistentVolume>> {
    return this.list<PersistentVolume>('/api/v1/persistentvolumes', options);
  }

  listStorageClasses(options: ListOptions = {}): Promise<ObjectList<StorageClass>> {
    return this.list<StorageClass>('/apis/storage.k8s.io/v1/storageclasses', options);
  }

  listLeases(options: ListOptions = {}): Promise<ObjectList<Lease>> {
    return this.list<Lease>('/apis/coordination.k8s.io/v1/leases', options);
  }

  async deleteNode(name: string): Promise<void> {
    await this.transport.request({
      method: 'DELETE',
      path: `/api/v1/nodes/${encodeURIComponent(name)}`,
      retry: 'idempotent',
      accept: [404],
    });
  }

  async deletePod(namespace: string, name: string, gracePeriodSeconds: number): Promise<void> {
    await this.transport.request({
      method: 'DELETE',
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
      body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds },
      // Deleting again only shortens the grace period to the same value: harmless to repeat.
      retry: 'idempotent',
      accept: [404],
    });
  }

  listVolumeAttachments(options: ListOptions = {}): Promise<ObjectList<VolumeAttachment>> {
    return this.list<VolumeAttachment>('/apis/storage.k8s.io/v1/volumeattachments', options);
  }

  async createEvent(event: KubeEvent): Promise<void> {
    const namespace = event.involvedObject.namespace ?? 'default';
    const at = new Date(this.now()).toISOString();
    await this.transport.request({
      method: 'POST',
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        // The API server's own naming scheme for events: object name, then a unique suffix.
        metadata: { name: `${event.involvedObject.name}.${this.now().toString(16)}${eventSeq()}`, namespace },
        involvedObject: { apiVersion: 'v1', ...event.involvedObject },
        type: event.type,
        reason: event.reason,
        message: event.message,
        source: { component: 'karpenter' },
        reportingComponent: 'karpenter',
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
      },
      // A lost answer repeated would write the event twice: a duplicate line in describe, no harm.
      retry: 'idempotent',
    });
  }

  /**
   * Follows `continue` to the end; an expired continue token restarts the list once. `slim` strips
   * each item as its page is parsed (slim.ts), so a list never holds more than a page of full objects.
   */
  private async list<T>(path: string, options: ListOptions, slim?: (item: T) => T): Promise<ObjectList<T>> {
    const items: T[] = [];
    let resourceVersion = '';
    let next: string | undefined;
    let restarted = false;
    for (;;) {
      let page: RawList<T>;
      try {
        const answer = await this.transport.request({
          method: 'GET',
          path,
          query: {
            fieldSelector: options.fieldSelector,
            labelSelector: options.labelSelector,
            limit: options.limit ?? DEFAULT_PAGE_SIZE,
            continue: next,
            // Only on the first page: the API server refuses a resourceVersion beside continue.
            resourceVersion: next === undefined ? options.resourceVersion : undefined,
          },
          retry: 'idempotent',
        });
        page = answer.body as RawList<T>;
      } catch (error) {
        if (next === undefined || restarted || !isKubeApiError(error, 410)) throw error;
        restarted = true;
        items.length = 0;
        next = undefined;
        continue;
      }
      if (!page || !Array.isArray(page.items)) {
        throw new Error(`GET ${path}: the answer is not a list (no items array); is the endpoint an API server?`);
      }
      // One push per item: spreading a page of thousands into push() can overflow the stack.
      for (const item of page.items) items.push(slim ? slim(item) : item);
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      next = page.metadata?.continue || undefined;
      if (next === undefined) return { items, resourceVersion };
    }
  }

  private async watch<T>(
    path: string,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<WatchResult> {
    const closed: WatchResult = { kind: 'closed', resourceVersion: options.resourceVersion };
    if (options.signal?.aborted) return closed;
    // Ends the watch when the server stays silent past its own timeout.
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), options.timeoutSeconds * 1000 + this.watchGraceMs);
    const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
    const spec = {
      method: 'GET' as const,
      path,
      query: {
        watch: 'true',
        allowWatchBookmarks: 'true',
        resourceVersion: options.resourceVersion,
        timeoutSeconds: options.timeoutSeconds,
        fieldSelector: options.fieldSelector,
        labelSelector: options.labelSelector,
      },
      retry: 'idempotent' as const,
      signal,
    };
    try {
      const response = await this.transport.stream(spec);
      return await consumeWatch(response, this.transport.describe(spec), options.resourceVersion, onEvent, signal);
    } catch (error) {
      if (isKubeApiError(error, 410)) return { kind: 'expired' };
      if (signal.aborted) return closed;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A watch event's object stripped as a listed one is; a BOOKMARK carries no object worth keeping. */
function slimEvent<T>(event: WatchEvent<T>, slim: (item: T) => T): WatchEvent<T> {
  return event.type === 'BOOKMARK' ? event : { type: event.type, object: slim(event.object) };
}

let eventCounter = 0;
function eventSeq(): string {
  eventCounter = (eventCounter + 1) % 0x10000;
  return eventCounter.toString(16).padStart(4, '0');
}

/**
 * Whether a drain should evict the pod: not DaemonSet pods (their controller puts them straight
 * back and they tolerate the drain taint), not mirror pods (the kubelet owns them and the API
 * server refuses to evict them), not pods that finished or are already being deleted.
 */
export function isEvictable(pod: Pod): boolean {
  const owners = pod.metadata.ownerReferences ?? [];
  if (owners.some((owner) => owner.kind === 'DaemonSet' || owner.kind === 'Node')) return false;
  if (pod.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return false;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  return pod.metadata.deletionTimestamp === undefined;
}

export interface ClusterClientOptions extends Omit<HttpKubeClientOptions, 'endpoint' | 'ca' | 'token'> {
  eks: Pick<EKSApi, 'describeCluster'>;
  clusterName: string;
  region: string;
  credentials: CredentialsSource;
  /** Replaces DescribeCluster's endpoint (ENV.kubeEndpoint: the demo's fake API server). */
  endpointOverride?: string;
  /** Replaces the EKS token (a loopback fake server with its own token). */
  token?: TokenSource;
}

/** Builds the client for an EKS cluster from DescribeCluster's endpoint and CA. */
export async function kubeClientForCluster(options: ClusterClientOptions): Promise<HttpKubeClient> {
  const { eks, clusterName, region, credentials, endpointOverride, token, ...rest } = options;
  const tokenSource =
    token ?? eksTokenSource({ clusterName, region, credentials, ...(rest.now ? { now: rest.now } : {}) });
  // A plain-http override is a loopback fake server: it has no CA to look up.
  if (endpointOverride?.startsWith('http://')) {
    return new HttpKubeClient({ ...rest, endpoint: endpointOverride, token: tokenSource });
  }
  const { cluster } = await eks.describeCluster({ name: clusterName });
  const endpoint = endpointOverride ?? cluster?.endpoint;
  if (!endpoint) {
    throw new Error(
      `EKS cluster ${clusterName}: DescribeCluster returned no endpoint (status ${cluster?.status ?? 'unknown'}); wait until the cluster is ACTIVE`,
    );
  }
  const ca = decodeClusterCa(clusterName, cluster?.certificateAuthority?.data);
  return new HttpKubeClient({ ...rest, endpoint, ca, token: tokenSource });
}

/**
 * The cluster's API server cannot be reached as DescribeCluster describes it. The message names the
 * functions' setting; a command with its own flag for the override names that instead (forOverride).
 */
export class ClusterEndpointError extends Error {
  override readonly name = 'ClusterEndpointError';
  constructor(
    readonly clusterName: string,
    readonly problem: string,
  ) {
    super(
      `EKS cluster ${clusterName}: ${problem}; set ${ENV.kubeEndpoint} to an http://127.0.0.1 endpoint to use a test API server instead`,
    );
  }

  /** The same problem, telling to use `how` (a flag and its value) instead of the functions' setting. */
  forOverride(how: string): string {
    return `EKS cluster ${this.clusterName}: ${this.problem}; ${how}`;
  }
}

function decodeClusterCa(clusterName: string, data: string | undefined): string {
  const pem = data ? Buffer.from(data, 'base64').toString('utf8') : '';
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ClusterEndpointError(clusterName, 'certificateAuthority.data is not a base64 PEM certificate');
  }
  return pem;
}
