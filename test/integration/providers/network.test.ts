import { describe, expect, it } from 'vitest';
import { ec2Api } from '../../../shared/providers/ports';
import { SecurityGroupProvider } from '../../../shared/providers/securitygroup';
import { SubnetProvider } from '../../../shared/providers/subnet';
import { createNetwork, motoAccount } from '../helpers';
import { providerClients } from './roles';

// The provision and drift functions resolve node classes' subnets and security groups (the same
// statements): the provision role here; the network is created with the account's root clients.
describe('subnets and security groups on moto', () => {
  it('selects subnets by id, by tag and by tag key, with zone, zone id and free IPs', async () => {
    const account = motoAccount();
    const network = await createNetwork(account, {
      subnets: [
        { zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: { 'karpenter.sh/discovery': 'c1', tier: 'private' } },
        { zone: 'us-west-2b', cidr: '10.0.2.0/25', tags: { 'karpenter.sh/discovery': 'c1' } },
        { zone: 'us-west-2c', cidr: '10.0.3.0/24', tags: { 'karpenter.sh/discovery': 'other' } },
        { zone: 'us-west-2a', cidr: '10.0.4.0/26' },
      ],
    });
    const [a, b, c, untagged] = network.subnets;
    const provider = new SubnetProvider(ec2Api((await providerClients(account, 'provision')).ec2));

    const byTag = await provider.list([{ tags: { 'karpenter.sh/discovery': 'c1' } }]);
    expect(byTag.map((s) => [s.id, s.zone, s.zoneID, s.availableIps])).toEqual([
      [a?.id, 'us-west-2a', 'usw2-az2', 251],
      [b?.id, 'us-west-2b', 'usw2-az1', 123],
    ]);

    const anyValue = await provider.list([{ tags: { 'karpenter.sh/discovery': '*' } }]);
    expect(anyValue.map((s) => s.id).sort()).toEqual([a?.id, b?.id, c?.id].sort());

    const byId = await provider.list([{ id: untagged?.id ?? '' }, { tags: { tier: 'private' } }]);
    expect(byId.map((s) => s.id)).toEqual([a?.id, untagged?.id]);

    expect(await provider.list([{ tags: { 'karpenter.sh/discovery': 'nobody' } }])).toEqual([]);
  });

  it('selects security groups by id, group name and tags', async () => {
    const account = motoAccount();
    const network = await createNetwork(account, {
      subnets: [],
      securityGroups: [
        { name: 'nodes', tags: { 'karpenter.sh/discovery': 'c1' } },
        { name: 'extra', tags: { team: 'a' } },
        { name: 'unrelated' },
      ],
    });
    const [nodes, extra] = network.securityGroups;
    const provider = new SecurityGroupProvider(ec2Api((await providerClients(account, 'provision')).ec2));
    expect(await provider.list([{ tags: { 'karpenter.sh/discovery': 'c1' } }])).toEqual([
      { id: nodes?.id, name: 'nodes' },
    ]);
    expect(await provider.list([{ name: 'extra' }])).toEqual([{ id: extra?.id, name: 'extra' }]);
    const both = await provider.list([{ id: nodes?.id ?? '' }, { tags: { team: '*' } }]);
    expect(both.map((g) => g.name).sort()).toEqual(['extra', 'nodes']);
    expect(await provider.list([{ name: 'missing' }])).toEqual([]);
  });
});
