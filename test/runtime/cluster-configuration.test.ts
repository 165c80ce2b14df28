// The functions' configuration source where it is read from the cluster: one read per TTL, the bundle
// (and one warning) without the CRDs, the last read when the API server fails, and the served
// configuration refilled in place, so every dependency built at cold start sees it.

import { beforeEach, describe, expect, it } from 'vitest';
import type { Configuration } from '../../shared/apis/configuration';
import type { KarpenterObject, KarpenterObjectsApi, KarpenterResource } from '../../shared/kube/karpenter';
import {
  ClusterConfigurationSource,
  CONFIGURATION_TTL_MS,
  serveConfiguration,
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
    api.objects.ec2nodeclasses = [structuredClone(nodeClass) as never];
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
});
