// What the client keeps of listed and watched pods and nodes (shared/kube/slim.ts): the heavy fields go,
// everything a decision reads stays, so a plan made from slimmed pods is the plan made from full ones.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realisticNode, realisticPod } from '../../bench/scale-objects';
import type { Pod } from '../../shared/apis/core/v1';
import { HttpKubeClient } from '../../shared/kube/client';
import { slimNode, slimPod } from '../../shared/kube/slim';
import type { WatchEvent } from '../../shared/kube/types';
import { solve } from '../../shared/scheduling';
import { nodePool, standardTypes } from '../scheduling/helpers';
import { FakeApiServer } from '../support/kube/fake-apiserver';

/** A pod using every scheduling input the packer reads, on top of a real cluster's heavy fields. */
function demandingPod(index: number): Pod {
  const pod = realisticPod(index);
  const app = pod.spec.containers[0];
  if (!app) throw new Error('realisticPod has no container');
  app.ports = [{ containerPort: 8080, hostPort: 8080, protocol: 'TCP' }];
  pod.spec.initContainers = [
    // A real sidecar carries env too; the Container type lists only what karpless reads.
    {
      name: 'sidecar',
      image: 'proxy',
      restartPolicy: 'Always',
      env: [{ name: 'A', value: 'b' }],
      resources: { requests: { cpu: '100m', memory: '64Mi' } },
    } as NonNullable<Pod['spec']['initContainers']>[number],
  ];
  pod.spec.nodeSelector = { 'kubernetes.io/arch': 'amd64' };
  pod.spec.priority = 1000;
  pod.spec.overhead = { cpu: '10m' };
  pod.spec.affinity = {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        {
          topologyKey: 'kubernetes.io/hostname',
          labelSelector: { matchLabels: { app: pod.metadata.labels?.app ?? '' } },
        },
      ],
    },
  };
  pod.metadata.annotations = {
    ...pod.metadata.annotations,
    'karpenter.sh/do-not-disrupt': 'true',
    'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(pod.spec),
  };
  return pod;
}

describe('slimPod', () => {
  it('drops managedFields, container runtime fields, statuses and the last-applied annotation', () => {
    const bound = slimPod(realisticPod(3, 'node-a'));
    const slim = slimPod(demandingPod(4));
    expect(bound.metadata).not.toHaveProperty('managedFields');
    expect(bound.status).not.toHaveProperty('containerStatuses');
    for (const container of [...slim.spec.containers, ...(slim.spec.initContainers ?? [])]) {
      for (const field of ['env', 'livenessProbe', 'readinessProbe', 'volumeMounts']) {
        expect(container).not.toHaveProperty(field);
      }
    }
    expect(slim.metadata.annotations).not.toHaveProperty('kubectl.kubernetes.io/last-applied-configuration');
    expect(JSON.stringify(bound).length).toBeLessThan(JSON.stringify(realisticPod(3, 'node-a')).length * 0.6);
  });

  it('keeps what scheduling, drains and disruption read', () => {
    const full = demandingPod(5);
    const slim = slimPod(structuredClone(full));
    expect(slim.metadata.name).toBe(full.metadata.name);
    expect(slim.metadata.uid).toBe(full.metadata.uid);
    expect(slim.metadata.labels).toEqual(full.metadata.labels);
    expect(slim.metadata.ownerReferences).toEqual(full.metadata.ownerReferences);
    expect(slim.metadata.annotations?.['karpenter.sh/do-not-disrupt']).toBe('true');
    expect(slim.spec.containers[0]?.resources).toEqual(full.spec.containers[0]?.resources);
    expect(slim.spec.containers[0]?.ports).toEqual(full.spec.containers[0]?.ports);
    expect(slim.spec.initContainers?.[0]?.restartPolicy).toBe('Always');
    expect(slim.spec.initContainers?.[0]?.resources).toEqual(full.spec.initContainers?.[0]?.resources);
    for (const key of [
      'nodeSelector',
      'affinity',
      'tolerations',
      'topologySpreadConstraints',
      'volumes',
      'priority',
      'overhead',
      'terminationGracePeriodSeconds',
    ] as const) {
      expect(slim.spec[key], key).toEqual(full.spec[key]);
    }
    expect(slim.status).toEqual(full.status);
  });

  it('gives the same plan as the full pods', () => {
    const full = Array.from({ length: 40 }, (_, i) => demandingPod(i));
    const input = (pods: Pod[]) => ({
      pods,
      nodePools: [nodePool('general')],
      instanceTypes: { general: standardTypes() },
    });
    const fromFull = solve(input(full));
    const fromSlim = solve(input(full.map((p) => slimPod(structuredClone(p)))));
    expect(fromFull.nodeClaims.length).toBeGreaterThan(0);
    const claims = (result: ReturnType<typeof solve>) =>
      result.nodeClaims.map((c) => ({
        requirements: c.requirements,
        types: c.instanceTypes.map((t) => t.name),
        offering: c.offering,
        pods: c.pods.map((p) => p.metadata.name),
      }));
    expect(claims(fromSlim)).toEqual(claims(fromFull));
    expect(fromSlim.unschedulable.map((u) => u.reasons)).toEqual(fromFull.unschedulable.map((u) => u.reasons));
  });
});

