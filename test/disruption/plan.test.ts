import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import type { Budget, EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { KUBE } from '../../shared/contracts';
import { pdbLimits } from '../../shared/disruption/candidates';
import { launchHashTags } from '../../shared/disruption/hash';
import { type ClusterNode, type PlanInput, planDisruption } from '../../shared/disruption/plan';
import { isEvictable } from '../../shared/kube/client';
import type { ResolvedAMI } from '../../shared/launch/launchtemplate';
import { type NodeClaimRecord, newNodeClaimRecord } from '../../shared/nodeclaim/record';
import { instanceType } from '../scheduling/helpers';
import { pod } from '../support/kube/builders';
import { testNodePool } from '../support/nodepools';

const NOW = Date.parse('2026-12-02T12:00:00Z'); // a Wednesday
const HOUR = 3600_000;

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [{ alias: 'al2023@latest' }] },
};

function pool(
  budgets: Budget[] = [{ nodes: '1' }],
  extra: Partial<NodePool['spec']['template']['spec']> = {},
): NodePool {
  return testNodePool({ template: extra, disruption: { consolidateAfter: '0s', budgets } });
}

const ami = (id: string): ResolvedAMI[] => [
  { id, requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] },
];
const m5 = instanceType('m5.large', { cpu: 2, memoryGiB: 8, price: 0.096 });

function clusterNode(name: string, imageId: string, launchedHoursAgo: number, pods: Pod[], p = pool()): ClusterNode {
  const node: Node = {
    metadata: {
      name,
      labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true', 'karpenter.sh/nodepool': 'general' },
    },
    spec: { providerID: `aws:///zone-a/i-${name}` },
    status: { allocatable: { cpu: '2', memory: '8Gi', pods: '110' } },
  };
  return {
    node,
    instance: {
      instanceId: `i-${name}`,
      nodePool: 'general',
      nodeClass: 'default',
      instanceType: 'm5.large',
      zone: 'zone-a',
      capacityType: 'on-demand',
      imageId,
      hashTags: launchHashTags(p, nodeClass),
      launchTime: NOW - launchedHoursAgo * HOUR,
    },
    pods: pods.map((x) => ({ ...x, spec: { ...x.spec, nodeName: name }, status: { phase: 'Running' } })),
  };
}

const web = (name: string, cpu = '1500m', annotations?: Record<string, string>) =>
  pod(name, { cpu, owner: { kind: 'ReplicaSet', name: 'web' }, ...(annotations ? { annotations } : {}) });

function input(nodes: ClusterNode[], p = pool(), amis = ami('ami-new'), extra: Partial<PlanInput> = {}): PlanInput {
  return {
    now: NOW,
    nodes,
    nodePools: [p],
    nodeClasses: new Map([['default', { nodeClass, amis }]]),
    instanceTypeLabels: () => ({ 'kubernetes.io/arch': 'amd64' }),
    isEvictable,
    instanceTypes: { general: [m5] },
    daemonSets: [],
    disrupting: new Map(),
    ...extra,
  };
}

