// The pod mix of Karpenter's scheduling benchmark (scheduling_benchmark_test.go, makeDiversePods) in the
// five-kind shape of reference §7, rebuilt so karpless is measured on the same shape. Go's math/rand
// sequence for seed 42 is not reproduced; a seeded mulberry32 keeps every run identical instead.

import type { Pod, PodSpec } from '../shared/apis/core/v1';
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_ZONE } from '../shared/apis/v1/labels';
import type { EC2NodeClass, NodePool } from '../shared/apis/v1/types';

export const CPU_CHOICES_MILLICORES = [100, 250, 500, 1000, 1500] as const;
export const MEMORY_CHOICES_MIB = [100, 256, 512, 1024, 2048, 4096] as const;
const LABEL_VALUES = ['a', 'b', 'c', 'd', 'e', 'f', 'g'] as const;

/** A seeded source of integers in [0, n), like Go's rand.Intn. */
export interface Random {
  intn(n: number): number;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { intn: (n) => Math.floor(next() * n) };
}

function pick<T>(random: Random, values: readonly T[]): T {
  return values[random.intn(values.length)] as T;
}

export type PodKind = 'generic' | 'zonal-spread' | 'hostname-spread' | 'zonal-affinity' | 'hostname-anti-affinity';

/** Builds the benchmark's pods; names are `<kind>-<i>` in namespace default. */
export class PodFactory {
  private readonly counters = new Map<string, number>();

  constructor(private readonly random: Random) {}

  private pod(kind: PodKind, labels: Record<string, string>, constraints: Partial<PodSpec>): Pod {
    const index = this.counters.get(kind) ?? 0;
    this.counters.set(kind, index + 1);
    // Same order of random draws as Karpenter's literals: labels first, then cpu, then memory.
    const cpu = `${pick(this.random, CPU_CHOICES_MILLICORES)}m`;
    const memory = `${pick(this.random, MEMORY_CHOICES_MIB)}Mi`;
    const name = `${kind}-${index}`;
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid: `default/${name}`, labels },
      spec: { containers: [{ name: 'app', resources: { requests: { cpu, memory } } }], ...constraints },
    };
  }

  private randomLabels(key: string): Record<string, string> {
    return { [key]: pick(this.random, LABEL_VALUES) };
  }

  generic(): Pod {
    return this.pod('generic', this.randomLabels('my-label'), {});
  }

  /**
   * DoNotSchedule spread with maxSkew 1. As in Karpenter, the pod's own `my-label` and the value its
   * selector matches are drawn independently: it spreads relative to whichever pods carry that value.
   */
  spread(key: typeof LABEL_ZONE | typeof LABEL_HOSTNAME): Pod {
    const labels = this.randomLabels('my-label');
    const selector = this.randomLabels('my-label');
    return this.pod(key === LABEL_ZONE ? 'zonal-spread' : 'hostname-spread', labels, {
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: key, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: selector } },
      ],
    });
  }

  /** Required self-affinity: pods with the same random label share one zone. */
  zonalAffinity(): Pod {
    const labels = this.randomLabels('my-affininity');
    return this.pod('zonal-affinity', labels, {
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: { matchLabels: { ...labels } }, topologyKey: LABEL_ZONE },
          ],
        },
      },
    });
  }

  /** Required anti-affinity on app=nginx: at most one such pod per node. */
  hostnameAntiAffinity(): Pod {
    const labels = { app: 'nginx' };
    return this.pod('hostname-anti-affinity', labels, {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: { matchLabels: { ...labels } }, topologyKey: LABEL_HOSTNAME },
          ],
        },
      },
    });
  }
}

/** n/5 of each kind, the remainder as generic pods (makeDiversePods). */
export function makeDiversePods(count: number, seed = 42): Pod[] {
  const factory = new PodFactory(seededRandom(seed));
  const share = Math.floor(count / 5);
  const pods: Pod[] = [];
  const times = (n: number, make: () => Pod) => {
    for (let i = 0; i < n; i++) pods.push(make());
  };
  times(share, () => factory.generic());
  times(share, () => factory.spread(LABEL_ZONE));
  times(share, () => factory.spread(LABEL_HOSTNAME));
  times(share, () => factory.zonalAffinity());
  times(share, () => factory.hostnameAntiAffinity());
  times(count - pods.length, () => factory.generic());
  return pods;
}

/** Only the generic kind: the mix the 1.10 × lower-bound price target is set for. */
export function makeGenericPods(count: number, seed = 42): Pod[] {
  const factory = new PodFactory(seededRandom(seed));
  return Array.from({ length: count }, () => factory.generic());
}

/** The NodePool the runtime and burst benchmarks provision for: c, m and r, generation 5 and up, no limit in reach. */
export const BENCH_NODE_POOL: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general-purpose' },
  spec: {
    template: {
      spec: {
        requirements: [
          { key: LABEL_CAPACITY_TYPE, operator: 'In', values: ['spot', 'on-demand'] },
          { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
          { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
        ],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      },
    },
    limits: { cpu: '10000000', memory: '10000000Gi' },
  },
};

/** The EC2NodeClass every benchmark resolves the catalog against. */
export const BENCH_NODE_CLASS: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    role: 'KarpenterNodeRole-bench',
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'bench' } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'bench' } }],
  },
};
