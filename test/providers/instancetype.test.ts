import { describe, expect, it } from 'vitest';
import { InstanceTypeProvider } from '../../shared/providers/instancetype';
import type { EC2Api } from '../../shared/providers/ports';
import { fakeClock, recordingFake } from './fakes';

const m5 = {
  InstanceType: 'm5.large',
  ProcessorInfo: { SupportedArchitectures: ['i386', 'x86_64'], Manufacturer: 'Intel' },
  VCpuInfo: { DefaultVCpus: 2 },
  MemoryInfo: { SizeInMiB: 8192 },
  NetworkInfo: {
    MaximumNetworkInterfaces: 3,
    Ipv4AddressesPerInterface: 10,
    NetworkCards: [{ BaselineBandwidthInGbps: 0.75 }],
  },
  SupportedUsageClasses: ['on-demand', 'spot'],
  Hypervisor: 'nitro',
  BareMetal: false,
} as const;
const g5 = {
  InstanceType: 'g5.xlarge',
  ProcessorInfo: { SupportedArchitectures: ['x86_64'] },
  VCpuInfo: { DefaultVCpus: 4 },
  MemoryInfo: { SizeInMiB: 16384 },
  NetworkInfo: { MaximumNetworkInterfaces: 4, Ipv4AddressesPerInterface: 15, EfaInfo: { MaximumEfaInterfaces: 1 } },
  GpuInfo: { Gpus: [{ Name: 'A10G', Manufacturer: 'NVIDIA', Count: 1 }], TotalGpuMemoryInMiB: 24576 },
  InstanceStorageInfo: { TotalSizeInGB: 250, NvmeSupport: 'required' },
  SupportedUsageClasses: ['on-demand'],
} as const;
const mac = { InstanceType: 'mac1.metal', ProcessorInfo: { SupportedArchitectures: ['x86_64_mac'] } } as const;

function ec2() {
  return recordingFake<EC2Api>({
    describeInstanceTypes: (input) =>
      input.NextToken ? ({ InstanceTypes: [g5, mac] } as never) : ({ InstanceTypes: [m5], NextToken: 't' } as never),
    describeAvailabilityZones: () =>
      ({
        AvailabilityZones: [
          { ZoneName: 'us-west-2a', ZoneId: 'usw2-az2' },
          { ZoneName: 'us-west-2b', ZoneId: 'usw2-az1' },
        ],
      }) as never,
    describeInstanceTypeOfferings: () =>
      ({
        InstanceTypeOfferings: [
          { InstanceType: 'm5.large', Location: 'us-west-2a' },
          { InstanceType: 'm5.large', Location: 'us-west-2b' },
          { InstanceType: 'g5.xlarge', Location: 'us-west-2b' },
        ],
      }) as never,
    describeSpotPriceHistory: () =>
      ({
        SpotPriceHistory: [
          { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2a', SpotPrice: '0.05', Timestamp: new Date(1000) },
          { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2a', SpotPrice: '0.04', Timestamp: new Date(2000) },
          { InstanceType: 'g5.xlarge', AvailabilityZone: 'us-west-2b', SpotPrice: '0.3', Timestamp: new Date(2000) },
        ],
      }) as never,
  });
}

describe('InstanceTypeProvider', () => {
  const prices: Record<string, number> = { 'm5.large': 0.096, 'g5.xlarge': 1.006 };

  it('builds offerings per zone: spot at the latest spot price where allowed, on-demand where priced', async () => {
    const catalog = await new InstanceTypeProvider(ec2(), {
      region: 'us-west-2',
      onDemandPrice: (t) => prices[t],
    }).catalog();
    expect(catalog.region).toBe('us-west-2');
    expect(catalog.instanceTypes.map((t) => t.name)).toEqual(['g5.xlarge', 'm5.large']);
    expect(catalog.instanceTypes[1]?.offerings).toEqual([
      { zone: 'us-west-2a', zoneID: 'usw2-az2', capacityType: 'spot', price: 0.04, available: true },
      { zone: 'us-west-2a', zoneID: 'usw2-az2', capacityType: 'on-demand', price: 0.096, available: true },
      { zone: 'us-west-2b', zoneID: 'usw2-az1', capacityType: 'on-demand', price: 0.096, available: true },
    ]);
    // g5.xlarge does not support spot, so its spot price is ignored.
    expect(catalog.instanceTypes[0]?.offerings).toEqual([
      { zone: 'us-west-2b', zoneID: 'usw2-az1', capacityType: 'on-demand', price: 1.006, available: true },
    ]);
  });

  it('serves the catalog from cache for 5 minutes', async () => {
    const clock = fakeClock();
    const fake = ec2();
    const provider = new InstanceTypeProvider(fake, { region: 'us-west-2', clock });
    await provider.catalog();
    const calls = fake.calls.length;
    clock.advance(299_999);
    await provider.catalog();
    expect(fake.calls.length).toBe(calls);
    clock.advance(1);
    await provider.catalog();
    expect(fake.calls.length).toBe(calls * 2);
  });

  it('narrows every call to the configured instance types', async () => {
    const fake = ec2();
    await new InstanceTypeProvider(fake, { region: 'us-west-2', instanceTypes: ['m5.*'] }).catalog();
    expect(fake.callsTo('describeInstanceTypes')[0]).toMatchObject({
      Filters: [{ Name: 'instance-type', Values: ['m5.*'] }],
    });
    expect(fake.callsTo('describeInstanceTypeOfferings')[0]).toMatchObject({
      LocationType: 'availability-zone',
      Filters: [{ Name: 'instance-type', Values: ['m5.*'] }],
    });
  });
});
