// The fake API server's REST surface: which path means what, lists with pagination, watches, node
// patches and deletes, and evictions. Answers are { status, body }; a watch writes its own stream.

import type * as http from 'node:http';
import type { FakeKubelet } from './kubelet';
import {
  budgetStatus,
  conflict,
  evictionRefusal,
  failure,
  notFound,
  type PodDisruptionBudget,
  type StatusBody,
  success,
} from './policy';
import type { ResourceRegistry } from './resources';
import { fieldSelector, labelSelector, type Matcher, SelectorError } from './selectors';
import {
  type Change,
  kindOf,
  mergePatch,
  type Resource,
  ResourceVersionTooOld,
  type Store,
  type StoredObject,
} from './store';
import { ObjectWrites } from './writes';

export interface Answer {
  status: number;
  /** undefined when the route already wrote the answer (a watch). */
  body?: unknown;
}

interface Target {
  resource: Resource;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface Watch {
  resource: Resource;
  bookmarks: boolean;
  write(type: string, object: unknown): void;
  end(): void;
}

const MERGE_PATCH = 'application/merge-patch+json';
const TAINT_EFFECTS = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
const MAX_SNAPSHOTS = 100;
const DEFAULT_WATCH_TIMEOUT_SECONDS = 1800;

/**
 * /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]] and /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE[/NAME[/SUB]],
 * for the resources the registry serves; a namespace in front of a cluster-scoped resource names nothing.
 */
export function parseTarget(pathname: string, registry: ResourceRegistry): Target | undefined {
  const match =
    /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))\/(?:namespaces\/([^/]+)\/)?([^/]+)(?:\/([^/]+)(?:\/([^/]+))?)?$/.exec(
      pathname,
    );
  if (!match) return undefined;
  const [, coreVersion, group = '', groupVersion, namespace, resource = '', name, subresource] = match;
  const info = registry.find(group, coreVersion ?? groupVersion ?? '', resource);
  if (!info || (!info.namespaced && namespace)) return undefined;
  const target: Target = { resource };
  if (namespace) target.namespace = decodeURIComponent(namespace);
  if (name !== undefined) target.name = decodeURIComponent(name);
  if (subresource !== undefined) target.subresource = subresource;
  return target;
}

export class FakeApiRoutes {
  private readonly watches = new Set<Watch>();
  private readonly snapshots = new Map<string, { resourceVersion: number; items: readonly Readonly<StoredObject>[] }>();
  private snapshotSeq = 0;
  private readonly writes: ObjectWrites;

  constructor(
    private readonly store: Store,
    private readonly budgets: PodDisruptionBudget[],
    private readonly now: () => Date,
    private readonly kubelet: FakeKubelet,
  ) {
    this.writes = new ObjectWrites(store, now);
  }

  route(method: string, url: URL, body: unknown, contentType: string | undefined, res: http.ServerResponse): Answer {
    if (url.pathname === '/apis/policy/v1/poddisruptionbudgets') {
      return method === 'GET' ? this.listBudgets() : methodNotAllowed();
    }
    const target = parseTarget(url.pathname, this.store.registry);
    if (!target) return notFoundPath();
    // Pods whose grace period ran out while nobody asked are gone by the time anyone asks.
    this.kubelet.reap();
    try {
      if (target.name === undefined) {
        if (method === 'POST' && target.resource === 'volumeattachments') return this.create(target, body);
        if (method === 'POST' && this.writes.handles(target.resource)) return this.writes.create(target, body);
        if (method !== 'GET') return methodNotAllowed();
        const watch = url.searchParams.get('watch');
        if (watch === 'true' || watch === '1') return this.watch(target, url.searchParams, res);
        return this.list(target, url.searchParams);
      }
      return this.item(method, target, body, contentType, url.searchParams);
    } catch (error) {
      if (error instanceof SelectorError) return answer(failure(400, 'BadRequest', error.message));
      throw error;
    }
  }

  /** Every PodDisruptionBudget with the status the disruption controller would write (one page). */
  private listBudgets(): Answer {
    const pods = this.store.list('pods');
    const items = this.budgets.map((b) => {
      const status = budgetStatus(b, pods);
      return {
        metadata: { name: b.name, namespace: b.namespace },
        spec: {
          selector: b.selector,
          ...(b.minAvailable !== undefined ? { minAvailable: b.minAvailable } : {}),
          ...(b.maxUnavailable !== undefined ? { maxUnavailable: b.maxUnavailable } : {}),
        },
        status: {
          currentHealthy: status.healthy,
          desiredHealthy: status.desiredHealthy,
          disruptionsAllowed: status.disruptionsAllowed,
        },
      };
    });
    return {
      status: 200,
      body: {
        kind: 'PodDisruptionBudgetList',
        apiVersion: 'policy/v1',
        metadata: { resourceVersion: String(this.store.resourceVersion) },
        items,
      },
    };
  }

