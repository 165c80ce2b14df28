// Cases where `karpless plan` used to disagree with Karpenter's own scheduler tests
// (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go, topology_test.go):
// each test is named after the upstream It it mirrors and fails if the divergence comes back.

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import type { Taint } from '../../shared/apis/v1/types';
import { type ExistingNode, type SchedulingInput, solve } from '../../shared/scheduling';
import { instanceType, nodePool, pod, pods, standardTypes, ZONES } from './helpers';
import { violations } from './invariants';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

function run(input: Partial<SchedulingInput> & { pods: Pod[] }) {
  const pools = input.nodePools ?? [nodePool('default')];
  const full: SchedulingInput = {
    instanceTypes: Object.fromEntries(pools.map((p) => [p.metadata.name, standardTypes()])),
    ...input,
    nodePools: pools,
  };
  const result = solve(full);
  expect(violations(full, result)).toEqual([]);
  return result;
}

const requirementOf = (result: ReturnType<typeof solve>, key: string) =>
  result.nodeClaims[0]?.requirements.find((r) => r.key === key && r.operator === 'In')?.values;

/** A node of the default NodePool, as registration leaves it (not yet initialized unless said). */
function ourNode(
  name: string,
  o: { taints?: Taint[]; initialized?: boolean; startupTaints?: Taint[] } = {},
): ExistingNode {
  return {
    name,
    labels: {
      [HOST]: name,
      [ZONE]: 'zone-a',
      'karpenter.sh/nodepool': 'default',
      'node.kubernetes.io/instance-type': 'm5.2xlarge',
      'karpenter.sh/capacity-type': 'on-demand',
    },
    taints: o.taints ?? [],
    allocatable: { cpu: 8000, memory: 32 * 2 ** 30, pods: 110 },
    pods: [],
    ...(o.initialized !== undefined ? { initialized: o.initialized } : {}),
    ...(o.startupTaints ? { startupTaints: o.startupTaints } : {}),
  };
}

describe('Custom Constraints > Well Known Labels', () => {
  it('should not schedule nodes with a hostname selector (suite_test.go:225)', () => {
    const result = run({ pods: [pod('p', { nodeSelector: { [HOST]: 'red-node' } })] });
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable.map((u) => u.pod.metadata.name)).toEqual(['p']);
    expect(result.unschedulable[0]!.reasons.join(' ')).toMatch(/hostname/);
  });

  it('schedules a hostname selector onto the existing node of that name', () => {
    const result = run({
      pods: [pod('p', { nodeSelector: { [HOST]: 'red-node' } })],
      existingNodes: [ourNode('red-node', { initialized: true })],
    });
    expect(result.nodeClaims).toEqual([]);
    expect(result.existingNodes.map((n) => n.name)).toEqual(['red-node']);
  });

  it('plans a claim for a hostname NotIn or Exists requirement, which a new node satisfies', () => {
    const notIn = pod('not-in', {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: HOST, operator: 'NotIn', values: ['red-node'] }] }],
          },
        },
      },
    });
    const result = run({ pods: [notIn] });
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
  });

  it.each([
    ['failure-domain.beta.kubernetes.io/zone', 'zone-b', ZONE],
    ['beta.kubernetes.io/arch', 'arm64', 'kubernetes.io/arch'],
    ['beta.kubernetes.io/os', 'linux', 'kubernetes.io/os'],
    ['beta.kubernetes.io/instance-type', 'c5.xlarge', 'node.kubernetes.io/instance-type'],
    ['topology.ebs.csi.aws.com/zone', 'zone-c', ZONE],
  ])(
    'should support well known labels: %s selects %s on its stable key (suite_test.go, NormalizedLabels)',
    (key, value, stable) => {
      const result = run({ pods: [pod('p', { nodeSelector: { [key]: value } })] });
      expect(result.unschedulable).toEqual([]);
      expect(result.nodeClaims).toHaveLength(1);
      const claim = result.nodeClaims[0]!;
      if (stable === 'node.kubernetes.io/instance-type') expect(claim.offering.instanceType).toBe(value);
      else expect(requirementOf(result, stable)).toEqual([value]);
      expect(claim.requirements.some((r) => r.key === key)).toBe(false);
    },
  );

  it('should not schedule a deprecated-key selector no instance type satisfies', () => {
    const result = run({ pods: [pod('p', { nodeSelector: { 'beta.kubernetes.io/arch': 's390x' } })] });
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable).toHaveLength(1);
  });
});

