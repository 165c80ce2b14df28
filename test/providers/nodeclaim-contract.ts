// One behaviour suite for every NodeClaimStore: InMemoryStateStore runs it as a unit test
// (memorystate.test.ts), DynamoStateStore against moto's DynamoDB (integration/providers/dynamostate.test.ts).

import { describe, expect, it } from 'vitest';
import { markLaunched, type NodeClaimRecord, newNodeClaimRecord } from '../../shared/nodeclaim/record';
import type { NodeClaimStore } from '../../shared/providers/state';
import { fakeClock } from './fakes';

type FakeClock = ReturnType<typeof fakeClock>;

export function claimRecord(name: string, nodePool: string, now: number): NodeClaimRecord {
  return newNodeClaimRecord({
    name,
    labels: { 'karpenter.sh/nodepool': nodePool, 'karpenter.k8s.aws/ec2nodeclass': 'default', team: 'b' },
    annotations: { 'karpenter.sh/nodepool-hash': '123', 'karpenter.sh/nodepool-hash-version': 'karpless-1' },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'team', operator: 'In', values: ['b'] }],
      resources: { requests: { cpu: '1500m', 'nvidia.com/gpu': '1' } },
      taints: [{ key: 'dedicated', value: 'b', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'cni', effect: 'NoSchedule' }],
      expireAfter: '720h',
      terminationGracePeriod: '1h',
    },
    now,
  });
}

export function nodeClaimStoreContract(name: string, makeStore: (clock: FakeClock) => Promise<NodeClaimStore>): void {
  describe(`${name}: NodeClaim records`, () => {
    it('creates a record once: the first writer wins and a second create of the name changes nothing', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const record = claimRecord('default-bcdfg', 'default', clock());
      const created = await store.createNodeClaim(record);
      expect(created?.metadata.resourceVersion).toBeDefined();
      expect({ ...created, metadata: { ...created?.metadata, resourceVersion: undefined } }).toEqual({
        ...record,
        metadata: { ...record.metadata, resourceVersion: undefined },
      });
      const other = { ...record, metadata: { ...record.metadata, labels: { team: 'a' } } };
      expect(await store.createNodeClaim(other)).toBeUndefined();
      expect(await store.getNodeClaim('default-bcdfg')).toEqual(created);
      expect(await store.getNodeClaim('missing')).toBeUndefined();
    });

    it('lets exactly one of many parallel creates of one name win', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const results = await Promise.all(
        Array.from({ length: 6 }, () => store.createNodeClaim(claimRecord('same', 'default', clock()))),
      );
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    });

    it('updates only from the version last read, and the update gets a new version', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const created = await store.createNodeClaim(claimRecord('c1', 'default', clock()));
      if (!created) throw new Error('create failed');
      const launched = markLaunched(created, {
        providerID: 'aws:///us-east-1a/i-0123456789abcdef0',
        imageID: 'ami-1',
        capacity: { cpu: '2' },
        allocatable: { cpu: '1930m' },
        labels: { 'node.kubernetes.io/instance-type': 'c6a.large' },
        now: clock(),
      });
      const updated = await store.updateNodeClaim(launched);
      expect(updated?.status.providerID).toBe('aws:///us-east-1a/i-0123456789abcdef0');
      expect(updated?.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      // A writer still holding the first version loses and writes nothing.
      expect(await store.updateNodeClaim({ ...created, status: { ...created.status, nodeName: 'x' } })).toBeUndefined();
      expect(await store.getNodeClaim('c1')).toEqual(updated);
      // Updating a record that is gone creates nothing.
      await store.deleteNodeClaim('c1');
      expect(await store.updateNodeClaim(updated as NodeClaimRecord)).toBeUndefined();
      expect(await store.getNodeClaim('c1')).toBeUndefined();
    });

    it('lets one of two parallel updates from the same version win', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const created = await store.createNodeClaim(claimRecord('c2', 'default', clock()));
      if (!created) throw new Error('create failed');
      const results = await Promise.all(
        ['a', 'b', 'c'].map((node) =>
          store.updateNodeClaim({ ...created, status: { ...created.status, nodeName: node } }),
        ),
      );
      const winners = results.filter((r) => r !== undefined);
      expect(winners).toHaveLength(1);
      expect((await store.getNodeClaim('c2'))?.status.nodeName).toBe(winners[0]?.status.nodeName);
    });

    it('lists every record sorted by name, or one NodePool', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      for (const [name, pool] of [
        ['gpu-zzzzz', 'gpu'],
        ['default-b', 'default'],
        ['default-a', 'default'],
      ] as const) {
        await store.createNodeClaim(claimRecord(name, pool, clock()));
      }
      expect((await store.nodeClaims()).map((r) => r.metadata.name)).toEqual(['default-a', 'default-b', 'gpu-zzzzz']);
      expect((await store.nodeClaims({ nodePool: 'default' })).map((r) => r.metadata.name)).toEqual([
        'default-a',
        'default-b',
      ]);
      expect(await store.nodeClaims({ nodePool: 'none' })).toEqual([]);
    });

    it('marks for deletion once, keeping the first timestamp, over a concurrent update', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const created = await store.createNodeClaim(claimRecord('c3', 'default', clock()));
      if (!created) throw new Error('create failed');
      clock.advance(1000);
      const marked = await store.markNodeClaimForDeletion('c3');
      expect(marked?.metadata.deletionTimestamp).toBe(new Date(clock()).toISOString());
      clock.advance(1000);
      const again = await store.markNodeClaimForDeletion('c3');
      expect(again?.metadata.deletionTimestamp).toBe(marked?.metadata.deletionTimestamp);
      // The record as read before the mark is stale now: its writer cannot undo the mark.
      expect(await store.updateNodeClaim(created)).toBeUndefined();
      expect(await store.markNodeClaimForDeletion('missing')).toBeUndefined();
    });

    it('deletes a record, and deleting a missing one is no error', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      await store.createNodeClaim(claimRecord('c4', 'default', clock()));
      await store.deleteNodeClaim('c4');
      await store.deleteNodeClaim('c4');
      expect(await store.getNodeClaim('c4')).toBeUndefined();
      expect(await store.nodeClaims()).toEqual([]);
      // The name is free again.
      expect(await store.createNodeClaim(claimRecord('c4', 'default', clock()))).toBeDefined();
    });

    it('keeps records past any TTL: they are durable', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      await store.createNodeClaim(claimRecord('c5', 'default', clock()));
      clock.advance(365 * 24 * 3600 * 1000);
      expect((await store.getNodeClaim('c5'))?.metadata.name).toBe('c5');
    });
  });
}
