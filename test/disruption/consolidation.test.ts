import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import type { Budget, NodePool } from '../../shared/apis/v1/types';
import { KUBE } from '../../shared/contracts';
import { pdbLimits } from '../../shared/disruption/candidates';
import { type ConsolidationInput, evictionCost, planConsolidation } from '../../shared/disruption/consolidation';
import type { ClusterNode } from '../../shared/disruption/plan';
import { isEvictable } from '../../shared/kube/client';
import { instanceType } from '../scheduling/helpers';
import { pod } from '../support/kube/builders';
import { testNodePool } from '../support/nodepools';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const HOUR = 3600_000;

function pool(
  disruption: Partial<NonNullable<NodePool['spec']['disruption']>> = {},
  budgets: Budget[] = [{ nodes: '1' }],
): NodePool {
  return testNodePool({
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '30s', budgets, ...disruption },
  });
}

// On-demand only, so that the cheaper replacement is a smaller shape, not the same shape as spot.
const large = instanceType('m5.large', { cpu: 2, memoryGiB: 8, price: 0.096 });
const xlarge = instanceType('m5.xlarge', { cpu: 4, memoryGiB: 16, price: 0.192 });
const spotTypes = [
  instanceType('m5.large', { cpu: 2, memoryGiB: 8, price: 0.096, capacityTypes: ['on-demand', 'spot'] }),
  instanceType('m5.xlarge', { cpu: 4, memoryGiB: 16, price: 0.192, capacityTypes: ['on-demand', 'spot'] }),
];
const ZONE = large.offerings[0]?.zone ?? '';

