// What `karpless disruption` shows of the gc function's emptiness pass: the same decisions the run
// takes (budgets included), and the empty nodes still waiting, without writing anything.

import { describe, expect, it } from 'vitest';
import { emptinessToJSON, formatEmptiness } from '../../cli/commands/disruption';
import type { Node, Pod } from '../../shared/apis/core/v1';
import { KUBE } from '../../shared/contracts';
import { EMPTY_SINCE_ANNOTATION } from '../../shared/disruption/emptiness';
import { isEvictable } from '../../shared/kube/client';
import { awaitedClaims, previewEmptiness } from '../../shared/runtime/gc-emptiness';
import type { ClaimInstance } from '../../shared/runtime/instances';
import { testNodePool } from '../support/nodepools';

const NOW = Date.parse('2026-12-03T07:00:00Z');
const MIN = 60_000;

const pool = testNodePool({
  disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '5m', budgets: [{ nodes: '1' }] },
});

function node(name: string, emptyForMs?: number): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true' },
      annotations:
        emptyForMs === undefined ? {} : { [EMPTY_SINCE_ANNOTATION]: new Date(NOW - emptyForMs).toISOString() },
    },
    spec: { providerID: `aws:///us-west-2a/i-${name}` },
  } as Node;
}

function instance(name: string): ClaimInstance {
  return {
    instanceId: `i-${name}`,
    nodeClaimName: `general-${name}`,
    nodePool: 'general',
    nodeClass: 'default',
    instanceType: 'm5.large',
    zone: 'us-west-2a',
    capacityType: 'on-demand',
    state: 'running',
  };
}

function workload(nodeName: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-${nodeName}`,
      namespace: 'default',
      ownerReferences: [{ kind: 'ReplicaSet', name: 'web', controller: true }],
    },
    spec: { nodeName, containers: [] },
    status: { phase: 'Running' },
  } as unknown as Pod;
}

describe('the emptiness preview of karpless disruption', () => {
  const names = ['a', 'b', 'c', 'd', 'e'];
  const preview = () =>
    previewEmptiness({
      now: NOW,
      // a, b: empty past consolidateAfter; c: empty 2 minutes; d: empty, not stamped yet; e: busy
      nodes: [node('a', 20 * MIN), node('b', 10 * MIN), node('c', 2 * MIN), node('d'), node('e', 30 * MIN)],
      live: names.map(instance),
      pods: [workload('e')],
      busy: new Set(),
      awaited: new Set(),
      nodePools: [pool],
      isEvictable,
    });

  it('decides as the gc run would: the longest-empty node within the 1-node budget, the next blocked', () => {
    const json = emptinessToJSON(preview());
    expect(json.empty.map((e) => [e.node, e.allowed])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    expect(json.empty[1]?.budget).toMatch(/budgets\[0\] \(nodes: 1\)/);
    expect(json.emptyWaiting).toEqual([
      { node: 'c', nodePool: 'general', emptySince: new Date(NOW - 2 * MIN).toISOString() },
      { node: 'd', nodePool: 'general' },
    ]);
  });

  it('prints what it would remove, what blocks, and what waits', () => {
    const lines = formatEmptiness(emptinessToJSON(preview())).split('\n');
    expect(lines[0]).toBe(`WOULD REMOVE  a  (NodePool general): Empty since ${new Date(NOW - 20 * MIN).toISOString()}`);
    expect(lines[2]).toBe(`BLOCKED  b  (NodePool general): Empty since ${new Date(NOW - 10 * MIN).toISOString()}`);
    expect(lines.slice(4)).toEqual([
      `EMPTY  c  (NodePool general): since ${new Date(NOW - 2 * MIN).toISOString()}, waiting for consolidateAfter`,
      'EMPTY  d  (NodePool general): from the next gc run, waiting for consolidateAfter',
      '',
    ]);
  });

  it('counts a node already being disrupted against the budget', () => {
    const json = emptinessToJSON(
      previewEmptiness({
        now: NOW,
        nodes: [node('a', 20 * MIN), node('e')],
        live: [instance('a'), instance('e')],
        pods: [],
        busy: new Set(['e']),
        awaited: new Set(),
        nodePools: [pool],
        isEvictable,
      }),
    );
    expect(json.empty.map((e) => [e.node, e.allowed])).toEqual([['a', false]]);
  });

  it('leaves alone a node pods are on their way to (nominated, or a replacement being waited for)', () => {
    const json = emptinessToJSON(
      previewEmptiness({
        now: NOW,
        nodes: [node('a', 20 * MIN), node('b', 10 * MIN)],
        live: [instance('a'), instance('b')],
        pods: [],
        busy: new Set(),
        awaited: awaitedClaims(
          [
            {
              nodeName: 'old',
              instanceId: 'i-old',
              nodePool: 'general',
              reason: 'Drifted',
              detail: '',
              replacements: ['general-b'],
              phase: 'replacing',
              startedAt: NOW,
              expiresAt: NOW + MIN,
            },
          ],
          [{ nodeClaimName: 'general-a', podUids: ['uid-1'] }],
        ),
        nodePools: [pool],
        isEvictable,
      }),
    );
    expect(json.empty).toEqual([]);
    expect(json.emptyWaiting).toEqual([]);
  });
});

describe('the Empty budget of the gc run, counted as drift counts it', () => {
  it('resolves 10% against the initialized nodes only, and lets a NotReady one use the budget up (upstream BuildDisruptionBudgetMapping)', () => {
    const tenPercent = testNodePool({
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '5m', budgets: [{ nodes: '10%' }] },
    });
    // Names that read as instance ids (a providerID's id is hex).
    const initialized = Array.from({ length: 10 }, (_, i) => node(`a${i}`, 20 * MIN));
    // Five more launched, registered, not initialized yet: upstream neither counts them nor counts them against.
    const starting = Array.from({ length: 5 }, (_, i) => {
      const n = node(`b${i}`, 20 * MIN);
      delete n.metadata.labels?.[KUBE.initializedLabel];
      return n;
    });
    const run = (nodes: Node[]) =>
      previewEmptiness({
        now: NOW,
        nodes,
        live: nodes.map((n) => instance(n.metadata.name)),
        pods: [],
        busy: new Set(),
        awaited: new Set(),
        nodePools: [tenPercent],
        isEvictable,
      }).decisions.filter((d) => d.allowed).length;
    // 10% of 10 initialized is 1; counting the 15 nodes would allow 2.
    expect(run([...initialized, ...starting])).toBe(1);
    // One initialized node NotReady uses that one slot up.
    const notReady = structuredClone(initialized);
    (notReady[9] as Node).status = { conditions: [{ type: 'Ready', status: 'Unknown' }] } as NonNullable<
      Node['status']
    >;
    expect(run([...notReady, ...starting])).toBe(0);
  });
});
