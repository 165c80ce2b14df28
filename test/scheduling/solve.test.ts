import { describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import { type ExistingNode, podKey, type SchedulingInput, solve } from '../../shared/scheduling';
import { instanceType, nodePool, pod, pods, standardTypes, ZONES } from './helpers';
import { violations } from './invariants';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

function run(input: Partial<SchedulingInput> & { pods: Pod[] }) {
  const pools = input.nodePools ?? [nodePool('general')];
  const full: SchedulingInput = {
    instanceTypes: Object.fromEntries(pools.map((p) => [p.metadata.name, standardTypes()])),
    ...input,
    nodePools: pools,
  };
  const result = solve(full);
  expect(violations(full, result)).toEqual([]);
  return result;
}

const claimOf = (result: ReturnType<typeof solve>, name: string) =>
  result.nodeClaims.find((c) => c.pods.some((p) => p.metadata.name === name));
const zoneOf = (result: ReturnType<typeof solve>, name: string) =>
  claimOf(result, name)?.requirements.find((r) => r.key === ZONE && r.operator === 'In')?.values;

describe('solve: packing', () => {
  it('packs pods onto few claims and picks the cheapest type that fits what it holds', () => {
    // Prepare: 16 × 1 cpu / 1 GiB, exactly one 16-vCPU node (ten would be cheaper on 8 + 2 vCPUs).
    const result = run({ pods: pods('web', 16, { cpu: '1', memory: '1Gi' }) });
    // Assess: one claim; its cheapest type is the 16-vCPU arm64 m6g (0.896/h, below c5.4xlarge's 0.96).
    expect(result.nodeClaims).toHaveLength(1);
    expect(result.nodeClaims[0]!.offering.instanceType).toBe('m6g.4xlarge');
    expect(result.nodeClaims[0]!.instanceTypes.map((t) => t.name)).toContain('m5.4xlarge');
    expect(result.totalPrice).toBeCloseTo(result.nodeClaims[0]!.offering.price);
  });

  it('splits a claim onto two smaller types when they cost less than the one that holds it all', () => {
    // Prepare: 10 × 1 cpu / 1 GiB: one m6g.4xlarge (0.896/h) or an m6g.2xlarge and an m6g.large (0.56/h).
    const result = run({ pods: pods('web', 10, { cpu: '1', memory: '1Gi' }) });
    // Assess
    expect(result.nodeClaims.map((c) => c.offering.instanceType).sort()).toEqual(['m6g.2xlarge', 'm6g.large']);
    expect(result.totalPrice).toBeCloseTo(0.56);
  });

  it('prefers spot over on-demand at equal price, as Karpenter launches spot first', () => {
    // Prepare: offline catalogs price spot as on-demand; one type offered both ways at one price.
    const type = instanceType('m5.large', { cpu: 2, memoryGiB: 8, capacityTypes: ['on-demand', 'spot'] });
    type.offerings = type.offerings.map((o) => ({ ...o, price: 0.096 }));
    // Act
    const result = run({ pods: [pod('a', { cpu: '1', memory: '1Gi' })], instanceTypes: { general: [type] } });
    // Assess
    expect(result.nodeClaims[0]!.offering).toMatchObject({ capacityType: 'spot', zone: 'zone-a', price: 0.096 });
  });

  it('lists every type that fits, cheapest first, and no type that does not', () => {
    const result = run({ pods: [pod('big', { cpu: '7', memory: '40Gi' })] });
    expect(result.nodeClaims[0]!.instanceTypes.map((t) => t.name)).toEqual([
      'r5.2xlarge',
      'm6g.4xlarge',
      'm5.4xlarge',
      'r5.4xlarge',
    ]);
  });

  it('counts DaemonSet overhead only where the DaemonSet would run', () => {
    const ds = pod('ds-arm', { cpu: '1', memory: '1Gi', nodeSelector: { 'kubernetes.io/arch': 'arm64' } });
    const amd = run({
      pods: [pod('a', { cpu: '1500m', memory: '1Gi', nodeSelector: { 'kubernetes.io/arch': 'amd64' } })],
      daemonSets: [ds],
    });
    expect(amd.nodeClaims[0]!.requests.cpu).toBe(1500);
    const arm = run({
      pods: [pod('a', { cpu: '1500m', memory: '1Gi', nodeSelector: { 'kubernetes.io/arch': 'arm64' } })],
      daemonSets: [ds],
    });
    expect(arm.nodeClaims[0]!.requests.cpu).toBe(2500);
    expect(arm.nodeClaims[0]!.offering.instanceType).toBe('m6g.xlarge');
  });

  it('needs extended resources in allocatable', () => {
    const gpuType = instanceType('g5.xlarge', { cpu: 4, memoryGiB: 16, extra: { 'nvidia.com/gpu': 1 } });
    const result = run({
      pods: [pod('train', { extra: { 'nvidia.com/gpu': '1' } })],
      instanceTypes: { general: [...standardTypes(), gpuType] },
    });
    expect(result.nodeClaims[0]!.instanceTypes.map((t) => t.name)).toEqual(['g5.xlarge']);
  });

  it('respects the pod count of an instance type', () => {
    const tiny = instanceType('t3.small', { cpu: 2, memoryGiB: 2, pods: 3, price: 0.01 });
    const result = run({ pods: pods('p', 7, { cpu: '10m', memory: '10Mi' }), instanceTypes: { general: [tiny] } });
    expect(result.nodeClaims.map((c) => c.pods.length).sort()).toEqual([1, 3, 3]);
  });

  it('orders NodePools by weight, then name', () => {
    const pools = [nodePool('b-low'), nodePool('a-low'), nodePool('heavy', { weight: 50 })];
    expect(run({ pods: [pod('x')], nodePools: pools }).nodeClaims[0]!.nodePool).toBe('heavy');
    expect(run({ pods: [pod('x')], nodePools: pools.slice(0, 2) }).nodeClaims[0]!.nodePool).toBe('a-low');
  });

  it('uses existing and in-flight capacity first, so a repeated decision adds nothing', () => {
    const first = run({ pods: pods('web', 30, { cpu: '500m', memory: '1Gi' }) });
    const inFlight: ExistingNode[] = first.nodeClaims.map((c, i) => ({
      name: `claim-${i}`,
      labels: {
        'karpenter.sh/nodepool': c.nodePool,
        [HOST]: `claim-${i}`,
        ...c.instanceTypes[0]!.labels,
        [ZONE]: c.offering.zone,
      },
      taints: [],
      allocatable: c.instanceTypes[0]!.allocatable,
      pods: [],
      inFlight: true,
    }));
    const again = run({ pods: pods('web', 30, { cpu: '500m', memory: '1Gi' }), existingNodes: inFlight });
    expect(again.nodeClaims).toEqual([]);
    expect(again.existingNodes.flatMap((e) => e.pods)).toHaveLength(30);
  });

  it('charges NodePool limits with the largest capacity a claim may launch', () => {
    const result = run({
      pods: pods('p', 3, { cpu: '3', memory: '1Gi' }),
      nodePools: [nodePool('general', { limits: { cpu: '8' } })],
    });
    expect(result.nodeClaims.length).toBeGreaterThan(0);
    expect(result.unschedulable.length).toBeGreaterThan(0);
    expect(result.unschedulable[0]!.reasons[0]).toMatch(/^NodePool general: limits exhausted \(cpu \d+ of 8 used\)/);
  });

  it('never lists a type beyond what the claim was charged against the limits', () => {
    // Prepare: at equal price the big type dominates the small one, but only the small one stays
    // within what the remaining cpu limit can charge for the last claim.
    const big = instanceType('a1.xlarge', { cpu: 3, memoryGiB: 6, pods: 4, price: 0.05 });
    const small = instanceType('b1.large', { cpu: 1, memoryGiB: 1, price: 0.05 });
    const pending = [...pods('m', 11, { cpu: '100m', memory: '3Gi' }), pod('tiny', { cpu: '100m', memory: '128Mi' })];
    // Act: run() checks every claim against the limit, charging the largest listed type.
    const result = run({
      pods: pending,
      nodePools: [nodePool('general', { limits: { cpu: '16' } })],
      instanceTypes: { general: [big, small] },
    });
    // Assess
    const charged = result.nodeClaims.reduce(
      (sum, c) => sum + Math.max(...c.instanceTypes.map((t) => t.capacity.cpu ?? 0)),
      0,
    );
    expect(charged).toBeLessThanOrEqual(16_000);
    expect(result.nodeClaims.length + result.unschedulable.length).toBeGreaterThan(0);
  });

  it('falls back to the next NodePool when limits are used up', () => {
    const result = run({
      pods: pods('p', 3, { cpu: '10', memory: '1Gi' }),
      nodePools: [nodePool('small', { weight: 10, limits: { nodes: '1' } }), nodePool('overflow')],
    });
    expect(new Set(result.nodeClaims.map((c) => c.nodePool))).toEqual(new Set(['small', 'overflow']));
    expect(result.unschedulable).toEqual([]);
  });
});

// Upstream: pkg/controllers/provisioning/suite_test.go "Limits" and scheduler.go filterByRemainingResources /
// subtractMax; the usage is what the NodePool's claims already hold (shared/nodeclaim/usage.ts).
describe('solve: NodePool limits against existing usage', () => {
  const antiAffine: Partial<Pod['spec']> = {
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey: HOST, labelSelector: { matchLabels: { app: 'spread' } } },
        ],
      },
    },
  };

  it('does not open a claim whose largest instance type could exceed the remaining limit', () => {
    // Prepare: cpu limit 10 with 8 used leaves 2 vCPU; the pod fits a 2-vCPU type.
    const result = run({
      pods: [pod('small', { cpu: '1', memory: '1Gi' })],
      nodePools: [nodePool('general', { limits: { cpu: '10' } })],
      nodePoolUsage: { general: { cpu: 8000, nodes: 1 } },
    });
    // Assess: one claim, and none of the types it lists is larger than the 2 vCPU left.
    expect(result.nodeClaims).toHaveLength(1);
    expect(Math.max(...result.nodeClaims[0]!.instanceTypes.map((t) => t.capacity.cpu ?? 0))).toBe(2000);
  });

  it('opens a claim whose largest type uses exactly the remaining limit (capacity ≤ remaining, as upstream)', () => {
    const result = run({
      pods: [pod('p', { cpu: '7', memory: '1Gi' })],
      nodePools: [nodePool('general', { limits: { cpu: '16' } })],
      nodePoolUsage: { general: { cpu: 8000, nodes: 1 } },
    });
    expect(result.nodeClaims).toHaveLength(1);
    expect(result.nodeClaims[0]!.offering.instanceType).toMatch(/\.2xlarge$/);
  });

  it('plans nothing for a pool whose cpu is used up by its existing claims, and says why', () => {
    const result = run({
      pods: [pod('p', { cpu: '1', memory: '1Gi' })],
      nodePools: [nodePool('general', { limits: { cpu: '8' } })],
      nodePoolUsage: { general: { cpu: 8000, memory: 32 * 2 ** 30, nodes: 1 } },
    });
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable[0]!.reasons).toContain('NodePool general: limits exhausted (cpu 8 of 8 used)');
  });

  it('a pod too large for what is left is unschedulable although a smaller pod would fit', () => {
    const result = run({
      pods: [pod('big', { cpu: '3', memory: '1Gi' })],
      nodePools: [nodePool('general', { limits: { cpu: '10' } })],
      nodePoolUsage: { general: { cpu: 8000 } },
    });
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable[0]!.reasons[0]).toMatch(/^NodePool general: limits exhausted \(cpu 8 of 10 used\)/);
  });

  it('counts the nodes limit: existing claims plus the claims of this solve never pass it', () => {
    // Prepare: nodes limit 3 with 1 used; three pods that must each have a node of their own.
    const result = run({
      pods: pods('spread', 3, { cpu: '1', memory: '1Gi', labels: { app: 'spread' }, ...antiAffine }),
      nodePools: [nodePool('general', { limits: { nodes: '3' } })],
      nodePoolUsage: { general: { cpu: 2000, nodes: 1 } },
    });
    // Assess: two claims, the third pod waits with the nodes limit as its reason.
    expect(result.nodeClaims).toHaveLength(2);
    expect(result.unschedulable).toHaveLength(1);
    expect(result.unschedulable[0]!.reasons).toContain('NodePool general: limits exhausted (nodes 3 of 3 used)');
  });

  it('falls back to a lower-weight pool once the first one is used up by its existing claims', () => {
    const result = run({
      pods: [pod('p', { cpu: '1', memory: '1Gi' })],
      nodePools: [nodePool('first', { weight: 50, limits: { nodes: '2' } }), nodePool('second')],
      nodePoolUsage: { first: { nodes: 2 } },
    });
    expect(result.nodeClaims.map((c) => c.nodePool)).toEqual(['second']);
  });

  it('ignores the usage of a pool without limits', () => {
    const result = run({
      pods: [pod('p', { cpu: '1', memory: '1Gi' })],
      nodePoolUsage: { general: { cpu: 1e9, nodes: 1000 } },
    });
    expect(result.nodeClaims).toHaveLength(1);
  });
});

