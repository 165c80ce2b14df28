// An in-process Kubernetes API server for tests and the demo: it listens on 127.0.0.1 (http, or
// https with the committed test certificate) and answers the calls karpless makes with the JSON a
// real API server writes: lists with resourceVersion and continue, Status objects for errors, watch
// streams with bookmarks and 410, merge patches with optimistic concurrency, node finalizers,
// evictions checked against PodDisruptionBudgets, pods that take their grace period to terminate
// (kubelet.ts), VolumeAttachments. No test framework is imported: the demo runs it too.

import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type {
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
  Workload,
} from '../../../shared/apis/core/v1';
import type { Lease } from '../../../shared/kube/types';
import { discovery } from './discovery';
import { FakeKubelet } from './kubelet';
import { evictionRefusal, failure, type PodDisruptionBudget, REASON_BY_CODE, type StatusBody } from './policy';
import type { CustomResourceDefinition } from './resources';
import { FakeApiRoutes } from './routes';
import { Store, type StoredObject } from './store';
import { toTable, wantsTable } from './tables';

export type { PodDisruptionBudget } from './policy';

export interface FakeApiServerOptions {
  /** The bearer token requests must carry; undefined accepts any request. */
  token?: string;
  /** Serve https with this certificate (see testTls()). */
  tls?: { cert: string; key: string };
  /** Changes kept for watches to resume from; older resourceVersions get 410. */
  historyLimit?: number;
  /** Send BOOKMARK events to watches that allow them this often (0: only on sendBookmarks()). */
  bookmarkIntervalMs?: number;
  /** The port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** The server's clock, for creation and deletion timestamps. */
  now?: () => Date;
}

export interface Fault {
  /** Matches any method when absent. */
  method?: string;
  /** An exact path (no query), or a pattern tested against path and query. */
  path: string | RegExp;
  /** How many matching requests get the fault; Infinity for all. */
  times?: number;
  /** Answer with this status (a Status body is written for it)… */
  status?: number;
  message?: string;
  retryAfterSeconds?: number;
  /** …or accept the request and never answer. */
  hang?: boolean;
  /** …or drop the connection without an answer. */
  reset?: boolean;
}

export interface RequestRecord {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType?: string;
  /** The bearer token the request carried. */
  token?: string;
  body?: unknown;
  /** The status answered (200 for a watch that started). */
  status: number;
}

/** The committed, test-only self-signed certificate for 127.0.0.1 (valid until 2126). */
export function testTls(): { cert: string; key: string } {
  const read = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');
  return { cert: read('./localhost-cert.pem'), key: read('./localhost-key.pem') };
}

export class FakeApiServer {
  readonly requests: RequestRecord[] = [];
  readonly store: Store;
  readonly budgets: PodDisruptionBudget[] = [];
  /** Graceful pod deletion: hold, release and reap terminating pods (see kubelet.ts). */
  readonly kubelet: FakeKubelet;
  token: string | undefined;
  private readonly faults: (Fault & { remaining: number })[] = [];
  private readonly routes: FakeApiRoutes;
  private readonly now: () => Date;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private port = 0;

  private constructor(
    private readonly server: http.Server,
    private readonly options: FakeApiServerOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.token = options.token;
    this.store = new Store(options.historyLimit ?? 1000, this.now);
    this.kubelet = new FakeKubelet(this.store, this.now);
    this.routes = new FakeApiRoutes(this.store, this.budgets, this.now, this.kubelet);
  }

  static async start(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    let fake: FakeApiServer | undefined;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => fake?.handle(req, res);
    const server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
    fake = new FakeApiServer(server, options);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    fake.port = (server.address() as AddressInfo).port;
    if (options.bookmarkIntervalMs) {
      fake.bookmarkTimer = setInterval(() => fake?.sendBookmarks(), options.bookmarkIntervalMs);
      fake.bookmarkTimer.unref();
    }
    return fake;
  }

