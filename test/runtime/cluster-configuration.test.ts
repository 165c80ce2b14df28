// The functions' configuration source where it is read from the cluster: one read per TTL, the bundle
// (and one warning) without the CRDs, the last read when the API server fails, and the served
// configuration refilled in place, so every dependency built at cold start sees it.

import { beforeEach, describe, expect, it } from 'vitest';
import type { Configuration } from '../../shared/apis/configuration';
import type { KarpenterObject, KarpenterObjectsApi, KarpenterResource } from '../../shared/kube/karpenter';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import {
  ClusterConfigurationSource,
  CONFIGURATION_TTL_MS,
  serveConfiguration,
  VALID_VERSION_TTL_MS,
} from '../../shared/runtime/cluster-configuration';
import { fakeClock } from '../providers/fakes';
import { testNodePool } from '../support/nodepools';
import { RecordingLog } from './fakes';

const nodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'KarpenterNodeRole-c1',
  },
} as const;

class FakeKarpenter implements Pick<KarpenterObjectsApi, 'servedResources' | 'list'> {
  served = new Set<KarpenterResource>(['nodepools', 'ec2nodeclasses', 'nodeclaims']);
  objects: Record<KarpenterResource, KarpenterObject[]> = { nodepools: [], ec2nodeclasses: [], nodeclaims: [] };
  lists = 0;
  failing = false;
  async servedResources() {
    return this.served;
  }
  async list(resource: KarpenterResource) {
    this.lists++;
    if (this.failing) throw new Error('connect ECONNREFUSED');
    return { items: structuredClone(this.objects[resource]), resourceVersion: '1' };
  }
}

