// In-memory fakes for the runtime's ports: a Kubernetes API with list/watch/patch/evict semantics,
// the state table, our EC2 instances, and virtual time so batching windows and drains need no
// real waiting. Each records what it was asked to do.

import type {
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
  VolumeAttachment,
  Workload,
} from '../../shared/apis/core/v1';
import type { CapacityType } from '../../shared/instancetypes/types';
import {
  type EvictionOutcome,
  KubeApiError,
  type KubeClient,
  type KubeEvent,
  type Lease,
  type ListOptions,
  type NodePatch,
  type ObjectList,
  type PodDisruptionBudget,
  type WatchEvent,
  type WatchOptions,
  type WatchResult,
} from '../../shared/kube/types';
import type { NodeClaimRecord } from '../../shared/nodeclaim/record';
import type { Sleep } from '../../shared/providers/clock';
import type { DrainRecord, Nomination, PriceSnapshot, StateStore } from '../../shared/providers/state';
import type { ClaimInstance, UnclaimedLaunch } from '../../shared/runtime/instances';
import type { ClaimLauncher } from '../../shared/runtime/provision';
import type { FailedRecord, RetryQueuePort } from '../../shared/runtime/provision-retry';
import type { LogFields, RuntimeLog, RuntimeMetrics } from '../../shared/runtime/telemetry';
import { fieldSelector, type KubeObject } from '../support/kube/selectors';

export const START = Date.parse('2026-01-01T00:00:00Z');

/** A clock and sleep on virtual time: `run` advances to the next timer whenever nothing else can move. */
export function virtualTime(start = START) {
  let now = start;
  const timers: { at: number; seq: number; resolve: () => void }[] = [];
  let seq = 0;
  const clock = () => now;
  const sleep: Sleep = (ms) =>
    new Promise<void>((resolve) => {
      timers.push({ at: now + Math.max(0, ms), seq: seq++, resolve });
    });
  async function run<T>(promise: Promise<T>): Promise<T> {
    let settled = false;
    promise.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    for (let turns = 0; !settled; turns++) {
      if (turns > 1_000_000) throw new Error('virtual time: the run did not settle');
      await new Promise((r) => setImmediate(r));
      if (settled) break;
      timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = timers.shift();
      if (!next) continue;
      now = Math.max(now, next.at);
      next.resolve();
    }
    return promise;
  }
  const advance = (ms: number) => {
    now += ms;
  };
  return { clock, sleep, run, advance };
}

export type VirtualTime = ReturnType<typeof virtualTime>;

export class RecordingLog implements RuntimeLog {
  readonly lines: { level: string; message: string; fields?: LogFields }[] = [];
  debug(message: string, fields?: LogFields) {
    this.lines.push({ level: 'debug', message, ...(fields ? { fields } : {}) });
  }
  info(message: string, fields?: LogFields) {
    this.lines.push({ level: 'info', message, ...(fields ? { fields } : {}) });
  }
  warn(message: string, fields?: LogFields) {
    this.lines.push({ level: 'warn', message, ...(fields ? { fields } : {}) });
  }
  error(message: string, fields?: LogFields) {
    this.lines.push({ level: 'error', message, ...(fields ? { fields } : {}) });
  }
  messages(): string[] {
    return this.lines.map((l) => l.message);
  }
}

export class RecordingMetrics implements RuntimeMetrics {
  readonly points: { name: string; unit: string; value: number; dimensions?: Record<string, string> }[] = [];
  record(name: string, unit: string, value: number, dimensions?: Record<string, string>) {
    this.points.push({ name, unit, value, ...(dimensions ? { dimensions } : {}) });
  }
  sum(name: string, dimensions?: Record<string, string>): number {
    return this.points
      .filter((p) => p.name === name)
      .filter((p) => !dimensions || Object.entries(dimensions).every(([k, v]) => p.dimensions?.[k] === v))
      .reduce((s, p) => s + p.value, 0);
  }
}

interface Watcher<T> {
  onEvent(event: WatchEvent<T>): void;
  finish(result: WatchResult): void;
}

type Meta = { resourceVersion?: string; deletionTimestamp?: string; finalizers?: string[] };

function meta(object: Pod | Node): Meta {
  return object.metadata as Meta;
}

