// The post passes move zone-spread pods across zones when every spread that counts them keeps its skew
// (post-passes.ts, crossZoneRoom), through the Packer in Karpenter's order, whose claims leave the room.

import { describe, expect, it } from 'vitest';
import type { SchedulingInput } from '../../shared/scheduling';
import { solve } from '../../shared/scheduling';
import { Packer } from '../../shared/scheduling/packer';
import { instanceType, nodePool, pod, pods } from './helpers';
import { violations } from './invariants';

const ZONE = 'topology.kubernetes.io/zone';
const zones = ['zone-a', 'zone-b'];

/** A 2-vCPU pod with no topology, then two 1-vCPU web pods spread over two zones with this maxSkew. */
function spreadInput(maxSkew: number): SchedulingInput {
  const web = pods('web', 2, {
    cpu: '1',
    memory: '1Gi',
    labels: { app: 'web' },
    topologySpreadConstraints: [
      {
        maxSkew,
        topologyKey: ZONE,
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { app: 'web' } },
      },
    ],
  });
  return {
    pods: [pod('batch', { cpu: '2', memory: '2Gi' }), ...web],
    nodePools: [nodePool('general')],
    instanceTypes: {
      general: [
        instanceType('small.large', { cpu: 1, memoryGiB: 4, price: 1, zones }),
        instanceType('big.xlarge', { cpu: 4, memoryGiB: 16, price: 2, zones }),
      ],
    },
  };
}

const zonesOf = (r: ReturnType<typeof solve>) =>
  r.nodeClaims.map((c) => `${c.offering.zone}:${c.pods.map((p) => p.metadata.name).join(',')}`).sort();

describe('post passes: zone-spread pods across zones', () => {
  it('moves a spread pod into room in another zone when the skew stays within maxSkew, saving its claim', () => {
    // worker-0 carries app=web without a spread of its own, so zone-a counts it. In Karpenter's order
    // worker-0 opens a claim in zone-a, both web pods go to zone-b (the emptier zone, then the claim
    // with room) and batch-3 opens a third claim. web-1 moving to zone-a leaves 2 against 1, and
    // batch-3 then joins web-2: two claims instead of three.
    const spread = {
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: ZONE,
          whenUnsatisfiable: 'DoNotSchedule' as const,
          labelSelector: { matchLabels: { app: 'web' } },
        },
      ],
    };
    const input: SchedulingInput = {
      pods: [
        pod('worker-0', { cpu: '3', memory: '1Gi', labels: { app: 'web' } }),
        pod('web-1', { cpu: '1', memory: '1Gi', labels: { app: 'web' }, ...spread }),
        pod('web-2', { cpu: '2', memory: '1Gi', labels: { app: 'web' }, ...spread }),
        pod('batch-3', { cpu: '2', memory: '1Gi' }),
      ],
      nodePools: [nodePool('general')],
      instanceTypes: {
        general: [
          instanceType('small.large', { cpu: 1, memoryGiB: 4, price: 1, zones }),
          instanceType('mid.xlarge', { cpu: 2, memoryGiB: 8, price: 1.6, zones }),
          instanceType('big.2xlarge', { cpu: 4, memoryGiB: 16, price: 2.2, zones }),
          instanceType('huge.4xlarge', { cpu: 8, memoryGiB: 32, price: 4, zones }),
        ],
      },
    };
    const result = new Packer(input, 'karpenter').solve();
    expect(violations(input, result)).toEqual([]);
    expect(zonesOf(result)).toEqual(['zone-a:worker-0,web-1', 'zone-b:web-2,batch-3']);
    expect(result.totalPrice).toBeCloseTo(4.4);
    const best = solve(input);
    expect(violations(input, best)).toEqual([]);
    expect(best.totalPrice).toBeLessThanOrEqual(4.4 + 1e-9);
  });

  it('leaves the spread pod in its zone when the move would exceed maxSkew', () => {
    const input = spreadInput(1);
    const result = new Packer(input, 'karpenter').solve();
    expect(violations(input, result)).toEqual([]);
    expect(zonesOf(result)).toEqual(['zone-a:batch,web-0', 'zone-b:web-1']);
    expect(result.totalPrice).toBeCloseTo(3);
    const best = solve(input);
    expect(violations(input, best)).toEqual([]);
    expect(best.nodeClaims.map((c) => c.offering.zone).sort()).toEqual(zones);
  });

  it('moves only as many pods as the skew allows when several could go', () => {
    // Four web pods 2 + 2 over two zones beside a batch pod with room for all: with maxSkew 2 one may move
    // (3 against 1), a second would make 4 against 0.
    const input = spreadInput(2);
    input.pods = [
      pod('batch', { cpu: '1', memory: '1Gi' }),
      ...pods('web', 4, {
        cpu: '1',
        memory: '1Gi',
        labels: { app: 'web' },
        topologySpreadConstraints: [
          {
            maxSkew: 2,
            topologyKey: ZONE,
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'web' } },
          },
        ],
      }),
    ];
    input.instanceTypes.general = [
      instanceType('small.large', { cpu: 1, memoryGiB: 4, price: 1, zones }),
      instanceType('mid.large', { cpu: 2, memoryGiB: 8, price: 1.5, zones }),
      instanceType('big.xlarge', { cpu: 8, memoryGiB: 32, price: 2, zones }),
    ];
    const result = new Packer(input, 'karpenter').solve();
    expect(violations(input, result)).toEqual([]);
    const web = (z: string) =>
      result.nodeClaims
        .filter((c) => c.offering.zone === z)
        .flatMap((c) => c.pods)
        .filter((p) => p.metadata.name.startsWith('web')).length;
    expect(Math.abs(web('zone-a') - web('zone-b'))).toBeLessThanOrEqual(2);
  });
});