describe('In-Flight Nodes > Taints', () => {
  const notReady: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };

  it('should assume pod will schedule to a node with ephemeral taint node.kubernetes.io/not-ready:NoExecute when the node is uninitialized (suite_test.go:2040)', () => {
    const uninitialized = run({
      pods: [pod('second')],
      existingNodes: [ourNode('node-1', { taints: [notReady], initialized: false })],
    });
    expect(uninitialized.nodeClaims).toEqual([]);
    expect(uninitialized.existingNodes.map((n) => n.name)).toEqual(['node-1']);
    const initialized = run({
      pods: [pod('third')],
      existingNodes: [ourNode('node-1', { taints: [notReady], initialized: true })],
    });
    expect(initialized.existingNodes).toEqual([]);
    expect(initialized.nodeClaims).toHaveLength(1);
  });

  it('should assume pod will schedule to a tainted node with a custom startup taint (suite_test.go:2110)', () => {
    const startup: Taint = { key: 'foo.com/taint', value: 'tainted', effect: 'NoSchedule' };
    const result = run({
      pods: [pod('second')],
      existingNodes: [ourNode('node-1', { taints: [startup, notReady], initialized: false, startupTaints: [startup] })],
    });
    expect(result.nodeClaims).toEqual([]);
    expect(result.existingNodes.map((n) => n.name)).toEqual(['node-1']);
  });

  it('should not assume pod will schedule to a node with startup taints after initialization (suite_test.go:2143)', () => {
    const startup: Taint = { key: 'ignore-me', value: 'nothing-to-see-here', effect: 'NoSchedule' };
    const result = run({
      pods: [pod('second')],
      existingNodes: [ourNode('node-1', { taints: [startup], initialized: true, startupTaints: [startup] })],
    });
    expect(result.existingNodes).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('should not assume pod will schedule to a tainted node (suite_test.go): a taint that is neither startup nor ephemeral keeps pods off an uninitialized node', () => {
    const other: Taint = { key: 'foo.com/taint', value: 'tainted', effect: 'NoSchedule' };
    const result = run({
      pods: [pod('second')],
      existingNodes: [ourNode('node-1', { taints: [other], initialized: false })],
    });
    expect(result.existingNodes).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('treats an in-flight claim as uninitialized: its unregistered taint does not keep pods off', () => {
    const node = {
      ...ourNode('claim-1', { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] }),
      inFlight: true,
    };
    const result = run({ pods: [pod('p')], existingNodes: [node] });
    expect(result.existingNodes.map((n) => n.name)).toEqual(['claim-1']);
  });
});

describe('In-Flight Nodes > Daemonsets', () => {
  it('Should properly handle DaemonSet resources with Node Affinity for `karpenter.sh/initialized` and `karpenter.sh/registered` (suite_test.go:2364)', () => {
    const daemon = (key: string) =>
      pod(`ds-${key}`, {
        cpu: '1',
        memory: '64Mi',
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: ['true'] }] }],
            },
          },
        },
      });
    const result = run({
      pods: [pod('p', { cpu: '2', memory: '1Gi' })],
      daemonSets: [daemon('karpenter.sh/initialized'), daemon('karpenter.sh/registered')],
    });
    expect(result.nodeClaims).toHaveLength(1);
    const claim = result.nodeClaims[0]!;
    // 2 cpu of pod + 2 of DaemonSets: a 2-vCPU type cannot hold it.
    expect(claim.requests.cpu).toBe(4000);
    expect(claim.instanceTypes.every((t) => (t.allocatable.cpu ?? 0) >= 4000)).toBe(true);
    expect(
      claim.requirements.some(
        (r) => r.key.startsWith('karpenter.sh/registered') || r.key === 'karpenter.sh/initialized',
      ),
    ).toBe(false);
  });

  it('leaves out a DaemonSet that selects karpenter.sh/initialized NotIn [true]: it never runs on our nodes', () => {
    const ds = pod('ds', {
      cpu: '1',
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'karpenter.sh/initialized', operator: 'NotIn', values: ['true'] }] },
            ],
          },
        },
      },
    });
    const result = run({ pods: [pod('p', { cpu: '1', memory: '1Gi' })], daemonSets: [ds] });
    expect(result.nodeClaims[0]!.requests.cpu).toBe(1000);
  });
});