describe('solve: requirements and taints', () => {
  const pools = () => [
    nodePool('general', {
      requirements: [
        { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['r', 'm', 'c'] },
        { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
      ],
    }),
  ];

  it.each<[string, Partial<Pod['spec']>, string[]]>([
    ['nodeSelector arch', { nodeSelector: { 'kubernetes.io/arch': 'arm64' } }, ['m6g']],
    [
      'In on family',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['r5'] }] },
              ],
            },
          },
        },
      },
      ['r5'],
    ],
    [
      'NotIn on category',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    { key: 'karpenter.k8s.aws/instance-category', operator: 'NotIn', values: ['c', 'm'] },
                  ],
                },
              ],
            },
          },
        },
      },
      ['r5'],
    ],
    [
      'Gt on cpu',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['8'] }] },
              ],
            },
          },
        },
      },
      ['c5', 'm5', 'm6g', 'r5'],
    ],
    [
      'Lte on memory',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'karpenter.k8s.aws/instance-memory', operator: 'Lte', values: ['4096'] }] },
              ],
            },
          },
        },
      },
      ['c5'],
    ],
    [
      'DoesNotExist on a gpu label',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' }] },
              ],
            },
          },
        },
      },
      ['c5', 'm5', 'm6g', 'r5'],
    ],
  ])('%s narrows the claim to the matching families', (_, spec, families) => {
    const result = run({ pods: [pod('p', spec)], nodePools: pools() });
    const got = new Set(result.nodeClaims[0]!.instanceTypes.map((t) => t.name.split('.')[0]));
    expect([...got].sort()).toEqual(families);
  });

  it('tries each OR-ed required node affinity term', () => {
    const spec: Partial<Pod['spec']> = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['s390x'] }] },
              { matchExpressions: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5'] }] },
            ],
          },
        },
      },
    };
    expect(run({ pods: [pod('p', spec)] }).nodeClaims[0]!.offering.instanceType).toMatch(/^c5\./);
  });

  it.each<[string, Partial<Pod['spec']>, RegExp]>([
    [
      'an arch the NodePool does not offer',
      { nodeSelector: { 'kubernetes.io/arch': 's390x' } },
      /^NodePool general: requirement kubernetes\.io\/arch In \[s390x\] conflicts with NodePool \(allows amd64, arm64\)$/,
    ],
    [
      'more memory than any type',
      { containers: [{ name: 'a', resources: { requests: { memory: '200Gi' } } }] },
      /^NodePool general: no instance type has 200 GiB memory allocatable \(largest allowed: 128 GiB, r\/m\/c families, generation > 4\)$/,
    ],
    [
      'a label the NodePool does not set',
      { nodeSelector: { team: 'data' } },
      /^NodePool general: requirement team In \[data\] conflicts with NodePool \(label team is not set/,
    ],
    [
      'a resource no type has',
      { containers: [{ name: 'a', resources: { requests: { 'aws.amazon.com/neuron': '1' } } }] },
      /^NodePool general: no instance type has aws\.amazon\.com\/neuron/,
    ],
  ])('explains %s', (_, spec, reason) => {
    const result = run({ pods: [pod('p', spec)], nodePools: pools() });
    expect(result.unschedulable).toHaveLength(1);
    expect(result.unschedulable[0]!.reasons).toHaveLength(1);
    expect(result.unschedulable[0]!.reasons[0]).toMatch(reason);
  });

  it('gives one reason per NodePool, and a reason when there are no NodePools', () => {
    const gpu = nodePool('gpu', { taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] });
    const result = run({
      pods: [pod('p', { nodeSelector: { 'kubernetes.io/arch': 's390x' } })],
      nodePools: [nodePool('general'), gpu],
    });
    expect(result.unschedulable[0]!.reasons).toEqual([
      expect.stringMatching(/^NodePool general: requirement kubernetes.io\/arch/),
      'NodePool gpu: taint nvidia.com/gpu=true:NoSchedule not tolerated',
    ]);
    const none = solve({ pods: [pod('p')], nodePools: [], instanceTypes: {} });
    expect(none.unschedulable[0]!.reasons[0]).toMatch(/^no NodePools/);
  });

  it.each<[string, 'NoSchedule' | 'NoExecute' | 'PreferNoSchedule', boolean, boolean]>([
    ['NoSchedule blocks an intolerant pod', 'NoSchedule', false, false],
    ['NoSchedule admits a tolerant pod', 'NoSchedule', true, true],
    ['NoExecute blocks an intolerant pod', 'NoExecute', false, false],
    ['NoExecute admits a tolerant pod', 'NoExecute', true, true],
    ['PreferNoSchedule is tolerated at the last relaxation step', 'PreferNoSchedule', false, true],
  ])('%s', (_, effect, tolerant, schedules) => {
    const pool = nodePool('tainted', { taints: [{ key: 'dedicated', value: 'x', effect }] });
    const tolerations = tolerant ? [{ key: 'dedicated', operator: 'Exists' as const }] : [];
    const result = run({ pods: [pod('p', { tolerations })], nodePools: [pool] });
    expect(result.nodeClaims.length).toBe(schedules ? 1 : 0);
  });

  it('prefers an untainted NodePool over tolerating PreferNoSchedule', () => {
    const soft = nodePool('soft', { weight: 100, taints: [{ key: 'spot', effect: 'PreferNoSchedule' }] });
    expect(run({ pods: [pod('p')], nodePools: [soft, nodePool('plain')] }).nodeClaims[0]!.nodePool).toBe('plain');
  });

  it('ignores startupTaints', () => {
    const pool = nodePool('general', {
      startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }],
    });
    expect(run({ pods: [pod('p')], nodePools: [pool] }).nodeClaims).toHaveLength(1);
  });

  it('honours minValues by keeping enough distinct types on the claim', () => {
    const pool = nodePool('general', {
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 5 }],
    });
    const result = run({ pods: pods('p', 20, { cpu: '200m', memory: '256Mi' }), nodePools: [pool] });
    for (const c of result.nodeClaims) expect(c.instanceTypes.length).toBeGreaterThanOrEqual(5);
  });
});