describe('slimNode', () => {
  it('drops images and managedFields and keeps labels, taints, capacity, conditions and the provider id', () => {
    const full = realisticNode(7);
    full.spec = { ...full.spec, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] };
    const slim = slimNode(structuredClone(full));
    expect(slim.status).not.toHaveProperty('images');
    expect(slim.metadata).not.toHaveProperty('managedFields');
    expect(slim.metadata.labels).toEqual(full.metadata.labels);
    expect(slim.metadata.finalizers).toEqual(full.metadata.finalizers);
    expect(slim.spec).toEqual(full.spec);
    expect(slim.status?.allocatable).toEqual(full.status?.allocatable);
    expect(slim.status?.capacity).toEqual(full.status?.capacity);
    expect(slim.status?.conditions).toEqual(full.status?.conditions);
  });
});

describe('the client slims what it lists and watches', () => {
  let server: FakeApiServer;
  let client: HttpKubeClient;

  beforeEach(async () => {
    server = await FakeApiServer.start();
    client = new HttpKubeClient({ endpoint: server.url, token: async () => 'token' });
  });

  afterEach(async () => {
    client.close();
    await server.stop();
  });

  it('lists pods and nodes without their heavy fields, across pages', async () => {
    for (let i = 0; i < 5; i++) server.addPod(realisticPod(i, 'node-a'));
    server.addNode(realisticNode(0));
    const pods = await client.listPods({ limit: 2 });
    const nodes = await client.listNodes();
    expect(pods.items).toHaveLength(5);
    for (const pod of pods.items) {
      expect(pod.metadata).not.toHaveProperty('managedFields');
      expect(pod.spec.containers[0]).not.toHaveProperty('env');
      expect(pod.spec.containers[0]?.resources?.requests).toEqual({ cpu: '250m', memory: '512Mi' });
    }
    expect(nodes.items[0]?.status).not.toHaveProperty('images');
    expect(nodes.items[0]?.status?.allocatable).toEqual(realisticNode(0).status?.allocatable);
  });

  it('watches pods without their heavy fields', async () => {
    const list = await client.listPods();
    const events: WatchEvent<Pod>[] = [];
    const abort = new AbortController();
    const watching = client.watchPods(
      { resourceVersion: list.resourceVersion, timeoutSeconds: 5, signal: abort.signal },
      (event) => {
        events.push(event);
        abort.abort();
      },
    );
    server.addPod(realisticPod(9));
    await watching;
    expect(events[0]?.type).toBe('ADDED');
    expect(events[0]?.object.metadata).not.toHaveProperty('managedFields');
    expect(events[0]?.object.spec.containers[0]).not.toHaveProperty('livenessProbe');
  });
});