describe('Existing Nodes > host ports', () => {
  const withPort = (name: string, hostPort: number, extra: { protocol?: string; hostIP?: string } = {}) => {
    const p = pod(name);
    p.spec.containers[0]!.ports = [{ containerPort: 80, hostPort, ...extra }];
    return p;
  };

  it('should schedule pods with the same host port to different nodes (suite_test.go:2593)', () => {
    const result = run({ pods: [withPort('a', 8080), withPort('b', 8080)] });
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(2);
  });

  it('puts pods with the same host port on a different node than an existing pod binding it', () => {
    const node = ourNode('node-1', { initialized: true });
    const running = withPort('running', 8080);
    running.spec.nodeName = 'node-1';
    node.pods.push(running);
    const result = run({ pods: [withPort('new', 8080), pod('plain')], existingNodes: [node] });
    expect(result.existingNodes.flatMap((n) => n.pods.map((p) => p.metadata.name))).toEqual(['plain']);
    expect(result.nodeClaims.flatMap((c) => c.pods.map((p) => p.metadata.name))).toEqual(['new']);
  });

  it('does not open a node for a pod whose host port a DaemonSet of the pool binds (daemonHostPortUsage)', () => {
    // Prepare: a node-exporter DaemonSet on 9100 runs on the default pool, not on the tainted one.
    const exporter = withPort('node-exporter', 9100);
    const taint: Taint = { key: 'dedicated', value: 'edge', effect: 'NoSchedule' };
    const edge = nodePool('edge', { taints: [taint] });
    const pending = withPort('agent', 9100);
    // Act
    const alone = run({ pods: [withPort('agent', 9100)], daemonSets: [exporter] });
    pending.spec.tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'edge', effect: 'NoSchedule' }];
    const beside = run({ pods: [pending], daemonSets: [exporter], nodePools: [nodePool('default'), edge] });
    // Assess: nowhere in the default pool; in the pool the DaemonSet does not run on.
    expect(alone.nodeClaims).toEqual([]);
    expect(alone.unschedulable[0]?.reasons).toEqual([
      'NodePool default: hostPort 9100/TCP is bound by DaemonSet pod default/node-exporter on every node of the pool',
    ]);
    expect(beside.nodeClaims.map((c) => c.nodePool)).toEqual(['edge']);
  });

  it('keeps a pod off an existing node whose DaemonSet pod binds its host port', () => {
    const node = ourNode('node-1', { initialized: true });
    const exporter = withPort('node-exporter-x1', 9100);
    exporter.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'node-exporter' }];
    exporter.spec.nodeName = 'node-1';
    node.pods.push(exporter);
    const result = run({ pods: [withPort('agent', 9100), pod('plain')], existingNodes: [node] });
    expect(result.existingNodes.flatMap((n) => n.pods.map((p) => p.metadata.name))).toEqual(['plain']);
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims.flatMap((c) => c.pods.map((p) => p.metadata.name))).toEqual(['agent']);
  });

  it('lets pods share a node when protocols or specific host addresses differ (hostportusage Matches)', () => {
    const result = run({
      pods: [
        withPort('tcp', 8080),
        withPort('udp', 8080, { protocol: 'UDP' }),
        withPort('ip-1', 9090, { hostIP: '10.0.0.1' }),
        withPort('ip-2', 9090, { hostIP: '10.0.0.2' }),
      ],
    });
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('keeps a pod on 0.0.0.0 apart from one on a specific address of the same port', () => {
    const result = run({ pods: [withPort('any', 9090), withPort('one', 9090, { hostIP: '10.0.0.1' })] });
    expect(result.nodeClaims).toHaveLength(2);
  });

  it('packs many host-port pods one per node beside pods without ports', () => {
    const result = run({
      pods: [...Array.from({ length: 5 }, (_, i) => withPort(`hp-${i}`, 8080)), ...pods('plain', 10)],
    });
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(5);
    for (const c of result.nodeClaims) expect(c.pods.filter((p) => p.metadata.name.startsWith('hp-'))).toHaveLength(1);
  });
});

