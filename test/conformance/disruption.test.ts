// Karpenter's disruption tests (kubernetes-sigs/karpenter pkg/controllers/disruption/suite_test.go,
// drift_test.go, emptiness_test.go, consolidation_test.go), translated where they can be expressed
// against karpless's pure disruption core: drift as planDisruption decides it (eventual class),
// emptiness and consolidation as planConsolidation does (graceful class), budgets as
// budgetCounts/budgetLimit count them. Each test is named after the upstream It (file: Context > It).
// The end-to-end translations on moto and the fake API server are in
// test/integration/runtime/disruption-upstream.test.ts.
//
// Not translated here: the queue, orchestration and metrics Its (their karpless counterparts are the
// drift function's records and the integration tests), the static NodePool, buffer-pod, DRA and
// Balanced-policy Its (features karpless does not have), and the Its that exercise controller-runtime
// plumbing (nominated nodes, cluster-state sync, context deadlines).

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import type { Budget, EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { KUBE } from '../../shared/contracts';
import { budgetCounts, budgetLimit } from '../../shared/disruption/budgets';
import { pdbLimits } from '../../shared/disruption/candidates';
import { type ConsolidationInput, evictionCost, planConsolidation } from '../../shared/disruption/consolidation';
import { launchHashTags } from '../../shared/disruption/hash';
import { budgetMembers, type ClusterNode, type PlanInput, planDisruption } from '../../shared/disruption/plan';
import { isEvictable } from '../../shared/kube/client';
import type { PodDisruptionBudget } from '../../shared/kube/types';
import { newNodeClaimRecord } from '../../shared/nodeclaim/record';
import { instanceType } from '../scheduling/helpers';
import { pod } from '../support/kube/builders';
import { testNodePool } from '../support/nodepools';

const UPSTREAM = 'kubernetes-sigs/karpenter pkg/controllers/disruption';
const NOW = Date.parse('2026-12-02T12:00:00Z');
const HOUR = 3600_000;

const large = instanceType('m5.large', { cpu: 2, memoryGiB: 8, price: 0.096 });
const xlarge = instanceType('m5.xlarge', { cpu: 4, memoryGiB: 16, price: 0.192 });
const ZONE = large.offerings[0]?.zone ?? '';
const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [{ alias: 'al2023@latest' }] },
};

function pool(budgets: Budget[] = [{ nodes: '100%' }], consolidateAfter = '30s'): NodePool {
  return testNodePool({
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter, budgets },
  });
}

interface NodeOptions {
  pods?: Pod[];
  type?: 'm5.large' | 'm5.xlarge';
  /** The claim's terminationGracePeriod. */
  tgp?: string;
  annotations?: Record<string, string>;
  initialized?: boolean;
  deleting?: boolean;
  notReady?: boolean;
  /** Hours since launch: drift orders by it when no Drifted condition says otherwise. */
  age?: number;
}

/** A node of pool `general` running ami-old: drifted once the node class resolves ami-new. */
function node(name: string, options: NodeOptions = {}, p = pool()): ClusterNode {
  const type = options.type ?? 'm5.large';
  const labels: Record<string, string> = {
    [KUBE.registeredLabel]: 'true',
    'karpenter.sh/nodepool': 'general',
    'topology.kubernetes.io/zone': ZONE,
  };
  if (options.initialized !== false) labels[KUBE.initializedLabel] = 'true';
  return {
    node: {
      metadata: {
        name,
        labels,
        ...(options.annotations ? { annotations: options.annotations } : {}),
        ...(options.deleting ? { deletionTimestamp: new Date(NOW).toISOString() } : {}),
      },
      spec: { providerID: `aws:///${ZONE}/i-${name}` },
      status: {
        allocatable: { cpu: type === 'm5.large' ? '2' : '4', memory: '8Gi', pods: '110' },
        conditions: [{ type: 'Ready', status: options.notReady ? 'False' : 'True' }],
      },
    },
    instance: {
      instanceId: `i-${name}`,
      nodePool: 'general',
      nodeClass: 'default',
      instanceType: type,
      zone: ZONE,
      capacityType: 'on-demand',
      imageId: 'ami-old',
      hashTags: launchHashTags(p, nodeClass),
      launchTime: NOW - (options.age ?? 1) * HOUR,
    },
    pods: (options.pods ?? []).map((x) => ({
      ...x,
      spec: { ...x.spec, nodeName: name },
      status: { phase: 'Running', ...x.status },
    })),
    ...(options.tgp
      ? {
          record: newNodeClaimRecord({
            name: `general-${name}`,
            labels: { 'karpenter.sh/nodepool': 'general' },
            annotations: {},
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              requirements: [],
              resources: { requests: {} },
              taints: [],
              startupTaints: [],
              expireAfter: 'Never',
              terminationGracePeriod: options.tgp,
            },
            now: NOW - HOUR,
          }),
        }
      : {}),
  };
}