describe('solve: relaxation', () => {
  const prefer = (key: string, values: string[], weight = 10) => ({
    weight,
    preference: { matchExpressions: [{ key, operator: 'In' as const, values }] },
  });

  it.each<[string, Partial<Pod['spec']>, (r: ReturnType<typeof solve>) => void]>([
    [
      'a satisfiable preferred node affinity is honoured',
      {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [prefer('karpenter.k8s.aws/instance-family', ['r5'])],
          },
        },
      },
      (r) => expect(r.nodeClaims[0]!.offering.instanceType).toMatch(/^r5/),
    ],
    [
      'an unsatisfiable preferred node affinity is dropped',
      {
        affinity: {
          nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [prefer('kubernetes.io/arch', ['s390x'])] },
        },
      },
      (r) => expect(r.nodeClaims).toHaveLength(1),
    ],
    [
      'the heaviest preference is tried first, then the next',
      {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              prefer('karpenter.k8s.aws/instance-family', ['m5'], 1),
              prefer('kubernetes.io/arch', ['s390x'], 50),
            ],
          },
        },
      },
      (r) => expect(r.nodeClaims[0]!.offering.instanceType).toMatch(/^m5/),
    ],
    [
      'an unsatisfiable preferred pod affinity is dropped',
      {
        affinity: {
          podAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, podAffinityTerm: { topologyKey: ZONE, labelSelector: { matchLabels: { app: 'nothing' } } } },
            ],
          },
        },
      },
      (r) => expect(r.nodeClaims).toHaveLength(1),
    ],
    [
      'a preferred pod anti-affinity is honoured while it can be',
      {
        affinity: {
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, podAffinityTerm: { topologyKey: HOST, labelSelector: { matchLabels: { app: 'p' } } } },
            ],
          },
        },
      },
      (r) => expect(r.nodeClaims).toHaveLength(3),
    ],
    [
      'a ScheduleAnyway spread is honoured, unlike a hard limit it can be dropped',
      {
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: ZONE,
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: { matchLabels: { app: 'p' } },
          },
        ],
      },
      (r) => expect(new Set(r.nodeClaims.map((c) => c.offering.zone)).size).toBe(3),
    ],
  ])('%s', (_, spec, check) => {
    check(run({ pods: pods('p', 3, { labels: { app: 'p' }, ...spec }) }));
  });

  it('drops a preferred anti-affinity when the NodePool has one node left', () => {
    const spec: Partial<Pod['spec']> = {
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 1, podAffinityTerm: { topologyKey: HOST, labelSelector: { matchLabels: { app: 'p' } } } },
          ],
        },
      },
    };
    const result = run({
      pods: pods('p', 3, { labels: { app: 'p' }, ...spec }),
      nodePools: [nodePool('general', { limits: { nodes: '1' } })],
    });
    expect(result.nodeClaims).toHaveLength(1);
    expect(result.nodeClaims[0]!.pods).toHaveLength(3);
  });

  it('drops a ScheduleAnyway spread when only one zone is offered', () => {
    const spec: Partial<Pod['spec']> = {
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: ZONE,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { app: 'p' } },
        },
      ],
    };
    const pool = nodePool('general', { requirements: [{ key: ZONE, operator: 'In', values: ['zone-a'] }] });
    const result = run({ pods: pods('p', 4, { labels: { app: 'p' }, ...spec }), nodePools: [pool] });
    expect(result.unschedulable).toEqual([]);
  });
});

