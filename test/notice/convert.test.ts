import { describe, expect, it } from 'vitest';
import type { Pod, Workload } from '../../shared/apis/core/v1';
import {
  noticeDaemonSetFromDaemonSet,
  noticePodFromPod,
  podFromNoticeDaemonSet,
  podFromNoticePod,
  validateNotice,
} from '../../shared/notice';
import { solve } from '../../shared/scheduling';
import { nodePool, standardTypes } from '../scheduling/helpers';

const kubePod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-7d9f-abcde',
    namespace: 'shop',
    uid: '0f6c5a4e-1111-2222-3333-444455556666',
    labels: { app: 'web' },
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
    creationTimestamp: '2026-11-30T11:59:00Z',
    ownerReferences: [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'not-the-controller' },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f', controller: true },
    ],
  },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'nginx',
        ports: [{ containerPort: 80 }],
        resources: { requests: { cpu: '500m' }, limits: { cpu: '1', memory: '1Gi' } },
      },
      { name: 'bare', image: 'busybox' },
    ],
    initContainers: [
      { name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
    ],
    nodeSelector: { 'kubernetes.io/arch': 'arm64' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
    priority: 100,
    priorityClassName: 'high',
  },
  status: { phase: 'Pending' },
};

describe('noticePodFromPod', () => {
  it('keeps identity, requests (limits filling missing ones), the controller kind and scheduling fields', () => {
    expect(noticePodFromPod(kubePod)).toEqual({
      namespace: 'shop',
      name: 'web-7d9f-abcde',
      uid: '0f6c5a4e-1111-2222-3333-444455556666',
      labels: { app: 'web' },
      ownerKind: 'ReplicaSet',
      containers: [{ name: 'app', resources: { requests: { cpu: '500m', memory: '1Gi' } } }, { name: 'bare' }],
      initContainers: [
        { name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
      ],
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
      priority: 100,
    });
  });

  it('produces a valid notice entry, with namespace and uid defaulted for manifest pods', () => {
    const np = noticePodFromPod({ metadata: { name: 'solo' }, spec: { containers: [{ name: 'c' }] } });
    expect(np).toEqual({ namespace: 'default', name: 'solo', uid: 'default/solo', containers: [{ name: 'c' }] });
    const detail = {
      cluster: 'c',
      observedAt: '2026-11-30T12:00:00Z',
      pods: [np, noticePodFromPod(kubePod)],
      daemonSets: [],
    };
    expect(validateNotice(detail).ok).toBe(true);
  });

  it('has no owner kind without a controller reference', () => {
    const pod: Pod = {
      ...kubePod,
      metadata: { ...kubePod.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n' }] },
    };
    expect(noticePodFromPod(pod).ownerKind).toBeUndefined();
  });
});

describe('podFromNoticePod', () => {
  it('gives solve() the same decision as the original pod', () => {
    const pools = [
      nodePool('general', {
        requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64', 'amd64'] }],
      }),
    ];
    const plan = (p: Pod) => solve({ pods: [p], nodePools: pools, instanceTypes: { general: standardTypes() } });
    const direct = plan(kubePod);
    const viaNotice = plan(podFromNoticePod(noticePodFromPod(kubePod)));
    expect(viaNotice.nodeClaims.map((c) => [c.offering, c.requests])).toEqual(
      direct.nodeClaims.map((c) => [c.offering, c.requests]),
    );
    expect(viaNotice.nodeClaims[0]?.offering.instanceType).toMatch(/^m6g\./);
  });

  it('restores metadata and the controller owner by kind', () => {
    const pod = podFromNoticePod(noticePodFromPod(kubePod));
    expect(pod.metadata).toEqual({
      name: 'web-7d9f-abcde',
      namespace: 'shop',
      uid: '0f6c5a4e-1111-2222-3333-444455556666',
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: '', controller: true }],
    });
    expect(pod.spec.priority).toBe(100);
  });
});

describe('DaemonSets', () => {
  const ds: Workload = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'aws-node', namespace: 'kube-system' },
    spec: {
      template: {
        metadata: { labels: { 'k8s-app': 'aws-node' } },
        spec: {
          containers: [{ name: 'cni', resources: { requests: { cpu: '25m' } } }],
          tolerations: [{ operator: 'Exists' }],
        },
      },
    },
  };

  it('carries the pod template and comes back as a DaemonSet-owned pod', () => {
    const nds = noticeDaemonSetFromDaemonSet(ds);
    expect(nds).toEqual({
      namespace: 'kube-system',
      name: 'aws-node',
      template: {
        labels: { 'k8s-app': 'aws-node' },
        ownerKind: 'DaemonSet',
        containers: [{ name: 'cni', resources: { requests: { cpu: '25m' } } }],
        tolerations: [{ operator: 'Exists' }],
      },
    });
    const pod = podFromNoticeDaemonSet(nds);
    expect(pod.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'DaemonSet', name: '', controller: true },
    ]);
    expect(pod.spec.containers).toEqual([{ name: 'cni', resources: { requests: { cpu: '25m' } } }]);
  });
});