function clusterNode(
  name: string,
  type: 'm5.large' | 'm5.xlarge',
  pods: Pod[],
  options: { capacityType?: string; annotations?: Record<string, string> } = {},
): ClusterNode {
  const cpu = type === 'm5.large' ? '2' : '4';
  const node: Node = {
    metadata: {
      name,
      labels: {
        [KUBE.registeredLabel]: 'true',
        [KUBE.initializedLabel]: 'true',
        'karpenter.sh/nodepool': 'general',
        'topology.kubernetes.io/zone': ZONE,
      },
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: { providerID: `aws:///${ZONE}/i-${name}` },
    status: { allocatable: { cpu, memory: type === 'm5.large' ? '8Gi' : '16Gi', pods: '110' } },
  };
  return {
    node,
    instance: {
      instanceId: `i-${name}`,
      nodePool: 'general',
      nodeClass: 'default',
      instanceType: type,
      zone: ZONE,
      capacityType: options.capacityType ?? 'on-demand',
      launchTime: NOW - HOUR,
    },
    pods: pods.map((p) => ({ ...p, spec: { ...p.spec, nodeName: name }, status: { phase: 'Running' } })),
  };
}

const web = (name: string, cpu: string, extra: { annotations?: Record<string, string> } = {}) =>
  pod(name, { cpu, labels: { app: 'web' }, owner: { kind: 'ReplicaSet', name: 'web' }, ...extra });

function input(nodes: ClusterNode[], p = pool(), extra: Partial<ConsolidationInput> = {}): ConsolidationInput {
  return {
    now: NOW,
    nodes,
    nodePools: [p],
    instanceTypes: { general: [large, xlarge] },
    daemonSets: [],
    disrupting: new Map(),
    isEvictable,
    ...extra,
  };
}

// Translated from upstream pkg/controllers/disruption/consolidation_test.go, singlenodeconsolidation.go
// and multinodeconsolidation.go behaviour (names carry the upstream file).
describe('planConsolidation', () => {
  it('consolidation_test.go: can replace an on-demand node with a spot node, pinned to spot', () => {
    const plan = planConsolidation(
      input([clusterNode('a', 'm5.large', [web('w1', '1500m')])], pool(), { instanceTypes: { general: spotTypes } }),
    );
    expect(plan.command).toMatchObject({
      kind: 'replace',
      method: 'single',
      replacement: { offering: { capacityType: 'spot' } },
    });
    // Upstream adds capacity-type In [spot]: a spot shortage fails the launch instead of buying on-demand.
    expect(plan.command?.replacement?.requirements).toContainEqual({
      key: 'karpenter.sh/capacity-type',
      operator: 'In',
      values: ['spot'],
    });
  });

  it('replaces within the NodePool limits, counting the candidate out (Karpenter marks it for deletion first)', () => {
    const limited = pool();
    limited.spec.limits = { cpu: '4' };
    const nodes = [clusterNode('big', 'm5.xlarge', [web('w1', '1'), web('w2', '500m')])];
    const plan = planConsolidation(input(nodes, limited, { nodePoolUsage: { general: { cpu: 4000, nodes: 1 } } }));
    expect(plan.command).toMatchObject({ kind: 'replace', replacement: { offering: { instanceType: 'm5.large' } } });
  });

  it('does not replace when the replacement would pass the NodePool limits', () => {
    const limited = pool();
    limited.spec.limits = { cpu: '4' };
    const nodes = [clusterNode('big', 'm5.xlarge', [web('w1', '1'), web('w2', '500m')])];
    const plan = planConsolidation(input(nodes, limited, { nodePoolUsage: { general: { cpu: 7000, nodes: 2 } } }));
    expect(plan.command).toBeUndefined();
    expect(plan.considered).toEqual([
      {
        nodeName: 'big',
        outcome: '2 pod(s) would not schedule again (NodePool general: limits exhausted (cpu 3 of 4 used))',
      },
    ]);
  });

  it('consolidation_test.go: can delete nodes whose pods fit on another node, saving the whole price', () => {
    const nodes = [clusterNode('a', 'm5.large', [web('w1', '500m')]), clusterNode('b', 'm5.large', [web('w2', '1')])];
    const plan = planConsolidation(input(nodes));
    expect(plan.command).toMatchObject({ kind: 'delete', method: 'single', savings: 0.096 });
    expect(plan.command?.candidates.map((c) => c.nodeName)).toEqual(['a']);
    expect(plan.command?.elsewhere).toEqual({ b: ['default/w1'] });
  });

  it('consolidation_test.go: can replace node with a smaller node', () => {
    const plan = planConsolidation(input([clusterNode('big', 'm5.xlarge', [web('w1', '1'), web('w2', '500m')])]));
    expect(plan.command?.kind).toBe('replace');
    expect(plan.command?.replacement?.offering.instanceType).toBe('m5.large');
    expect(plan.command?.replacement?.instanceTypes.map((t) => t.name)).toEqual(['m5.large']);
    expect(plan.command?.savings).toBeCloseTo(0.096);
  });

  it("consolidation_test.go: won't replace a node that is already the cheapest shape for its pods (Unconsolidatable)", () => {
    const plan = planConsolidation(input([clusterNode('a', 'm5.large', [web('w1', '1500m')])]));
    expect(plan.command).toBeUndefined();
    expect(plan.unconsolidatable).toEqual([{ nodeName: 'a', message: "Can't replace with a cheaper node" }]);
  });

  it('consolidation_test.go: spot-to-spot consolidation is off by default', () => {
    const plan = planConsolidation(
      input([clusterNode('s', 'm5.xlarge', [web('w1', '1')], { capacityType: 'spot' })], pool(), {
        instanceTypes: { general: spotTypes },
      }),
    );
    expect(plan.command).toBeUndefined();
    expect(plan.considered[0]?.outcome).toBe(
      "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node",
    );
  });

  it('consolidation_test.go: spot-to-spot single-node consolidation needs 15 cheaper instance types, and launches from the cheapest 15', () => {
    const many = Array.from({ length: 18 }, (_, i) =>
      instanceType(`c${i}.large`, { cpu: 2, memoryGiB: 8, price: 0.05 + i * 0.001, capacityTypes: ['spot'] }),
    );
    const dear = instanceType('m5.2xlarge', { cpu: 8, memoryGiB: 32, price: 0.5, capacityTypes: ['spot'] });
    const spotNode = () => {
      const n = clusterNode('s', 'm5.xlarge', [web('w1', '1')], { capacityType: 'spot' });
      return { ...n, instance: { ...n.instance, instanceType: 'm5.2xlarge' } };
    };
    const few = planConsolidation(
      input([spotNode()], pool(), { instanceTypes: { general: [...many.slice(0, 5), dear] }, spotToSpot: true }),
    );
    expect(few.command).toBeUndefined();
    expect(few.considered[0]?.outcome).toBe(
      'SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to consolidate, got 5',
    );
    const enough = planConsolidation(
      input([spotNode()], pool(), { instanceTypes: { general: [...many, dear] }, spotToSpot: true }),
    );
    expect(enough.command?.replacement?.instanceTypes.map((t) => t.name)).toEqual(many.slice(0, 15).map((t) => t.name));
  });

  it('consolidation_test.go: minValues not met by the cheaper types makes the node Unconsolidatable before acting', () => {
    const strict = pool();
    strict.spec.template.spec.requirements = [
      { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 2 },
    ];
    const plan = planConsolidation(
      input([clusterNode('big', 'm5.xlarge', [web('w1', '1'), web('w2', '500m')])], strict),
    );
    expect(plan.command).toBeUndefined();
    expect(plan.unconsolidatable[0]?.message).toMatch(/do not meet the NodePool's minValues/);
  });

  it('types.go NewCandidate: leaves nodes whose pods a PDB protects, or that are annotated do-not-disrupt', () => {
    const limits = pdbLimits([
      {
        metadata: { name: 'web', namespace: 'default' },
        spec: { selector: { matchLabels: { app: 'web' } } },
        status: { disruptionsAllowed: 0 },
      },
    ]);
    const nodes = [
      clusterNode('a', 'm5.large', [web('w1', '500m')]),
      clusterNode('c', 'm5.large', [], { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } }),
    ];
    const plan = planConsolidation(input(nodes, pool(), { pdbs: limits }));
    expect(plan.command).toBeUndefined();
    expect(Object.fromEntries(plan.considered.map((c) => [c.nodeName, c.outcome]))).toEqual({
      a: 'PodDisruptionBudget default/web prevents evicting pod default/w1',
      c: 'disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation on the node',
    });
  });

  it('consolidation_test.go: waits for consolidateAfter after the last pod event recorded on the claim', () => {
    const a = clusterNode('a', 'm5.large', [web('w1', '500m')]);
    const record = {
      metadata: {
        name: 'general-a',
        labels: {},
        annotations: {},
        creationTimestamp: new Date(NOW - HOUR).toISOString(),
      },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [],
        resources: { requests: {} },
        taints: [],
        startupTaints: [],
        expireAfter: 'Never',
      },
      status: {
        capacity: {},
        allocatable: {},
        conditions: [],
        // A pod was deleted from the node a minute ago.
        lastPodEventTime: new Date(NOW - 60_000).toISOString(),
      },
    };
    const nodes = [{ ...a, record }, clusterNode('b', 'm5.large', [web('w2', '500m')])];
    const plan = planConsolidation(input(nodes, pool({ consolidateAfter: '30m' })));
    expect(plan.command?.candidates.map((c) => c.nodeName)).toEqual(['b']);
    expect(plan.considered.find((c) => c.nodeName === 'a')?.outcome).toMatch(/^not consolidatable until/);
  });

  it('consolidation_test.go: a WhenEmpty pool never consolidates a node with pods (Unconsolidatable)', () => {
    const nodes = [
      clusterNode('a', 'm5.large', [web('w1', '500m')]),
      clusterNode('b', 'm5.large', [web('w2', '500m')]),
    ];
    const whenEmpty = planConsolidation(input(nodes, pool({ consolidationPolicy: 'WhenEmpty' })));
    expect(whenEmpty.command).toBeUndefined();
    expect(whenEmpty.unconsolidatable.map((u) => u.nodeName)).toEqual(['a', 'b']);
  });

  it('helpers.go BuildDisruptionBudgetMapping: respects the Underutilized budget, counting nodes being deleted', () => {
    const going = clusterNode('x', 'm5.large', []);
    (going.node.metadata as { deletionTimestamp?: string }).deletionTimestamp = new Date(NOW).toISOString();
    const nodes = [
      clusterNode('a', 'm5.large', [web('w1', '500m')]),
      clusterNode('b', 'm5.large', [web('w2', '500m')]),
      going,
    ];
    const plan = planConsolidation(input(nodes, pool({}, [{ nodes: '1' }])));
    expect(plan.command).toBeUndefined();
    expect(plan.considered.filter((c) => c.nodeName !== 'x').map((c) => c.outcome)).toEqual([
      expect.stringMatching(/blocks/),
      expect.stringMatching(/blocks/),
    ]);
    const zero = planConsolidation(input(nodes.slice(0, 2), pool({}, [{ nodes: '0', reasons: ['Underutilized'] }])));
    expect(zero.command).toBeUndefined();
  });

  it('does not move pods onto a node that is disrupting', () => {
    const nodes = [
      clusterNode('a', 'm5.large', [web('w1', '1500m')]),
      clusterNode('b', 'm5.large', [web('w2', '500m')]),
    ];
    const plan = planConsolidation(
      input(nodes, pool({}, [{ nodes: '2' }]), { disrupting: new Map([['general', new Set(['a'])]]) }),
    );
    expect(plan.command).toBeUndefined();
  });

  it('multinodeconsolidation.go: four m5.large with one 1200m pod each become one command', () => {
    const nodes = ['a', 'b', 'c', 'd'].map((n) => clusterNode(n, 'm5.large', [web(`${n}1`, '1200m')]));
    const plan = planConsolidation(
      input(nodes, pool({}, [{ nodes: '100%' }]), {
        instanceTypes: {
          general: [large, xlarge, instanceType('m5.2xlarge', { cpu: 8, memoryGiB: 32, price: 0.384 })],
        },
      }),
    );
    // Upstream's binary search: all four (4.8 vCPU) would need an m5.2xlarge at the same $0.384/h, so
    // the largest prefix is three nodes (3.6 vCPU) onto one m5.xlarge at $0.192/h instead of $0.288/h.
    expect(plan.command).toMatchObject({ kind: 'replace', method: 'multi' });
    expect(plan.command?.candidates.map((c) => c.nodeName)).toEqual(['a', 'b', 'c']);
    expect(plan.command?.replacement?.offering.instanceType).toBe('m5.xlarge');
    expect(plan.command?.savings).toBeCloseTo(0.096);
  });

  it('multinodeconsolidation.go: takes the largest prefix that can go, in disruption-cost order', () => {
    // Three nodes with a small pod each and one full node: the three small pods fit on the full node's neighbours.
    const nodes = [
      clusterNode('a', 'm5.large', [web('a1', '300m')]),
      clusterNode('b', 'm5.large', [web('b1', '300m')]),
      clusterNode('c', 'm5.large', [web('c1', '300m')]),
    ];
    const plan = planConsolidation(input(nodes, pool({}, [{ nodes: '100%' }])));
    expect(plan.command).toMatchObject({ kind: 'delete', method: 'multi' });
    expect(plan.command?.candidates.map((c) => c.nodeName)).toEqual(['a', 'b']);
  });

  it('disruption.go EvictionCost: priority and pod-deletion-cost order candidates', () => {
    const important = web('i1', '300m');
    important.spec.priority = 1_000_000_000;
    const cheap = web('c1', '300m', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-2147483647' } });
    // 1 + 1e9 / 2^25 ≈ 30.8, clamped to 10.
    expect(evictionCost(important)).toBe(10);
    // 1 - 2147483647 / 2^27 ≈ -15, clamped to -10.
    expect(evictionCost(cheap)).toBe(-10);
    const nodes = [clusterNode('a', 'm5.large', [important]), clusterNode('b', 'm5.large', [cheap])];
    const plan = planConsolidation(input(nodes));
    expect(plan.command?.candidates.map((c) => c.nodeName)).toEqual(['b']);
  });
  it('emptiness_test.go: can delete multiple empty nodes, in one command before multi-node consolidation, within the Empty budget', () => {
    const nodes = [
      clusterNode('e1', 'm5.large', []),
      clusterNode('e2', 'm5.large', []),
      clusterNode('e3', 'm5.large', []),
      clusterNode('a', 'm5.large', [web('a1', '300m')]),
      clusterNode('b', 'm5.large', [web('b1', '300m')]),
    ];
    const budgets = [{ nodes: '100%' }, { nodes: '2', reasons: ['Empty' as const] }];
    const plan = planConsolidation(input(nodes, pool({}, budgets)));
    expect(plan.command).toMatchObject({ kind: 'delete', method: 'empty' });
    expect(plan.command?.candidates.map((c) => c.nodeName)).toEqual(['e1', 'e2']);
    expect(plan.command?.savings).toBeCloseTo(0.192);
    expect(plan.considered.find((c) => c.nodeName === 'e3')?.outcome).toMatch(
      /budgets\[1\] \(nodes: 2, reasons Empty\) blocks/,
    );
  });

  it('emptiness_test.go: should delete empty nodes of a WhenEmpty pool, and wait for the node TTL (consolidateAfter) first', () => {
    const whenEmpty = pool({ consolidationPolicy: 'WhenEmpty', consolidateAfter: '2h' }, [{ nodes: '100%' }]);
    const nodes = [clusterNode('e', 'm5.large', []), clusterNode('a', 'm5.large', [web('a1', '300m')])];
    // Launched an hour ago and empty since: not consolidatable for another hour.
    const early = planConsolidation(input(nodes, whenEmpty));
    expect(early.command).toBeUndefined();
    expect(early.considered.find((c) => c.nodeName === 'e')?.outcome).toMatch(/^not consolidatable until/);
    const later = planConsolidation(input(nodes, whenEmpty, { now: NOW + 2 * HOUR }));
    expect(later.command).toMatchObject({ kind: 'delete', method: 'empty' });
    expect(later.command?.candidates.map((c) => c.nodeName)).toEqual(['e']);
  });

  it('emptiness_test.go: with the Empty budget at 0 an empty node is left alone, and single-node consolidation goes on', () => {
    const budgets = [{ nodes: '100%' }, { nodes: '0', reasons: ['Empty' as const] }];
    const nodes = [clusterNode('e', 'm5.large', []), clusterNode('big', 'm5.xlarge', [web('w1', '500m')])];
    const plan = planConsolidation(input(nodes, pool({}, budgets)));
    expect(plan.command).toMatchObject({ method: 'single', candidates: [{ nodeName: 'big' }] });
    expect(plan.considered.find((c) => c.nodeName === 'e')?.outcome).toMatch(/blocks/);
  });
});