describe('solve: topology', () => {
  const spread = (topologyKey: string, maxSkew = 1, minDomains?: number) => ({
    topologySpreadConstraints: [
      {
        maxSkew,
        topologyKey,
        whenUnsatisfiable: 'DoNotSchedule' as const,
        labelSelector: { matchLabels: { app: 'web' } },
        ...(minDomains ? { minDomains } : {}),
      },
    ],
  });

  it.each<[string, Partial<Pod['spec']>, number, (r: ReturnType<typeof solve>) => void]>([
    [
      'zone spread puts 6 pods 2 per zone',
      spread(ZONE),
      6,
      (r) =>
        expect(r.nodeClaims.flatMap((c) => c.pods.map(() => c.offering.zone)).sort()).toEqual(
          [...ZONES, ...ZONES].sort(),
        ),
    ],
    [
      'hostname spread puts one pod per node',
      spread(HOST),
      4,
      (r) => expect(r.nodeClaims.map((c) => c.pods.length)).toEqual([1, 1, 1, 1]),
    ],
    [
      'hostname spread with maxSkew 2 puts two per node',
      spread(HOST, 2),
      4,
      (r) => expect(r.nodeClaims.map((c) => c.pods.length)).toEqual([2, 2]),
    ],
    [
      'capacity-type spread uses both capacity types',
      spread('karpenter.sh/capacity-type'),
      4,
      (r) => expect(new Set(r.nodeClaims.map((c) => c.offering.capacityType))).toEqual(new Set(['spot', 'on-demand'])),
    ],
    [
      'hostname anti-affinity puts one pod per node',
      {
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { topologyKey: HOST, labelSelector: { matchLabels: { app: 'web' } } },
            ],
          },
        },
      },
      3,
      (r) => expect(r.nodeClaims).toHaveLength(3),
    ],
    [
      'zone anti-affinity allows one pod per zone',
      {
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { topologyKey: ZONE, labelSelector: { matchLabels: { app: 'web' } } },
            ],
          },
        },
      },
      4,
      (r) => {
        expect(r.nodeClaims).toHaveLength(3);
        expect(r.unschedulable).toHaveLength(1);
        expect(r.unschedulable[0]!.reasons[0]).toMatch(/pod anti-affinity on topology.kubernetes.io\/zone/);
      },
    ],
    [
      'zone self-affinity keeps the pods in one zone',
      {
        affinity: {
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { topologyKey: ZONE, labelSelector: { matchLabels: { app: 'web' } } },
            ],
          },
        },
      },
      40,
      (r) => expect(new Set(r.nodeClaims.map((c) => c.offering.zone)).size).toBe(1),
    ],
    [
      'hostname self-affinity keeps the pods on one node',
      {
        affinity: {
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { topologyKey: HOST, labelSelector: { matchLabels: { app: 'web' } } },
            ],
          },
        },
      },
      5,
      (r) => expect(r.nodeClaims).toHaveLength(1),
    ],
  ])('%s', (_, spec, count, check) => {
    const types = standardTypes().map((t) => ({
      ...t,
      offerings: t.offerings.flatMap((o) => [o, { ...o, capacityType: 'spot' as const, price: o.price * 0.6 }]),
    }));
    check(
      run({
        pods: pods('web', count, { labels: { app: 'web' }, cpu: '1', memory: '1Gi', ...spec }),
        instanceTypes: { general: types },
      }),
    );
  });

  it('balances a zone spread against pods on existing nodes', () => {
    const existing: ExistingNode = {
      name: 'n1',
      labels: { [ZONE]: 'zone-a', [HOST]: 'n1', 'kubernetes.io/arch': 'amd64' },
      taints: [],
      allocatable: { cpu: 1000, memory: 2 ** 30, pods: 10 },
      pods: pods('old', 2, { labels: { app: 'web' } }),
    };
    const result = run({
      pods: pods('web', 4, { labels: { app: 'web' }, ...spread(ZONE) }),
      existingNodes: [existing],
    });
    const zones = result.nodeClaims.flatMap((c) => c.pods.map(() => c.offering.zone)).sort();
    expect(zones).toEqual(['zone-b', 'zone-b', 'zone-c', 'zone-c']);
  });

  it('keeps pods off nodes whose pods repel them (inverse anti-affinity) and explains it', () => {
    const repeller = pod('db-0', {
      labels: { app: 'db' },
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: ZONE, labelSelector: { matchLabels: { app: 'web' } } },
          ],
        },
      },
    });
    const existing: ExistingNode = {
      name: 'n1',
      labels: { [ZONE]: 'zone-a', [HOST]: 'n1' },
      taints: [],
      allocatable: { cpu: 8000, memory: 16 * 2 ** 30, pods: 50 },
      pods: [repeller],
    };
    const result = run({ pods: pods('web', 3, { labels: { app: 'web' } }), existingNodes: [existing] });
    expect(result.existingNodes).toEqual([]);
    for (const c of result.nodeClaims) expect(c.offering.zone).not.toBe('zone-a');
  });

  it('places a pod with affinity to pods planned after it', () => {
    const follower = pod('follower', {
      cpu: '4',
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: ZONE, labelSelector: { matchLabels: { app: 'leader' } } },
          ],
        },
      },
    });
    const leader = pod('leader', { cpu: '100m', labels: { app: 'leader' }, nodeSelector: { [ZONE]: 'zone-b' } });
    const result = run({ pods: [follower, leader] });
    expect(zoneOf(result, 'follower')).toEqual(['zone-b']);
  });

  it('explains a pod whose required affinity matches nothing', () => {
    const lonely = pod('lonely', {
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: ZONE, labelSelector: { matchLabels: { app: 'ghost' } } },
          ],
        },
      },
    });
    const result = run({ pods: [lonely] });
    expect(result.unschedulable[0]!.reasons[0]).toMatch(
      /pod affinity on topology.kubernetes.io\/zone \(app=ghost\): no pod matches/,
    );
  });

  it('explains hostname anti-affinity with an existing pod when no new node may be added', () => {
    const existing: ExistingNode = {
      name: 'n1',
      labels: { [ZONE]: 'zone-a', [HOST]: 'n1' },
      taints: [],
      allocatable: { cpu: 8000, memory: 16 * 2 ** 30, pods: 50 },
      pods: [pod('web-old', { labels: { app: 'web' } })],
    };
    const anti = {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: HOST, labelSelector: { matchLabels: { app: 'web' } } },
          ],
        },
      },
    };
    const result = run({
      pods: [pod('web-new', { labels: { app: 'web' }, ...anti })],
      existingNodes: [existing],
      nodePools: [],
    });
    expect(result.unschedulable[0]!.reasons.join('\n')).toMatch(/no NodePools/);
  });
});

