import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import type { InstanceType, Offering } from '../../shared/instancetypes/types';

export function nodeClass(spec: Partial<EC2NodeClass['spec']> = {}, name = 'default'): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name },
    spec: {
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: 'KarpenterNodeRole',
      ...spec,
    },
  };
}

export function nodePool(name = 'general'): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        metadata: { labels: { team: 'a' } },
        spec: {
          requirements: [],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          taints: [{ key: 'dedicated', value: 'a', effect: 'NoSchedule' }],
        },
      },
    },
  };
}

export function instanceType(
  name: string,
  offerings: Partial<Offering>[],
  extra: { arch?: 'amd64' | 'arm64'; pods?: number; gpus?: number; efa?: number } = {},
): InstanceType {
  const arch = extra.arch ?? 'amd64';
  return {
    name,
    labels: {
      'node.kubernetes.io/instance-type': name,
      'kubernetes.io/arch': arch,
      'karpenter.k8s.aws/instance-family': name.split('.')[0] ?? name,
      ...(extra.gpus ? { 'karpenter.k8s.aws/instance-gpu-count': String(extra.gpus) } : {}),
    },
    capacity: { cpu: 2000, memory: 8 * 2 ** 30, pods: extra.pods ?? 29 },
    overhead: { kubeReserved: {}, systemReserved: {}, evictionThreshold: {} },
    allocatable: {},
    offerings: offerings.map((o) => ({
      zone: 'us-east-1a',
      capacityType: 'on-demand',
      price: 0.1,
      available: true,
      ...o,
    })),
    info: {
      name,
      arch,
      vcpu: 2,
      memoryMiB: 8192,
      maximumNetworkInterfaces: 3,
      ipv4PerInterface: 10,
      gpus: extra.gpus ?? 0,
      ...(extra.efa ? { efaMaxInterfaces: extra.efa } : {}),
      offerings: [],
    },
  };
}
