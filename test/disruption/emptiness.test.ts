import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import type { NodePool } from '../../shared/apis/v1/types';
import { KUBE } from '../../shared/contracts';
import {
  consolidateAfterMs,
  decideEmptyDisruptions,
  EMPTY_SINCE_ANNOTATION,
  type EmptinessSubject,
  findEmptyNodes,
} from '../../shared/disruption/emptiness';
import { isEvictable } from '../../shared/kube/client';
import { testNodePool } from '../support/nodepools';

const NOW = Date.parse('2026-12-03T07:00:00Z');
const MIN = 60_000;

function pool(name: string, disruption: NonNullable<NodePool['spec']['disruption']>): NodePool {
  return testNodePool({ name, disruption });
}

function node(name: string, annotations: Record<string, string> = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true' }, annotations },
    spec: {},
  } as Node;
}

function podOn(nodeName: string, kind: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${kind}-${nodeName}`,
      namespace: 'default',
      ownerReferences: [{ kind, name: 'x', controller: true }],
    },
    spec: { nodeName, containers: [] },
    status: { phase: 'Running' },
  } as unknown as Pod;
}

const whenEmpty = pool('general', {
  consolidationPolicy: 'WhenEmpty',
  consolidateAfter: '5m',
  budgets: [{ nodes: '1' }],
});
const stamp = (agoMs: number) => ({ [EMPTY_SINCE_ANNOTATION]: new Date(NOW - agoMs).toISOString() });
const subject = (n: Node, pods: Pod[] = []): EmptinessSubject => ({ node: n, nodePool: 'general', pods });

describe('findEmptyNodes', () => {
  const find = (subjects: EmptinessSubject[], pools = [whenEmpty]) =>
    findEmptyNodes({ now: NOW, subjects, nodePools: pools, isEvictable });

  it('stamps a node with only DaemonSet pods, and makes it a candidate only after consolidateAfter', () => {
    // Prepare
    const fresh = subject(node('fresh'), [podOn('fresh', 'DaemonSet')]);
    const almost = subject(node('almost', stamp(5 * MIN - 1)));
    const due = subject(node('due', stamp(5 * MIN)));
    // Act
    const { steps, candidates } = find([fresh, almost, due]);
    // Assess
    expect(steps).toEqual([{ kind: 'mark', nodeName: 'fresh', at: NOW }]);
    expect(candidates.map((c) => c.nodeName)).toEqual(['due']);
    expect(candidates[0]?.detail).toContain('consolidateAfter 5m');
  });

  it('clears the stamp once a workload pod lands, and never makes that node a candidate', () => {
    const { steps, candidates } = find([subject(node('busy', stamp(60 * MIN)), [podOn('busy', 'ReplicaSet')])]);
    expect(steps).toEqual([{ kind: 'clear', nodeName: 'busy' }]);
    expect(candidates).toEqual([]);
  });

  it('leaves nodes of pools that never consolidate, do-not-disrupt nodes and unregistered nodes alone', () => {
    const never = pool('never', { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' });
    const dnd = node('dnd', { ...stamp(60 * MIN), [KUBE.doNotDisruptAnnotation]: 'true' });
    const unregistered = node('unregistered');
    unregistered.metadata.labels = {};
    const { steps, candidates } = findEmptyNodes({
      now: NOW,
      subjects: [
        { node: node('n', stamp(60 * MIN)), nodePool: 'never', pods: [] },
        subject(dnd),
        subject(unregistered),
      ],
      nodePools: [never, whenEmpty],
      isEvictable,
    });
    expect(candidates).toEqual([]);
    expect(steps.map((s) => [s.kind, s.nodeName])).toEqual([
      ['clear', 'n'],
      ['clear', 'dnd'],
    ]);
  });

  it('with consolidateAfter 0s a node is a candidate the first time it is seen empty', () => {
    const now = pool('general', { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s' });
    const { candidates } = find([subject(node('n'))], [now]);
    expect(candidates.map((c) => c.nodeName)).toEqual(['n']);
  });

  it('reads consolidateAfter per policy', () => {
    expect(consolidateAfterMs(whenEmpty)).toBe(5 * MIN);
    expect(consolidateAfterMs(pool('p', { consolidateAfter: 'Never' }))).toBeUndefined();
    expect(consolidateAfterMs(pool('p', { consolidateAfter: '30s' }))).toBe(30_000);
  });
});

describe('decideEmptyDisruptions', () => {
  it('allows no more nodes than the Empty budget, counting those already disrupting, longest-empty first', () => {
    const { candidates } = findEmptyNodes({
      now: NOW,
      subjects: [
        subject(node('b', stamp(10 * MIN))),
        subject(node('a', stamp(20 * MIN))),
        subject(node('c', stamp(6 * MIN))),
      ],
      nodePools: [
        pool('general', { consolidationPolicy: 'WhenEmpty', consolidateAfter: '5m', budgets: [{ nodes: '2' }] }),
      ],
      isEvictable,
    });
    const decide = (disrupting: string[]) =>
      decideEmptyDisruptions({
        now: NOW,
        candidates,
        nodePools: [
          pool('general', { consolidationPolicy: 'WhenEmpty', consolidateAfter: '5m', budgets: [{ nodes: '2' }] }),
        ],
        poolSizes: new Map([['general', 5]]),
        disrupting: new Map([['general', new Set(disrupting)]]),
      }).map((d) => [d.candidate.nodeName, d.allowed]);
    expect(decide([])).toEqual([
      ['a', true],
      ['b', true],
      ['c', false],
    ]);
    expect(decide(['x'])).toEqual([
      ['a', true],
      ['b', false],
      ['c', false],
    ]);
  });

  it('follows budgets that name other reasons only (Drifted budget 0 does not block Empty)', () => {
    const p = pool('general', {
      consolidationPolicy: 'WhenEmpty',
      consolidateAfter: '0s',
      budgets: [
        { nodes: '0', reasons: ['Drifted'] },
        { nodes: '1', reasons: ['Empty'] },
      ],
    });
    const decisions = decideEmptyDisruptions({
      now: NOW,
      candidates: [
        { nodeName: 'a', nodePool: 'general', emptySince: NOW, detail: '' },
        { nodeName: 'b', nodePool: 'general', emptySince: NOW, detail: '' },
      ],
      nodePools: [p],
      poolSizes: new Map([['general', 2]]),
      disrupting: new Map(),
    });
    expect(decisions.map((d) => d.allowed)).toEqual([true, false]);
    expect(decisions[1]?.budget.message).toContain('blocks');
  });
});