const web = (name: string, cpu = '500m', extra: Parameters<typeof pod>[1] = {}) =>
  pod(name, { cpu, labels: { app: 'web' }, owner: { kind: 'ReplicaSet', name: 'web' }, ...extra });
const doNotDisrupt = (name: string, value = 'true', extra: Parameters<typeof pod>[1] = {}) =>
  web(name, '500m', { annotations: { [KUBE.doNotDisruptAnnotation]: value }, ...extra });
const terminating = (p: Pod): Pod => ({
  ...p,
  metadata: { ...p.metadata, deletionTimestamp: new Date(NOW).toISOString() },
});
const startedAgo = (p: Pod, ms: number): Pod => ({
  ...p,
  status: { phase: 'Running', startTime: new Date(NOW - ms).toISOString() },
});
const blockingPdb = (name = 'guard', selector = { app: 'web' }): PodDisruptionBudget => ({
  metadata: { name, namespace: 'default' },
  spec: { selector: { matchLabels: selector }, maxUnavailable: 0 },
  status: { disruptionsAllowed: 0 },
});

/** Drift's decision: nodes drifted (ami-old → ami-new), planned with the cluster's PDBs. */
function drift(nodes: ClusterNode[], p = pool(), pdbs: PodDisruptionBudget[] = []) {
  const input: PlanInput = {
    now: NOW,
    nodes,
    nodePools: [p],
    nodeClasses: new Map([['default', { nodeClass, amis: [{ id: 'ami-new', requirements: [] }] }]]),
    instanceTypeLabels: () => ({}),
    isEvictable,
    pdbs: pdbLimits(pdbs),
    instanceTypes: { general: [large, xlarge] },
    daemonSets: [],
    disrupting: new Map(),
  };
  const plan = planDisruption(input);
  return {
    allowed: plan.decisions.filter((d) => d.allowed).map((d) => d.candidate.nodeName),
    candidates: plan.decisions.map((d) => d.candidate.nodeName),
    excluded: plan.excluded.map((e) => e.nodeName),
    plan,
  };
}

/** Emptiness and consolidation's decision. */
function consolidate(nodes: ClusterNode[], p = pool(), extra: Partial<ConsolidationInput> = {}) {
  return planConsolidation({
    now: NOW,
    nodes,
    nodePools: [p],
    instanceTypes: { general: [large, xlarge] },
    daemonSets: [],
    disrupting: new Map(),
    isEvictable,
    ...extra,
  });
}
const chosen = (plan: ReturnType<typeof consolidate>) => plan.command?.candidates.map((c) => c.nodeName) ?? [];

