// Writes to the resources a client may create: events, CustomResourceDefinitions and custom
// resources (NodePools, NodeClaims, EC2NodeClasses once their CRDs are installed). Create, replace
// and merge-patch with optimistic concurrency, the status subresource (a write to the object keeps
// its status, a write to /status keeps everything else), generateName, and deletion that waits for
// finalizers, as the API server does them. Pods and nodes keep their own routes (routes.ts).

import { randomBytes } from 'node:crypto';
import { conflict, failure, notFound, type StatusBody } from './policy';
import type { CustomResourceDefinition } from './resources';
import { mergePatch, type Store, type StoredObject } from './store';

export interface WriteTarget {
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export interface WriteAnswer {
  status: number;
  body: unknown;
}

const PATCH_TYPES = new Set(['application/merge-patch+json', 'application/strategic-merge-patch+json']);
const GENERATED_SUFFIX = 'bcdfghjklmnpqrstvwxz2456789';

export class ObjectWrites {
  constructor(
    private readonly store: Store,
    private readonly now: () => Date,
  ) {}

  /** Events, CRDs and every custom resource take generic writes. */
  handles(resource: string): boolean {
    return resource === 'events' || resource === 'customresourcedefinitions' || this.store.registry.isCustom(resource);
  }

  create(target: WriteTarget, body: unknown): WriteAnswer {
    if (!isObject(body)) return answer(failure(400, 'BadRequest', 'the body is not a JSON object'));
    const object = structuredClone(body) as StoredObject;
    object.metadata = { ...(isObject(object.metadata) ? object.metadata : {}) } as StoredObject['metadata'];
    const generate = object.metadata.generateName;
    if (!object.metadata.name && typeof generate === 'string') object.metadata.name = generatedName(generate);
    if (!object.metadata.name) {
      return answer(failure(422, 'Invalid', 'metadata.name: Required value: name or generateName is required'));
    }
    if (target.namespace !== undefined) object.metadata.namespace = target.namespace;
    const key = keyIn(target, object.metadata.name);
    if (this.store.get(target.resource, key)) {
      return answer(
        failure(409, 'AlreadyExists', `${target.resource} "${object.metadata.name}" already exists`, {
          name: object.metadata.name,
          kind: target.resource,
        }),
      );
    }
    for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'deletionTimestamp']) {
      delete object.metadata[field];
    }
    if (this.store.registry.get(target.resource)?.statusSubresource) delete object.status;
    const created = this.store.put(target.resource, object);
    this.afterWrite(target.resource, created);
    return { status: 201, body: created };
  }

  item(method: string, target: WriteTarget, body: unknown, contentType: string | undefined): WriteAnswer {
    const name = target.name ?? '';
    const key = keyIn(target, name);
    const current = this.store.get(target.resource, key);
    if (target.subresource !== undefined && target.subresource !== 'status') {
      return answer(failure(404, 'NotFound', 'the server could not find the requested resource'));
    }
    if (!current) return answer(notFound(target.resource, name));
    switch (method) {
      case 'GET':
        return { status: 200, body: current };
      case 'PUT':
        return this.write(target, current, body);
      case 'PATCH': {
        if (!PATCH_TYPES.has(contentType?.split(';')[0]?.trim() ?? '')) {
          return answer(
            failure(415, 'UnsupportedMediaType', `the fake API server takes merge patches only, not ${contentType}`),
          );
        }
        if (!isObject(body)) return answer(failure(400, 'BadRequest', 'the patch is not a JSON object'));
        return this.write(target, current, mergePatch(current, body));
      }
      case 'DELETE':
        return target.subresource === undefined ? this.remove(target, current) : methodNotAllowed();
      default:
        return methodNotAllowed();
    }
  }

  private write(target: WriteTarget, current: StoredObject, body: unknown): WriteAnswer {
    if (!isObject(body)) return answer(failure(400, 'BadRequest', 'the body is not a JSON object'));
    const next = structuredClone(body) as StoredObject;
    const name = current.metadata.name;
    const wanted = (next.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
    if (wanted !== undefined && wanted !== current.metadata.resourceVersion) {
      return answer(conflict(target.resource, name));
    }
    let stored: StoredObject;
    if (target.subresource === 'status') {
      // /status changes the status and nothing else.
      stored = { ...current };
      if (next.status === undefined) delete stored.status;
      else stored.status = next.status;
    } else {
      stored = { ...next, metadata: { ...next.metadata, name } } as StoredObject;
      if (current.metadata.namespace !== undefined) stored.metadata.namespace = current.metadata.namespace;
      if (this.store.registry.get(target.resource)?.statusSubresource) {
        if (current.status === undefined) delete stored.status;
        else stored.status = current.status;
      }
    }
    for (const field of ['uid', 'creationTimestamp', 'deletionTimestamp'] as const) {
      if (current.metadata[field] === undefined) delete stored.metadata[field];
      else stored.metadata[field] = current.metadata[field];
    }
    if (stored.metadata.deletionTimestamp !== undefined && (stored.metadata.finalizers ?? []).length === 0) {
      return { status: 200, body: this.store.remove(target.resource, keyIn(target, name), stored) };
    }
    const written = this.store.put(target.resource, stored);
    this.afterWrite(target.resource, written);
    return { status: 200, body: written };
  }

  private remove(target: WriteTarget, current: StoredObject): WriteAnswer {
    const key = keyIn(target, current.metadata.name);
    if ((current.metadata.finalizers ?? []).length > 0) {
      if (current.metadata.deletionTimestamp !== undefined) return { status: 200, body: current };
      current.metadata.deletionTimestamp = this.now().toISOString();
      return { status: 200, body: this.store.put(target.resource, current) };
    }
    const removed = this.store.remove(target.resource, key);
    if (target.resource === 'customresourcedefinitions' && removed) {
      const plural = (removed as unknown as CustomResourceDefinition).spec?.names?.plural;
      if (plural) this.store.registry.uninstall(plural);
    }
    return { status: 200, body: removed };
  }

  /** A CRD written through the API is served from then on, as the apiextensions server does. */
  private afterWrite(resource: string, object: StoredObject): void {
    if (resource === 'customresourcedefinitions') {
      this.store.registry.install(object as unknown as CustomResourceDefinition);
    }
  }
}

function keyIn(target: WriteTarget, name: string): string {
  return target.namespace ? `${target.namespace}/${name}` : name;
}

function generatedName(prefix: string): string {
  const bytes = randomBytes(5);
  return prefix + [...bytes].map((b) => GENERATED_SUFFIX[b % GENERATED_SUFFIX.length]).join('');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function answer(status: StatusBody): WriteAnswer {
  return { status: status.code, body: status };
}

function methodNotAllowed(): WriteAnswer {
  return answer(failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'));
}
