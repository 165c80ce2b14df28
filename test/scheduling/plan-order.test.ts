// The two greedy orders the solve keeps the cheaper of (shared/scheduling/index.ts), each on the workload
// shape it exists for, through the Packer itself so neither hides behind the other.

import { describe, expect, it } from 'vitest';
import type { SchedulingInput, SchedulingResult } from '../../shared/scheduling';
import { KARPENTER_ORDER_MAX_PODS, solve } from '../../shared/scheduling';
import { Packer } from '../../shared/scheduling/packer';
import { nodePool, pods, standardTypes } from './helpers';
import { violations } from './invariants';

const HOST = 'kubernetes.io/hostname';

function input(...groups: SchedulingInput['pods'][]): SchedulingInput {
  return {
    pods: groups.flat(),
    nodePools: [nodePool('general')],
    instanceTypes: { general: standardTypes() },
  };
}

const ZONE = 'topology.kubernetes.io/zone';

/** Nine API pods that want a node each (required hostname anti-affinity on their own label), 36 zone-spread web pods. */
function apiAndWeb(): SchedulingInput {
  const api = pods('api', 9, {
    cpu: '100m',
    memory: '256Mi',
    labels: { app: 'api' },
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey: HOST, labelSelector: { matchLabels: { app: 'api' } } },
        ],
      },
    },
  });
  const web = pods('web', 36, {
    cpu: '700m',
    memory: '1Gi',
    labels: { app: 'web' },
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: ZONE,
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { app: 'web' } },
      },
    ],
  });
  return input(api, web);
}

function plan(order: 'priced' | 'karpenter', i: SchedulingInput): SchedulingResult {
  const result = new Packer(i, order).solve();
  expect(violations(i, result)).toEqual([]);
  return result;
}

describe('the priced order', () => {
  it('fills the nodes that pods needing a node each will get anyway before opening others', () => {
    const result = plan('priced', apiAndWeb());
    // Nine nodes are forced; the web pods (25.2 cpu) spread over them instead of three 16-vCPU nodes
    // beside six API pods alone on 2-vCPU ones ($3.36 before the share cap).
    expect(result.nodeClaims).toHaveLength(9);
    for (const c of result.nodeClaims) {
      expect(c.pods.filter((p) => p.metadata.name.startsWith('api-'))).toHaveLength(1);
      expect(c.pods.length).toBeGreaterThan(1);
    }
    expect(result.totalPrice).toBeLessThanOrEqual(1.7);
  });
});

describe('the Karpenter order', () => {
  it('sends each pod to the emptiest claim that takes it, so small pods share the nodes of large ones', () => {
    // Four 3-cpu pods that must not share a node, then four small ones: Karpenter's order puts one
    // small pod beside each large one; a first fit would stack them all on the first node.
    const big = pods('big', 4, {
      cpu: '3',
      memory: '1Gi',
      labels: { app: 'big' },
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: HOST, labelSelector: { matchLabels: { app: 'big' } } },
          ],
        },
      },
    });
    const result = plan('karpenter', input(big, pods('small', 4, { cpu: '500m', memory: '512Mi' })));
    expect(result.nodeClaims).toHaveLength(4);
    for (const c of result.nodeClaims)
      expect(c.pods.map((p) => p.metadata.name.split('-')[0]).sort()).toEqual(['big', 'small']);
  });

  it('is tried beside the priced order up to its pod limit, and the cheaper plan is kept', () => {
    const i = apiAndWeb();
    const chosen = solve(i);
    const cheapest = Math.min(plan('priced', i).totalPrice, plan('karpenter', i).totalPrice);
    expect(chosen.totalPrice).toBeCloseTo(cheapest, 9);
    expect(KARPENTER_ORDER_MAX_PODS).toBeGreaterThanOrEqual(1000);
  });
});