describe(`${UPSTREAM}/suite_test.go: Candidate Filtering`, () => {
  it('should not consider candidates that have do-not-disrupt pods scheduled and no terminationGracePeriod', () => {
    expect(drift([node('a', { pods: [doNotDisrupt('p')] })]).excluded).toEqual(['a']);
    expect(chosen(consolidate([node('a', { pods: [doNotDisrupt('p')] }), node('b')]))).not.toContain('a');
  });

  it('should not consider candidates that have do-not-disrupt mirror pods scheduled', () => {
    const mirror = doNotDisrupt('m', 'true', { owner: { kind: 'Node', name: 'a' } });
    expect(drift([node('a', { pods: [mirror] })]).excluded).toEqual(['a']);
  });

  it('should not consider candidates that have do-not-disrupt daemonset pods scheduled', () => {
    const daemon = doNotDisrupt('d', 'true', { owner: { kind: 'DaemonSet', name: 'agent' } });
    expect(drift([node('a', { pods: [daemon] })]).excluded).toEqual(['a']);
  });

  it('should consider candidates that have do-not-disrupt pods scheduled with a terminationGracePeriod set for eventual disruption', () => {
    expect(drift([node('a', { pods: [doNotDisrupt('p')], tgp: '1h' })]).candidates).toEqual(['a']);
  });

  it('should consider candidates that have PDB-blocked pods scheduled with a terminationGracePeriod set for eventual disruption', () => {
    expect(drift([node('a', { pods: [web('p')], tgp: '1h' })], pool(), [blockingPdb()]).candidates).toEqual(['a']);
  });

  it('should not consider candidates that have do-not-disrupt pods scheduled with a terminationGracePeriod set for graceful disruption', () => {
    const plan = consolidate([node('a', { pods: [doNotDisrupt('p')], tgp: '1h' })]);
    expect(plan.considered).toEqual([{ nodeName: 'a', outcome: expect.stringContaining(KUBE.doNotDisruptAnnotation) }]);
  });

  it('should not consider candidates that have PDB-blocked pods scheduled with a terminationGracePeriod set for graceful disruption', () => {
    const plan = consolidate([node('a', { pods: [web('p')], tgp: '1h' })], pool(), {
      pdbs: pdbLimits([blockingPdb()]),
    });
    expect(plan.considered).toEqual([
      { nodeName: 'a', outcome: expect.stringContaining('PodDisruptionBudget default/guard') },
    ]);
  });

  it('should not consider candidates that have do-not-disrupt pods scheduled without a terminationGracePeriod set for eventual disruption', () => {
    expect(drift([node('a', { pods: [doNotDisrupt('p')] })]).candidates).toEqual([]);
  });

  it('should not consider candidates that have PDB-blocked pods scheduled without a terminationGracePeriod set for eventual disruption', () => {
    const result = drift(
      [node('a', { pods: [web('p')] }), node('b', { pods: [web('q', '500m', { labels: { app: 'free' } })] })],
      pool(),
      [blockingPdb()],
    );
    expect(result.excluded).toEqual(['a']);
    expect(result.allowed).toEqual(['b']);
  });

  it('should consider candidates that have do-not-disrupt terminating pods', () => {
    expect(drift([node('a', { pods: [terminating(doNotDisrupt('p'))] })]).candidates).toEqual(['a']);
  });

  it('should consider candidates that have do-not-disrupt terminal pods', () => {
    const done = { ...doNotDisrupt('p'), status: { phase: 'Succeeded' as const } };
    expect(drift([node('a', { pods: [done] })]).candidates).toEqual(['a']);
  });

  it('should not consider candidates that have do-not-disrupt on nodes', () => {
    const annotated = node('a', { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' }, tgp: '1h' });
    expect(drift([annotated]).candidates).toEqual([]);
    expect(chosen(consolidate([annotated]))).toEqual([]);
  });

  it('should not consider candidates that have multiple PDBs on the same pod', () => {
    const open = (name: string): PodDisruptionBudget => ({
      ...blockingPdb(name),
      spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 },
      status: { disruptionsAllowed: 1 },
    });
    expect(drift([node('a', { pods: [web('p')] })], pool(), [open('one'), open('two')]).candidates).toEqual([]);
  });

  it('should not consider candidates that have fully blocking PDBs', () => {
    expect(drift([node('a', { pods: [web('p')] })], pool(), [blockingPdb()]).candidates).toEqual([]);
  });

  it('should not consider candidates that have fully blocking PDBs on daemonset pods', () => {
    const daemon = web('d', '100m', { owner: { kind: 'DaemonSet', name: 'agent' } });
    expect(drift([node('a', { pods: [daemon] })], pool(), [blockingPdb()]).candidates).toEqual([]);
  });

  it('should consider candidates that have fully blocking PDBs on mirror pods', () => {
    const mirror = web('m', '100m', { owner: { kind: 'Node', name: 'a' } });
    expect(drift([node('a', { pods: [mirror] })], pool(), [blockingPdb()]).candidates).toEqual(['a']);
  });

  it('should not consider candidates that have do-not-disrupt pods without a terminationGracePeriod set for graceful disruption', () => {
    expect(chosen(consolidate([node('a', { pods: [doNotDisrupt('p')] })]))).toEqual([]);
  });

  it('should not consider candidates that have fully blocking PDBs without a terminationGracePeriod set for graceful disruption', () => {
    const plan = consolidate([node('a', { pods: [web('p')] })], pool(), { pdbs: pdbLimits([blockingPdb()]) });
    expect(chosen(plan)).toEqual([]);
  });

  it('should consider candidates that have fully blocking PDBs on terminal pods', () => {
    const done = { ...web('p'), status: { phase: 'Failed' as const } };
    expect(drift([node('a', { pods: [done] })], pool(), [blockingPdb()]).candidates).toEqual(['a']);
  });

  it('should consider candidates that have fully blocking PDBs on terminating pods', () => {
    expect(drift([node('a', { pods: [terminating(web('p'))] })], pool(), [blockingPdb()]).candidates).toEqual(['a']);
  });

  it('should not consider candidates that are deleting', () => {
    expect(drift([node('a', { deleting: true })]).candidates).toEqual([]);
    expect(chosen(consolidate([node('a', { deleting: true })]))).toEqual([]);
  });

  it("should not consider candidates that aren't yet initialized", () => {
    expect(drift([node('a', { initialized: false })]).candidates).toEqual([]);
  });

  it('should not consider candidates that are have a non-existent NodePool', () => {
    const orphan = node('a');
    orphan.instance = { ...orphan.instance, nodePool: 'gone' };
    expect(drift([orphan]).candidates).toEqual([]);
    expect(chosen(consolidate([orphan]))).toEqual([]);
  });
});

describe(`${UPSTREAM}/suite_test.go: BuildDisruptionBudgetMapping`, () => {
  const allowed = (nodes: ClusterNode[], budgets: Budget[], disrupting = new Map<string, Set<string>>()) => {
    const count = budgetCounts(budgetMembers(nodes, disrupting)).get('general') ?? { nodes: 0, disrupting: new Set() };
    const limit = budgetLimit(pool(budgets), 'Drifted', { nodes: count.nodes, now: NOW });
    return Math.max(0, limit.limit - count.disrupting.size);
  };
  const ten = () => Array.from({ length: 10 }, (_, i) => node(`n${i}`));

  it('should not consider nodes that are not initialized as part of disruption count', () => {
    expect(allowed([...ten(), node('new', { initialized: false })], [{ nodes: '100%' }])).toBe(10);
  });

  it('should not return a negative disruption value', () => {
    const going = ten().map((n) => node(n.node.metadata.name, { deleting: true }));
    expect(allowed(going, [{ nodes: '10%' }])).toBe(0);
  });

  it('should consider nodes with a deletion timestamp set and MarkedForDeletion to the disruption count', () => {
    const nodes = ten();
    nodes[0] = node('n0', { deleting: true });
    expect(allowed(nodes, [{ nodes: '100%' }], new Map([['general', new Set(['n1'])]]))).toBe(8);
  });

  it('should consider not ready nodes to the disruption count', () => {
    const nodes = ten();
    nodes[0] = node('n0', { notReady: true });
    nodes[1] = node('n1', { notReady: true });
    expect(allowed(nodes, [{ nodes: '100%' }])).toBe(8);
  });
});

describe(`${UPSTREAM}/suite_test.go: Pod Eviction Cost`, () => {
  const withCost = (cost: string) =>
    web('p', '100m', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': cost } });
  const withPriority = (priority: number): Pod => ({ ...web('p'), spec: { ...web('p').spec, priority } });

  it('should have a standard disruptionCost for a pod with no priority or disruptionCost specified', () => {
    expect(evictionCost(web('p'))).toBe(1);
  });
  it('should have a higher disruptionCost for a pod with a positive deletion disruptionCost', () => {
    expect(evictionCost(withCost('100'))).toBeGreaterThan(1);
  });
  it('should have a lower disruptionCost for a pod with a positive deletion disruptionCost', () => {
    expect(evictionCost(withCost('-100'))).toBeLessThan(1);
  });
  it('should have higher costs for higher deletion costs', () => {
    expect(evictionCost(withCost('101'))).toBeGreaterThan(evictionCost(withCost('100')));
  });
  it('should have a higher disruptionCost for a pod with a higher priority', () => {
    expect(evictionCost(withPriority(1))).toBeGreaterThan(1);
  });
  it('should have a lower disruptionCost for a pod with a lower priority', () => {
    expect(evictionCost(withPriority(-1))).toBeLessThan(1);
  });
});

describe(`${UPSTREAM}/drift_test.go: Drift`, () => {
  it('should ignore nodes with the karpenter.sh/do-not-disrupt annotation set to true', () => {
    expect(drift([node('a', { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } })]).candidates).toEqual([]);
  });

  it('should delete drifted nodes with the karpenter.sh/do-not-disrupt annotation set to false', () => {
    const result = drift([node('a', { annotations: { [KUBE.doNotDisruptAnnotation]: 'false' } })]);
    expect(result.allowed).toEqual(['a']);
    expect(result.plan.decisions[0]?.replacement.nodeClaims).toEqual([]);
  });

  it("should not create replacements for drifted nodes that have pods with the karpenter.sh/do-not-disrupt annotation set to true when the NodePool's TerminationGracePeriod is not nil", () => {
    const result = drift([node('a', { pods: [doNotDisrupt('p')], tgp: '1h' })]);
    expect(result.allowed).toEqual(['a']);
    // The pod stays until the grace period ends: no replacement is launched for it.
    expect(result.plan.decisions[0]?.replacement.nodeClaims).toEqual([]);
  });

  it("should not create replacements for drifted nodes that have pods with the blocking PDBs when the NodePool's TerminationGracePeriod is not nil", () => {
    const result = drift([node('a', { pods: [web('p')], tgp: '1h' })], pool(), [blockingPdb()]);
    expect(result.allowed).toEqual(['a']);
    expect(result.plan.decisions[0]?.replacement.nodeClaims).toEqual([]);
  });

  it('should not drift nodes with pods that have a duration-based do-not-disrupt annotation that is still active', () => {
    const p = startedAgo(doNotDisrupt('p', '1h'), 30 * 60_000);
    expect(drift([node('a', { pods: [p] })]).candidates).toEqual([]);
  });

  it('should drift nodes with pods that have an invalid do-not-disrupt annotation format', () => {
    expect(drift([node('a', { pods: [doNotDisrupt('p', 'invalid')] })]).candidates).toEqual(['a']);
  });

  it('should not drift nodes until the longest duration-based do-not-disrupt grace period expires across multiple pods', () => {
    const pods = [
      startedAgo(doNotDisrupt('p1', '10m'), 20 * 60_000),
      startedAgo(doNotDisrupt('p2', '1h'), 20 * 60_000),
    ];
    expect(drift([node('a', { pods })]).candidates).toEqual([]);
    const expired = [
      startedAgo(doNotDisrupt('p1', '10m'), 70 * 60_000),
      startedAgo(doNotDisrupt('p2', '1h'), 70 * 60_000),
    ];
    expect(drift([node('a', { pods: expired })]).candidates).toEqual(['a']);
  });

  it('should replace drifted nodes', () => {
    const result = drift([node('a', { pods: [web('p', '1500m')] })], pool([{ nodes: '1' }]));
    expect(result.allowed).toEqual(['a']);
    expect(result.plan.decisions[0]?.replacement.nodeClaims).toHaveLength(1);
  });

  it('should drift empty nodes before non-empty nodes', () => {
    const result = drift(
      [node('busy', { pods: [web('p')], age: 5 }), node('empty', { age: 1 })],
      pool([{ nodes: '1' }]),
    );
    expect(result.allowed).toEqual(['empty']);
  });

  it('can replace drifted nodes with multiple nodes', () => {
    const pods = [web('p1', '1500m'), web('p2', '1500m'), web('p3', '1500m')];
    // The pool now offers m5.large only: three 1.5-CPU pods need three of them.
    const onlyLarge = testNodePool({
      template: { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }] },
      disruption: { consolidateAfter: '30s', budgets: [{ nodes: '1' }] },
    });
    const result = drift([node('a', { type: 'm5.xlarge', pods })], onlyLarge);
    expect(result.allowed).toEqual(['a']);
    expect(result.plan.decisions[0]?.replacement.nodeClaims).toHaveLength(3);
  });

  it('should drift one non-empty node at a time, starting with the earliest drift', () => {
    const result = drift(
      [node('young', { pods: [web('p1')], age: 1 }), node('old', { pods: [web('p2')], age: 9 })],
      pool([{ nodes: '1' }]),
    );
    expect(result.allowed).toEqual(['old']);
    expect(result.candidates).toEqual(['old', 'young']);
  });

  it('should continue to the next drifted node if the first cannot reschedule all pods', () => {
    const huge = web('huge', '7');
    const result = drift(
      [node('a', { type: 'm5.xlarge', pods: [huge], age: 9 }), node('b', { pods: [web('p')] })],
      pool([{ nodes: '1' }]),
    );
    expect(result.allowed).toEqual(['b']);
  });
});

