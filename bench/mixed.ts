// Mixed workloads as a user brings them (issue 10): a zone-spread web tier, API pods that want a node
// each, small workers, memory-heavy batch pods and GPU training pods, on two NodePools (general CPU
// types and tainted GPU types) resolved against the built-in us-east-1 catalog. The bench suite and
// the plan-quality tests both build their inputs here, so the figures and the tests see one shape.

import type { Pod, PodSpec } from '../shared/apis/core/v1';
import { LABEL_ARCH, LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_ZONE } from '../shared/apis/v1/labels';
import type { EC2NodeClass, NodePool, NodeSelectorRequirementWithMinValues, Taint } from '../shared/apis/v1/types';
import { loadBuiltInCatalog } from '../shared/instancetypes/catalog';
import { resolveInstanceTypes } from '../shared/instancetypes/resolve';
import type { InstanceType } from '../shared/instancetypes/types';
import type { SchedulingInput } from '../shared/scheduling';

const GPU_TAINT: Taint = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' };

function nodeClass(name: string): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name },
    spec: {
      role: 'KarpenterNodeRole-bench',
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'bench' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'bench' } }],
    },
  };
}

function pool(
  name: string,
  requirements: NodeSelectorRequirementWithMinValues[],
  extra: { weight?: number; taints?: Taint[] } = {},
): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      ...(extra.weight !== undefined ? { weight: extra.weight } : {}),
      template: {
        spec: {
          requirements,
          ...(extra.taints ? { taints: extra.taints } : {}),
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        },
      },
      limits: { cpu: '10000000', memory: '10000000Gi' },
    },
  };
}

/** The two NodePools of examples/manifests, without their limits: general c/m/r and tainted GPU g5/g6. */
export function mixedNodePools(): NodePool[] {
  return [
    pool('general', [
      { key: LABEL_CAPACITY_TYPE, operator: 'In', values: ['spot', 'on-demand'] },
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
      { key: LABEL_ARCH, operator: 'In', values: ['amd64', 'arm64'] },
    ]),
    pool(
      'gpu',
      [
        { key: LABEL_CAPACITY_TYPE, operator: 'In', values: ['on-demand', 'spot'] },
        { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['g5', 'g6'] },
        { key: LABEL_ARCH, operator: 'In', values: ['amd64'] },
      ],
      { weight: 10, taints: [GPU_TAINT] },
    ),
  ];
}

let resolvedTypes: InstanceType[] | undefined;

/** The built-in catalog resolved once for both pools (they share one EC2NodeClass shape). */
export function mixedInstanceTypes(): InstanceType[] {
  resolvedTypes ??= resolveInstanceTypes(loadBuiltInCatalog(), nodeClass('default'));
  return resolvedTypes;
}

interface Tier {
  app: string;
  cpu: string;
  memory: string;
  gpu?: number;
  spec?: Partial<PodSpec>;
}

function tierPods(tier: Tier, count: number): Pod[] {
  const labels = { app: tier.app };
  return Array.from({ length: count }, (_, i) => {
    const name = `${tier.app}-${i}`;
    const requests: Record<string, string> = { cpu: tier.cpu, memory: tier.memory };
    if (tier.gpu) requests['nvidia.com/gpu'] = String(tier.gpu);
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid: `default/${name}`, labels },
      spec: { containers: [{ name: 'app', resources: { requests } }], ...(tier.spec ?? {}) },
    };
  });
}

const zoneSpread = (app: string): Partial<PodSpec> => ({
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: LABEL_ZONE,
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { app } },
    },
  ],
});

const hostnameAntiAffinity = (app: string): Partial<PodSpec> => ({
  affinity: {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { topologyKey: LABEL_HOSTNAME, labelSelector: { matchLabels: { app } } },
      ],
    },
  },
});

const gpuToleration: Partial<PodSpec> = {
  tolerations: [{ key: 'nvidia.com/gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
};

/**
 * The 92-pod mix of issue 10, scaled by `copies` (each copy its own Deployments): 30 zone-spread web
 * pods, 12 API pods with hostname anti-affinity, 40 small workers (a quarter pinned to arm64 by a
 * node selector), 6 memory-heavy batch pods and 2 one-GPU training pods.
 */
export function issueMix(copies = 1): Pod[] {
  const pods: Pod[] = [];
  for (let c = 0; c < copies; c++) {
    const suffix = copies === 1 ? '' : `-${c}`;
    pods.push(
      ...tierPods({ app: `web${suffix}`, cpu: '600m', memory: '1200Mi', spec: zoneSpread(`web${suffix}`) }, 30),
      ...tierPods({ app: `api${suffix}`, cpu: '1', memory: '2Gi', spec: hostnameAntiAffinity(`api${suffix}`) }, 12),
      ...tierPods({ app: `worker${suffix}`, cpu: '250m', memory: '512Mi' }, 30),
      ...tierPods(
        { app: `worker-arm${suffix}`, cpu: '250m', memory: '512Mi', spec: { nodeSelector: { [LABEL_ARCH]: 'arm64' } } },
        10,
      ),
      ...tierPods({ app: `batch${suffix}`, cpu: '1', memory: '12Gi' }, 6),
      ...tierPods({ app: `train${suffix}`, cpu: '3', memory: '12Gi', gpu: 1, spec: gpuToleration }, 2),
    );
  }
  return pods;
}

/** About `count` pods of the issue mix (90 a copy): whole copies, so every size keeps its proportions. */
export function mixedPods(count: number): Pod[] {
  return issueMix(Math.max(1, Math.round(count / 92)));
}

export function mixedInput(pods: Pod[]): SchedulingInput {
  const nodePools = mixedNodePools();
  const types = mixedInstanceTypes();
  return { pods, nodePools, instanceTypes: Object.fromEntries(nodePools.map((p) => [p.metadata.name, types])) };
}
