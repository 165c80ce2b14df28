// The fake API server's kubelet: graceful pod deletion on the server's (fake) clock, holds, pod
// finalizers, and the VolumeAttachments a drain waits for. Drain tests lean on these, so they are
// pinned here against plain HTTP.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import { pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';

const START = Date.parse('2026-01-01T00:00:00Z');
let now: number;
let server: FakeApiServer;

beforeEach(async () => {
  now = START;
  server = await FakeApiServer.start({ now: () => new Date(now) });
});

afterEach(async () => {
  await server.stop();
});

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(server.url + path, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function boundPod(name: string, grace?: number): Pod {
  const p = pod(name, { nodeName: 'n1', owner: { kind: 'ReplicaSet', name: 'web' } });
  if (grace !== undefined) p.spec.terminationGracePeriodSeconds = grace;
  return p;
}

const evict = (name: string) =>
  call('POST', `/api/v1/namespaces/default/pods/${name}/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: 'default' },
  });

describe('fake kubelet', () => {
  it('keeps an evicted pod Terminating for its grace period on the server clock, then removes it', async () => {
    server.addPod(boundPod('slow', 300));
    expect((await evict('slow')).status).toBe(201);
    const terminating = server.getPod('default', 'slow');
    expect(terminating?.metadata.deletionTimestamp).toBe(new Date(START + 300_000).toISOString());
    expect(terminating?.metadata.deletionGracePeriodSeconds).toBe(300);
    now = START + 299_000;
    expect((await call('GET', '/api/v1/namespaces/default/pods/slow')).status).toBe(200);
    now = START + 300_000;
    expect((await call('GET', '/api/v1/namespaces/default/pods/slow')).status).toBe(404);
  });

  it('removes a pod that declares no grace period at once, and an unbound pod whatever its grace', async () => {
    server.addPod(boundPod('quick'));
    server.addPod({ ...pod('pending'), spec: { ...pod('pending').spec, terminationGracePeriodSeconds: 60 } });
    expect((await evict('quick')).status).toBe(201);
    expect(server.getPod('default', 'quick')).toBeUndefined();
    expect((await call('DELETE', '/api/v1/namespaces/default/pods/pending')).status).toBe(200);
    expect(server.getPod('default', 'pending')).toBeUndefined();
  });

  it('honours DeleteOptions.gracePeriodSeconds, which only ever shortens a deletion under way', async () => {
    server.addPod(boundPod('p', 600));
    await call('DELETE', '/api/v1/namespaces/default/pods/p', { gracePeriodSeconds: 120 });
    expect(server.getPod('default', 'p')?.metadata.deletionTimestamp).toBe(new Date(START + 120_000).toISOString());
    await call('DELETE', '/api/v1/namespaces/default/pods/p?gracePeriodSeconds=500');
    expect(server.getPod('default', 'p')?.metadata.deletionTimestamp).toBe(new Date(START + 120_000).toISOString());
    expect((await call('DELETE', '/api/v1/namespaces/default/pods/p?gracePeriodSeconds=-1')).status).toBe(400);
    await call('DELETE', '/api/v1/namespaces/default/pods/p', { gracePeriodSeconds: 0 });
    expect(server.getPod('default', 'p')).toBeUndefined();
  });

  it('lets a test hold a pod Terminating past its grace period and release it', async () => {
    server.addPod(boundPod('stuck', 30));
    server.holdPod('default', 'stuck');
    await evict('stuck');
    now = START + 3_600_000;
    server.reapPods();
    expect(server.getPod('default', 'stuck')?.metadata.deletionTimestamp).toBeDefined();
    // Evicting a terminating pod again succeeds and changes nothing.
    expect((await evict('stuck')).status).toBe(201);
    server.releasePod('default', 'stuck');
    expect(server.getPod('default', 'stuck')).toBeUndefined();
  });

  it('keeps a pod with finalizers after its grace period, until the last finalizer is removed', async () => {
    const p = boundPod('guarded', 10);
    p.metadata.finalizers = ['example.com/cleanup'];
    server.addPod(p);
    await call('DELETE', '/api/v1/namespaces/default/pods/guarded');
    now = START + 11_000;
    server.reapPods();
    expect(server.getPod('default', 'guarded')).toBeDefined();
    server.updatePod('default', 'guarded', (x) => {
      x.metadata.finalizers = [];
    });
    expect(server.getPod('default', 'guarded')).toBeUndefined();
  });

  it('serves storage.k8s.io/v1 VolumeAttachments: list, create, delete', async () => {
    server.addVolumeAttachment('csi-1', 'n1', 'pv-1');
    const created = await call('POST', '/apis/storage.k8s.io/v1/volumeattachments', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'csi-2' },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: 'n2', source: { persistentVolumeName: 'pv-2' } },
    });
    expect(created.status).toBe(201);
    expect(
      (await call('POST', '/apis/storage.k8s.io/v1/volumeattachments', { metadata: { name: 'csi-2' } })).status,
    ).toBe(409);
    const list = await call('GET', '/apis/storage.k8s.io/v1/volumeattachments');
    expect(list.body).toMatchObject({ kind: 'VolumeAttachmentList', apiVersion: 'storage.k8s.io/v1' });
    expect((list.body.items as { spec: { nodeName: string } }[]).map((v) => v.spec.nodeName)).toEqual(['n1', 'n2']);
    expect((await call('DELETE', '/apis/storage.k8s.io/v1/volumeattachments/csi-1')).status).toBe(200);
    expect(server.volumeAttachments().map((v) => v.metadata.name)).toEqual(['csi-2']);
  });
});
