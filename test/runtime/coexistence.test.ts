import { describe, expect, it } from 'vitest';
import type { Lease } from '../../shared/kube/types';
import {
  KARPENTER_LEASE,
  KarpenterRunningError,
  karpenterGuard,
  liveKarpenterLease,
} from '../../shared/runtime/coexistence';
import { RunFailedError } from '../../shared/runtime/telemetry';

const NOW = Date.parse('2026-12-03T20:00:00Z');

function lease(over: Partial<NonNullable<Lease['spec']>> = {}, name = KARPENTER_LEASE): Lease {
  return {
    metadata: { name, namespace: 'kube-system' },
    spec: {
      holderIdentity: 'karpenter-7d9f8c-abcde_1f2e',
      leaseDurationSeconds: 15,
      renewTime: new Date(NOW - 5_000).toISOString(),
      ...over,
    },
  };
}

describe('a running Karpenter, from its leader-election Lease', () => {
  it('is running while its Lease is held and renewed within its duration (and a minute of clock skew)', () => {
    expect(liveKarpenterLease([lease()], NOW)).toBeDefined();
    expect(liveKarpenterLease([lease({ renewTime: new Date(NOW - 74_000).toISOString() })], NOW)).toBeDefined();
  });

  it('is stopped once the Lease goes unrenewed, is released, or was never held', () => {
    expect(liveKarpenterLease([lease({ renewTime: new Date(NOW - 76_000).toISOString() })], NOW)).toBeUndefined();
    expect(liveKarpenterLease([lease({ holderIdentity: '' })], NOW)).toBeUndefined();
    expect(liveKarpenterLease([lease({ holderIdentity: null })], NOW)).toBeUndefined();
    expect(liveKarpenterLease([lease({ renewTime: null })], NOW)).toBeUndefined();
    expect(liveKarpenterLease([], NOW)).toBeUndefined();
  });

  it("ignores other controllers' Leases", () => {
    expect(liveKarpenterLease([lease({}, 'kube-controller-manager')], NOW)).toBeUndefined();
  });

  it('refuses as a failed run naming the Lease, its holder and what to do', async () => {
    const guard = karpenterGuard(
      async () => [lease()],
      () => NOW,
    );
    const refusal = await guard().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(KarpenterRunningError);
    expect(refusal).toBeInstanceOf(RunFailedError);
    expect(String(refusal)).toContain(
      'Lease kube-system/karpenter-leader-election held by karpenter-7d9f8c-abcde_1f2e',
    );
    expect(String(refusal)).toContain('stop Karpenter first');
    await expect(
      karpenterGuard(
        async () => [],
        () => NOW,
      )(),
    ).resolves.toBeUndefined();
  });
});