describe('Topology > NodeTaintsPolicy and NodeAffinityPolicy', () => {
  const labels = { app: 'spread' };
  const SPREAD = 'fake-label';
  const spread = (policy: { nodeTaintsPolicy?: 'Honor' | 'Ignore'; nodeAffinityPolicy?: 'Honor' | 'Ignore' }) => [
    {
      maxSkew: 1,
      topologyKey: SPREAD,
      whenUnsatisfiable: 'DoNotSchedule' as const,
      labelSelector: { matchLabels: labels },
      ...policy,
    },
  ];
  const existing = (name: string, value: string, o: { taints?: Taint[]; labels?: Record<string, string> } = {}) => ({
    name,
    labels: { [HOST]: name, [SPREAD]: value, ...(o.labels ?? {}) },
    taints: o.taints ?? [],
    allocatable: { cpu: 100, memory: 2 ** 30, pods: 110 },
    pods: [],
  });
  const taint: Taint = { key: 'taintname', value: 'taintvalue', effect: 'NoSchedule' };
  const placedPerDomain = (result: ReturnType<typeof solve>) => {
    const counts = new Map<string, number>();
    for (const c of result.nodeClaims) {
      const d = c.requirements.find((r) => r.key === SPREAD)?.values?.[0] ?? '?';
      counts.set(d, (counts.get(d) ?? 0) + c.pods.length);
    }
    return [...counts.values()].sort((a, b) => b - a);
  };

  it('should balance pods across a label (NodeTaintsPolicy=ignore) (topology_test.go:1199)', () => {
    const result = solve({
      pods: pods('p', 5, { labels, cpu: '1', topologySpreadConstraints: spread({ nodeTaintsPolicy: 'Ignore' }) }),
      nodePools: [nodePool('default', { labels: { [SPREAD]: 'baz' } })],
      instanceTypes: { default: standardTypes() },
      existingNodes: [existing('node-1', 'foo', { taints: [taint] }), existing('node-2', 'bar', { taints: [taint] })],
    });
    // foo and bar count at 0 although the pods cannot go there: one pod in baz, the rest wait.
    expect(placedPerDomain(result)).toEqual([1]);
    expect(result.unschedulable).toHaveLength(4);
  });

  it('counts tainted domains by default (nodeTaintsPolicy unset is Ignore)', () => {
    const result = solve({
      pods: pods('p', 5, { labels, cpu: '1', topologySpreadConstraints: spread({}) }),
      nodePools: [nodePool('default', { labels: { [SPREAD]: 'baz' } })],
      instanceTypes: { default: standardTypes() },
      existingNodes: [existing('node-1', 'foo', { taints: [taint] })],
    });
    expect(placedPerDomain(result)).toEqual([1]);
  });

  it('should balance pods across a label (NodeTaintsPolicy=honor) (topology_test.go:1270)', () => {
    const result = solve({
      pods: pods('p', 5, { labels, cpu: '1', topologySpreadConstraints: spread({ nodeTaintsPolicy: 'Honor' }) }),
      nodePools: [nodePool('default', { labels: { [SPREAD]: 'baz' } })],
      instanceTypes: { default: standardTypes() },
      existingNodes: [existing('node-1', 'foo', { taints: [taint] }), existing('node-2', 'bar', { taints: [taint] })],
    });
    expect(placedPerDomain(result)).toEqual([5]);
    expect(result.unschedulable).toEqual([]);
  });

  it.each([
    ['Ignore', [1]],
    ['Honor', [2]],
  ] as const)(
    'should balance pods across a label when discovered from the nodepool (NodeTaintsPolicy=%s) (topology_test.go:1339, 1395)',
    (policy, expected) => {
      const tainted = nodePool('tainted', {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'Exists' },
          { key: SPREAD, operator: 'In', values: ['bar'] },
        ],
        taints: [{ key: 'taint-key', value: 'taint-value', effect: 'NoSchedule' }],
      });
      const plain = nodePool('default', { requirements: [{ key: SPREAD, operator: 'In', values: ['foo'] }] });
      const result = solve({
        pods: pods('p', 2, { labels, topologySpreadConstraints: spread({ nodeTaintsPolicy: policy }) }),
        nodePools: [plain, tainted],
        instanceTypes: { default: standardTypes(), tainted: standardTypes() },
      });
      // Ignore: bar (tainted) holds the minimum at 0, so foo takes one pod; Honor: foo alone counts, both fit.
      expect(placedPerDomain(result)).toEqual(expected);
    },
  );

  it('should balance pods across a label when mutually exclusive NodePools (by taints) share domains (NodeTaintsPolicy=honor) (topology_test.go:1451)', () => {
    const pools = [
      ['foo', 'bar'],
      ['foo', 'baz'],
    ].map((domains, i) =>
      nodePool(`pool-${i}`, {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'Exists' },
          { key: SPREAD, operator: 'In', values: domains },
        ],
        taints: [{ key: 'taint-key', value: `nodepool-${i}`, effect: 'NoSchedule' }],
      }),
    );
    const podsFor = (i: number, count: number) =>
      pods(`d${i}`, count, {
        labels,
        topologySpreadConstraints: spread({ nodeTaintsPolicy: 'Honor' }),
        tolerations: [{ key: 'taint-key', effect: 'NoSchedule', value: `nodepool-${i}` }],
      });
    const result = solve({
      pods: [...podsFor(0, 2), ...podsFor(1, 4)],
      nodePools: pools,
      instanceTypes: { 'pool-0': standardTypes(), 'pool-1': standardTypes() },
    });
    expect(result.unschedulable).toEqual([]);
    expect(placedPerDomain(result)).toEqual([3, 2, 1]);
  });

  it.each([
    ['Ignore', [1]],
    ['Honor', [5]],
  ] as const)(
    'should balance pods across a label (NodeAffinityPolicy=%s) (topology_test.go:1532, 1599)',
    (policy, expected) => {
      const result = solve({
        pods: pods('p', 5, {
          labels,
          cpu: '1',
          nodeSelector: { selector: 'value' },
          topologySpreadConstraints: spread({ nodeAffinityPolicy: policy }),
        }),
        nodePools: [nodePool('default', { labels: { [SPREAD]: 'baz', selector: 'value' } })],
        instanceTypes: { default: standardTypes() },
        existingNodes: [
          existing('node-1', 'foo', { labels: { selector: 'mismatch' } }),
          existing('node-2', 'bar', { labels: { selector: 'mismatch' } }),
        ],
      });
      expect(placedPerDomain(result)).toEqual(expected);
    },
  );

  it('should not limit spread options by preferred node affinity (topology_test.go:1835)', () => {
    const result = run({
      pods: pods('p', 6, {
        labels,
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: labels } },
        ],
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 1,
                preference: { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a', 'zone-b'] }] },
              },
            ],
          },
        },
      }),
    });
    const perZone = new Map<string, number>();
    for (const c of result.nodeClaims) {
      const z = c.requirements.find((r) => r.key === ZONE && r.operator === 'In')?.values?.[0] ?? '?';
      perZone.set(z, (perZone.get(z) ?? 0) + c.pods.length);
    }
    expect([...perZone.values()].sort()).toEqual([2, 2, 2]);
  });
});

