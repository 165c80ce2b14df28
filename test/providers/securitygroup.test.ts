import { describe, expect, it } from 'vitest';
import type { EC2Api } from '../../shared/providers/ports';
import { SecurityGroupProvider, securityGroupTermFilters } from '../../shared/providers/securitygroup';
import { recordingFake } from './fakes';

describe('securityGroupTermFilters', () => {
  it.each([
    [{ id: 'sg-1' }, [{ Name: 'group-id', Values: ['sg-1'] }]],
    [{ name: 'nodes' }, [{ Name: 'group-name', Values: ['nodes'] }]],
    [{ tags: { 'karpenter.sh/discovery': '*' } }, [{ Name: 'tag-key', Values: ['karpenter.sh/discovery'] }]],
  ])('%j → %j', (term, filters) => {
    expect(securityGroupTermFilters(term)).toEqual(filters);
  });
});

describe('SecurityGroupProvider', () => {
  it('unions the groups of every term with their names', async () => {
    const ec2 = recordingFake<EC2Api>({
      describeSecurityGroups: (input) =>
        input.Filters?.[0]?.Name === 'group-name'
          ? { SecurityGroups: [{ GroupId: 'sg-2', GroupName: 'nodes' }] }
          : {
              SecurityGroups: [
                { GroupId: 'sg-1', GroupName: 'default' },
                { GroupId: 'sg-2', GroupName: 'nodes' },
              ],
            },
    });
    const groups = await new SecurityGroupProvider(ec2).list([{ name: 'nodes' }, { tags: { team: 'a' } }]);
    expect(groups).toEqual([
      { id: 'sg-1', name: 'default' },
      { id: 'sg-2', name: 'nodes' },
    ]);
    expect(ec2.calls).toHaveLength(2);
  });
});
