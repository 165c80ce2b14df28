import { describe, expect, it } from 'vitest';
import {
  consolidationToJSON,
  disruptionToJSON,
  formatBudgets,
  formatConsolidation,
  formatDisruption,
  formatRepair,
  repairToJSON,
} from '../../cli/commands/disruption';
import type { Node } from '../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { KUBE } from '../../shared/contracts';
import { planDisruption } from '../../shared/disruption/plan';
import { isEvictable } from '../../shared/kube/client';
import { instanceType } from '../scheduling/helpers';
import { pod } from '../support/kube/builders';
import { inProcess } from './run';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const HOUR = 3600_000;

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [{ alias: 'al2023@latest' }] },
};
const pool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      spec: { requirements: [], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
    },
    disruption: { consolidateAfter: '0s', budgets: [{ nodes: '1' }] },
  },
};

function node(name: string, launched: number): { node: Node; instance: never; pods: never[] } {
  return {
    node: {
      metadata: { name, labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true' } },
      spec: { providerID: `aws:///zone-a/i-${name}` },
      status: { allocatable: { cpu: '2', memory: '8Gi', pods: '110' } },
    },
    instance: {
      instanceId: `i-${name}`,
      nodePool: 'general',
      nodeClass: 'default',
      instanceType: 'm5.large',
      zone: 'zone-a',
      capacityType: 'on-demand',
      imageId: 'ami-old',
      launchTime: launched,
    } as never,
    pods: [
      {
        ...pod(`${name}-web`, { cpu: '1500m', nodeName: name, owner: { kind: 'ReplicaSet', name: 'web' } }),
        status: { phase: 'Running' },
      },
    ] as never[],
  };
}

function plan() {
  return planDisruption({
    now: NOW,
    nodes: [node('a', NOW - 2 * HOUR), node('b', NOW - HOUR)],
    nodePools: [pool],
    nodeClasses: new Map([
      [
        'default',
        {
          nodeClass,
          amis: [{ id: 'ami-new', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }],
        },
      ],
    ]),
    instanceTypeLabels: () => ({ 'kubernetes.io/arch': 'amd64' }),
    isEvictable,
    instanceTypes: { general: [instanceType('m5.large', { cpu: 2, memoryGiB: 8, price: 0.096 })] },
    daemonSets: [],
    disrupting: new Map(),
  });
}

describe('karpless disruption output', () => {
  it('prints each node with its reason, the budget that decides and the priced replacement', () => {
    const text = formatDisruption(plan(), [
      {
        nodeName: 'c',
        instanceId: 'i-c',
        nodePool: 'general',
        reason: 'Drifted',
        detail: 'x',
        replacements: ['general-abcde'],
        phase: 'replacing',
        startedAt: 0,
        expiresAt: 1,
      },
    ]);
    expect(text.split('\n')).toEqual([
      'WOULD DISRUPT  a  (NodePool general, m5.large)',
      '    Drifted: AMIDrift: node runs ami-old; EC2NodeClass/default now resolves ami-new for m5.large',
      '    budget: NodePool/general budgets[0] (nodes: 1) allows: 1 of 2 node(s) at once, 0 already disrupting',
      '    replace with m5.large on-demand in zone-a at $0.0960/h (NodePool general; default/a-web)',
      '    replacements total $0.0960/h',
      'BLOCKED  b  (NodePool general, m5.large)',
      '    Drifted: AMIDrift: node runs ami-old; EC2NodeClass/default now resolves ami-new for m5.large',
      '    budget: NodePool/general budgets[0] (nodes: 1) blocks: 1 of 2 node(s) at once, 1 already disrupting',
      '    replace with m5.large on-demand in zone-a at $0.0960/h (NodePool general; default/b-web)',
      '    replacements total $0.0960/h',
      'IN PROGRESS  c: Drifted (replacing; replacements general-abcde)',
      '',
    ]);
  });

  it('gives the same as JSON', () => {
    const json = disruptionToJSON(plan(), []);
    expect(json.decisions.map((d) => [d.node, d.allowed, d.replacement.nodeClaims[0]?.price])).toEqual([
      ['a', true, 0.096],
      ['b', false, 0.096],
    ]);
    expect(json.decisions[1]?.budget).toContain('blocks');
    expect(json).toMatchObject({ excluded: [], inProgress: [] });
  });

  it('says when nothing would be disrupted', () => {
    expect(formatDisruption({ decisions: [], excluded: [] }, [])).toBe('No node would be disrupted now.\n');
  });

  it('refuses to run without the manifests or the cluster', async () => {
    expect(await inProcess(['disruption', '--cluster-name', 'c'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('missing required flag --manifests'),
    });
    expect(await inProcess(['disruption', '--manifests', 'x'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('missing required flag --cluster-name'),
    });
  });
});

describe('karpless disruption: the consolidation it would consider', () => {
  const candidate = {
    nodeName: 'ip-10-0-1-5',
    instanceId: 'i-1',
    nodePool: 'general',
    instanceType: 'm5.xlarge',
    zone: 'us-west-2a',
    capacityType: 'on-demand',
    price: 0.192,
    pods: [],
    disruptionCost: 1,
    capacity: {},
  };
  const considered = [
    { nodeName: 'ip-10-0-1-5', outcome: 'replace by m5.large' },
    { nodeName: 'ip-10-0-1-6', outcome: 'a PodDisruptionBudget allows no eviction: default/web' },
  ];

  it('names the nodes, the cheaper replacement pinned to spot and the saving, and why others stay', () => {
    const replacement = {
      offering: { instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot', price: 0.04 },
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
    };
    const json = consolidationToJSON({
      plan: {
        command: {
          kind: 'replace',
          method: 'single',
          candidates: [candidate],
          replacement: replacement as never,
          savings: 0.152,
          elsewhere: {},
        },
        considered,
        unconsolidatable: [{ nodeName: 'ip-10-0-1-6', message: "Can't replace with a cheaper node" }],
      },
    });
    expect(json.command).toEqual({
      kind: 'replace',
      method: 'single',
      nodes: [
        {
          node: 'ip-10-0-1-5',
          nodePool: 'general',
          instanceType: 'm5.xlarge',
          capacityType: 'on-demand',
          price: 0.192,
        },
      ],
      savingsPerHour: 0.152,
      replacement: {
        instanceType: 'm5.large',
        zone: 'us-west-2a',
        capacityType: 'spot',
        capacityTypes: ['spot'],
        price: 0.04,
      },
    });
    expect(json.unconsolidatable).toEqual([{ node: 'ip-10-0-1-6', message: "Can't replace with a cheaper node" }]);
    expect(formatConsolidation(json).split('\n')).toEqual([
      'CONSOLIDATION  single-node: would replace ip-10-0-1-5 (NodePool general, m5.xlarge on-demand, $0.1920/hour) by m5.large spot in us-west-2a ($0.0400/hour, capacity types spot): saves $0.1520/hour',
      '    ip-10-0-1-6: a PodDisruptionBudget allows no eviction: default/web',
      '',
    ]);
  });

  it('shows where the pods of deleted nodes would go', () => {
    const json = consolidationToJSON({
      plan: {
        command: {
          kind: 'delete',
          method: 'multi',
          candidates: [candidate, { ...candidate, nodeName: 'ip-10-0-1-8' }],
          savings: 0.384,
          elsewhere: { 'ip-10-0-1-7': ['default/api-1'] },
        },
        considered: [],
        unconsolidatable: [],
      },
    });
    expect(formatConsolidation(json)).toBe(
      'CONSOLIDATION  multi-node: would delete ip-10-0-1-5 (NodePool general, m5.xlarge on-demand, $0.1920/hour), ip-10-0-1-8 (NodePool general, m5.xlarge on-demand, $0.1920/hour): their pods fit on other nodes, saves $0.3840/hour\n    → ip-10-0-1-7: default/api-1\n',
    );
  });

  it('says why it is not considered', () => {
    expect(
      formatConsolidation(consolidationToJSON({ skipped: 'a drift or expiration would act first in this run' })),
    ).toBe('CONSOLIDATION  not considered: a drift or expiration would act first in this run\n');
    expect(formatConsolidation(consolidationToJSON({ plan: { considered: [], unconsolidatable: [] } }))).toBe(
      'CONSOLIDATION  no node would be consolidated now.\n',
    );
  });
});

describe('karpless disruption: node repair and budgets', () => {
  const at = Date.parse('2026-12-04T12:00:00Z');
  it('says which unhealthy node would be repaired, which is blocked by its pool, and which waits', () => {
    const json = repairToJSON({
      repair: [{ nodeName: 'a', nodePool: 'general', condition: 'Ready=False', since: at, dueAt: at + 1_800_000 }],
      blocked: [
        {
          nodeName: 'b',
          condition: 'Ready=Unknown',
          since: at,
          dueAt: at,
          message: 'more than 20% nodes are unhealthy in the cluster (2 of 2)',
        },
      ],
      waiting: [
        { nodeName: 'c', nodePool: 'gpu', condition: 'AcceleratedHardwareReady=False', since: at, dueAt: at + 600_000 },
      ],
    });
    expect(formatRepair(json)).toBe(
      [
        'REPAIR  a (NodePool general): Ready=False since 2026-12-04T12:00:00.000Z: terminated forcefully, with nodeRepair',
        'REPAIR BLOCKED  b: Ready=Unknown: more than 20% nodes are unhealthy in the cluster (2 of 2)',
        'UNHEALTHY  c (NodePool gpu): AcceleratedHardwareReady=False, repaired from 2026-12-04T12:10:00.000Z with nodeRepair',
        '',
      ].join('\n'),
    );
    expect(formatRepair({ repair: [], blocked: [], waiting: [] })).toBe('');
  });

  it('gives each pool one line of budget answers per reason', () => {
    expect(
      formatBudgets([
        { nodePool: 'general', reason: 'Drifted', eligible: 2, allowed: 1 },
        { nodePool: 'general', reason: 'Empty', eligible: 0, allowed: 0 },
        { nodePool: 'general', reason: 'Expired', eligible: 1 },
      ]),
    ).toBe(
      'BUDGETS  NodePool general: Drifted 1 allowed (2 eligible), Empty 0 allowed (0 eligible), Expired not budgeted (1 eligible)\n',
    );
  });
});
