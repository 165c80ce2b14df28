import { describe, expect, it } from 'vitest';
import {
  CPU_CHOICES_MILLICORES,
  MEMORY_CHOICES_MIB,
  makeDiversePods,
  makeGenericPods,
  seededRandom,
} from '../../bench/pods';
import { allowedInstanceTypes, mutuallyRepellingPods } from '../../bench/run';
import type { Pod } from '../../shared/apis/core/v1';
import type { NodePool } from '../../shared/apis/v1/types';
import type { InstanceType } from '../../shared/instancetypes/types';

function kind(pod: Pod): string {
  return pod.metadata.name.replace(/-\d+$/, '');
}

describe('makeDiversePods', () => {
  it.each([
    [1, { generic: 1 }],
    [
      100,
      { generic: 20, 'zonal-spread': 20, 'hostname-spread': 20, 'zonal-affinity': 20, 'hostname-anti-affinity': 20 },
    ],
    [
      1003,
      {
        generic: 203,
        'zonal-spread': 200,
        'hostname-spread': 200,
        'zonal-affinity': 200,
        'hostname-anti-affinity': 200,
      },
    ],
  ])('makes %i pods, n/5 of each kind and the remainder generic', (count, expected) => {
    const pods = makeDiversePods(count);
    expect(pods).toHaveLength(count);
    const counts: Record<string, number> = {};
    for (const pod of pods) counts[kind(pod)] = (counts[kind(pod)] ?? 0) + 1;
    expect(counts).toEqual(expected);
    expect(new Set(pods.map((p) => p.metadata.name)).size).toBe(count);
  });

  it('is the same for the same seed and different for another', () => {
    expect(makeDiversePods(200)).toEqual(makeDiversePods(200, 42));
    expect(makeDiversePods(200, 7)).not.toEqual(makeDiversePods(200, 42));
  });

  it('requests cpu and memory from the benchmark sets, and uses every value', () => {
    const pods = makeDiversePods(1000);
    const cpus = new Set(pods.map((p) => p.spec.containers[0]?.resources?.requests?.cpu));
    const memories = new Set(pods.map((p) => p.spec.containers[0]?.resources?.requests?.memory));
    expect(cpus).toEqual(new Set(CPU_CHOICES_MILLICORES.map((m) => `${m}m`)));
    expect(memories).toEqual(new Set(MEMORY_CHOICES_MIB.map((m) => `${m}Mi`)));
  });

  it('gives each kind its constraint', () => {
    const pods = makeDiversePods(50);
    const byKind = (k: string) => pods.filter((p) => kind(p) === k);
    for (const pod of byKind('generic'))
      expect(pod.spec.affinity ?? pod.spec.topologySpreadConstraints).toBeUndefined();
    for (const [k, key] of [
      ['zonal-spread', 'topology.kubernetes.io/zone'],
      ['hostname-spread', 'kubernetes.io/hostname'],
    ]) {
      for (const pod of byKind(k as string)) {
        expect(pod.spec.topologySpreadConstraints).toEqual([
          {
            maxSkew: 1,
            topologyKey: key,
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { 'my-label': expect.stringMatching(/^[a-g]$/) } },
          },
        ]);
      }
    }
    for (const pod of byKind('zonal-affinity')) {
      const [term] = pod.spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
      expect(term?.topologyKey).toBe('topology.kubernetes.io/zone');
      expect(term?.labelSelector?.matchLabels).toEqual(pod.metadata.labels);
    }
    for (const pod of byKind('hostname-anti-affinity')) {
      expect(pod.metadata.labels).toEqual({ app: 'nginx' });
      expect(pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual([
        { labelSelector: { matchLabels: { app: 'nginx' } }, topologyKey: 'kubernetes.io/hostname' },
      ]);
    }
  });
});

describe('makeGenericPods', () => {
  it('makes only generic pods', () => {
    const pods = makeGenericPods(30);
    expect(pods).toHaveLength(30);
    expect(pods.every((p) => kind(p) === 'generic' && p.spec.affinity === undefined)).toBe(true);
  });
});

describe('seededRandom', () => {
  it('draws integers in [0, n) spread over every value', () => {
    const random = seededRandom(42);
    const counts = new Array<number>(7).fill(0);
    const outside: number[] = [];
    for (let i = 0; i < 7000; i++) {
      const value = random.intn(7);
      if (Number.isInteger(value) && value >= 0 && value < 7) counts[value] = (counts[value] ?? 0) + 1;
      else outside.push(value);
    }
    expect(outside).toEqual([]);
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });
});

describe('mutuallyRepellingPods', () => {
  it('counts the pods that each need a node of their own', () => {
    expect(mutuallyRepellingPods(makeDiversePods(100))).toBe(20);
    expect(mutuallyRepellingPods(makeGenericPods(100))).toBe(0);
  });

  it('ignores anti-affinity that does not select the pod itself', () => {
    const [pod] = makeDiversePods(5).filter((p) => kind(p) === 'hostname-anti-affinity') as [Pod];
    const other: Pod = { ...pod, metadata: { ...pod.metadata, labels: { app: 'other' } } };
    expect(mutuallyRepellingPods([other, other])).toBe(0);
  });
});

describe('allowedInstanceTypes', () => {
  const type = (name: string, labels: Record<string, string>): InstanceType => ({
    name,
    labels,
    capacity: {},
    overhead: { kubeReserved: {}, systemReserved: {}, evictionThreshold: {} },
    allocatable: {},
    offerings: [
      { zone: 'a', capacityType: 'spot', price: 1, available: true },
      { zone: 'b', capacityType: 'on-demand', price: 2, available: true },
    ],
    info: {
      name,
      arch: 'amd64',
      vcpu: 1,
      memoryMiB: 1,
      maximumNetworkInterfaces: 1,
      ipv4PerInterface: 1,
      gpus: 0,
      offerings: [],
    },
  });

  it('keeps the types and offerings the NodePool requirements allow', () => {
    const pool = {
      spec: {
        template: {
          spec: {
            requirements: [
              { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            ],
          },
        },
      },
    } as unknown as NodePool;
    const allowed = allowedInstanceTypes(pool, [
      type('m4.large', { 'karpenter.k8s.aws/instance-generation': '4' }),
      type('m5.large', { 'karpenter.k8s.aws/instance-generation': '5' }),
    ]);
    expect(allowed.map((t) => [t.name, t.offerings.map((o) => o.capacityType)])).toEqual([['m5.large', ['on-demand']]]);
  });
});
