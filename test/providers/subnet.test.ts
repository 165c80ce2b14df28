import { describe, expect, it } from 'vitest';
import type { EC2Api } from '../../shared/providers/ports';
import { SubnetProvider, subnetsByZone, subnetTermFilters } from '../../shared/providers/subnet';
import { recordingFake } from './fakes';

describe('subnetTermFilters', () => {
  it.each([
    [{ id: 'subnet-1' }, [{ Name: 'subnet-id', Values: ['subnet-1'] }]],
    [{ tags: { 'karpenter.sh/discovery': 'c1' } }, [{ Name: 'tag:karpenter.sh/discovery', Values: ['c1'] }]],
    [{ tags: { Name: '*' } }, [{ Name: 'tag-key', Values: ['Name'] }]],
    [
      { tags: { b: '2', a: '*' } },
      [
        { Name: 'tag-key', Values: ['a'] },
        { Name: 'tag:b', Values: ['2'] },
      ],
    ],
  ])('%j → %j', (term, filters) => {
    expect(subnetTermFilters(term)).toEqual(filters);
  });
});

describe('SubnetProvider', () => {
  it('queries once per term, follows pages, unions by id and sorts by free IPs', async () => {
    const ec2 = recordingFake<EC2Api>({
      describeSubnets: (input) => {
        if (input.Filters?.[0]?.Name === 'subnet-id') {
          return { Subnets: [{ SubnetId: 'subnet-a', AvailabilityZone: 'us-west-2a', AvailableIpAddressCount: 10 }] };
        }
        if (!input.NextToken) {
          return {
            Subnets: [
              { SubnetId: 'subnet-a', AvailabilityZone: 'us-west-2a', AvailableIpAddressCount: 10 },
              {
                SubnetId: 'subnet-b',
                AvailabilityZone: 'us-west-2b',
                AvailabilityZoneId: 'usw2-az1',
                AvailableIpAddressCount: 250,
                Tags: [{ Key: 'k', Value: 'v' }],
              },
            ],
            NextToken: 'page2',
          };
        }
        return { Subnets: [{ SubnetId: 'subnet-c', AvailabilityZone: 'us-west-2a', AvailableIpAddressCount: 100 }] };
      },
    });
    const subnets = await new SubnetProvider(ec2).list([{ id: 'subnet-a' }, { tags: { k: 'v' } }]);
    expect(subnets.map((s) => s.id)).toEqual(['subnet-b', 'subnet-c', 'subnet-a']);
    expect(subnets[0]).toEqual({
      id: 'subnet-b',
      zone: 'us-west-2b',
      zoneID: 'usw2-az1',
      availableIps: 250,
      tags: { k: 'v' },
    });
    expect(ec2.callsTo('describeSubnets')).toEqual([
      { Filters: [{ Name: 'subnet-id', Values: ['subnet-a'] }] },
      { Filters: [{ Name: 'tag:k', Values: ['v'] }] },
      { Filters: [{ Name: 'tag:k', Values: ['v'] }], NextToken: 'page2' },
    ]);
  });

  it('returns nothing when no term matches', async () => {
    const ec2 = recordingFake<EC2Api>({ describeSubnets: () => ({ Subnets: [] }) });
    expect(await new SubnetProvider(ec2).list([{ tags: { missing: 'x' } }])).toEqual([]);
  });

  it('groups subnets by zone for override selection', () => {
    expect(
      subnetsByZone([
        { id: 's1', zone: 'a', availableIps: 5, tags: {} },
        { id: 's2', zone: 'b', availableIps: 6, tags: {} },
        { id: 's3', zone: 'a', availableIps: 7, tags: {} },
      ]),
    ).toEqual({
      a: [
        { id: 's1', availableIps: 5 },
        { id: 's3', availableIps: 7 },
      ],
      b: [{ id: 's2', availableIps: 6 }],
    });
  });
});