describe('Instance Type Selection > MinValues', () => {
  const GEN = 'karpenter/numerical-value';
  const types = () => [
    instanceType('gen2.large', { cpu: 1, memoryGiB: 1, price: 0.52, labels: { [GEN]: '2' } }),
    instanceType('gen3.xlarge', { cpu: 4, memoryGiB: 4, price: 1.0, labels: { [GEN]: '3' } }),
  ];

  it('scheduler should fail if the minValues in Gt operator is not satisfied (instance_selection_test.go:784)', () => {
    const result = run({
      nodePools: [nodePool('default', { requirements: [{ key: GEN, operator: 'Exists', minValues: 2 }] })],
      instanceTypes: { default: types() },
      pods: pods('p', 2, {
        cpu: '900m',
        memory: '900Mi',
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: GEN, operator: 'Gt', values: ['2'] }] }],
            },
          },
        },
      }),
    });
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable.map((u) => u.reasons)).toEqual([
      [`NodePool default: minValues requirement is not met for label(s) (label(s)=[${GEN}])`],
      [`NodePool default: minValues requirement is not met for label(s) (label(s)=[${GEN}])`],
    ]);
  });

  it('still plans the pods whose requirements leave enough values for minValues', () => {
    const result = run({
      nodePools: [nodePool('default', { requirements: [{ key: GEN, operator: 'Exists', minValues: 2 }] })],
      instanceTypes: { default: types() },
      pods: pods('p', 2, { cpu: '900m', memory: '900Mi' }),
    });
    expect(result.unschedulable).toEqual([]);
    for (const c of result.nodeClaims) expect(c.instanceTypes.length).toBeGreaterThanOrEqual(2);
  });
});