function applyMap(current: Record<string, string> | undefined, patch: Record<string, string | null> | undefined) {
  if (!patch) return current;
  const out = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** A Kubernetes API in memory: pods, nodes, DaemonSets, watches, merge patches, evictions. */
export class FakeKube implements KubeClient {
  pods = new Map<string, Pod>();
  nodes = new Map<string, Node>();
  daemonSets: Workload[] = [];
  pdbs: PodDisruptionBudget[] = [];
  persistentVolumeClaims: PersistentVolumeClaim[] = [];
  persistentVolumes: PersistentVolume[] = [];
  storageClasses: StorageClass[] = [];
  leases: Lease[] = [];
  volumeAttachments: VolumeAttachment[] = [];
  events: KubeEvent[] = [];
  version = 100;
  readonly calls: { method: string; args: unknown[] }[] = [];
  /** namespace/name → outcomes to answer evictions with (then 'evicted'). */
  readonly evictionAnswers = new Map<string, EvictionOutcome[]>();
  /** Evicted pods are removed at once unless this is false (then they get a deletionTimestamp). */
  removeEvicted = true;
  failNext = new Map<string, Error>();
  private podWatchers = new Set<Watcher<Pod>>();
  private nodeWatchers = new Set<Watcher<Node>>();

  constructor(private readonly sleep: Sleep) {}

  private record(method: string, ...args: unknown[]) {
    this.calls.push({ method, args });
    const failure = this.failNext.get(method);
    if (failure) {
      this.failNext.delete(method);
      throw failure;
    }
  }

  callsTo(method: string) {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  private bump<T extends Pod | Node>(object: T): T {
    this.version++;
    meta(object).resourceVersion = String(this.version);
    return object;
  }

  private key(pod: Pod) {
    return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
  }

  putPod(pod: Pod): void {
    const copy = this.bump(structuredClone(pod));
    const type = this.pods.has(this.key(pod)) ? 'MODIFIED' : 'ADDED';
    this.pods.set(this.key(pod), copy);
    for (const w of this.podWatchers) w.onEvent({ type, object: structuredClone(copy) });
  }

  removePod(namespace: string, name: string): void {
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod) return;
    this.pods.delete(`${namespace}/${name}`);
    this.bump(pod);
    for (const w of this.podWatchers) w.onEvent({ type: 'DELETED', object: structuredClone(pod) });
  }

  putNode(node: Node): void {
    const copy = this.bump(structuredClone(node));
    const type = this.nodes.has(node.metadata.name) ? 'MODIFIED' : 'ADDED';
    this.nodes.set(node.metadata.name, copy);
    for (const w of this.nodeWatchers) w.onEvent({ type, object: structuredClone(copy) });
  }

  /** Ends every open watch with 410 Gone. */
  expireWatches(): void {
    for (const w of [...this.podWatchers, ...this.nodeWatchers]) w.finish({ kind: 'expired' });
  }

  private list<T>(items: T[]): ObjectList<T> {
    return { items: items.map((i) => structuredClone(i)), resourceVersion: String(this.version) };
  }

  async listPods(options?: ListOptions): Promise<ObjectList<Pod>> {
    this.record('listPods', options);
    // The API server's own field selectors (spec.nodeName=, status.phase!=…), as the fake server reads them.
    const matches = fieldSelector('pods', options?.fieldSelector ?? null);
    return this.list([...this.pods.values()].filter((p) => matches(p as unknown as KubeObject)));
  }

  private watch<T>(set: Set<Watcher<T>>, options: WatchOptions, onEvent: (e: WatchEvent<T>) => void) {
    return new Promise<WatchResult>((resolve) => {
      let done = false;
      const watcher: Watcher<T> = {
        onEvent,
        finish: (result) => {
          if (done) return;
          done = true;
          set.delete(watcher);
          resolve(result);
        },
      };
      set.add(watcher);
      const closed = () => watcher.finish({ kind: 'closed', resourceVersion: String(this.version) });
      options.signal?.addEventListener('abort', closed);
      if (options.signal?.aborted) closed();
      void this.sleep(options.timeoutSeconds * 1000).then(closed);
    });
  }

  async watchPods(options: WatchOptions, onEvent: (event: WatchEvent<Pod>) => void): Promise<WatchResult> {
    this.record('watchPods', options.resourceVersion);
    const selector = options.fieldSelector;
    return this.watch(this.podWatchers, options, (event) => {
      if (selector === 'spec.nodeName=' && event.object.spec.nodeName) {
        onEvent({ type: 'DELETED', object: event.object });
      } else onEvent(event);
    });
  }

  async listNodes(options?: ListOptions): Promise<ObjectList<Node>> {
    this.record('listNodes', options);
    return this.list([...this.nodes.values()]);
  }

  async watchNodes(options: WatchOptions, onEvent: (event: WatchEvent<Node>) => void): Promise<WatchResult> {
    this.record('watchNodes', options.resourceVersion);
    return this.watch(this.nodeWatchers, options, onEvent);
  }

  async getNode(name: string): Promise<Node | undefined> {
    this.record('getNode', name);
    const node = this.nodes.get(name);
    return node ? structuredClone(node) : undefined;
  }

  async listDaemonSets(options?: ListOptions): Promise<ObjectList<Workload>> {
    this.record('listDaemonSets', options);
    return { items: structuredClone(this.daemonSets), resourceVersion: String(this.version) };
  }

  async listPodDisruptionBudgets(options?: ListOptions): Promise<ObjectList<PodDisruptionBudget>> {
    this.record('listPodDisruptionBudgets', options);
    return { items: structuredClone(this.pdbs), resourceVersion: String(this.version) };
  }

  async listPersistentVolumeClaims(options?: ListOptions): Promise<ObjectList<PersistentVolumeClaim>> {
    this.record('listPersistentVolumeClaims', options);
    return this.list(this.persistentVolumeClaims);
  }

  async getPersistentVolumeClaim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined> {
    this.record('getPersistentVolumeClaim', { namespace, name });
    return this.persistentVolumeClaims.find(
      (c) => (c.metadata.namespace ?? 'default') === namespace && c.metadata.name === name,
    );
  }

  async listPersistentVolumes(options?: ListOptions): Promise<ObjectList<PersistentVolume>> {
    this.record('listPersistentVolumes', options);
    return this.list(this.persistentVolumes);
  }

  async listStorageClasses(options?: ListOptions): Promise<ObjectList<StorageClass>> {
    this.record('listStorageClasses', options);
    return this.list(this.storageClasses);
  }

  async listLeases(options?: ListOptions): Promise<ObjectList<Lease>> {
    this.record('listLeases', options);
    return this.list(this.leases);
  }

  async patchNode(name: string, patch: NodePatch): Promise<Node> {
    this.record('patchNode', name, patch);
    const current = this.nodes.get(name);
    if (!current) throw new KubeApiError(`PATCH /api/v1/nodes/${name}`, 404, 'NotFound', `nodes "${name}" not found`);
    const wanted = patch.metadata?.resourceVersion;
    if (wanted && wanted !== meta(current).resourceVersion) {
      throw new KubeApiError(`PATCH /api/v1/nodes/${name}`, 409, 'Conflict', 'the object has been modified');
    }
    const next = structuredClone(current);
    const labels = applyMap(next.metadata.labels, patch.metadata?.labels);
    if (labels) next.metadata.labels = labels;
    const annotations = applyMap(next.metadata.annotations, patch.metadata?.annotations);
    if (annotations) next.metadata.annotations = annotations;
    if (patch.metadata?.finalizers !== undefined) meta(next).finalizers = patch.metadata.finalizers ?? [];
    if (patch.spec) {
      next.spec = { ...next.spec };
      if (patch.spec.taints !== undefined) next.spec.taints = patch.spec.taints ?? [];
      if (patch.spec.unschedulable !== undefined) next.spec.unschedulable = patch.spec.unschedulable ?? false;
    }
    if (meta(next).deletionTimestamp && (meta(next).finalizers ?? []).length === 0) {
      this.nodes.delete(name);
      this.bump(next);
      for (const w of this.nodeWatchers) w.onEvent({ type: 'DELETED', object: structuredClone(next) });
      return next;
    }
    this.putNode(next);
    return structuredClone(this.nodes.get(name)!);
  }

  async evictPod(namespace: string, name: string, deadline: number): Promise<EvictionOutcome> {
    this.record('evictPod', namespace, name, deadline);
    const answers = this.evictionAnswers.get(`${namespace}/${name}`);
    const answer = answers?.shift();
    if (answer && answer.kind === 'blocked') return answer;
    const pod = this.pods.get(`${namespace}/${name}`);
    if (pod) {
      if (this.removeEvicted) this.removePod(namespace, name);
      else {
        meta(pod).deletionTimestamp = new Date(0).toISOString();
        this.putPod(pod);
      }
    }
    return { kind: 'evicted' };
  }

  async deleteNode(name: string): Promise<void> {
    this.record('deleteNode', name);
    const node = this.nodes.get(name);
    if (!node) return;
    if ((meta(node).finalizers ?? []).length > 0) {
      meta(node).deletionTimestamp = new Date(START).toISOString();
      this.putNode(node);
      return;
    }
    this.nodes.delete(name);
    for (const w of this.nodeWatchers) w.onEvent({ type: 'DELETED', object: structuredClone(node) });
  }

  async deletePod(namespace: string, name: string, gracePeriodSeconds: number): Promise<void> {
    this.record('deletePod', namespace, name, gracePeriodSeconds);
    this.removePod(namespace, name);
  }

  async listVolumeAttachments(options?: ListOptions): Promise<ObjectList<VolumeAttachment>> {
    this.record('listVolumeAttachments', options);
    return this.list(this.volumeAttachments);
  }

  async createEvent(event: KubeEvent): Promise<void> {
    this.record('createEvent', event);
    this.events.push(structuredClone(event));
  }
}

/** The state table in memory (tests only; shared/providers has the real adapters). */
export class FakeState implements StateStore {
  nominationsByClaim = new Map<string, Nomination>();
  claimed = new Set<string>();
  unavailable = new Map<string, { reason: string; ttlMs: number }>();
  drainRecords = new Map<string, DrainRecord>();
  prices = new Map<string, PriceSnapshot>();
  /** NodeClaim records as the launch would have written them (the provision decision only reads them). */
  records: NodeClaimRecord[] = [];
  readonly calls: string[] = [];

  constructor(private readonly clock: () => number) {}

  async nominate(nomination: Nomination): Promise<boolean> {
    this.calls.push(`nominate ${nomination.nodeClaimName}`);
    const now = this.clock();
    for (const other of this.nominationsByClaim.values()) {
      if (other.nodeClaimName === nomination.nodeClaimName || other.expiresAt <= now) continue;
      if (other.podUids.some((uid) => nomination.podUids.includes(uid))) return false;
    }
    this.nominationsByClaim.set(nomination.nodeClaimName, structuredClone(nomination));
    return true;
  }
  async nominations(): Promise<Nomination[]> {
    const now = this.clock();
    return [...this.nominationsByClaim.values()].filter((n) => n.expiresAt > now).map((n) => structuredClone(n));
  }
  async releaseNomination(nodeClaimName: string): Promise<void> {
    this.calls.push(`release ${nodeClaimName}`);
    this.nominationsByClaim.delete(nodeClaimName);
  }
  async claimOnce(key: string): Promise<boolean> {
    if (this.claimed.has(key)) return false;
    this.claimed.add(key);
    return true;
  }
  async isOfferingUnavailable(capacityType: CapacityType, instanceType: string, zone: string): Promise<boolean> {
    return this.unavailable.has(`${capacityType}:${instanceType}:${zone}`);
  }
  async markOfferingUnavailable(
    capacityType: CapacityType,
    instanceType: string,
    zone: string,
    reason: string,
    ttlMs: number,
  ): Promise<void> {
    this.unavailable.set(`${capacityType}:${instanceType}:${zone}`, { reason, ttlMs });
  }
  async markScopeUnavailable(scope: string, reason: string, ttlMs: number): Promise<void> {
    this.unavailable.set(scope, { reason, ttlMs });
  }
  async getDrain(nodeName: string): Promise<DrainRecord | undefined> {
    const record = this.drainRecords.get(nodeName);
    return record ? structuredClone(record) : undefined;
  }
  async putDrain(record: DrainRecord): Promise<void> {
    this.drainRecords.set(record.nodeName, structuredClone(record));
  }
  async deleteDrain(nodeName: string): Promise<void> {
    this.drainRecords.delete(nodeName);
  }
  async drains(): Promise<DrainRecord[]> {
    return [...this.drainRecords.values()];
  }
  async getPrices(region: string): Promise<PriceSnapshot | undefined> {
    return this.prices.get(region);
  }
  async putPrices(region: string, snapshot: PriceSnapshot): Promise<void> {
    this.prices.set(region, snapshot);
  }
  async nodeClaims(): Promise<NodeClaimRecord[]> {
    return structuredClone(this.records);
  }
  async deleteNodeClaim(name: string): Promise<void> {
    this.records = this.records.filter((r) => r.metadata.name !== name);
  }
}

/** Our instances as EC2 tags would describe them. */
export class FakeInstances {
  readonly instances = new Map<string, ClaimInstance>();
  readonly terminated: string[] = [];
  failNext: Error | undefined;

  add(instance: Partial<ClaimInstance> & { instanceId: string; nodeClaimName: string }): ClaimInstance {
    const full: ClaimInstance = {
      nodePool: 'default',
      nodeClass: 'default',
      instanceType: 'm5.large',
      zone: 'us-west-2a',
      capacityType: 'on-demand',
      state: 'running',
      ...instance,
    };
    this.instances.set(full.instanceId, full);
    return full;
  }

  async byIds(ids: readonly string[]): Promise<Map<string, ClaimInstance>> {
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = undefined;
      throw error;
    }
    return new Map(ids.flatMap((id) => (this.instances.has(id) ? [[id, this.instances.get(id)!] as const] : [])));
  }

  /** Batch-launched instances no claim was tagged on (ClaimInstances.unclaimedLaunches). */
  readonly unclaimed: UnclaimedLaunch[] = [];

  async unclaimedLaunches(): Promise<UnclaimedLaunch[]> {
    return this.unclaimed.filter((u) => !this.terminated.includes(u.instanceId));
  }

  async live(): Promise<ClaimInstance[]> {
    return [...this.instances.values()].filter((i) => i.state === 'pending' || i.state === 'running');
  }

  async terminate(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      this.terminated.push(id);
      const instance = this.instances.get(id);
      if (instance) instance.state = 'shutting-down';
    }
  }
}

