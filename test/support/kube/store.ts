// The fake API server's object store: every resource it serves (built-in and custom) under one global
// resourceVersion counter, as etcd keeps them, plus a bounded history of changes so a watch can resume from a
// recent resourceVersion and gets 410 Expired from one that has been compacted away.

import { randomUUID } from 'node:crypto';
import { apiVersionOf, ResourceRegistry } from './resources';
import type { KubeObject } from './selectors';

/** A resource's plural name as the registry knows it (`pods`, `nodeclaims`). */
export type Resource = string;
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change {
  resourceVersion: number;
  resource: Resource;
  type: ChangeType;
  object: StoredObject;
  /** The object before a MODIFIED change: a watch with a selector needs both to decide. */
  previous?: StoredObject;
}

export type StoredObject = KubeObject & {
  apiVersion?: string;
  kind?: string;
  metadata: KubeObject['metadata'] & {
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

const BUILT_IN = new ResourceRegistry();

/** The kind and apiVersion of a resource's objects (custom ones: as their CRD was installed). */
export function kindOf(
  resource: Resource,
  registry: ResourceRegistry = BUILT_IN,
): { apiVersion: string; kind: string } {
  const info = registry.get(resource);
  if (!info) throw new Error(`fake API server: no resource ${resource}`);
  return { apiVersion: apiVersionOf(info), kind: info.kind };
}

export function keyOf(object: { metadata: { name: string; namespace?: string } }): string {
  return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;
}

export class ResourceVersionTooOld extends Error {
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

export class Store {
  private revision: number;
  private readonly objects = new Map<Resource, Map<string, StoredObject>>();
  private history: Change[] = [];
  /** Changes at or below this revision are gone from the history. */
  private compactedRevision: number;
  private readonly listeners = new Set<(change: Change) => void>();

  constructor(
    private readonly historyLimit: number,
    private readonly clock: () => Date,
    startRevision = 1000,
    readonly registry: ResourceRegistry = new ResourceRegistry(),
  ) {
    this.revision = startRevision;
    this.compactedRevision = startRevision;
  }

  get resourceVersion(): number {
    return this.revision;
  }

  private of(resource: Resource): Map<string, StoredObject> {
    let objects = this.objects.get(resource);
    if (!objects) {
      objects = new Map();
      this.objects.set(resource, objects);
    }
    return objects;
  }

  get(resource: Resource, key: string): StoredObject | undefined {
    const object = this.of(resource).get(key);
    return object && structuredClone(object);
  }

  /** Every object of a resource in key order, as the API server lists them. */
  list(resource: Resource): StoredObject[] {
    return [...this.of(resource).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, object]) => structuredClone(object));
  }

  /**
   * The stored objects themselves, unordered and not copied: for scans that read a field or two of
   * every object on each request (a copy of 10,000 pods per request is what the server spent its time on).
   * Callers must not change them; copy with structuredClone what they keep or change.
   */
  peek(resource: Resource): Iterable<Readonly<StoredObject>> {
    return this.of(resource).values();
  }

  /**
   * list() without the copies, for answers serialized at once and list snapshots kept for `continue`:
   * safe because a stored object is never changed in place (put stores a new one).
   */
  snapshot(resource: Resource): readonly Readonly<StoredObject>[] {
    return [...this.of(resource).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, object]) => object);
  }

  /**
   * Creates or replaces an object, bumping its resourceVersion. `seeded`: a test's fixture, which may
   * stand for an object already changed before (its own generation is kept on create).
   */
  put(resource: Resource, input: StoredObject, seeded = false): StoredObject {
    const key = keyOf(input);
    const previous = this.of(resource).get(key);
    const kind = kindOf(resource, this.registry);
    const object: StoredObject = { ...kind, ...structuredClone(input), ...kind };
    object.metadata.uid ??= previous?.metadata.uid ?? randomUUID();
    object.metadata.creationTimestamp ??= previous?.metadata.creationTimestamp ?? this.clock().toISOString();
    if (this.registry.get(resource)?.custom) {
      // A custom resource's generation counts changes of what is not metadata or status (its spec).
      const before = previous?.metadata.generation;
      const same = JSON.stringify(previous?.spec) === JSON.stringify(object.spec);
      const created = seeded ? (input.metadata.generation ?? 1) : 1;
      object.metadata.generation = before === undefined ? created : same ? before : before + 1;
    }
    object.metadata.resourceVersion = String(++this.revision);
    this.of(resource).set(key, object);
    this.record(
      previous
        ? { resourceVersion: this.revision, resource, type: 'MODIFIED', object, previous }
        : { resourceVersion: this.revision, resource, type: 'ADDED', object },
    );
    return structuredClone(object);
  }

  /** Deletes an object; `last` is its final state when a write and the delete are one step. */
  remove(resource: Resource, key: string, last?: StoredObject): StoredObject | undefined {
    const previous = this.of(resource).get(key);
    if (!previous) return undefined;
    this.of(resource).delete(key);
    const object = structuredClone(last ?? previous);
    object.metadata.resourceVersion = String(++this.revision);
    this.record({ resourceVersion: this.revision, resource, type: 'DELETED', object });
    return structuredClone(object);
  }

  /** The changes after `resourceVersion`; throws when some of them have been compacted away. */
  changesSince(resourceVersion: number): Change[] {
    if (resourceVersion < this.compactedRevision) {
      throw new ResourceVersionTooOld(resourceVersion, this.compactedRevision + 1);
    }
    return this.history.filter((change) => change.resourceVersion > resourceVersion);
  }

  /** Whether a list snapshot taken at `resourceVersion` could still be continued. */
  isCompacted(resourceVersion: number): boolean {
    return resourceVersion < this.compactedRevision;
  }

  /** Drops the whole history, as etcd compaction does: every older watch now gets 410. */
  compact(): void {
    this.history = [];
    this.compactedRevision = this.revision;
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private record(change: Change): void {
    this.history.push(change);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRevision = dropped[dropped.length - 1]?.resourceVersion ?? this.compactedRevision;
    }
    for (const listener of this.listeners) listener(change);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386 JSON merge patch: objects merge, null deletes, everything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
