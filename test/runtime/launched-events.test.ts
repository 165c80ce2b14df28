import { describe, expect, it } from 'vitest';
import { PUT_EVENTS_MAX_BYTES } from '../../shared/providers/eventbus';
import { LAUNCHED_PART_MAX_BYTES, splitLaunchedDetail } from '../../shared/runtime/launched-events';
import type { NodeClaimsLaunchedDetail } from '../../shared/runtime/provision';

function detail(claims: number, podsPerClaim: number): NodeClaimsLaunchedDetail {
  return {
    cluster: 'c1',
    decidedAt: '2026-01-01T00:00:00.000Z',
    observedAt: '2026-01-01T00:00:00.000Z',
    priceSource: 'bundled',
    nodeClaims: Array.from({ length: claims }, (_, c) => ({
      nodeClaimName: `default-${String(c).padStart(5, '0')}`,
      nodePool: 'default',
      instanceId: `i-${c.toString(16).padStart(17, '0')}`,
      instanceType: 'm5.large',
      zone: 'us-west-2a',
      capacityType: 'spot',
      price: 0.04,
      pods: Array.from({ length: podsPerClaim }, (_, p) => `default/workload-${c}-${p}`),
      existing: false,
    })),
    inFlight: [{ nodeClaimName: 'default-old', pods: ['default/x'] }],
    unschedulable: [{ pod: 'default/huge', reasons: Array.from({ length: 500 }, () => 'r'.repeat(5_000)) }],
    ignored: [{ pod: 'default/bound', reason: 'bound to node n1' }],
  };
}

const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('splitLaunchedDetail', () => {
  it('keeps a small decision in one part that says it is the only one', () => {
    const parts = splitLaunchedDetail(detail(3, 2));
    expect(parts).toHaveLength(1);
    expect(parts[0]?.part).toEqual({ index: 1, count: 1 });
    expect(parts[0]?.nodeClaims).toHaveLength(3);
    expect(parts[0]?.totals).toEqual({ nodeClaims: 3, inFlight: 1, unschedulable: 1, ignored: 1 });
  });

  it('spreads a 2,000-claim decision over parts under the budget, every item exactly once and in order', () => {
    const whole = detail(2_000, 5);
    expect(size(whole)).toBeGreaterThan(PUT_EVENTS_MAX_BYTES);
    const parts = splitLaunchedDetail(whole);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(size(part)).toBeLessThanOrEqual(LAUNCHED_PART_MAX_BYTES);
    expect(parts.map((p) => p.part)).toEqual(parts.map((_, i) => ({ index: i + 1, count: parts.length })));
    expect(parts.flatMap((p) => p.nodeClaims.map((c) => c.nodeClaimName))).toEqual(
      whole.nodeClaims.map((c) => c.nodeClaimName),
    );
    expect(parts.flatMap((p) => p.inFlight)).toEqual(whole.inFlight);
    expect(parts.flatMap((p) => p.ignored)).toEqual(whole.ignored);
    for (const part of parts) expect(part.cluster).toBe('c1');
  });

  it('cuts a pod’s endless reasons and a claim too large for any part to fit, counting what it left out', () => {
    const whole = detail(1, 20_000);
    const parts = splitLaunchedDetail(whole, 64 * 1024);
    for (const part of parts) expect(size(part)).toBeLessThanOrEqual(64 * 1024);
    const claim = parts.flatMap((p) => p.nodeClaims)[0] as unknown as { pods: string[]; podsOmitted: number };
    expect(claim.pods.length + claim.podsOmitted).toBe(20_000);
    expect(claim.pods.length).toBeGreaterThan(0);
    const reasons = parts.flatMap((p) => p.unschedulable)[0]?.reasons ?? [];
    expect(reasons.length).toBeLessThan(500);
  });
});