export function pendingPod(name: string, overrides: Partial<Pod['spec']> = {}, uid = `uid-${name}`): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid,
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', controller: true }],
    },
    spec: {
      containers: [{ name: 'app', resources: { requests: { cpu: '500m', memory: '512Mi' } } }],
      ...overrides,
    },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
    },
  };
}

/** A FakeKube that holds these pods (and answers at once): the cluster a provision decision reads. */
export function clusterWith(pods: readonly Pod[]): FakeKube {
  const kube = new FakeKube(async () => {});
  for (const pod of pods) kube.putPod(pod);
  return kube;
}

export function boundPod(name: string, nodeName: string, extra: Partial<Pod['metadata']> = {}): Pod {
  const pod = pendingPod(name);
  pod.metadata = { ...pod.metadata, ...extra };
  pod.spec.nodeName = nodeName;
  pod.status = { phase: 'Running' };
  return pod;
}

export function kubeletNode(name: string, instanceId: string, zone = 'us-west-2a'): Node {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: {
      providerID: `aws:///${zone}/${instanceId}`,
      taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }],
    },
    status: { allocatable: { cpu: '2', memory: '8Gi' } },
  };
}

/**
 * A claim launcher that records each launch as a live instance of FakeInstances (so in-flight claims
 * are found again) and returns the planned offering; `fail` makes every launch throttled.
 */
