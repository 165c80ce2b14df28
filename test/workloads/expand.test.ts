import { describe, expect, it } from 'vitest';
import type { Pod, Workload } from '../../shared/apis/core/v1';
import { desiredPodCount, expandWorkload, templateHash } from '../../shared/workloads';

function workload(kind: Workload['kind'], spec: Partial<Workload['spec']> = {}, namespace?: string): Workload {
  return {
    apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1',
    kind,
    metadata: { name: 'web', uid: 'uid-1', ...(namespace ? { namespace } : {}) },
    spec: {
      template: {
        metadata: { labels: { app: 'web' }, annotations: { note: 'x' } },
        spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }], nodeSelector: { disk: 'ssd' } },
      },
      ...spec,
    },
  };
}

describe('desiredPodCount', () => {
  it.each([
    ['Deployment', {}, 1],
    ['Deployment', { replicas: 4 }, 4],
    ['Deployment', { replicas: 0 }, 0],
    ['ReplicaSet', { replicas: 2 }, 2],
    ['StatefulSet', {}, 1],
    ['StatefulSet', { replicas: 3 }, 3],
    ['Job', {}, 1],
    ['Job', { parallelism: 5 }, 5],
    ['Job', { parallelism: 5, completions: 2 }, 2],
    ['Job', { completions: 8 }, 1],
    ['Job', { parallelism: 0 }, 0],
    ['DaemonSet', { replicas: 9 }, 1],
  ] as const)('%s %j runs %i pods', (kind, spec, count) => {
    expect(desiredPodCount(workload(kind, spec))).toBe(count);
  });
});

describe('expandWorkload', () => {
  it.each([
    ['Deployment', { replicas: 2 }, [/^web-[b-z2-9]{10}-0$/, /^web-[b-z2-9]{10}-1$/], 'ReplicaSet'],
    ['ReplicaSet', { replicas: 2 }, [/^web-0$/, /^web-1$/], 'ReplicaSet'],
    ['StatefulSet', { replicas: 3 }, [/^web-0$/, /^web-1$/, /^web-2$/], 'StatefulSet'],
    ['Job', { parallelism: 2, completions: 10 }, [/^web-0$/, /^web-1$/], 'Job'],
    ['DaemonSet', {}, [/^web$/], 'DaemonSet'],
  ] as const)('%s %j: pods named like the controller names them, owned by a %s', (kind, spec, names, ownerKind) => {
    const pods = expandWorkload(workload(kind, spec));
    expect(pods).toHaveLength(names.length);
    pods.forEach((pod, i) => {
      expect(pod.metadata.name).toMatch(names[i] as RegExp);
      expect(pod.metadata.ownerReferences?.[0]).toMatchObject({ kind: ownerKind, controller: true });
    });
    expect(new Set(pods.map((p) => p.metadata.uid)).size).toBe(pods.length);
  });

  it('owns Deployment pods by the ReplicaSet the Deployment would create, with its pod-template-hash', () => {
    const deployment = workload('Deployment');
    const [pod] = expandWorkload(deployment) as [Pod];
    const hash = templateHash(deployment.spec.template);
    expect(pod.metadata.labels).toEqual({ app: 'web', 'pod-template-hash': hash });
    expect(pod.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web-${hash}`, controller: true },
    ]);
  });

  it.each([
    ['StatefulSet', { 'statefulset.kubernetes.io/pod-name': 'web-1', 'apps.kubernetes.io/pod-index': '1' }],
    ['Job', { 'job-name': 'web', 'batch.kubernetes.io/job-name': 'web' }],
  ] as const)('%s pods carry the template labels and the labels the controller adds', (kind, added) => {
    const pods = expandWorkload(workload(kind, { replicas: 2, parallelism: 2 }));
    expect(pods[1]?.metadata.labels).toEqual({ app: 'web', ...added });
    expect(pods[1]?.metadata.ownerReferences?.[0]).toMatchObject({ name: 'web', uid: 'uid-1' });
  });

  it('copies the template spec and annotations into each pod, namespace defaulting to "default"', () => {
    const pods = expandWorkload(workload('ReplicaSet', { replicas: 2 }));
    expect(pods[0]?.metadata.namespace).toBe('default');
    expect(pods[0]?.metadata.annotations).toEqual({ note: 'x' });
    expect(pods[0]?.spec.nodeSelector).toEqual({ disk: 'ssd' });
    expect(pods[0]?.spec).not.toBe(pods[1]?.spec);
    (pods[0] as Pod).spec.nodeSelector = {};
    expect(pods[1]?.spec.nodeSelector).toEqual({ disk: 'ssd' });
  });

  it("takes the workload's namespace", () => {
    expect(expandWorkload(workload('StatefulSet', {}, 'shop'))[0]?.metadata.namespace).toBe('shop');
  });
});

describe('templateHash', () => {
  it('is stable for equal templates and differs when the template changes', () => {
    const a = workload('Deployment').spec.template;
    const b = workload('Deployment').spec.template;
    expect(templateHash(a)).toBe(templateHash(b));
    b.spec.containers[0] = { name: 'c', resources: { requests: { cpu: '2' } } };
    expect(templateHash(a)).not.toBe(templateHash(b));
  });
});
