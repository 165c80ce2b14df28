// Factories for scheduling tests: small instance types, NodePools and pods.

import type { Pod, PodSpec } from '../../shared/apis/core/v1';
import type { NodePool, NodeSelectorRequirementWithMinValues, Taint } from '../../shared/apis/v1/types';
import type { CapacityType, InstanceType, Offering } from '../../shared/instancetypes/types';

export const GiB = 2 ** 30;
export const ZONES = ['zone-a', 'zone-b', 'zone-c'];

export interface TypeOptions {
  cpu: number;
  memoryGiB: number;
  pods?: number;
  price?: number;
  arch?: 'amd64' | 'arm64';
  category?: string;
  generation?: number;
  zones?: string[];
  capacityTypes?: CapacityType[];
  extra?: Record<string, number>;
  labels?: Record<string, string>;
}

/** An instance type whose allocatable equals its capacity, priced 0.05/vCPU + 0.005/GiB by default. */
export function instanceType(name: string, o: TypeOptions): InstanceType {
  const [family = name, size = 'large'] = name.split('.');
  const resources = {
    cpu: o.cpu * 1000,
    memory: o.memoryGiB * GiB,
    pods: o.pods ?? 110,
    ...(o.extra ?? {}),
  };
  const price = o.price ?? 0.05 * o.cpu + 0.005 * o.memoryGiB;
  const offerings: Offering[] = [];
  for (const zone of o.zones ?? ZONES) {
    for (const capacityType of o.capacityTypes ?? ['on-demand']) {
      offerings.push({ zone, capacityType, price: capacityType === 'spot' ? price * 0.6 : price, available: true });
    }
  }
  return {
    name,
    labels: {
      'node.kubernetes.io/instance-type': name,
      'kubernetes.io/arch': o.arch ?? 'amd64',
      'kubernetes.io/os': 'linux',
      'karpenter.k8s.aws/instance-category': o.category ?? family.replace(/[0-9].*$/, ''),
      'karpenter.k8s.aws/instance-family': family,
      'karpenter.k8s.aws/instance-generation': String(o.generation ?? (Number(family.replace(/^[a-z]+/, '')[0]) || 5)),
      'karpenter.k8s.aws/instance-size': size,
      'karpenter.k8s.aws/instance-cpu': String(o.cpu),
      'karpenter.k8s.aws/instance-memory': String(o.memoryGiB * 1024),
      ...(o.extra?.['nvidia.com/gpu']
        ? { 'karpenter.k8s.aws/instance-gpu-count': String(o.extra['nvidia.com/gpu']) }
        : {}),
      ...(o.labels ?? {}),
    },
    capacity: resources,
    overhead: { kubeReserved: {}, systemReserved: {}, evictionThreshold: {} },
    allocatable: resources,
    offerings,
    info: {
      name,
      arch: o.arch ?? 'amd64',
      vcpu: o.cpu,
      memoryMiB: o.memoryGiB * 1024,
      maximumNetworkInterfaces: 3,
      ipv4PerInterface: 10,
      gpus: o.extra?.['nvidia.com/gpu'] ?? 0,
      offerings: offerings.map((x) => ({ ...x })),
    },
  };
}

/** m5-ish (4 GiB/vCPU), c5-ish (2 GiB/vCPU) and r5-ish (8 GiB/vCPU) at 2, 4, 8 and 16 vCPU, plus an arm64 m6g. */
export function standardTypes(): InstanceType[] {
  const out: InstanceType[] = [];
  for (const [size, cpu] of [
    ['large', 2],
    ['xlarge', 4],
    ['2xlarge', 8],
    ['4xlarge', 16],
  ] as const) {
    out.push(instanceType(`m5.${size}`, { cpu, memoryGiB: cpu * 4 }));
    out.push(instanceType(`c5.${size}`, { cpu, memoryGiB: cpu * 2 }));
    out.push(instanceType(`r5.${size}`, { cpu, memoryGiB: cpu * 8 }));
    out.push(
      instanceType(`m6g.${size}`, { cpu, memoryGiB: cpu * 4, arch: 'arm64', price: 0.04 * cpu + 0.004 * cpu * 4 }),
    );
  }
  return out;
}

export interface PoolOptions {
  requirements?: NodeSelectorRequirementWithMinValues[];
  taints?: Taint[];
  startupTaints?: Taint[];
  limits?: Record<string, string>;
  weight?: number;
  labels?: Record<string, string>;
}

export function nodePool(name: string, o: PoolOptions = {}): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      ...(o.limits ? { limits: o.limits } : {}),
      ...(o.weight !== undefined ? { weight: o.weight } : {}),
      template: {
        ...(o.labels ? { metadata: { labels: o.labels } } : {}),
        spec: {
          requirements: o.requirements ?? [],
          ...(o.taints ? { taints: o.taints } : {}),
          ...(o.startupTaints ? { startupTaints: o.startupTaints } : {}),
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        },
      },
    },
  };
}

export interface PodOptions extends Partial<PodSpec> {
  cpu?: string;
  memory?: string;
  extra?: Record<string, string>;
  labels?: Record<string, string>;
  namespace?: string;
}

export function pod(name: string, o: PodOptions = {}): Pod {
  const { cpu = '100m', memory = '128Mi', extra = {}, labels, namespace, ...spec } = o;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(namespace ? { namespace } : {}), ...(labels ? { labels } : {}) },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu, memory, ...extra } } }], ...spec },
  };
}

export function pods(prefix: string, count: number, o: PodOptions = {}): Pod[] {
  return Array.from({ length: count }, (_, i) => pod(`${prefix}-${i}`, o));
}