export function recordingLauncher(
  instances: FakeInstances,
  options: { fail?: boolean } = {},
): ClaimLauncher & {
  launches(): number;
} {
  let launches = 0;
  return {
    launches: () => launches,
    async launch(request) {
      if (options.fail) throw Object.assign(new Error('throttled'), { name: 'RequestLimitExceeded' });
      launches++;
      const o = request.claim.offering;
      instances.add({
        instanceId: `i-${launches}`,
        nodeClaimName: request.nodeClaimName,
        nodePool: request.nodePool.metadata.name,
        instanceType: o.instanceType,
        zone: o.zone,
        capacityType: o.capacityType,
      });
      return {
        instanceId: `i-${launches}`,
        instanceType: o.instanceType,
        zone: o.zone,
        capacityType: o.capacityType,
        existing: false,
      };
    },
  };
}

/** The provision queue's retry calls, recorded (shared/runtime/provision-retry.ts). */
export class RecordingRetryQueue implements RetryQueuePort {
  readonly delays: { messageId: string; seconds: number }[] = [];
  readonly deadLettered: { messageId: string; reason: string; attempts: number }[] = [];
  failRetries = false;

  async retryAfter(records: readonly { record: FailedRecord; seconds: number }[]): Promise<void> {
    if (this.failRetries) throw new Error('ChangeMessageVisibilityBatch: AccessDenied');
    for (const { record, seconds } of records) this.delays.push({ messageId: record.messageId, seconds });
  }

  async deadLetter(record: FailedRecord, reason: string): Promise<void> {
    this.deadLettered.push({ messageId: record.messageId, reason, attempts: record.attempts });
  }
}