describe('ClusterConfigurationSource', () => {
  let api: FakeKarpenter;
  let clock: ReturnType<typeof fakeClock>;
  let log: RecordingLog;
  let bundled: Configuration;
  let source: ClusterConfigurationSource;

  beforeEach(() => {
    api = new FakeKarpenter();
    clock = fakeClock(Date.parse('2026-12-04T00:00:00Z'));
    log = new RecordingLog();
    bundled = { nodePools: [testNodePool({ name: 'bundled' })], nodeClasses: [structuredClone(nodeClass) as never] };
    source = new ClusterConfigurationSource({ karpenter: api, bundled, log, clock });
    api.objects.ec2nodeclasses = [
      { ...structuredClone(nodeClass), metadata: { name: 'default', uid: 'uid-c', generation: 1 } } as never,
    ];
    api.objects.nodepools = [testNodePool({ name: 'gitops' }) as never];
  });

  it('reads the cluster once per TTL and serves what it read', async () => {
    expect((await source.current()).config.nodePools.map((p) => p.metadata.name)).toEqual(['gitops']);
    api.objects.nodepools = [testNodePool({ name: 'changed' }) as never];
    await source.current();
    expect(api.lists).toBe(2);
    clock.advance(CONFIGURATION_TTL_MS);
    const read = await source.current();
    expect(read).toMatchObject({ source: 'cluster', invalid: [] });
    expect(read.config.nodePools.map((p) => p.metadata.name)).toEqual(['changed']);
  });

  it("serves the bundle without Karpenter's CRDs and says so once", async () => {
    api.served = new Set();
    expect(await source.current()).toMatchObject({ source: 'bundled', config: bundled });
    clock.advance(CONFIGURATION_TTL_MS);
    await source.current();
    expect(log.lines.filter((l) => l.level === 'warn' && /CRDs are not installed/.test(l.message))).toHaveLength(1);
  });

  it('serves the last read while the API server fails, and never throws', async () => {
    await source.current();
    api.failing = true;
    clock.advance(CONFIGURATION_TTL_MS);
    const read = await source.current();
    expect(read.config.nodePools.map((p) => p.metadata.name)).toEqual(['gitops']);
    expect(
      log.lines.some((l) => l.level === 'warn' && /reading NodePools and EC2NodeClasses failed/.test(l.message)),
    ).toBe(true);
  });

  it("an invalid object after a cold start serves the bundle's version of it, and is logged once", async () => {
    api.objects.nodepools = [
      testNodePool({ name: 'bundled', disruption: { budgets: [{ nodes: 'lots' }] } as never }) as never,
    ];
    const read = await source.current();
    expect(read.invalid).toMatchObject([{ kind: 'NodePool', name: 'bundled', serving: 'last-valid' }]);
    expect(read.config.nodePools).toEqual(bundled.nodePools);
    clock.advance(CONFIGURATION_TTL_MS);
    await source.current();
    expect(log.lines.filter((l) => l.message === 'invalid object in the cluster ignored')).toHaveLength(1);
  });

  it('refills the arrays the dependencies hold, leaving the bundle it was built from intact', async () => {
    const held = bundled.nodePools;
    serveConfiguration(bundled, (await source.current()).config);
    expect(held.map((p) => p.metadata.name)).toEqual(['gitops']);
    api.served = new Set();
    clock.advance(6 * 60_000);
    serveConfiguration(bundled, (await source.current()).config);
    expect(held.map((p) => p.metadata.name)).toEqual(['bundled']);
  });

  it('serves changed objects a status pass listed at once, without waiting for the TTL or listing again', async () => {
    const versioned = (name: string, resourceVersion: string) => {
      const object = testNodePool({ name }) as unknown as KarpenterObject;
      object.metadata = { ...object.metadata, resourceVersion };
      return object;
    };
    api.objects.nodepools = [versioned('gitops', '10')];
    await source.current();
    const lists = api.lists;
    // The same objects at the same versions: nothing to do.
    expect(
      await source.observe({ nodePools: [versioned('gitops', '10')], nodeClasses: api.objects.ec2nodeclasses }),
    ).toBeUndefined();
    // `kubectl apply` changed the NodePool: the watcher's pass saw resourceVersion 11.
    const read = await source.observe({
      nodePools: [versioned('applied', '11')],
      nodeClasses: api.objects.ec2nodeclasses,
    });
    expect(read?.config.nodePools.map((p) => p.metadata.name)).toEqual(['applied']);
    expect((await source.current()).config.nodePools.map((p) => p.metadata.name)).toEqual(['applied']);
    expect(api.lists).toBe(lists);
    // A deleted object changes the fingerprint too.
    expect(
      (await source.observe({ nodePools: [], nodeClasses: api.objects.ec2nodeclasses }))?.config.nodePools,
    ).toEqual([]);
  });

  describe('last valid versions in the state table', () => {
    const pool = (generation: number, uid: string, extra: object = {}) => {
      const object = testNodePool({ name: 'bundled', ...extra }) as unknown as KarpenterObject;
      // The weight tells the versions apart in what serves.
      object.spec = { ...(object.spec as object), weight: generation };
      object.metadata = { ...object.metadata, uid, generation };
      return object;
    };
    const invalid = { disruption: { budgets: [{ nodes: 'lots' }] } };
    const coldStart = (versions: InMemoryStateStore) =>
      new ClusterConfigurationSource({ karpenter: api, bundled, log, clock, versions });

    it('a new instance serves the version another instance last saw valid, not the bundle', async () => {
      const table = new InMemoryStateStore(clock);
      api.objects.nodepools = [pool(7, 'uid-1')];
      expect((await coldStart(table).current()).config.nodePools[0]?.spec.weight).toBe(7);
      expect((await table.validVersions()).map((r) => [r.kind, r.name, r.uid, r.generation]).sort()).toEqual([
        ['EC2NodeClass', 'default', 'uid-c', 1],
        ['NodePool', 'bundled', 'uid-1', 7],
      ]);

      // `kubectl apply` of a bad generation 8; a cold start (new Lambda instance) reads it first.
      api.objects.nodepools = [pool(8, 'uid-1', invalid)];
      const read = await coldStart(table).current();
      expect(read.invalid).toMatchObject([{ kind: 'NodePool', name: 'bundled', serving: 'last-valid' }]);
      expect(read.config.nodePools[0]?.spec.weight).toBe(7);
      // The bad generation is never stored.
      expect((await table.validVersions()).find((r) => r.kind === 'NodePool')?.generation).toBe(7);
    });

    it('a stored version of a deleted object never serves the new object of that name', async () => {
      const table = new InMemoryStateStore(clock);
      api.objects.nodepools = [pool(7, 'uid-1')];
      await coldStart(table).current();
      // Deleted and created again (new uid), invalid from the start: the bundle's version serves, as without a table.
      api.objects.nodepools = [pool(1, 'uid-2', invalid)];
      const read = await coldStart(table).current();
      expect(read.config.nodePools).toEqual(bundled.nodePools);
    });

    it('an instance that read an older generation does not overwrite a newer stored one', async () => {
      const table = new InMemoryStateStore(clock);
      api.objects.nodepools = [pool(9, 'uid-1')];
      await coldStart(table).current();
      api.objects.nodepools = [pool(8, 'uid-1')];
      await coldStart(table).current();
      expect((await table.validVersions()).find((r) => r.kind === 'NodePool')?.generation).toBe(9);
    });

    it("keeps an invalid object's stored version past the bound while it exists: its readers move the expiry", async () => {
      const table = new InMemoryStateStore(clock);
      api.objects.nodepools = [pool(7, 'uid-1')];
      await coldStart(table).current();
      api.objects.nodepools = [pool(8, 'uid-1', invalid)];
      // A warm instance reads the bad generation every hour for twice the bound.
      const warm = coldStart(table);
      for (let hour = 0; hour < (2 * VALID_VERSION_TTL_MS) / 3_600_000; hour++) {
        clock.advance(3_600_000);
        await warm.current();
      }
      const read = await coldStart(table).current();
      expect(read.invalid).toMatchObject([{ kind: 'NodePool', name: 'bundled', serving: 'last-valid' }]);
      expect(read.config.nodePools[0]?.spec.weight).toBe(7);
    });

    it("a deleted object's version expires once the object is gone longer than the bound", async () => {
      const table = new InMemoryStateStore(clock);
      api.objects.nodepools = [pool(7, 'uid-1')];
      await coldStart(table).current();
      api.objects.nodepools = [];
      const stored = async () => (await table.validVersions()).map((r) => `${r.kind}/${r.name}`).sort();
      // Readers go on (the class is still there); nobody deletes the pool's version.
      const warm = coldStart(table);
      clock.advance(VALID_VERSION_TTL_MS - 60_000);
      await warm.current();
      expect(await stored()).toEqual(['EC2NodeClass/default', 'NodePool/bundled']);
      clock.advance(2 * 60_000);
      await warm.current();
      expect(await stored()).toEqual(['EC2NodeClass/default']);
    });

    it("the watcher's pass deletes the version of an object it sees deleted, or replaced, at once", async () => {
      const table = new InMemoryStateStore(clock);
      const other = { ...pool(3, 'uid-9'), metadata: { name: 'other', uid: 'uid-9', generation: 3 } };
      api.objects.nodepools = [pool(7, 'uid-1'), other];
      await coldStart(table).current();
      const stored = async () => (await table.validVersions()).map((r) => `${r.kind}/${r.name}/${r.uid}`).sort();
      expect(await stored()).toEqual(['EC2NodeClass/default/uid-c', 'NodePool/bundled/uid-1', 'NodePool/other/uid-9']);
      const lists = () => ({
        nodePools: structuredClone(api.objects.nodepools),
        nodeClasses: structuredClone(api.objects.ec2nodeclasses),
      });

      const watcher = coldStart(table);
      await watcher.observe(lists());
      expect(await stored()).toHaveLength(3);
      // `kubectl delete nodepool other`: gone from the next pass's lists, no time passes.
      api.objects.nodepools = [pool(7, 'uid-1')];
      await watcher.observe(lists());
      expect(await stored()).toEqual(['EC2NodeClass/default/uid-c', 'NodePool/bundled/uid-1']);

      // Deleted while no watcher ran: a new watcher's first pass compares the table with the cluster.
      api.objects.nodepools = [pool(7, 'uid-1'), other];
      await coldStart(table).current();
      expect(await stored()).toHaveLength(3);
      api.objects.nodepools = [pool(7, 'uid-1')];
      await coldStart(table).observe(lists());
      expect(await stored()).toEqual(['EC2NodeClass/default/uid-c', 'NodePool/bundled/uid-1']);
    });

    it('stores each version once, and a table that fails costs only persistence', async () => {
      const table = new InMemoryStateStore(clock);
      let writes = 0;
      const counting = Object.assign(Object.create(table), {
        putValidVersion: async (r: never) => {
          writes++;
          return table.putValidVersion(r);
        },
      });
      api.objects.nodepools = [pool(7, 'uid-1')];
      const warm = coldStart(counting);
      await warm.current();
      clock.advance(CONFIGURATION_TTL_MS);
      await warm.current();
      expect(writes).toBe(2);

      const broken = Object.assign(Object.create(table), {
        putValidVersion: async () => {
          throw new Error('AccessDenied');
        },
        validVersions: async () => {
          throw new Error('AccessDenied');
        },
      });
      api.objects.nodepools = [pool(8, 'uid-1', invalid)];
      const read = await coldStart(broken).current();
      expect(read.config.nodePools).toEqual(bundled.nodePools);
      expect(log.lines.some((l) => /reading the stored valid versions failed/.test(l.message))).toBe(true);
    });
  });
});
