// NodePools, NodeClaims and EC2NodeClasses on the API server, where Karpenter's v1 CRDs are installed
// (infra/kubernetes/crds/ or Karpenter's own): whether they are served, list, create, merge-patch
// (the object or its status subresource) and delete. Cluster-scoped, karpenter.sh/v1 and
// karpenter.k8s.aws/v1 only: a cluster with other versions counts as not having them.

import type { Transport } from './http';
import { isKubeApiError } from './types';

export type KarpenterResource = 'nodepools' | 'nodeclaims' | 'ec2nodeclasses';

const GROUP_VERSION: Record<KarpenterResource, string> = {
  nodepools: 'karpenter.sh/v1',
  nodeclaims: 'karpenter.sh/v1',
  ec2nodeclasses: 'karpenter.k8s.aws/v1',
};

const MERGE_PATCH = 'application/merge-patch+json';

export interface KarpenterObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; blockOwnerDeletion?: boolean }[];
  };
  spec?: unknown;
  status?: unknown;
}

export interface KarpenterObjectsApi {
  /** The resources of Karpenter's CRDs the API server serves now (empty without the CRDs). */
  servedResources(): Promise<Set<KarpenterResource>>;
  list(resource: KarpenterResource): Promise<{ items: KarpenterObject[]; resourceVersion: string }>;
  /** One object; undefined when it does not exist or the CRD is not installed. */
  get(resource: KarpenterResource, name: string): Promise<KarpenterObject | undefined>;
  /** The created object, or undefined when one of that name exists already. */
  create(resource: KarpenterResource, object: KarpenterObject): Promise<KarpenterObject | undefined>;
  /** Merge-patches the object (or its status); undefined when it is gone. */
  patch(
    resource: KarpenterResource,
    name: string,
    patch: unknown,
    options?: { status?: boolean },
  ): Promise<KarpenterObject | undefined>;
  /** Deletes; an object already gone is not an error. */
  remove(resource: KarpenterResource, name: string): Promise<void>;
}

export class HttpKarpenterObjects implements KarpenterObjectsApi {
  constructor(private readonly transport: Transport) {}

  async servedResources(): Promise<Set<KarpenterResource>> {
    const served = new Set<KarpenterResource>();
    for (const groupVersion of new Set(Object.values(GROUP_VERSION))) {
      const answer = await this.transport.request({
        method: 'GET',
        path: `/apis/${groupVersion}`,
        retry: 'idempotent',
        accept: [404],
      });
      if (answer.status === 404) continue;
      const names = ((answer.body as { resources?: { name?: string }[] }).resources ?? []).map((r) => r.name);
      for (const [resource, version] of Object.entries(GROUP_VERSION) as [KarpenterResource, string][]) {
        if (version === groupVersion && names.includes(resource)) served.add(resource);
      }
    }
    return served;
  }

  async list(resource: KarpenterResource): Promise<{ items: KarpenterObject[]; resourceVersion: string }> {
    const items: KarpenterObject[] = [];
    let next: string | undefined;
    for (;;) {
      const answer = await this.transport.request({
        method: 'GET',
        path: collection(resource),
        query: { limit: 500, continue: next },
        retry: 'idempotent',
      });
      const page = answer.body as {
        items?: KarpenterObject[];
        metadata?: { resourceVersion?: string; continue?: string };
      };
      for (const item of page.items ?? []) items.push(item);
      next = page.metadata?.continue || undefined;
      if (next === undefined) return { items, resourceVersion: page.metadata?.resourceVersion ?? '' };
    }
  }

  async get(resource: KarpenterResource, name: string): Promise<KarpenterObject | undefined> {
    const answer = await this.transport.request({
      method: 'GET',
      path: `${collection(resource)}/${encodeURIComponent(name)}`,
      retry: 'idempotent',
      accept: [404],
    });
    return answer.status === 404 ? undefined : (answer.body as KarpenterObject);
  }

  async create(resource: KarpenterResource, object: KarpenterObject): Promise<KarpenterObject | undefined> {
    const answer = await this.transport.request({
      method: 'POST',
      path: collection(resource),
      body: object,
      retry: 'unsent',
      accept: [409],
    });
    return answer.status === 409 ? undefined : (answer.body as KarpenterObject);
  }

  async patch(
    resource: KarpenterResource,
    name: string,
    patch: unknown,
    options: { status?: boolean } = {},
  ): Promise<KarpenterObject | undefined> {
    const answer = await this.transport.request({
      method: 'PATCH',
      path: `${collection(resource)}/${encodeURIComponent(name)}${options.status ? '/status' : ''}`,
      body: patch,
      contentType: MERGE_PATCH,
      retry: 'idempotent',
      accept: [404],
    });
    return answer.status === 404 ? undefined : (answer.body as KarpenterObject);
  }

  async remove(resource: KarpenterResource, name: string): Promise<void> {
    try {
      await this.transport.request({
        method: 'DELETE',
        path: `${collection(resource)}/${encodeURIComponent(name)}`,
        retry: 'idempotent',
        accept: [404],
      });
    } catch (error) {
      if (!isKubeApiError(error, 404)) throw error;
    }
  }
}

function collection(resource: KarpenterResource): string {
  return `/apis/${GROUP_VERSION[resource]}/${resource}`;
}
