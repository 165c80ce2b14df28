import { describe, expect, it } from 'vitest';
import { parseCatalog, resolveInstanceTypes, syntheticCatalog, syntheticPrice } from '../../shared/instancetypes';
import { GI, MI, nodeClass } from './helpers';

describe("syntheticCatalog (Karpenter's benchmark instance types)", () => {
  const catalog = syntheticCatalog();
  const types = resolveInstanceTypes(catalog, nodeClass());

  it('has 400 types fake-it-0 … fake-it-399 by default, and passes the catalog checks', () => {
    expect(types.map((t) => t.name)).toEqual(Array.from({ length: 400 }, (_, i) => `fake-it-${i}`));
    expect(parseCatalog(JSON.parse(JSON.stringify(catalog)), 'synthetic')).toBeTruthy();
    expect(syntheticCatalog(7).instanceTypes).toHaveLength(7);
  });

  it.each([0, 1, 41, 399])('fake-it-%i has cpu i+1, memory 2(i+1)Gi, pods 10(i+1) and reserves only 100m/10Mi', (i) => {
    const t = types[i];
    expect(t?.capacity).toEqual({ cpu: (i + 1) * 1000, memory: 2 * (i + 1) * GI, pods: 10 * (i + 1) });
    expect(t?.overhead).toEqual({
      kubeReserved: { cpu: 100, memory: 10 * MI },
      systemReserved: {},
      evictionThreshold: {},
    });
    expect(t?.allocatable).toEqual({
      cpu: (i + 1) * 1000 - 100,
      memory: 2 * (i + 1) * GI - 10 * MI,
      pods: 10 * (i + 1),
    });
  });

  it('offers spot and on-demand in test-zone-1/2 and on-demand in test-zone-3, at 0.1 × cpu + 0.1 × memory GB', () => {
    const t = types[9];
    const price = 0.1 * 10 + (0.1 * 20 * GI) / 1e9;
    expect(syntheticPrice(10, 20 * GI)).toBeCloseTo(price, 12);
    expect(t?.offerings.map((o) => `${o.zone}/${o.capacityType}`).sort()).toEqual([
      'test-zone-1/on-demand',
      'test-zone-1/spot',
      'test-zone-2/on-demand',
      'test-zone-2/spot',
      'test-zone-3/on-demand',
    ]);
    for (const o of t?.offerings ?? []) {
      expect(o.price).toBeCloseTo(price, 12);
      expect(o.available).toBe(true);
    }
  });

  it('ignores NodeClass kubelet settings, as the fake types do', () => {
    const nc = nodeClass('AL2023', { kubelet: { maxPods: 3, kubeReserved: { cpu: '1' } } });
    const [t] = resolveInstanceTypes(syntheticCatalog(1), nc);
    expect(t?.allocatable).toEqual({ cpu: 900, memory: 2 * GI - 10 * MI, pods: 10 });
  });
});
