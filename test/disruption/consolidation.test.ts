import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import type { Budget, NodePool } from '../../shared/apis/v1/types';
import { KUBE } from '../../shared/contracts';
import {
  type ConsolidationInput,
  type DisruptionBudgetView,
  planSingleNodeConsolidation,
} from '../../shared/disruption/consolidation';
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
    pdbs: [],
    isEvictable,
    ...extra,
  };
}

describe('planSingleNodeConsolidation', () => {
  it('replaces an on-demand node by the same shape on spot when that is cheaper', () => {
    const plan = planSingleNodeConsolidation(
      input([clusterNode('a', 'm5.large', [web('w1', '1500m')])], pool(), { instanceTypes: { general: spotTypes } }),
    );
    expect(plan.command).toMatchObject({ kind: 'replace', replacement: { offering: { capacityType: 'spot' } } });
  });

  it('replaces within the NodePool limits, counting the candidate out (Karpenter marks it for deletion first)', () => {
    // Prepare: cpu limit 4, held entirely by the oversized node itself.
    const limited = pool();
    limited.spec.limits = { cpu: '4' };
    const nodes = [clusterNode('big', 'm5.xlarge', [web('w1', '1'), web('w2', '500m')])];
    // Act
    const plan = planSingleNodeConsolidation(
      input(nodes, limited, { nodePoolUsage: { general: { cpu: 4000, nodes: 1 } } }),
    );
    // Assess: its own 4 vCPU are free for the 2-vCPU replacement.
    expect(plan.command).toMatchObject({ kind: 'replace', replacement: { offering: { instanceType: 'm5.large' } } });
  });

  it('does not replace when the replacement would pass the NodePool limits', () => {
    // Prepare: cpu limit 4; beside the candidate's 4 vCPU, another claim (launching) holds 3.
    const limited = pool();
    limited.spec.limits = { cpu: '4' };
    const nodes = [clusterNode('big', 'm5.xlarge', [web('w1', '1'), web('w2', '500m')])];
    const plan = planSingleNodeConsolidation(
      input(nodes, limited, { nodePoolUsage: { general: { cpu: 7000, nodes: 2 } } }),
    );
    expect(plan.command).toBeUndefined();
    expect(plan.considered).toEqual([
      {
        nodeName: 'big',
        outcome: '2 pod(s) would not schedule again (NodePool general: limits exhausted (cpu 3 of 4 used))',
      },
    ]);
  });

  it('deletes a node whose pods fit on another node, saving its whole price', () => {
    // Prepare: two half-used large nodes
    const nodes = [clusterNode('a', 'm5.large', [web('w1', '500m')]), clusterNode('b', 'm5.large', [web('w2', '1')])];
    // Act
    const plan = planSingleNodeConsolidation(input(nodes));
    // Assess: the node with fewer pods goes first (both have one: the tie goes by name)
    expect(plan.command).toMatchObject({ kind: 'delete', candidate: { nodeName: 'a' }, savings: 0.096 });
    expect(plan.command?.kind === 'delete' && plan.command.elsewhere).toEqual({ b: ['default/w1'] });
  });

  it('replaces an oversized node by one cheaper node when its pods fit nowhere else', () => {
    const plan = planSingleNodeConsolidation(
      input([clusterNode('big', 'm5.xlarge', [web('w1', '1'), web('w2', '500m')])]),
    );
    expect(plan.command?.kind).toBe('replace');
    if (plan.command?.kind !== 'replace') return;
    expect(plan.command.replacement.offering.instanceType).toBe('m5.large');
    expect(plan.command.replacement.instanceTypes.map((t) => t.name)).toEqual(['m5.large']);
    expect(plan.command.savings).toBeCloseTo(0.096);
  });

  it('keeps a node that is already the cheapest shape for its pods', () => {
    const plan = planSingleNodeConsolidation(input([clusterNode('a', 'm5.large', [web('w1', '1500m')])]));
    expect(plan.command).toBeUndefined();
    expect(plan.considered[0]?.outcome).toMatch(/no cheaper replacement/);
  });

  it('never replaces a spot node (only deletes one)', () => {
    const plan = planSingleNodeConsolidation(
      input([clusterNode('s', 'm5.xlarge', [web('w1', '1')], { capacityType: 'spot' })], pool(), {
        instanceTypes: { general: spotTypes },
      }),
    );
    expect(plan.command).toBeUndefined();
    expect(plan.considered[0]?.outcome).toMatch(/spot node is only deleted/);
  });

  it('leaves nodes whose pods a PodDisruptionBudget protects, or that are annotated do-not-disrupt', () => {
    const pdb: DisruptionBudgetView = {
      namespace: 'default',
      name: 'web',
      selector: { matchLabels: { app: 'web' } },
      disruptionsAllowed: 0,
    };
    const nodes = [
      clusterNode('a', 'm5.large', [web('w1', '500m')]),
      clusterNode('b', 'm5.large', [web('w2', '500m', { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } })]),
      clusterNode('c', 'm5.large', [], { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } }),
    ];
    const plan = planSingleNodeConsolidation(input(nodes, pool(), { pdbs: [pdb] }));
    expect(plan.command).toBeUndefined();
    expect(Object.fromEntries(plan.considered.map((c) => [c.nodeName, c.outcome]))).toEqual({
      a: 'pod default/w1: PodDisruptionBudget default/web allows no disruption',
      b: 'pod default/w2 is annotated karpenter.sh/do-not-disrupt',
      c: 'annotated karpenter.sh/do-not-disrupt',
    });
  });

  it('waits for consolidateAfter after the last pod arrived, and leaves WhenEmpty pools to emptiness', () => {
    const recent = web('w1', '500m');
    recent.metadata.creationTimestamp = new Date(NOW - 10_000).toISOString();
    const nodes = [clusterNode('a', 'm5.large', [recent]), clusterNode('b', 'm5.large', [web('w2', '500m')])];
    const waiting = planSingleNodeConsolidation(input(nodes));
    expect(waiting.command?.candidate.nodeName).toBe('b');
    expect(waiting.considered.find((c) => c.nodeName === 'a')?.outcome).toMatch(/not consolidatable/);
    const whenEmpty = planSingleNodeConsolidation(input(nodes, pool({ consolidationPolicy: 'WhenEmpty' })));
    expect(whenEmpty.command).toBeUndefined();
  });

  it('respects the Underutilized budget, counting nodes already disrupting', () => {
    const nodes = [
      clusterNode('a', 'm5.large', [web('w1', '500m')]),
      clusterNode('b', 'm5.large', [web('w2', '500m')]),
    ];
    const plan = planSingleNodeConsolidation(
      input(nodes, pool({}, [{ nodes: '1' }]), { disrupting: new Map([['general', new Set(['x'])]]) }),
    );
    expect(plan.command).toBeUndefined();
    expect(plan.considered.map((c) => c.outcome)).toEqual([
      expect.stringMatching(/blocks/),
      expect.stringMatching(/blocks/),
    ]);
    const drifting = planSingleNodeConsolidation(input(nodes, pool({}, [{ nodes: '0', reasons: ['Underutilized'] }])));
    expect(drifting.command).toBeUndefined();
  });

  it('does not move pods onto a node that is disrupting', () => {
    const nodes = [
      clusterNode('a', 'm5.large', [web('w1', '1500m')]),
      clusterNode('b', 'm5.large', [web('w2', '500m')]),
    ];
    const plan = planSingleNodeConsolidation(
      input(nodes, pool({}, [{ nodes: '2' }]), { disrupting: new Map([['general', new Set(['a'])]]) }),
    );
    // b's pod could only go to a, which is going away; a replacement would cost the same.
    expect(plan.command).toBeUndefined();
  });
});