describe(`${UPSTREAM}/drift_test.go: Budgets`, () => {
  it('should only consider 3 nodes allowed to be disrupted because of budgets', () => {
    const nodes = Array.from({ length: 10 }, (_, i) => node(`n${i}`, { pods: [web(`p${i}`, '100m')] }));
    expect(drift(nodes, pool([{ nodes: '30%' }])).allowed).toHaveLength(3);
  });
});

describe(`${UPSTREAM}/emptiness_test.go: Emptiness`, () => {
  it('can delete empty nodes', () => {
    expect(consolidate([node('a')]).command).toMatchObject({ kind: 'delete', method: 'empty' });
  });

  it('should ignore nodes with the karpenter.sh/do-not-disrupt annotation', () => {
    expect(
      consolidate([node('a', { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } })]).command,
    ).toBeUndefined();
  });

  it('should delete nodes with the karpenter.sh/do-not-disrupt annotation set to false', () => {
    const plan = consolidate([node('a', { annotations: { [KUBE.doNotDisruptAnnotation]: 'false' } })]);
    expect(plan.command?.method).toBe('empty');
  });

  it('should ignore nodes that have pods', () => {
    expect(consolidate([node('a', { pods: [web('p', '1500m')] })]).command?.method).not.toBe('empty');
  });

  it('can delete multiple empty nodes', () => {
    expect(chosen(consolidate([node('a'), node('b')]))).toEqual(['a', 'b']);
  });

  it('considers pending pods when consolidating', () => {
    // A pending pod does not make an empty node non-empty: upstream's emptiness deletes it regardless.
    const pending = pod('pending', { cpu: '1', owner: { kind: 'ReplicaSet', name: 'x' } });
    expect(consolidate([node('a')], pool(), { pendingPods: [pending] }).command?.method).toBe('empty');
  });

  it('will consider a node with a DaemonSet pod as empty', () => {
    const daemon = web('d', '100m', { owner: { kind: 'DaemonSet', name: 'agent' } });
    expect(consolidate([node('a', { pods: [daemon] })]).command?.method).toBe('empty');
  });

  it('will consider a node with terminating Deployment pods as empty', () => {
    expect(consolidate([node('a', { pods: [terminating(web('p'))] })]).command?.method).toBe('empty');
  });

  it('will not consider a node with a terminating StatefulSet pod as empty', () => {
    // Its replacement pod keeps the name and waits for this one to go: the node is not empty yet.
    const member = terminating(web('db-0', '500m', { owner: { kind: 'StatefulSet', name: 'db' } }));
    expect(consolidate([node('a', { pods: [member] })]).command?.method).not.toBe('empty');
  });

  it('should wait for the node TTL for empty nodes before consolidating', () => {
    const fresh = node('a', { age: 0 });
    expect(consolidate([fresh], pool([{ nodes: '100%' }], '10m')).command).toBeUndefined();
  });
});