  /** Creates an object at a collection path (VolumeAttachments, which the attach/detach controller makes). */
  private create(target: Target, body: unknown): Answer {
    const object = body as StoredObject | undefined;
    const name = object?.metadata?.name;
    if (typeof name !== 'string' || name === '') {
      return answer(failure(422, 'Invalid', `${target.resource}: metadata.name: Required value`));
    }
    const stored = { ...(object as StoredObject) };
    if (target.namespace !== undefined) stored.metadata = { ...stored.metadata, namespace: target.namespace };
    const key = target.namespace !== undefined ? `${target.namespace}/${name}` : name;
    if (this.store.get(target.resource, key)) {
      return answer(failure(409, 'AlreadyExists', `${target.resource} "${name}" already exists`, { name }));
    }
    return { status: 201, body: this.store.put(target.resource, stored) };
  }

  private item(
    method: string,
    target: Target,
    body: unknown,
    contentType: string | undefined,
    query: URLSearchParams,
  ): Answer {
    const { resource, name = '' } = target;
    if (
      this.writes.handles(resource) &&
      (target.namespace !== undefined || !this.store.registry.get(resource)?.namespaced)
    ) {
      return this.writes.item(method, target, body, contentType);
    }
    if (target.subresource === 'eviction' && resource === 'pods') {
      return method === 'POST' ? this.evict(target, body) : methodNotAllowed();
    }
    if (target.subresource !== undefined) return notFoundPath();
    if (this.store.registry.get(resource)?.namespaced && target.namespace === undefined) return notFoundPath();
    const key = target.namespace ? `${target.namespace}/${name}` : name;
    switch (method) {
      case 'GET': {
        const object = this.store.get(resource, key);
        return object ? { status: 200, body: object } : answer(notFound(resource, name));
      }
      case 'PATCH':
        return resource === 'nodes' ? this.patchNode(name, body, contentType) : methodNotAllowed();
      case 'DELETE': {
        if (resource === 'nodes') return this.deleteNodeObject(name);
        if (resource === 'pods') return this.deletePod(key, name, body, query);
        const removed = this.store.remove(resource, key);
        return removed ? { status: 200, body: removed } : answer(notFound(resource, name));
      }
      default:
        return methodNotAllowed();
    }
  }

  private list(target: Target, query: URLSearchParams): Answer {
    const { kind, apiVersion } = kindOf(target.resource, this.store.registry);
    const token = query.get('continue');
    const fromCache = query.get('resourceVersion') === '0';
    if (token && query.get('resourceVersion')) {
      return answer(failure(400, 'BadRequest', 'specifying resource version is not allowed when using continue'));
    }
    let snapshot: { resourceVersion: number; items: readonly Readonly<StoredObject>[] };
    let offset = 0;
    if (token) {
      const decoded = decodeContinue(token);
      const found = decoded && this.snapshots.get(decoded.id);
      if (!decoded || !found) return answer(failure(400, 'BadRequest', 'continue key is not valid'));
      if (this.store.isCompacted(found.resourceVersion)) {
        return answer(
          failure(
            410,
            'Expired',
            'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
          ),
        );
      }
      snapshot = found;
      offset = decoded.offset;
    } else {
      const matches = this.matcher(target, query);
      snapshot = {
        resourceVersion: this.store.resourceVersion,
        items: this.store.snapshot(target.resource).filter(matches),
      };
    }
    // resourceVersion=0 is served from the API server's watch cache, which answers the whole list at
    // once: the limit is ignored and there is no continue (kube-apiserver's cacher before list
    // snapshots; a client must not count on pages then).
    const limit = fromCache ? 0 : Number(query.get('limit') ?? '0');
    const end = limit > 0 ? Math.min(snapshot.items.length, offset + limit) : snapshot.items.length;
    const metadata: Record<string, unknown> = { resourceVersion: String(snapshot.resourceVersion) };
    if (end < snapshot.items.length) {
      const id = token ? (decodeContinue(token)?.id ?? '') : this.saveSnapshot(snapshot);
      metadata.continue = encodeContinue(id, end);
      metadata.remainingItemCount = snapshot.items.length - end;
    }
    // List items carry no kind or apiVersion on a real server either.
    const items = snapshot.items.slice(offset, end).map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
    return { status: 200, body: { kind: `${kind}List`, apiVersion, metadata, items } };
  }