  get url(): string {
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${this.port}`;
  }

  /** The PEM a client must trust (https only). */
  get ca(): string | undefined {
    return this.options.tls?.cert;
  }

  get resourceVersion(): string {
    return String(this.store.resourceVersion);
  }

  /** Ends every watch and hanging request, then closes the port. */
  async stop(): Promise<void> {
    clearInterval(this.bookmarkTimer);
    this.routes.endWatches();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // --- programmatic API -------------------------------------------------------------------

  /** Installs CRDs as `kubectl apply -f infra/kubernetes/crds/` would: their resources are served from now on. */
  installCustomResources(crds: readonly CustomResourceDefinition[]): void {
    for (const crd of crds) {
      this.store.registry.install(crd);
      this.store.put('customresourcedefinitions', structuredClone(crd) as unknown as StoredObject);
    }
  }

  /** Puts any served object (a NodePool, an Event…) as a client's create or update would. */
  putObject(resource: string, object: { metadata: { name: string; namespace?: string } }): StoredObject {
    return this.store.put(resource, structuredClone(object) as StoredObject, true);
  }

  getObject(resource: string, name: string, namespace?: string): StoredObject | undefined {
    return this.store.get(resource, namespace ? `${namespace}/${name}` : name);
  }

  listObjects(resource: string): StoredObject[] {
    return this.store.registry.get(resource) ? this.store.list(resource) : [];
  }

  addPod(pod: Pod): Pod {
    const object = structuredClone(pod) as unknown as StoredObject;
    object.metadata.namespace ??= 'default';
    object.status ??= { phase: object.spec?.nodeName ? 'Running' : 'Pending' };
    return this.store.put('pods', object) as unknown as Pod;
  }

  updatePod(namespace: string, name: string, change: (pod: Pod) => void): Pod {
    const pod = this.mustGet('pods', `${namespace}/${name}`) as unknown as Pod;
    change(pod);
    const stored = this.store.put('pods', pod as unknown as StoredObject) as unknown as Pod;
    // Removing the last finalizer of a terminating pod lets it go.
    this.kubelet.afterUpdate(`${namespace}/${name}`);
    return stored;
  }

  /** Binds a pod as the scheduler and kubelet would: nodeName set, Running and Ready. */
  bindPod(namespace: string, name: string, nodeName: string): Pod {
    return this.updatePod(namespace, name, (pod) => {
      pod.spec.nodeName = nodeName;
      pod.status = {
        phase: 'Running',
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
      };
    });
  }

  /** Removes a pod at once, as a force delete (grace 0) does. */
  deletePod(namespace: string, name: string): void {
    this.store.remove('pods', `${namespace}/${name}`);
  }

  /** Deletes a pod gracefully, as `kubectl delete pod` does (the kubelet then takes its grace period). */
  terminatePod(namespace: string, name: string, gracePeriodSeconds?: number): Pod | undefined {
    return this.kubelet.delete(`${namespace}/${name}`, gracePeriodSeconds) as unknown as Pod | undefined;
  }

  /** Keeps the pod Terminating whatever the clock says (a preStop hook that never returns). */
  holdPod(namespace: string, name: string): void {
    this.kubelet.hold(`${namespace}/${name}`);
  }

  /** The pod's containers stopped: a terminating pod goes now (unless finalizers keep it). */
  releasePod(namespace: string, name: string): void {
    this.kubelet.release(`${namespace}/${name}`);
  }

  /** Removes the terminating pods whose grace period has passed on the server's clock. */
  reapPods(): void {
    this.kubelet.reap();
  }

  getPod(namespace: string, name: string): Pod | undefined {
    return this.store.get('pods', `${namespace}/${name}`) as unknown as Pod | undefined;
  }

  pods(): Pod[] {
    return this.store.list('pods') as unknown as Pod[];
  }

  addNode(node: Node): Node {
    return this.store.put('nodes', structuredClone(node) as unknown as StoredObject) as unknown as Node;
  }

  updateNode(name: string, change: (node: Node) => void): Node {
    const node = this.mustGet('nodes', name) as unknown as Node;
    change(node);
    return this.store.put('nodes', node as unknown as StoredObject) as unknown as Node;
  }

  /** Sets the Ready condition, as the kubelet does once the node is up. */
  markNodeReady(name: string, ready = true): Node {
    return this.updateNode(name, (node) => {
      node.status ??= {};
      const others = (node.status.conditions ?? []).filter((c) => c.type !== 'Ready');
      const time = this.now().toISOString();
      node.status.conditions = [
        ...others,
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          reason: ready ? 'KubeletReady' : 'KubeletNotReady',
          lastHeartbeatTime: time,
          lastTransitionTime: time,
        },
      ];
    });
  }

  /** Deletes as `kubectl delete node` does: with finalizers the node only gets a deletionTimestamp. */
  deleteNode(name: string, { force = false } = {}): void {
    if (force) this.store.remove('nodes', name);
    else this.routes.deleteNodeObject(name);
  }

  getNode(name: string): Node | undefined {
    return this.store.get('nodes', name) as unknown as Node | undefined;
  }

  nodes(): Node[] {
    return this.store.list('nodes') as unknown as Node[];
  }

  addDaemonSet(daemonSet: Workload): Workload {
    const object = structuredClone(daemonSet) as unknown as StoredObject;
    object.metadata.namespace ??= 'default';
    return this.store.put('daemonsets', object) as unknown as Workload;
  }

  addPersistentVolumeClaim(claim: PersistentVolumeClaim): PersistentVolumeClaim {
    const object = structuredClone(claim) as unknown as StoredObject;
    object.metadata.namespace ??= 'default';
    return this.store.put('persistentvolumeclaims', object) as unknown as PersistentVolumeClaim;
  }

  addPersistentVolume(volume: PersistentVolume): PersistentVolume {
    return this.store.put(
      'persistentvolumes',
      structuredClone(volume) as unknown as StoredObject,
    ) as unknown as PersistentVolume;
  }

  /** A Lease as a controller's leader election keeps it (holder, duration, renewTime). */
  putLease(lease: Lease): Lease {
    const object = structuredClone(lease) as unknown as StoredObject;
    object.metadata.namespace ??= 'default';
    return this.store.put('leases', object) as unknown as Lease;
  }

  addStorageClass(storageClass: StorageClass): StorageClass {
    return this.store.put(
      'storageclasses',
      structuredClone(storageClass) as unknown as StoredObject,
    ) as unknown as StorageClass;
  }

  /** A VolumeAttachment of `volume` (a PersistentVolume name) on `nodeName`, as the attach/detach controller makes. */
  addVolumeAttachment(name: string, nodeName: string, volume: string): void {
    this.store.put('volumeattachments', {
      metadata: { name },
      spec: { attacher: 'ebs.csi.aws.com', nodeName, source: { persistentVolumeName: volume } },
      status: { attached: true },
    });
  }

  /** The volume detached: the attach/detach controller deletes its VolumeAttachment. */
  deleteVolumeAttachment(name: string): void {
    this.store.remove('volumeattachments', name);
  }

  volumeAttachments(): StoredObject[] {
    return this.store.list('volumeattachments');
  }

  /** Events recorded about an object (by kind and name), oldest first: what `kubectl describe` lists. */
  eventsFor(kind: string, name: string): { reason: string; message: string; type: string }[] {
    return this.store
      .list('events')
      .map(
        (e) =>
          e as unknown as {
            involvedObject?: { kind?: string; name?: string };
            reason: string;
            message: string;
            type: string;
            metadata: { resourceVersion?: string };
          },
      )
      .filter((e) => e.involvedObject?.kind === kind && e.involvedObject?.name === name)
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
      .map(({ reason, message, type }) => ({ reason, message, type }));
  }

  addPodDisruptionBudget(budget: PodDisruptionBudget): void {
    this.removePodDisruptionBudget(budget.namespace, budget.name);
    this.budgets.push(structuredClone(budget));
  }

  removePodDisruptionBudget(namespace: string, name: string): void {
    const index = this.budgets.findIndex((b) => b.namespace === namespace && b.name === name);
    if (index >= 0) this.budgets.splice(index, 1);
  }

  /** Whether the eviction of a pod would be allowed now (undefined) or the Status it would get. */
  evictionRefusal(namespace: string, name: string): StatusBody | undefined {
    const pod = this.mustGet('pods', `${namespace}/${name}`);
    return evictionRefusal(pod, this.store.list('pods'), this.budgets);
  }

  injectFault(fault: Fault): void {
    this.faults.push({ ...fault, remaining: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch that allows bookmarks. */
  sendBookmarks(): void {
    this.routes.sendBookmarks();
  }

  /** Watches currently open: a test waits for its watch to be registered before it changes things. */
  get activeWatches(): number {
    return this.routes.activeWatches;
  }

  /** Forgets the change history: every watch from an older resourceVersion now gets 410. */
  compactHistory(): void {
    this.store.compact();
  }

  requestsTo(method: string, path: string | RegExp): RequestRecord[] {
    return this.requests.filter(
      (r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)),
    );
  }

  private mustGet(resource: 'pods' | 'nodes', key: string): StoredObject {
    const object = this.store.get(resource, key);
    if (!object) throw new Error(`fake API server: no ${resource} ${key}`);
    return object;
  }

  // --- HTTP --------------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const record: RequestRecord = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: 0,
    };
    if (req.headers['content-type']) record.contentType = req.headers['content-type'];
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (bearer) record.token = bearer;
    this.requests.push(record);
    const text = await readBody(req);
    if (text) record.body = parseOrText(text);

    const fault = this.takeFault(record.method, url);
    if (fault) {
      record.status = fault.status ?? 0;
      if (fault.hang) return;
      if (fault.reset) return void req.socket.destroy();
      const code = fault.status ?? 500;
      const headers = fault.retryAfterSeconds ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
      return respond(
        res,
        code,
        failure(code, REASON_BY_CODE[code] ?? 'Unknown', fault.message ?? 'injected fault'),
        headers,
      );
    }
    if (this.token !== undefined && req.headers.authorization !== `Bearer ${this.token}`) {
      record.status = 401;
      return respond(res, 401, failure(401, 'Unauthorized', 'Unauthorized'));
    }
    try {
      const document =
        record.method === 'GET'
          ? discovery(url.pathname, this.store.registry, req.headers.host ?? '127.0.0.1')
          : undefined;
      if (document !== undefined) {
        record.status = 200;
        return respond(res, 200, document);
      }
      const answer = this.routes.route(record.method, url, record.body, record.contentType, res);
      record.status = answer.status;
      if (answer.body === undefined) return;
      const table =
        answer.status === 200 && wantsTable(req.headers.accept)
          ? toTable(answer.body, this.store.registry, this.now(), url.searchParams.get('includeObject'))
          : undefined;
      respond(res, answer.status, table ?? answer.body);
    } catch (error) {
      // A bug in the fake must fail the request that hit it, not the whole test process.
      record.status = 500;
      respond(res, 500, failure(500, 'InternalError', `fake API server: ${String(error)}`));
    }
  }

  private takeFault(method: string, url: URL): Fault | undefined {
    const fault = this.faults.find(
      (f) =>
        f.remaining > 0 &&
        (f.method === undefined || f.method === method) &&
        (typeof f.path === 'string' ? f.path === url.pathname : f.path.test(url.pathname + url.search)),
    );
    if (fault) fault.remaining--;
    return fault;
  }
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function respond(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