describe('solve: tail re-pack', () => {
  // x holds two 3-cpu pods at 0.40 a pod, the lowest price per (fractional) pod, so the greedy caps
  // every claim at x; v holds three but costs more per pod; y holds one.
  const types = () => [
    instanceType('x.2xlarge', { cpu: 8, memoryGiB: 8, price: 0.8 }),
    instanceType('y.xlarge', { cpu: 4, memoryGiB: 4, price: 0.42 }),
    instanceType('v.2xlarge', { cpu: 9, memoryGiB: 9, price: 0.95 }),
  ];
  const counts = (result: ReturnType<typeof solve>) =>
    result.nodeClaims.map((c) => [c.offering.instanceType, c.pods.length, c.instanceTypes.map((t) => t.name)]);

  it.each<[string, number, Pod[] | undefined, [string, number, string[]][], number]>([
    // Greedy: x (2 pods) + y (1 pod) = 1.22; all three fit one v: 0.95.
    ['onto one cheaper claim', 3, undefined, [['v.2xlarge', 3, ['v.2xlarge']]], 0.95],
    // Greedy: x + x + y = 2.02; the last three claims pooled fit x (2 pods) + v (3 pods): 1.75.
    [
      'onto two cheaper claims',
      5,
      undefined,
      [
        ['x.2xlarge', 2, ['x.2xlarge', 'v.2xlarge']],
        ['v.2xlarge', 3, ['v.2xlarge']],
      ],
      1.75,
    ],
    // With 0.5 cpu of DaemonSet overhead on every node, three pods need 9.5 cpu: v no longer fits.
    [
      'not when DaemonSet overhead leaves no room',
      3,
      [pod('ds', { cpu: '500m', memory: '512Mi' })],
      [
        ['x.2xlarge', 2, ['x.2xlarge', 'v.2xlarge']],
        ['y.xlarge', 1, ['y.xlarge', 'x.2xlarge', 'v.2xlarge']],
      ],
      1.22,
    ],
  ])('re-packs the last claims %s', (_, count, daemonSets, expected, price) => {
    const result = run({
      pods: pods('p', count, { cpu: '3', memory: '3Gi' }),
      instanceTypes: { general: types() },
      ...(daemonSets ? { daemonSets } : {}),
    });
    expect(counts(result)).toEqual(expected);
    expect(result.totalPrice).toBeCloseTo(price, 9);
  });

  const selector = { matchLabels: { app: 'p' } };
  it('never moves pods whose hostname spread would break on one node', () => {
    const result = run({
      pods: pods('p', 3, {
        cpu: '3',
        memory: '3Gi',
        labels: { app: 'p' },
        topologySpreadConstraints: [
          { maxSkew: 2, topologyKey: HOST, whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector },
        ],
      }),
      instanceTypes: { general: types() },
    });
    // The greedy's x (2 pods) + y (1 pod), although one v would be cheaper: three on one node exceed maxSkew 2.
    expect(counts(result).map(([type, n]) => [type, n])).toEqual([
      ['x.2xlarge', 2],
      ['y.xlarge', 1],
    ]);
    expect(result.totalPrice).toBeCloseTo(1.22, 9);
  });

  it.each<[string, Partial<Pod['spec']>]>([
    [
      'a required anti-affinity against pods that are not there',
      {
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { topologyKey: HOST, labelSelector: { matchLabels: { app: 'other' } } },
            ],
          },
        },
      },
    ],
    [
      'a preferred anti-affinity against pods that are not there',
      {
        affinity: {
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, podAffinityTerm: { topologyKey: HOST, labelSelector: { matchLabels: { app: 'other' } } } },
            ],
          },
        },
      },
    ],
    [
      'a hostname spread that still holds on one node',
      {
        topologySpreadConstraints: [
          { maxSkew: 5, topologyKey: HOST, whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector },
        ],
      },
    ],
  ])('merges claims of pods with %s onto one cheaper node', (_, spec) => {
    const input = { pods: pods('p', 3, { cpu: '3', memory: '3Gi', labels: { app: 'p' }, ...spec }) };
    const result = run({ ...input, instanceTypes: { general: types() } });
    expect(counts(result).map(([type, n]) => [type, n])).toEqual([['v.2xlarge', 3]]);
    expect(result.totalPrice).toBeCloseTo(0.95, 9);
  });

  it('never merges pods that repel each other by hostname', () => {
    const result = run({
      pods: pods('p', 3, {
        cpu: '3',
        memory: '3Gi',
        labels: { app: 'p' },
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: HOST, labelSelector: selector }],
          },
        },
      }),
      instanceTypes: { general: types() },
    });
    expect(result.nodeClaims.map((c) => c.pods.length)).toEqual([1, 1, 1]);
  });
});

describe('podKey', () => {
  it('defaults the namespace', () => {
    expect(podKey(pod('a'))).toBe('default/a');
    expect(podKey(pod('a', { namespace: 'kube-system' }))).toBe('kube-system/a');
  });
});
