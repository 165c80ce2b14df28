import { describe, expect, it } from 'vitest';
import { InstanceTypeProvider } from '../../../shared/providers/instancetype';
import { type EC2Api, ec2Api } from '../../../shared/providers/ports';
import { fakeClock } from '../../providers/fakes';
import { motoAccount } from '../helpers';
import { providerClients } from './roles';

/** Counts the calls a provider makes, so the cache is observable against the real API. */
function counting(api: EC2Api) {
  let calls = 0;
  const wrapped = new Proxy(api, {
    get(target, property) {
      const value = target[property as keyof EC2Api];
      if (typeof value !== 'function') return value;
      return (input: never) => {
        calls++;
        return (value as (i: never) => unknown)(input);
      };
    },
  });
  return { api: wrapped, calls: () => calls };
}

describe('instance types on moto', () => {
  it('builds the catalog from DescribeInstanceTypes, offerings and spot prices, cached for 5 minutes', async () => {
    // The provision and drift functions build the catalog (the same statements): the provision role here.
    const clients = await providerClients(motoAccount(), 'provision');
    const clock = fakeClock();
    const ec2 = counting(ec2Api(clients.ec2));
    const prices: Record<string, number> = { 'm5.large': 0.096, 'm5.xlarge': 0.192, 'm6g.large': 0.077 };
    const provider = new InstanceTypeProvider(ec2.api, {
      region: 'us-west-2',
      instanceTypes: ['m5.large', 'm5.xlarge', 'm6g.large'],
      onDemandPrice: (t) => prices[t],
      clock,
    });
    const catalog = await provider.catalog();
    expect(catalog.instanceTypes.map((t) => [t.name, t.arch, t.vcpu, t.memoryMiB])).toEqual([
      ['m5.large', 'amd64', 2, 8192],
      ['m5.xlarge', 'amd64', 4, 16384],
      ['m6g.large', 'arm64', 2, 8192],
    ]);
    const m5 = catalog.instanceTypes[0];
    expect(m5?.maximumNetworkInterfaces).toBe(3);
    expect(m5?.ipv4PerInterface).toBe(10);
    const zones = [...new Set(m5?.offerings.map((o) => o.zone))];
    expect(zones.length).toBeGreaterThanOrEqual(3);
    expect(m5?.offerings).toContainEqual({
      zone: 'us-west-2a',
      zoneID: 'usw2-az2',
      capacityType: 'on-demand',
      price: 0.096,
      available: true,
    });
    // moto prices every spot offering at 0.00001.
    expect(m5?.offerings).toContainEqual({
      zone: 'us-west-2a',
      zoneID: 'usw2-az2',
      capacityType: 'spot',
      price: 0.00001,
      available: true,
    });

    const calls = ec2.calls();
    clock.advance(4 * 60 * 1000);
    expect(await provider.catalog()).toBe(catalog);
    expect(ec2.calls()).toBe(calls);
    clock.advance(60 * 1000);
    await provider.catalog();
    expect(ec2.calls()).toBe(calls * 2);
  });
});
