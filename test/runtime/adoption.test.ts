// Adopting an instance Karpenter launched: the record keeps what Karpenter's NodeClaim object fixed
// when it was created (its creationTimestamp, expireAfter and terminationGracePeriod), since upstream
// expires a claim at creationTimestamp + spec.expireAfter; without the object, the instance's launch
// and today's NodePool stand in.

import { describe, expect, it } from 'vitest';
import { expiryOf } from '../../shared/disruption/expiration';
import type { KarpenterObject } from '../../shared/kube/karpenter';
import { backfillRecord, type TaggedInstance } from '../../shared/nodeclaim/launch-record';
import { karpenterClaim } from '../../shared/runtime/claims';
import { testNodePool } from '../support/nodepools';

const LAUNCHED = Date.parse('2026-05-02T10:00:30Z');
const NOW = Date.parse('2026-06-01T12:00:00Z');

const instance: TaggedInstance = {
  instanceId: 'i-0abc',
  nodeClaimName: 'general-kp1ab',
  nodePool: 'general',
  nodeClass: 'default',
  instanceType: 'm5.large',
  zone: 'us-west-2a',
  capacityType: 'on-demand',
  launchTime: LAUNCHED,
};

// Today's NodePool: expireAfter shortened and a grace period added since Karpenter launched the node.
const nodePool = testNodePool({ template: { expireAfter: '24h', terminationGracePeriod: '1h' } });

function objects(...items: KarpenterObject[]) {
  return {
    get: async (resource: string, name: string) =>
      resource === 'nodeclaims' ? items.find((o) => o.metadata.name === name) : undefined,
  };
}

const karpenters: KarpenterObject = {
  metadata: { name: 'general-kp1ab', creationTimestamp: '2026-05-02T10:00:00Z' },
  spec: { expireAfter: '720h' },
};

describe('adopting an instance Karpenter launched', () => {
  it("counts expiry from Karpenter's NodeClaim creation with the expireAfter it was created with", async () => {
    const adopted = await karpenterClaim(objects(karpenters), instance.nodeClaimName);
    expect(adopted).toEqual({ creationTimestamp: '2026-05-02T10:00:00Z', expireAfter: '720h' });
    const record = backfillRecord({ instance, nodePool, ...(adopted ? { adopted } : {}), now: NOW });
    expect(record.metadata.creationTimestamp).toBe('2026-05-02T10:00:00.000Z');
    expect(record.spec.expireAfter).toBe('720h');
    // Karpenter's claim had no grace period: the drain may wait as long as it takes, as before.
    expect(record.spec.terminationGracePeriod).toBeUndefined();
    expect(expiryOf({ claim: record, nodePool })?.at).toBe(Date.parse('2026-05-02T10:00:00Z') + 720 * 3_600_000);
  });

  it("keeps the grace period Karpenter's NodeClaim had", async () => {
    const withGrace = { ...karpenters, spec: { expireAfter: 'Never', terminationGracePeriod: '30m' } };
    const adopted = await karpenterClaim(objects(withGrace), instance.nodeClaimName);
    const record = backfillRecord({ instance, nodePool, ...(adopted ? { adopted } : {}), now: NOW });
    expect(record.spec).toMatchObject({ expireAfter: 'Never', terminationGracePeriod: '30m' });
    expect(expiryOf({ claim: record, nodePool })).toBeUndefined();
  });

  it("falls back to the instance's launch and today's NodePool without Karpenter's object", async () => {
    for (const source of [undefined, objects(), objects({ ...karpenters, metadata: { name: 'other' } })]) {
      expect(await karpenterClaim(source, instance.nodeClaimName)).toBeUndefined();
    }
    const record = backfillRecord({ instance, nodePool, now: NOW });
    expect(record.metadata.creationTimestamp).toBe(new Date(LAUNCHED).toISOString());
    expect(record.spec).toMatchObject({ expireAfter: '24h', terminationGracePeriod: '1h' });
  });

  it("reads nothing from karpless's own mirror: the record it mirrors holds the terms", async () => {
    const mirror: KarpenterObject = {
      metadata: {
        name: 'general-kp1ab',
        creationTimestamp: '2026-05-30T00:00:00Z',
        labels: { 'app.kubernetes.io/managed-by': 'karpless' },
      },
      spec: { expireAfter: '720h' },
    };
    expect(await karpenterClaim(objects(mirror), instance.nodeClaimName)).toBeUndefined();
  });
});