  private saveSnapshot(snapshot: { resourceVersion: number; items: readonly Readonly<StoredObject>[] }): string {
    const id = String(++this.snapshotSeq);
    this.snapshots.set(id, snapshot);
    if (this.snapshots.size > MAX_SNAPSHOTS) {
      const oldest = this.snapshots.keys().next().value;
      if (oldest !== undefined) this.snapshots.delete(oldest);
    }
    return id;
  }

  private matcher(target: Target, query: URLSearchParams): Matcher {
    const byField = fieldSelector(target.resource, query.get('fieldSelector'));
    const byLabel = labelSelector(query.get('labelSelector'));
    const namespace = target.namespace;
    return (o) => (namespace === undefined || o.metadata.namespace === namespace) && byField(o) && byLabel(o);
  }

  private watch(target: Target, query: URLSearchParams, res: http.ServerResponse): Answer {
    const matches = this.matcher(target, query);
    const from = query.get('resourceVersion') ?? '';
    const timeoutSeconds = Number(query.get('timeoutSeconds') ?? DEFAULT_WATCH_TIMEOUT_SECONDS);
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const write = (type: string, object: unknown) => {
      if (!res.writableEnded) res.write(`${JSON.stringify({ type, object })}\n`);
    };
    let unsubscribe = () => {};
    const watch: Watch = {
      resource: target.resource,
      bookmarks: query.get('allowWatchBookmarks') === 'true',
      write,
      end: () => {
        clearTimeout(timer);
        unsubscribe();
        this.watches.delete(watch);
        if (!res.writableEnded) res.end();
      },
    };
    const timer = setTimeout(() => watch.end(), timeoutSeconds * 1000);
    res.on('close', () => watch.end());

    const deliver = (change: Change) => {
      if (change.resource !== target.resource) return;
      const type = transition(change, matches);
      if (type) write(type, change.object);
    };
    if (from === '' || from === '0') {
      // Without a resourceVersion a watch starts with the current state as ADDED events.
      for (const object of this.store.list(target.resource).filter(matches)) write('ADDED', object);
    } else {
      let backlog: Change[];
      try {
        backlog = this.store.changesSince(Number(from));
      } catch (error) {
        if (!(error instanceof ResourceVersionTooOld)) throw error;
        write('ERROR', failure(410, 'Expired', error.message));
        watch.end();
        return { status: 200 };
      }
      for (const change of backlog) deliver(change);
    }
    unsubscribe = this.store.subscribe(deliver);
    this.watches.add(watch);
    return { status: 200 };
  }

  get activeWatches(): number {
    return this.watches.size;
  }

  sendBookmarks(): void {
    for (const watch of this.watches) {
      if (!watch.bookmarks) continue;
      const { kind, apiVersion } = kindOf(watch.resource, this.store.registry);
      watch.write('BOOKMARK', { kind, apiVersion, metadata: { resourceVersion: String(this.store.resourceVersion) } });
    }
  }

  endWatches(): void {
    for (const watch of [...this.watches]) watch.end();
  }

  private patchNode(name: string, patch: unknown, contentType: string | undefined): Answer {
    if (contentType?.split(';')[0]?.trim() !== MERGE_PATCH) {
      return answer(
        failure(
          415,
          'UnsupportedMediaType',
          `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, ${MERGE_PATCH}, application/apply-patch+yaml, application/strategic-merge-patch+json`,
        ),
      );
    }
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
      return answer(failure(400, 'BadRequest', 'the patch is not a JSON object'));
    }
    const current = this.store.get('nodes', name);
    if (!current) return answer(notFound('nodes', name));
    const wanted = (patch as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
    if (wanted !== undefined && wanted !== current.metadata.resourceVersion) return answer(conflict('nodes', name));
    const next = mergePatch(current, patch) as StoredObject;
    const invalid = validateNode(next, name);
    if (invalid) return answer(invalid);
    if (next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0) {
      // The last finalizer is gone from a node being deleted: now it goes.
      return { status: 200, body: this.store.remove('nodes', name, next) };
    }
    return { status: 200, body: this.store.put('nodes', next) };
  }