describe('planDisruption', () => {
  it('lets a 1-node budget take the oldest drifted node and blocks the rest, naming the budget', () => {
    const nodes = [
      clusterNode('b', 'ami-old', 2, [web('b1')]),
      clusterNode('a', 'ami-old', 5, [web('a1')]),
      clusterNode('c', 'ami-new', 1, [web('c1')]),
    ];
    const plan = planDisruption(input(nodes));
    expect(plan.decisions.map((d) => [d.candidate.nodeName, d.candidate.reason, d.allowed])).toEqual([
      ['a', 'Drifted', true],
      ['b', 'Drifted', false],
    ]);
    expect(plan.decisions[0]?.candidate.detail).toMatch(
      /^AMIDrift: node runs ami-old; EC2NodeClass\/default now resolves ami-new/,
    );
    expect(plan.decisions[1]?.budget.message).toBe(
      'NodePool/general budgets[0] (nodes: 1) blocks: 1 of 3 node(s) at once, 1 already disrupting',
    );
  });

  it('plans a priced replacement for pods that fit nowhere else', () => {
    const plan = planDisruption(
      input([clusterNode('a', 'ami-old', 5, [web('a1')]), clusterNode('c', 'ami-new', 1, [web('c1')])]),
    );
    const replacement = plan.decisions[0]?.replacement;
    expect(replacement?.nodeClaims).toHaveLength(1);
    expect(replacement?.nodeClaims[0]?.offering).toMatchObject({ instanceType: 'm5.large', price: 0.096 });
    expect(replacement?.totalPrice).toBeCloseTo(0.096);
    expect(replacement?.elsewhere).toEqual({});
  });

  it('plans a drift replacement in the room its candidate leaves in the NodePool limits', () => {
    // Prepare: cpu limit 4, held by the drifted node and one up-to-date node (2 vCPU each), both full.
    const limited = pool();
    limited.spec.limits = { cpu: '4' };
    const nodes = [clusterNode('a', 'ami-old', 5, [web('a1')]), clusterNode('c', 'ami-new', 1, [web('c1')])];
    // Act
    const plan = planDisruption(
      input(nodes, limited, ami('ami-new'), { nodePoolUsage: { general: { cpu: 4000, nodes: 2 } } }),
    );
    // Assess: the candidate's own 2 vCPU hold its replacement.
    expect(plan.decisions.map((d) => [d.candidate.nodeName, d.allowed])).toEqual([['a', true]]);
    expect(plan.decisions[0]?.replacement.nodeClaims.map((c) => c.offering.instanceType)).toEqual(['m5.large']);
  });

  it('does not start a drift whose replacement would pass the NodePool limits', () => {
    // Prepare: as above, but a replacement launched earlier also holds 2 vCPU of the 4.
    const limited = pool();
    limited.spec.limits = { cpu: '4' };
    const nodes = [clusterNode('a', 'ami-old', 5, [web('a1')]), clusterNode('c', 'ami-new', 1, [web('c1')])];
    const plan = planDisruption(
      input(nodes, limited, ami('ami-new'), { nodePoolUsage: { general: { cpu: 6000, nodes: 3 } } }),
    );
    expect(plan.decisions.map((d) => [d.candidate.nodeName, d.allowed])).toEqual([['a', false]]);
    expect(plan.decisions[0]?.budget.message).toBe(
      '1 pod(s) would not schedule again (NodePool general: limits exhausted (cpu 4 of 4 used))',
    );
  });

  it('moves small pods onto room elsewhere instead of launching', () => {
    const plan = planDisruption(
      input([clusterNode('a', 'ami-old', 5, [web('a1', '200m')]), clusterNode('c', 'ami-new', 1, [web('c1', '200m')])]),
    );
    expect(plan.decisions[0]?.replacement).toMatchObject({
      nodeClaims: [],
      elsewhere: { c: ['default/a1'] },
      totalPrice: 0,
    });
  });

  it('counts nodes already disrupting against the budget', () => {
    const nodes = [clusterNode('a', 'ami-old', 5, [web('a1')]), clusterNode('x', 'ami-new', 1, [])];
    const plan = planDisruption(
      input(nodes, pool(), ami('ami-new'), { disrupting: new Map([['general', new Set(['x'])]]) }),
    );
    expect(plan.decisions[0]).toMatchObject({ allowed: false });
    expect(plan.decisions[0]?.budget.message).toContain('1 already disrupting');
  });

  it('blocks drift inside a cron window of a zero budget', () => {
    const budgets: Budget[] = [
      { nodes: '100%' },
      { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h', reasons: ['Drifted'] },
    ];
    const plan = planDisruption(input([clusterNode('a', 'ami-old', 5, [web('a1')])], pool(budgets)));
    expect(plan.decisions[0]).toMatchObject({ allowed: false, budget: { budgetIndex: 1 } });
  });

  it('replaces expired nodes whatever the budget says, do-not-disrupt included', () => {
    const p = pool([{ nodes: '0' }], { expireAfter: '24h' });
    const nodes = [
      clusterNode('old', 'ami-new', 30, [web('o1', '1500m', { [KUBE.doNotDisruptAnnotation]: 'true' })], p),
      clusterNode('young', 'ami-new', 1, [], p),
    ];
    const plan = planDisruption(input(nodes, p));
    expect(plan.decisions.map((d) => [d.candidate.nodeName, d.candidate.reason, d.allowed, d.budget.message])).toEqual([
      ['old', 'Expired', true, 'expiration is forceful: budgets do not apply'],
    ]);
  });

  // Upstream: pkg/controllers/nodeclaim/expiration reads NodeClaim.spec.expireAfter from the claim's
  // creation; expireAfter is hashed into the NodePool template, so changing it drifts (NodePoolDrift).
  describe('expiration and drift read the NodeClaim record, not today’s NodePool', () => {
    const launchedWith = pool([{ nodes: '1' }], { expireAfter: '720h' });
    const shortened = pool([{ nodes: '1' }], { expireAfter: '1h' });
    const recordFor = (entry: ClusterNode, p: NodePool, createdHoursAgo: number): NodeClaimRecord =>
      newNodeClaimRecord({
        name: `general-${entry.node.metadata.name}`,
        labels: { 'karpenter.sh/nodepool': 'general' },
        annotations: launchHashTags(p, nodeClass),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [],
          resources: { requests: {} },
          taints: [],
          startupTaints: [],
          expireAfter: p.spec.template.spec.expireAfter ?? '720h',
          terminationGracePeriod: '10m',
        },
        now: NOW - createdHoursAgo * HOUR,
      });

    it('a shortened expireAfter drifts the older nodes within the budget instead of expiring them all at once', () => {
      // Prepare: three nodes launched 5 h ago under expireAfter 720h; today the NodePool says 1h.
      const nodes = ['a', 'b', 'c'].map((n, i) => {
        const entry = clusterNode(n, 'ami-new', 5 + i, [web(`${n}1`)], launchedWith);
        return { ...entry, record: recordFor(entry, launchedWith, 5 + i) };
      });
      // Act
      const plan = planDisruption(input(nodes, shortened, ami('ami-new')));
      // Assess: NodePoolDrift for all, one at a time under the 1-node budget; none expired.
      expect(plan.decisions.map((d) => [d.candidate.nodeName, d.candidate.reason, d.allowed])).toEqual([
        ['c', 'Drifted', true],
        ['b', 'Drifted', false],
        ['a', 'Drifted', false],
      ]);
      expect(plan.decisions[0]?.candidate.detail).toMatch(/^NodePoolDrift: NodePool\/general spec.template changed/);
    });

    it('drifts a node without a record whose launch-time NodePool hash differs, rather than expiring it', () => {
      const nodes = [clusterNode('a', 'ami-new', 5, [web('a1')], launchedWith)];
      const plan = planDisruption(input(nodes, shortened, ami('ami-new')));
      expect(plan.decisions.map((d) => [d.candidate.reason, d.candidate.detail.split(':')[0]])).toEqual([
        ['Drifted', 'NodePoolDrift'],
      ]);
    });

    it('expires a node at its record’s creation + the expireAfter it was launched with, whatever today says', () => {
      // Prepare: launched with expireAfter 2h (record created 3 h ago); today's pool says 720h.
      const short = pool([{ nodes: '0' }], { expireAfter: '2h' });
      const entry = clusterNode('a', 'ami-new', 3, [web('a1')], short);
      const today = pool([{ nodes: '0' }], { expireAfter: '720h' });
      const plan = planDisruption(input([{ ...entry, record: recordFor(entry, short, 3) }], today, ami('ami-new')));
      expect(plan.decisions.map((d) => [d.candidate.reason, d.allowed, d.candidate.detail])).toEqual([
        ['Expired', true, `NodeClaim created ${new Date(NOW - 3 * HOUR).toISOString()}, expireAfter 2h`],
      ]);
    });

    it('compares the record’s NodePool hash, not the instance tags', () => {
      // Prepare: tags say the old template, the record (the truth) the current one.
      const entry = clusterNode('a', 'ami-new', 5, [web('a1')], launchedWith);
      const plan = planDisruption(
        input([{ ...entry, record: recordFor(entry, shortened, 0.5) }], shortened, ami('ami-new')),
      );
      expect(plan.decisions).toEqual([]);
    });
  });

  it('leaves drifted nodes with a do-not-disrupt pod or annotation alone, and says so', () => {
    const annotated = clusterNode('n', 'ami-old', 5, []);
    annotated.node.metadata.annotations = { [KUBE.doNotDisruptAnnotation]: 'true' };
    const nodes = [
      clusterNode('p', 'ami-old', 5, [web('p1', '100m', { [KUBE.doNotDisruptAnnotation]: 'true' })]),
      annotated,
    ];
    const plan = planDisruption(input(nodes, pool([{ nodes: '100%' }])));
    expect(plan.decisions).toEqual([]);
    expect(plan.excluded).toEqual([
      { nodeName: 'p', reason: 'AMIDrift, but pod default/p1 has the "karpenter.sh/do-not-disrupt" annotation' },
      {
        nodeName: 'n',
        reason: 'AMIDrift, but disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation on the node',
      },
    ]);
  });

  it('skips nodes not initialized or being deleted, and a drifted node whose pods would not fit again', () => {
    const uninitialized = clusterNode('u', 'ami-old', 5, []);
    delete uninitialized.node.metadata.labels?.[KUBE.initializedLabel];
    const gone = clusterNode('g', 'ami-old', 5, []);
    (gone.node.metadata as { deletionTimestamp?: string }).deletionTimestamp = new Date(NOW).toISOString();
    const huge = clusterNode('h', 'ami-old', 5, [web('h1', '16')]);
    const plan = planDisruption(input([uninitialized, gone, huge], pool([{ nodes: '100%' }])));
    expect(plan.decisions.map((d) => [d.candidate.nodeName, d.allowed])).toEqual([['h', false]]);
    expect(plan.decisions[0]?.budget.message).toMatch(/^1 pod\(s\) would not schedule again/);
  });

  // Upstream: pkg/controllers/disruption/drift_test.go and suite_test.go (candidates, budgets, order).
  describe('pkg/controllers/disruption drift candidates and budgets', () => {
    const blockingPdb = pdbLimits([
      {
        metadata: { name: 'web', namespace: 'default' },
        spec: { selector: { matchLabels: { app: 'guarded' } } },
        status: { disruptionsAllowed: 0 },
      },
    ]);
    const guarded = (name: string) => {
      const p = web(name);
      return { ...p, metadata: { ...p.metadata, labels: { app: 'guarded' } } };
    };

    it('drift_test.go: a drifted node whose pod a PDB blocks is not a candidate while another drifted node is disrupted', () => {
      const nodes = [
        clusterNode('blocked', 'ami-old', 9, [guarded('g1')]),
        clusterNode('free', 'ami-old', 1, [web('f1')]),
      ];
      const plan = planDisruption(input(nodes, pool([{ nodes: '1' }]), ami('ami-new'), { pdbs: blockingPdb }));
      expect(plan.decisions.map((d) => [d.candidate.nodeName, d.allowed])).toEqual([['free', true]]);
      expect(plan.excluded).toEqual([
        {
          nodeName: 'blocked',
          reason: 'AMIDrift, but PodDisruptionBudget default/web prevents evicting pod default/g1',
        },
      ]);
    });

    it('types.go NewCandidate: with a terminationGracePeriod the PDB-blocked drifted node is a candidate, and no capacity is planned for the stuck pod', () => {
      const entry = clusterNode('blocked', 'ami-old', 9, [guarded('g1')]);
      const record = newNodeClaimRecord({
        name: 'general-blocked',
        labels: { 'karpenter.sh/nodepool': 'general' },
        annotations: launchHashTags(pool(), nodeClass),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [],
          resources: { requests: {} },
          taints: [],
          startupTaints: [],
          expireAfter: 'Never',
          terminationGracePeriod: '30m',
        },
        now: NOW - 9 * HOUR,
      });
      const fully = pdbLimits([
        {
          metadata: { name: 'web', namespace: 'default' },
          spec: { selector: { matchLabels: { app: 'guarded' } }, maxUnavailable: 0 },
          status: { disruptionsAllowed: 0 },
        },
      ]);
      const plan = planDisruption(input([{ ...entry, record }], pool(), ami('ami-new'), { pdbs: fully }));
      expect(plan.decisions.map((d) => [d.candidate.nodeName, d.allowed, d.replacement.nodeClaims.length])).toEqual([
        ['blocked', true, 0],
      ]);
      expect(plan.decisions[0]?.candidate.ignoredBlock).toContain('terminationGracePeriod 30m bounds the drain');
    });

    it('drift_test.go: should drift empty nodes before non-empty nodes', () => {
      const nodes = [clusterNode('busy', 'ami-old', 9, [web('b1')]), clusterNode('empty', 'ami-old', 1, [])];
      const plan = planDisruption(input(nodes, pool([{ nodes: '1' }])));
      expect(plan.decisions.map((d) => [d.candidate.nodeName, d.allowed])).toEqual([
        ['empty', true],
        ['busy', false],
      ]);
    });

    it('drift_test.go: should drift one non-empty node at a time, starting with the earliest drift', () => {
      const drifted = (entry: ClusterNode, hoursAgo: number): ClusterNode => {
        const record = newNodeClaimRecord({
          name: `general-${entry.node.metadata.name}`,
          labels: { 'karpenter.sh/nodepool': 'general' },
          annotations: {},
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            requirements: [],
            resources: { requests: {} },
            taints: [],
            startupTaints: [],
            expireAfter: 'Never',
          },
          now: NOW - 24 * HOUR,
        });
        record.status.conditions.push({
          type: 'Drifted',
          status: 'True',
          reason: 'AMIDrift',
          message: '',
          lastTransitionTime: new Date(NOW - hoursAgo * HOUR).toISOString(),
        });
        return { ...entry, record };
      };
      // The older node drifted later: drift time, not age, decides.
      const nodes = [
        drifted(clusterNode('old', 'ami-old', 20, [web('o1')]), 1),
        drifted(clusterNode('young', 'ami-old', 2, [web('y1')]), 3),
      ];
      const plan = planDisruption(input(nodes, pool([{ nodes: '1' }])));
      expect(plan.decisions.map((d) => [d.candidate.nodeName, d.allowed])).toEqual([
        ['young', true],
        ['old', false],
      ]);
    });

    it('nodeclaim/disruption drift.go areRequirementsDrifted: a NodePool requirement whose key the node lacks is drift', () => {
      const required = pool([{ nodes: '1' }], {
        requirements: [{ key: 'example.com/team', operator: 'In', values: ['blue'] }],
      });
      const entry = clusterNode('a', 'ami-new', 5, [web('a1')], required);
      // The claim record holds every label the decision narrowed: one without the key is drift.
      const record = newNodeClaimRecord({
        name: 'general-a',
        labels: { 'karpenter.sh/nodepool': 'general' },
        annotations: {},
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [],
          resources: { requests: {} },
          taints: [],
          startupTaints: [],
          expireAfter: 'Never',
        },
        now: NOW - 24 * HOUR,
      });
      const plan = planDisruption(input([{ ...entry, record }], required, ami('ami-new')));
      expect(plan.decisions.map((d) => d.candidate.detail)).toEqual([
        'RequirementsDrift: NodePool/general: label example.com/team=(absent) no longer satisfies example.com/team In blue',
      ]);
      // A node without a record shows only what it registered with: an absent key says nothing.
      expect(planDisruption(input([entry], required, ami('ami-new'))).decisions).toEqual([]);
    });

    it('nodeclaim/disruption drift.go areRequirementsDrifted: a NotIn or DoesNotExist requirement on a missing key is no drift', () => {
      const required = pool([{ nodes: '1' }], {
        requirements: [
          { key: 'example.com/team', operator: 'NotIn', values: ['red'] },
          { key: 'example.com/gpu', operator: 'DoesNotExist' },
        ],
      });
      const plan = planDisruption(
        input([clusterNode('a', 'ami-new', 5, [web('a1')], required)], required, ami('ami-new')),
      );
      expect(plan.decisions).toEqual([]);
    });

    it('helpers.go BuildDisruptionBudgetMapping: 10% of 10 initialized nodes plus 5 uninitialized allows 1 at a time', () => {
      const initialized = Array.from({ length: 10 }, (_, i) =>
        clusterNode(`d${i}`, 'ami-old', 10 - i, [web(`d${i}p`, '100m')]),
      );
      const starting = Array.from({ length: 5 }, (_, i) => {
        const entry = clusterNode(`u${i}`, 'ami-new', 0, []);
        delete entry.node.metadata.labels?.[KUBE.initializedLabel];
        return entry;
      });
      const plan = planDisruption(input([...initialized, ...starting], pool([{ nodes: '10%' }])));
      expect(plan.decisions.filter((d) => d.allowed)).toHaveLength(1);
      expect(plan.decisions.find((d) => !d.allowed)?.budget.message).toBe(
        'NodePool/general budgets[0] (nodes: 10%) blocks: 1 of 10 node(s) at once, 1 already disrupting',
      );
    });

    it('helpers.go BuildDisruptionBudgetMapping: a NotReady node uses up a budget of 1', () => {
      const sick = clusterNode('sick', 'ami-new', 3, [web('s1')]);
      sick.node.status = { ...sick.node.status, conditions: [{ type: 'Ready', status: 'Unknown' }] };
      const nodes = [clusterNode('a', 'ami-old', 5, [web('a1')]), sick];
      const plan = planDisruption(input(nodes, pool([{ nodes: '1' }])));
      expect(plan.decisions.map((d) => [d.candidate.nodeName, d.allowed, d.budget.message])).toEqual([
        ['a', false, 'NodePool/general budgets[0] (nodes: 1) blocks: 1 of 2 node(s) at once, 1 already disrupting'],
      ]);
      // Drifted itself, the NotReady node is no exception: it holds no slot, so it may not take one either.
      const sickDrifted = clusterNode('sick', 'ami-old', 3, [web('s1')]);
      sickDrifted.node.status = { ...sickDrifted.node.status, conditions: [{ type: 'Ready', status: 'False' }] };
      const both = planDisruption(input([nodes[0] as ClusterNode, sickDrifted], pool([{ nodes: '1' }])));
      expect(both.decisions.map((d) => [d.candidate.nodeName, d.allowed])).toEqual([
        ['a', false],
        ['sick', false],
      ]);
    });

    it('nodepool.go GetAllowedDisruptionsByReason: a budget with reasons: [] limits no reason', () => {
      const nodes = [clusterNode('a', 'ami-old', 5, [web('a1')]), clusterNode('b', 'ami-old', 4, [web('b1')])];
      const plan = planDisruption(input(nodes, pool([{ nodes: '0', reasons: [] }])));
      expect(plan.decisions.map((d) => d.allowed)).toEqual([true, true]);
    });
  });
});