describe('Topology > Zonal', () => {
  const labels = { app: 'spread' };
  const spreadPods = (count: number) =>
    pods('p', count, {
      labels,
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: labels } },
      ],
    });
  const node = (name: string, zone: string, bound: Pod[] = []): ExistingNode => ({
    name,
    labels: { [HOST]: name, [ZONE]: zone },
    taints: [],
    allocatable: { cpu: 1000, memory: 4 * 2 ** 30, pods: 110 },
    pods: bound.map((p) => ({ ...p, spec: { ...p.spec, nodeName: name } })),
  });
  const finished = (name: string, phase: string): Pod => ({ ...pod(name, { labels, cpu: '1' }), status: { phase } });
  const terminating = (name: string): Pod => {
    const p = pod(name, { labels, cpu: '100m' });
    return { ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
  };
  const perNode = (result: ReturnType<typeof solve>) =>
    Object.fromEntries(result.existingNodes.map((n) => [n.name, n.pods.length]));

  it('should only count running/scheduled pods with matching labels scheduled to nodes with a corresponding domain (topology_test.go:415)', () => {
    // Finished and terminating pods do not skew zone-a, and the finished ones leave node-a's cpu free.
    const gone = [finished('failed', 'Failed'), finished('succeeded', 'Succeeded'), terminating('t')];
    const result = run({
      pods: spreadPods(3),
      existingNodes: [node('node-a', 'zone-a', gone), node('node-b', 'zone-b'), node('node-c', 'zone-c')],
    });
    expect(result.unschedulable).toEqual([]);
    expect(perNode(result)).toEqual({ 'node-a': 1, 'node-b': 1, 'node-c': 1 });
  });

  it('still counts the running pods of a domain', () => {
    const running = pods('running', 2, { labels, cpu: '100m' });
    const result = run({
      pods: spreadPods(3),
      existingNodes: [node('node-a', 'zone-a', running), node('node-b', 'zone-b'), node('node-c', 'zone-c')],
    });
    expect(result.unschedulable).toEqual([]);
    expect(perNode(result)).toEqual({ 'node-b': 2, 'node-c': 1 });
  });
});

describe('Topology > Pod Affinity/Anti-Affinity', () => {
  const labels = { security: 's1' };
  const selfAffine = (name: string, ...zones: string[]) =>
    pod(name, {
      labels,
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: { matchLabels: labels }, topologyKey: ZONE },
          ],
        },
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: zones }] }],
          },
        },
      },
    });
  const zoneOf = (result: ReturnType<typeof solve>, name: string) =>
    result.nodeClaims.find((c) => c.pods.some((p) => p.metadata.name === name))?.offering.zone;

  it('should allow two nodes to be created when two pods with matching affinities have incompatible selectors (topology_test.go:2181)', () => {
    const result = run({ pods: [selfAffine('pod-1', 'zone-b'), selfAffine('pod-2', 'zone-c')] });
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(2);
    expect([zoneOf(result, 'pod-1'), zoneOf(result, 'pod-2')]).toEqual(['zone-b', 'zone-c']);
  });

  it('keeps a self-affine pod out of a zone of its own once a zone it may use has a matching pod', () => {
    const anywhere = selfAffine('anywhere', 'zone-b', 'zone-c');
    const result = run({ pods: [selfAffine('pod-1', 'zone-b'), anywhere] });
    expect(result.unschedulable).toEqual([]);
    expect(zoneOf(result, 'anywhere')).toBe('zone-b');
  });

  it('late zone commitment, kept on purpose: a pod repelled by one planned in the same pass gets another zone at once (upstream waits a loop, topology_test.go:2361)', () => {
    const target = pod('pod', { labels: { security: 's2' }, cpu: '2' });
    const repelled = pod('aff', {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: { matchLabels: { security: 's2' } }, topologyKey: ZONE },
          ],
        },
      },
    });
    const result = run({ pods: [target, repelled] });
    expect(result.unschedulable).toEqual([]);
    expect(zoneOf(result, 'aff')).not.toBe(zoneOf(result, 'pod'));
  });
});

