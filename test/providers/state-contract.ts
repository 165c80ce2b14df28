// One behaviour suite for every StateStore: InMemoryStateStore runs it as a unit test
// (memorystate.test.ts), DynamoStateStore against moto's DynamoDB (integration/providers/dynamostate.test.ts).

import { describe, expect, it } from 'vitest';
import type { NodePool } from '../../shared/apis/v1/types';
import { budgetLimit } from '../../shared/disruption/budgets';
import { releaseBudgetSlot, reserveBudgetSlot } from '../../shared/disruption/ledger';
import type {
  DisruptionRecord,
  DrainRecord,
  FullStateStore,
  Nomination,
  PriceSnapshot,
} from '../../shared/providers/state';
import { fakeClock } from './fakes';

export type FakeClock = ReturnType<typeof fakeClock>;

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

function nomination(clock: FakeClock, name: string, podUids: string[], ttlMs = 15 * MINUTE): Nomination {
  return { nodeClaimName: name, nodePool: 'default', podUids, expiresAt: clock() + ttlMs };
}

function uids(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
}

export function stateStoreContract(name: string, makeStore: (clock: FakeClock) => Promise<FullStateStore>): void {
  describe(`${name}: nominations`, () => {
    it('records a nomination and lists it until it expires', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const n = nomination(clock, 'default-abcde', ['pod-b', 'pod-a', 'pod-b']);
      expect(await store.nominate(n)).toBe(true);
      expect(await store.nominations()).toEqual([{ ...n, podUids: ['pod-a', 'pod-b'] }]);
      clock.advance(15 * MINUTE - 1);
      expect(await store.nominations()).toHaveLength(1);
      clock.advance(1);
      expect(await store.nominations()).toEqual([]);
    });

    it('refuses a nomination that overlaps another live claim and writes none of its pods', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      expect(await store.nominate(nomination(clock, 'first', ['a', 'b']))).toBe(true);
      expect(await store.nominate(nomination(clock, 'second', ['c', 'b', 'd']))).toBe(false);
      expect((await store.nominations()).map((x) => x.nodeClaimName)).toEqual(['first']);
      // c and d stayed free: the refused nomination locked nothing.
      expect(await store.nominate(nomination(clock, 'third', ['c', 'd']))).toBe(true);
    });

    it('accepts the same claim again (a redelivered batch) and a claim with no pods', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      expect(await store.nominate(nomination(clock, 'claim', ['a', 'b']))).toBe(true);
      expect(await store.nominate(nomination(clock, 'claim', ['a', 'b']))).toBe(true);
      expect(await store.nominate(nomination(clock, 'empty', []))).toBe(true);
      expect((await store.nominations()).map((x) => [x.nodeClaimName, x.podUids])).toEqual([
        ['claim', ['a', 'b']],
        ['empty', []],
      ]);
    });

    it('lets another claim take the pods of an expired nomination', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      expect(await store.nominate(nomination(clock, 'old', ['a'], MINUTE))).toBe(true);
      clock.advance(MINUTE);
      expect(await store.nominate(nomination(clock, 'new', ['a']))).toBe(true);
      expect((await store.nominations()).map((x) => x.nodeClaimName)).toEqual(['new']);
    });

    it('frees the pods of a released claim, and leaves alone a pod another claim took over', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      await store.nominate(nomination(clock, 'one', ['a', 'b'], MINUTE));
      clock.advance(MINUTE);
      expect(await store.nominate(nomination(clock, 'two', ['b']))).toBe(true);
      await store.releaseNomination('one');
      await store.releaseNomination('never-nominated');
      expect((await store.nominations()).map((x) => x.nodeClaimName)).toEqual(['two']);
      expect(await store.nominate(nomination(clock, 'three', ['b']))).toBe(false);
      await store.releaseNomination('two');
      expect(await store.nominate(nomination(clock, 'three', ['a', 'b']))).toBe(true);
    });

    // DynamoStateStore runs this suite with 10 actions per transaction (its default is DynamoDB's 100).
    it('handles claims with more pods than one transaction holds, undoing a partial nomination', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const many = uids('pod', 25);
      expect(await store.nominate(nomination(clock, 'holder', ['pod-0024']))).toBe(true);
      // The conflict sits in the last transaction: the locks of the first ones must be undone.
      expect(await store.nominate(nomination(clock, 'big', many))).toBe(false);
      expect(await store.nominate(nomination(clock, 'small', ['pod-0000', 'pod-0015']))).toBe(true);
      await store.releaseNomination('holder');
      await store.releaseNomination('small');
      expect(await store.nominate(nomination(clock, 'big', many))).toBe(true);
      expect((await store.nominations())[0]?.podUids).toHaveLength(25);
    });
  });

  describe(`${name}: claimOnce`, () => {
    it('answers true once per key until the record expires', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      expect(await store.claimOnce('launch:batch-1', MINUTE)).toBe(true);
      expect(await store.claimOnce('launch:batch-1', MINUTE)).toBe(false);
      expect(await store.claimOnce('launch:batch-2', MINUTE)).toBe(true);
      clock.advance(MINUTE);
      expect(await store.claimOnce('launch:batch-1', MINUTE)).toBe(true);
    });
  });

  describe(`${name}: unavailable offerings`, () => {
    it('remembers one offering for the given time and lists the live ones', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      await store.markOfferingUnavailable('spot', 'm5.large', 'us-west-2a', 'InsufficientInstanceCapacity', 3 * MINUTE);
      await store.markOfferingUnavailable('on-demand', 'c5.large', 'us-west-2b', 'Unsupported', MINUTE);
      expect(await store.isOfferingUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(true);
      expect(await store.isOfferingUnavailable('on-demand', 'm5.large', 'us-west-2a')).toBe(false);
      expect(await store.isOfferingUnavailable('spot', 'm5.large', 'us-west-2b')).toBe(false);
      clock.advance(MINUTE);
      expect(await store.isOfferingUnavailable('on-demand', 'c5.large', 'us-west-2b')).toBe(false);
      expect(await store.unavailableOfferings()).toEqual([
        {
          capacityType: 'spot',
          instanceType: 'm5.large',
          zone: 'us-west-2a',
          reason: 'InsufficientInstanceCapacity',
          expiresAt: clock() + 2 * MINUTE,
        },
      ]);
      clock.advance(2 * MINUTE);
      expect(await store.isOfferingUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(false);
      expect(await store.unavailableOfferings()).toEqual([]);
    });
  });

  describe(`${name}: unavailable scopes`, () => {
    it('remembers a whole scope beside the offerings, for the given time', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      await store.markScopeUnavailable('subnet:subnet-1', 'InsufficientFreeAddressesInSubnet', MINUTE);
      await store.markOfferingUnavailable('spot', 'm5.large', 'us-west-2a', 'InsufficientInstanceCapacity', 3 * MINUTE);
      const live = await store.unavailableOfferings();
      expect(live.find((r) => r.scope === 'subnet:subnet-1')).toMatchObject({
        reason: 'InsufficientFreeAddressesInSubnet',
        expiresAt: clock() + MINUTE,
      });
      expect(live.filter((r) => r.scope === undefined).map((r) => r.instanceType)).toEqual(['m5.large']);
      clock.advance(MINUTE);
      expect((await store.unavailableOfferings()).some((r) => r.scope)).toBe(false);
    });
  });

  describe(`${name}: drains`, () => {
    it('keeps drain progress per node, without expired records', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const record = (nodeName: string, ttl: number): DrainRecord => ({
        nodeName,
        instanceId: `i-${nodeName}`,
        reason: 'SpotInterruption',
        phase: 'cordoned',
        startedAt: clock(),
        deadline: clock() + 2 * MINUTE,
        expiresAt: clock() + ttl,
      });
      expect(await store.getDrain('node-a')).toBeUndefined();
      await store.putDrain(record('node-b', 10 * MINUTE));
      await store.putDrain(record('node-a', MINUTE));
      await store.putDrain({ ...record('node-b', 10 * MINUTE), phase: 'draining' });
      expect((await store.drains()).map((d) => [d.nodeName, d.phase])).toEqual([
        ['node-a', 'cordoned'],
        ['node-b', 'draining'],
      ]);
      expect(await store.getDrain('node-b')).toEqual({ ...record('node-b', 10 * MINUTE), phase: 'draining' });
      clock.advance(MINUTE);
      expect(await store.getDrain('node-a')).toBeUndefined();
      await store.deleteDrain('node-b');
      await store.deleteDrain('node-c');
      expect(await store.drains()).toEqual([]);
    });
  });

  describe(`${name}: unschedulable pods`, () => {
    it("keeps each decision's pods with their reasons until they expire, however many pods", async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const many = Array.from({ length: 12_000 }, (_, i) => `uid-${String(i).padStart(5, '0')}`);
      const tooBig = ['NodePool general: no instance type has 96 cpu'];
      await store.recordUnschedulable({
        decision: 'd1',
        reasons: tooBig,
        podUids: many,
        expiresAt: clock() + 5 * MINUTE,
      });
      await store.recordUnschedulable({
        decision: 'd2',
        reasons: ['no NodePool tolerates taint dedicated=gpu:NoSchedule'],
        podUids: ['uid-gpu'],
        expiresAt: clock() + MINUTE,
      });
      const byPod = async () =>
        new Map((await store.unschedulable()).flatMap((r) => r.podUids.map((uid) => [uid, r.reasons] as const)));
      const live = await byPod();
      expect(live.size).toBe(12_001);
      expect(live.get('uid-11999')).toEqual(tooBig);
      expect(live.get('uid-gpu')).toEqual(['no NodePool tolerates taint dedicated=gpu:NoSchedule']);
      clock.advance(MINUTE);
      expect((await byPod()).has('uid-gpu')).toBe(false);
      expect((await byPod()).size).toBe(12_000);
    });
  });

  describe(`${name}: prices`, () => {
    it('keeps one snapshot per region, large ones included', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      expect(await store.getPrices('us-west-2')).toBeUndefined();
      const spot: Record<string, number> = {};
      for (const type of uids('m9.size', 1000)) {
        for (const zone of ['a', 'b', 'c', 'd', 'e', 'f']) spot[`${type}:us-east-1${zone}`] = 0.0123456;
      }
      const big: PriceSnapshot = {
        source: 'pricing-api+spot-price-history',
        fetchedAt: clock(),
        onDemand: { 'm5.large': 0.096 },
        spot,
      };
      const small: PriceSnapshot = { source: 'bundled', fetchedAt: 1, onDemand: { 'm5.large': 0.1 }, spot: {} };
      await store.putPrices('us-east-1', big);
      await store.putPrices('us-west-2', small);
      expect(await store.getPrices('us-east-1')).toEqual(big);
      expect(await store.getPrices('us-west-2')).toEqual(small);
      await store.putPrices('us-west-2', { ...small, source: 'pricing-api' });
      expect((await store.getPrices('us-west-2'))?.source).toBe('pricing-api');
    });
  });

  describe(`${name}: last valid versions`, () => {
    it('keeps one version per object: a newer generation or another uid replaces it, an older one does not', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const expiresAt = clock() + DAY;
      const big = { spec: { userData: 'x'.repeat(200_000) } };
      const put = (kind: 'NodePool' | 'EC2NodeClass', uid: string, generation: number, object: unknown) =>
        store.putValidVersion({ kind, name: 'default', uid, generation, object, expiresAt });
      await put('EC2NodeClass', 'c1', 3, big);
      await put('NodePool', 'p1', 2, { w: 2 });
      await put('NodePool', 'p1', 1, { w: 1 });
      const versions = async () => (await store.validVersions()).sort((a, b) => a.kind.localeCompare(b.kind));
      expect(await versions()).toEqual([
        { kind: 'EC2NodeClass', name: 'default', uid: 'c1', generation: 3, object: big, expiresAt },
        { kind: 'NodePool', name: 'default', uid: 'p1', generation: 2, object: { w: 2 }, expiresAt },
      ]);
      await put('NodePool', 'p1', 5, { w: 5 });
      expect((await versions())[1]).toMatchObject({ generation: 5, object: { w: 5 } });
      // The object deleted and created again: its first generation replaces the old object's.
      await put('NodePool', 'p2', 1, { w: 1 });
      expect((await versions())[1]).toMatchObject({ uid: 'p2', generation: 1, object: { w: 1 } });
    });

    it("expires a version unless its object's readers move the expiry later; deletes only that object's", async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const put = (name: string, uid: string, generation: number, expiresAt: number) =>
        store.putValidVersion({ kind: 'NodePool', name, uid, generation, object: { generation }, expiresAt });
      const names = async () => (await store.validVersions()).map((r) => `${r.name}@${r.generation}`).sort();
      await put('kept', 'k1', 1, clock() + DAY);
      await put('gone', 'g1', 1, clock() + DAY);
      // Storing the same version again (another instance's cold start) keeps it and moves its expiry.
      await put('kept', 'k1', 1, clock() + 2 * DAY);
      clock.advance(DAY);
      expect(await names()).toEqual(['kept@1']);
      // A refresh moves it later, never earlier, and never onto another object's version.
      await store.refreshValidVersion({ kind: 'NodePool', name: 'kept', uid: 'k1' }, clock() + 3 * DAY);
      await store.refreshValidVersion({ kind: 'NodePool', name: 'kept', uid: 'k1' }, clock() + MINUTE);
      await store.refreshValidVersion({ kind: 'NodePool', name: 'gone', uid: 'other' }, clock() + DAY);
      clock.advance(2 * DAY);
      expect(await names()).toEqual(['kept@1']);
      expect((await store.validVersions())[0]?.expiresAt).toBe(clock() + DAY);
      // Deletion by uid: another object of that name keeps its version.
      await store.deleteValidVersion({ kind: 'NodePool', name: 'kept', uid: 'someone-else' });
      expect(await names()).toEqual(['kept@1']);
      await store.deleteValidVersion({ kind: 'NodePool', name: 'kept', uid: 'k1' });
      await store.deleteValidVersion({ kind: 'NodePool', name: 'kept', uid: 'k1' });
      expect(await names()).toEqual([]);
    });
  });

  describe(`${name}: disruption budgets`, () => {
    it('gives out at most `limit` slots, again to a holder, and takes back released or expired ones', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      expect(await store.reserveDisruption('default', 'b0', 2, 'node-a', 10 * MINUTE)).toBe(true);
      expect(await store.reserveDisruption('default', 'b0', 2, 'node-b', MINUTE)).toBe(true);
      expect(await store.reserveDisruption('default', 'b0', 2, 'node-a', 10 * MINUTE)).toBe(true);
      expect(await store.reserveDisruption('default', 'b0', 2, 'node-c', 10 * MINUTE)).toBe(false);
      expect(await store.reserveDisruption('default', 'b1', 1, 'node-c', 10 * MINUTE)).toBe(true);
      expect(await store.reserveDisruption('other', 'b0', 1, 'node-c', 10 * MINUTE)).toBe(true);
      expect(await store.disruptions('default', 'b0')).toEqual(['node-a', 'node-b']);
      clock.advance(MINUTE);
      expect(await store.disruptions('default', 'b0')).toEqual(['node-a']);
      expect(await store.reserveDisruption('default', 'b0', 2, 'node-c', 10 * MINUTE)).toBe(true);
      await store.releaseDisruption('default', 'b0', 'node-a');
      await store.releaseDisruption('default', 'b0', 'node-z');
      expect(await store.disruptions('default', 'b0')).toEqual(['node-c']);
      expect(await store.disruptions('none', 'b0')).toEqual([]);
    });
  });

  describe(`${name}: disruption records`, () => {
    it('keeps one record per node until deleted or expired', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const record = (nodeName: string, ttl: number): DisruptionRecord => ({
        nodeName,
        instanceId: `i-${nodeName}`,
        nodePool: 'default',
        reason: 'Drifted',
        detail: 'AMIDrift: ami-1 → ami-2',
        replacements: ['default-abcde'],
        phase: 'replacing',
        startedAt: clock(),
        expiresAt: clock() + ttl,
      });
      await store.putDisruption(record('node-b', 10 * MINUTE));
      await store.putDisruption(record('node-a', MINUTE));
      await store.putDisruption({ ...record('node-b', 10 * MINUTE), phase: 'draining' });
      expect((await store.disruptionRecords()).map((d) => [d.nodeName, d.phase])).toEqual([
        ['node-a', 'replacing'],
        ['node-b', 'draining'],
      ]);
      clock.advance(MINUTE);
      expect((await store.disruptionRecords()).map((d) => d.nodeName)).toEqual(['node-b']);
      await store.deleteDisruption('node-b');
      await store.deleteDisruption('node-z');
      expect(await store.disruptionRecords()).toEqual([]);
    });
  });

  describe(`${name}: registered instances (garbage collection)`, () => {
    it('remembers instance ids until forgotten or expired', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      await store.rememberRegistered(['i-b', 'i-a'], 10 * MINUTE);
      await store.rememberRegistered(['i-c'], MINUTE);
      expect(await store.registeredInstances()).toEqual(['i-a', 'i-b', 'i-c']);
      clock.advance(MINUTE);
      expect(await store.registeredInstances()).toEqual(['i-a', 'i-b']);
      await store.forgetRegistered(['i-a', 'i-z']);
      expect(await store.registeredInstances()).toEqual(['i-b']);
    });
  });

  describe(`${name}: budget slots (shared/disruption/ledger)`, () => {
    const pool = (nodes: string): NodePool => ({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'default' },
      spec: {
        template: {
          spec: { requirements: [], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'x' } },
        },
        disruption: { consolidateAfter: '0s', budgets: [{ nodes }] },
      },
    });

    it('counts nodes disrupting without a slot against the limit, and frees released slots', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const limit = budgetLimit(pool('2'), 'Drifted', { nodes: 10, now: clock() });
      expect(await reserveBudgetSlot(store, limit, 'node-a', ['node-deleted-by-hand'])).toBe(true);
      expect(await reserveBudgetSlot(store, limit, 'node-b', ['node-deleted-by-hand'])).toBe(false);
      expect(await reserveBudgetSlot(store, limit, 'node-a', ['node-deleted-by-hand'])).toBe(true);
      expect(await reserveBudgetSlot(store, limit, 'node-b', [])).toBe(true);
      await releaseBudgetSlot(store, 'default', 'node-a');
      expect(await reserveBudgetSlot(store, limit, 'node-c', [])).toBe(true);
      expect(await reserveBudgetSlot(store, limit, 'node-d', [])).toBe(false);
    });

    it('never lets parallel invocations exceed a 1-node budget, nor reasons with different limits share more', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const drifted = budgetLimit(pool('1'), 'Drifted', { nodes: 10, now: clock() });
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => reserveBudgetSlot(store, drifted, `node-${i}`, [])),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.disruptions('default', 'disrupting')).toHaveLength(1);
      // A wider budget (another reason) counts the drifted holder too.
      const empty = budgetLimit(pool('3'), 'Empty', { nodes: 10, now: clock() });
      const more = await Promise.all(
        Array.from({ length: 6 }, (_, i) => reserveBudgetSlot(store, empty, `empty-${i}`, [])),
      );
      expect(more.filter(Boolean).length).toBeLessThanOrEqual(2);
      expect((await store.disruptions('default', 'disrupting')).length).toBeLessThanOrEqual(3);
    });
  });

  describe(`${name}: parts of split notices`, () => {
    it('keeps each part (a large one too) until it is deleted or expires', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      // A part near PutEvents' limit: kept whole.
      const big = JSON.stringify({
        pods: Array.from({ length: 2_000 }, (_, i) => ({ uid: `uid-${i}`, name: `pod-${i}-${'x'.repeat(80)}` })),
      });
      const part = (index: number, detail = '{}') => ({
        batchId: 'b1',
        index,
        count: 3,
        detail,
        receivedAt: clock(),
        expiresAt: clock() + 15 * MINUTE,
      });
      await store.putNoticePart(part(0, big));
      await store.putNoticePart(part(1));
      await store.putNoticePart({ ...part(0), batchId: 'b2', count: 2 });
      const kept = await store.noticeParts();
      expect(kept.map((p) => [p.batchId, p.index]).sort()).toEqual([
        ['b1', 0],
        ['b1', 1],
        ['b2', 0],
      ]);
      expect(kept.find((p) => p.batchId === 'b1' && p.index === 0)?.detail).toBe(big);
      await store.deleteNoticeParts('b1', [0, 1]);
      expect((await store.noticeParts()).map((p) => p.batchId)).toEqual(['b2']);
      clock.advance(15 * MINUTE);
      expect(await store.noticeParts()).toEqual([]);
    });
  });

  describe(`${name}: concurrent invocations`, () => {
    it('lets exactly one of many parallel nominations of one pod win', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.nominate(nomination(clock, `claim-${i}`, ['shared', `own-${i}`]))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect((await store.nominations()).map((x) => x.nodeClaimName)).toEqual([`claim-${winner}`]);
      // The losers locked nothing: their own pods are free.
      const rest = Array.from({ length: 20 }, (_, i) => i).filter((i) => i !== winner);
      expect(
        await store.nominate(
          nomination(
            clock,
            'sweep',
            rest.map((i) => `own-${i}`),
          ),
        ),
      ).toBe(true);
    });

    it('never gives one pod to two claims when overlapping nominations race', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      // Claim i wants pods i..i+3 (of 12): neighbours overlap.
      const wanted = Array.from({ length: 12 }, (_, i) => [0, 1, 2, 3].map((d) => `p${(i + d) % 12}`));
      const results = await Promise.all(wanted.map((pods, i) => store.nominate(nomination(clock, `c${i}`, pods))));
      const winners = wanted.filter((_, i) => results[i]);
      expect(winners.length).toBeGreaterThan(0);
      const taken = winners.flat();
      expect(new Set(taken).size).toBe(taken.length);
      const listed = (await store.nominations()).flatMap((x) => x.podUids);
      expect(listed.sort()).toEqual([...taken].sort());
    });

    it('answers true to exactly one of many parallel claimOnce calls', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const results = await Promise.all(Array.from({ length: 20 }, () => store.claimOnce('batch-7', MINUTE)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('gives out exactly `limit` budget slots to parallel reservations', async () => {
      const clock = fakeClock();
      const store = await makeStore(clock);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.reserveDisruption('default', 'b0', 2, `node-${i}`, MINUTE)),
      );
      expect(results.filter(Boolean)).toHaveLength(2);
      expect(await store.disruptions('default', 'b0')).toHaveLength(2);
    });
  });
}