  deleteNodeObject(name: string): Answer {
    const node = this.store.get('nodes', name);
    if (!node) return answer(notFound('nodes', name));
    if ((node.metadata.finalizers ?? []).length > 0) {
      if (node.metadata.deletionTimestamp !== undefined) return { status: 200, body: node };
      node.metadata.deletionTimestamp = this.now().toISOString();
      return { status: 200, body: this.store.put('nodes', node) };
    }
    return { status: 200, body: this.store.remove('nodes', name) };
  }

  private evict(target: Target, body: unknown): Answer {
    const { namespace = '', name = '' } = target;
    const eviction = body as { kind?: string; apiVersion?: string; metadata?: { name?: string } } | undefined;
    if (
      eviction?.kind !== 'Eviction' ||
      !['policy/v1', 'policy/v1beta1'].includes(eviction.apiVersion ?? '') ||
      eviction.metadata?.name !== name
    ) {
      return answer(
        failure(400, 'BadRequest', `the body must be a policy/v1 Eviction whose metadata.name is "${name}"`),
      );
    }
    const pod = this.store.get('pods', `${namespace}/${name}`);
    if (!pod) return answer(notFound('pods', name));
    // A pod already terminating is not disrupted again: the eviction succeeds without a budget check.
    if (pod.metadata.deletionTimestamp !== undefined) return { status: 201, body: success(201) };
    const refusal = evictionRefusal(pod, this.store.list('pods'), this.budgets);
    if (refusal) return answer(refusal);
    this.kubelet.delete(`${namespace}/${name}`);
    return { status: 201, body: success(201) };
  }

  /** Graceful deletion: DeleteOptions.gracePeriodSeconds (body or query) overrides the pod's own. */
  private deletePod(key: string, name: string, body: unknown, query: URLSearchParams): Answer {
    const fromBody = (body as { gracePeriodSeconds?: unknown } | undefined)?.gracePeriodSeconds;
    const fromQuery = query.get('gracePeriodSeconds');
    const grace =
      typeof fromBody === 'number' ? fromBody : fromQuery !== null && fromQuery !== '' ? Number(fromQuery) : undefined;
    if (grace !== undefined && (!Number.isInteger(grace) || grace < 0)) {
      return answer(failure(400, 'BadRequest', `gracePeriodSeconds must be a non-negative integer, not ${grace}`));
    }
    const left = this.kubelet.delete(key, grace);
    return left ? { status: 200, body: left } : answer(notFound('pods', name));
  }
}

/** What a watch with a selector sees: objects entering the selection are ADDED, leaving it DELETED. */
function transition(change: Change, matches: Matcher): string | undefined {
  const now = matches(change.object);
  if (change.type !== 'MODIFIED') return now ? change.type : undefined;
  const before = change.previous ? matches(change.previous) : false;
  if (before && now) return 'MODIFIED';
  if (now) return 'ADDED';
  return before ? 'DELETED' : undefined;
}

function validateNode(node: StoredObject, name: string): StatusBody | undefined {
  const problems: string[] = [];
  if (node.metadata.name !== name) problems.push('metadata.name: field is immutable');
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (typeof value !== 'string') problems.push(`metadata.labels[${key}]: must be a string`);
  }
  const taints = (node.spec as { taints?: unknown } | undefined)?.taints;
  if (taints !== undefined && !Array.isArray(taints)) problems.push('spec.taints: must be a list');
  for (const [i, taint] of (Array.isArray(taints) ? taints : []).entries()) {
    const t = taint as { key?: unknown; effect?: unknown };
    if (typeof t.key !== 'string' || t.key === '') problems.push(`spec.taints[${i}].key: Required value`);
    if (!TAINT_EFFECTS.has(String(t.effect))) problems.push(`spec.taints[${i}].effect: Unsupported value`);
  }
  if (problems.length === 0) return undefined;
  return failure(422, 'Invalid', `Node "${name}" is invalid: ${problems.join(', ')}`, { name, kind: 'Node' });
}

function answer(status: StatusBody): Answer {
  return { status: status.code, body: status };
}

function notFoundPath(): Answer {
  return answer(failure(404, 'NotFound', 'the server could not find the requested resource'));
}

function methodNotAllowed(): Answer {
  return answer(failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'));
}

function encodeContinue(id: string, offset: number): string {
  return Buffer.from(JSON.stringify({ id, offset })).toString('base64url');
}

function decodeContinue(token: string): { id: string; offset: number } | undefined {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { id?: unknown; offset?: unknown };
    return typeof value.id === 'string' && typeof value.offset === 'number'
      ? { id: value.id, offset: value.offset }
      : undefined;
  } catch {
    return undefined;
  }
}