describe(`${UPSTREAM}/emptiness_test.go: Budgets`, () => {
  const empties = () => Array.from({ length: 10 }, (_, i) => node(`e${i}`));
  it('should allow all empty nodes to be disrupted', () => {
    expect(chosen(consolidate(empties(), pool([{ nodes: '100%' }])))).toHaveLength(10);
  });
  it('should allow no empty nodes to be disrupted', () => {
    expect(consolidate(empties(), pool([{ nodes: '0%' }])).command).toBeUndefined();
  });
  it('should only allow 3 empty nodes to be disrupted', () => {
    expect(chosen(consolidate(empties(), pool([{ nodes: '30%' }])))).toHaveLength(3);
  });
});

describe(`${UPSTREAM}/consolidation_test.go: Delete`, () => {
  it('can delete nodes', () => {
    const plan = consolidate([node('a', { pods: [web('p1')] }), node('b', { pods: [web('p2')] })], pool());
    expect(plan.command).toMatchObject({ kind: 'delete' });
  });

  it('can delete nodes, considers PDB', () => {
    const guarded = web('g', '500m', { labels: { app: 'guarded' } });
    const plan = consolidate([node('a', { pods: [guarded] }), node('b', { pods: [web('p2')] })], pool(), {
      pdbs: pdbLimits([blockingPdb('guard', { app: 'guarded' })]),
    });
    expect(chosen(plan)).toEqual(['b']);
  });

  it('can delete nodes, considers karpenter.sh/do-not-disrupt set to true on pods', () => {
    const plan = consolidate([node('a', { pods: [doNotDisrupt('p')] }), node('b', { pods: [web('p2')] })]);
    expect(chosen(plan)).toEqual(['b']);
  });

  it("does not consolidate nodes with karpenter.sh/do-not-disrupt set to true on pods when the NodePool's TerminationGracePeriod is not nil", () => {
    const plan = consolidate([node('a', { pods: [doNotDisrupt('p')], tgp: '1h' }), node('b', { pods: [web('p2')] })]);
    expect(chosen(plan)).toEqual(['b']);
  });

  it('does not consolidate nodes with pods that have a duration-based do-not-disrupt annotation that is still active', () => {
    const p = startedAgo(doNotDisrupt('p', '1h'), 10 * 60_000);
    expect(chosen(consolidate([node('a', { pods: [p] }), node('b', { pods: [web('q')] })]))).toEqual(['b']);
  });

  it('can consolidate nodes after duration-based do-not-disrupt annotation expires', () => {
    const p = startedAgo(doNotDisrupt('p', '1h'), 2 * HOUR);
    const plan = consolidate([node('a', { pods: [p] }), node('b', { pods: [web('q', '1500m')] })]);
    expect(chosen(plan)).toEqual(['a']);
  });

  it('can delete nodes, considers invalid do-not-disrupt annotation format as not blocking', () => {
    const plan = consolidate([
      node('a', { pods: [doNotDisrupt('p', 'nope')] }),
      node('b', { pods: [web('q', '1500m')] }),
    ]);
    expect(chosen(plan)).toEqual(['a']);
  });

  it('can delete nodes with a permanently pending pod', () => {
    const stuck = pod('stuck', { cpu: '64', owner: { kind: 'ReplicaSet', name: 'x' } });
    const plan = consolidate([node('a', { pods: [web('p1')] }), node('b', { pods: [web('p2')] })], pool(), {
      pendingPods: [stuck],
    });
    expect(plan.command?.kind).toBe('delete');
  });

  it("won't delete nodes if it would make a non-pending pod go pending", () => {
    const plan = consolidate(
      [node('a', { pods: [web('p1', '1500m')] }), node('b', { pods: [web('p2', '1500m')] })],
      pool(),
    );
    expect(plan.command?.kind).not.toBe('delete');
  });
});