describe('Existing Nodes > ordering', () => {
  it('should order initialized nodes for scheduling uninitialized nodes (suite_test.go:2662)', () => {
    // Names put the one initialized node last: only the initialized-first order picks it.
    const nodes = [
      ourNode('node-a', { initialized: false }),
      ourNode('node-b', { initialized: false }),
      ourNode('node-z', { initialized: true }),
    ];
    const result = run({ pods: [pod('p')], existingNodes: nodes });
    expect(result.nodeClaims).toEqual([]);
    expect(result.existingNodes.map((n) => n.name)).toEqual(['node-z']);
  });

  it('should order initialized nodes for scheduling uninitialized nodes when all other nodes are inflight (suite_test.go:2553)', () => {
    const claim = { ...ourNode('claim-a'), inFlight: true };
    const result = run({ pods: [pod('p')], existingNodes: [claim, ourNode('node-z', { initialized: true })] });
    expect(result.existingNodes.map((n) => n.name)).toEqual(['node-z']);
  });

  it('orders a registered uninitialized node and an in-flight claim by name alone, as upstream', () => {
    const claim = { ...ourNode('claim-a'), inFlight: true };
    const result = run({ pods: [pod('p')], existingNodes: [ourNode('node-b', { initialized: false }), claim] });
    expect(result.existingNodes.map((n) => n.name)).toEqual(['claim-a']);
  });
});

describe('NodePool requirements instance filtering', () => {
  it('should handle multiple pods when requirements filter out all instance types (suite_test.go:5242)', () => {
    const result = run({
      nodePools: [
        nodePool('default', {
          requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['non-existent-arch'] }],
        }),
      ],
      pods: pods('pod', 3),
    });
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable).toHaveLength(3);
    for (const u of result.unschedulable)
      expect(u.reasons.join(' ')).toContain('nodepool requirements filtered out all available instance types');
  });
});

describe('Topology with Volume Requirements', () => {
  const labels = { app: 'test' };
  const spread = [
    {
      maxSkew: 1,
      topologyKey: ZONE,
      whenUnsatisfiable: 'DoNotSchedule' as const,
      labelSelector: { matchLabels: labels },
      minDomains: 3,
    },
  ];
  const node = (zone: string): ExistingNode => ({
    name: `node-${zone}`,
    labels: { [HOST]: `node-${zone}`, [ZONE]: zone },
    taints: [],
    allocatable: { cpu: 4000, memory: 8 * 2 ** 30, pods: 110 },
    pods: [{ ...pod(`running-${zone}`, { labels }), spec: { ...pod('x').spec, nodeName: `node-${zone}` } }],
  });
  const inZoneA = [{ key: ZONE, operator: 'In' as const, values: ['zone-a'] }];

  it('should schedule pod with PVC and TSC minDomains=3 when pods are spread across 3 zones (topology_test.go:3359)', () => {
    const withVolume = pod('with-pvc', { labels, topologySpreadConstraints: spread });
    const result = run({
      pods: [withVolume],
      existingNodes: ZONES.map(node),
      volumeRequirements: new Map([[withVolume, inZoneA]]),
    });
    expect(result.unschedulable).toEqual([]);
    expect(result.existingNodes.map((n) => n.name)).toEqual(['node-zone-a']);
  });

  it('keeps the volume zone binding: the pod never lands in another zone', () => {
    const withVolume = pod('with-pvc', { labels, cpu: '8' });
    const inZoneC = [{ key: ZONE, operator: 'In' as const, values: ['zone-c'] }];
    const result = run({ pods: [withVolume], volumeRequirements: new Map([[withVolume, inZoneC]]) });
    expect(result.nodeClaims.map((c) => c.offering.zone)).toEqual(['zone-c']);
  });

  it('a zone the pod itself requires still narrows its spread domains (minDomains unmet: at most maxSkew there)', () => {
    const own = pod('own', {
      labels,
      topologySpreadConstraints: spread,
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: inZoneA }] },
        },
      },
    });
    const result = run({ pods: [own], existingNodes: ZONES.map(node) });
    expect(result.unschedulable.map((u) => u.pod.metadata.name)).toEqual(['own']);
  });
});
