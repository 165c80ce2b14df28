// The fake API server's custom resources, as the apiextensions server serves them: nothing until the
// CRD is installed (through the API, as kubectl apply does), then create, merge patch, the status
// subresource, finalizers, events and field selectors on them.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { karpenterCrds } from '../../shared/apis/v1/crds';
import { FakeApiServer } from '../support/kube/fake-apiserver';

const NODEPOOLS = '/apis/karpenter.sh/v1/nodepools';

describe('fake API server: custom resources and events', () => {
  let server: FakeApiServer;
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'content-type': contentType },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the assertions read arbitrary JSON answers
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  beforeEach(async () => {
    server = await FakeApiServer.start();
  });
  afterEach(async () => {
    await server.stop();
  });

  it('serves a custom resource only once its CRD is created', async () => {
    expect((await call('GET', NODEPOOLS)).status).toBe(404);
    const crd = karpenterCrds().find((c) => c.spec.names.plural === 'nodepools');
    expect((await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
    const list = await call('GET', NODEPOOLS);
    expect(list.status).toBe(200);
    expect(list.body.kind).toBe('NodePoolList');
    const groups = await call('GET', '/apis');
    expect(groups.body.groups.map((g: { name: string }) => g.name)).toContain('karpenter.sh');
  });

  it('keeps spec and status apart through the status subresource, and waits for finalizers', async () => {
    server.installCustomResources(karpenterCrds());
    const created = await call('POST', NODEPOOLS, {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'general', finalizers: ['karpenter.sh/termination'] },
      spec: { weight: 10 },
      status: { ignored: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBeUndefined();
    expect(created.body.metadata.generation).toBe(1);
    const status = await call('PUT', `${NODEPOOLS}/general/status`, {
      ...created.body,
      spec: { weight: 99 },
      status: { nodes: 2 },
    });
    expect(status.body).toMatchObject({ spec: { weight: 10 }, status: { nodes: 2 }, metadata: { generation: 1 } });
    const patched = await call(
      'PATCH',
      `${NODEPOOLS}/general`,
      { spec: { weight: 20 }, status: { nodes: 5 } },
      'application/merge-patch+json',
    );
    // The spec changed: a new generation (status and metadata changes make none).
    expect(patched.body).toMatchObject({ spec: { weight: 20 }, status: { nodes: 2 }, metadata: { generation: 2 } });
    const stale = await call('PUT', `${NODEPOOLS}/general`, { ...created.body });
    expect(stale.status).toBe(409);

    const deleted = await call('DELETE', `${NODEPOOLS}/general`);
    expect(deleted.body.metadata.deletionTimestamp).toBeDefined();
    expect((await call('GET', `${NODEPOOLS}/general`)).status).toBe(200);
    await call('PATCH', `${NODEPOOLS}/general`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    expect((await call('GET', `${NODEPOOLS}/general`)).status).toBe(404);
  });

  it('creates events with generateName and selects them by involved object', async () => {
    const event = (name: string) => ({
      metadata: { generateName: `${name}.` },
      involvedObject: { kind: 'Pod', name, namespace: 'default' },
      reason: 'Nominated',
      message: `Pod should schedule on: nodeclaim/general-${name}`,
    });
    const created = await call('POST', '/api/v1/namespaces/default/events', event('web-1'));
    expect(created.status).toBe(201);
    expect(created.body.metadata.name).toMatch(/^web-1\.[a-z0-9]{5}$/);
    await call('POST', '/api/v1/namespaces/default/events', event('web-2'));
    const selected = await call(
      'GET',
      '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dweb-2,involvedObject.namespace%3Ddefault',
    );
    expect(selected.body.items.map((e: { message: string }) => e.message)).toEqual([
      'Pod should schedule on: nodeclaim/general-web-2',
    ]);
  });
});
