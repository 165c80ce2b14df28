import { describe, expect, it } from 'vitest';
import { PlacementGroupProvider } from '../../shared/providers/placementgroup';
import type { EC2Api } from '../../shared/providers/ports';
import { awsError, fakeClock, recordingFake } from './fakes';

const spread = {
  GroupId: 'pg-0abc',
  GroupName: 'critical',
  Strategy: 'spread' as const,
  State: 'available' as const,
  SpreadLevel: 'rack' as const,
};

describe('PlacementGroupProvider', () => {
  it('looks a group up by id or by name and maps it', async () => {
    const ec2 = recordingFake<EC2Api>({ describePlacementGroups: () => ({ PlacementGroups: [spread] }) });
    const provider = new PlacementGroupProvider(ec2, { clock: fakeClock() });
    expect(await provider.get({ id: 'pg-0abc' })).toEqual({
      id: 'pg-0abc',
      name: 'critical',
      strategy: 'spread',
      state: 'available',
      spreadLevel: 'rack',
    });
    await provider.get({ name: 'critical' });
    expect(ec2.callsTo('describePlacementGroups')).toEqual([{ GroupIds: ['pg-0abc'] }, { GroupNames: ['critical'] }]);
  });

  it('answers from cache for a minute', async () => {
    const clock = fakeClock();
    const ec2 = recordingFake<EC2Api>({ describePlacementGroups: () => ({ PlacementGroups: [spread] }) });
    const provider = new PlacementGroupProvider(ec2, { clock });
    await provider.get({ name: 'critical' });
    await provider.get({ name: 'critical' });
    expect(ec2.calls).toHaveLength(1);
    clock.advance(60_000);
    await provider.get({ name: 'critical' });
    expect(ec2.calls).toHaveLength(2);
  });

  it('returns undefined for a group EC2 does not know', async () => {
    const ec2 = recordingFake<EC2Api>({
      describePlacementGroups: () => {
        throw awsError('InvalidPlacementGroup.Unknown', "The Placement Group 'nope' is unknown.");
      },
    });
    expect(await new PlacementGroupProvider(ec2).get({ name: 'nope' })).toBeUndefined();
  });

  it('keeps serving the last group seen when EC2 fails, and fails when it never saw one', async () => {
    const clock = fakeClock();
    let fail = false;
    const ec2 = recordingFake<EC2Api>({
      describePlacementGroups: () => {
        if (fail) throw awsError('RequestLimitExceeded');
        return { PlacementGroups: [spread] };
      },
    });
    const provider = new PlacementGroupProvider(ec2, { clock });
    await provider.get({ id: 'pg-0abc' });
    fail = true;
    clock.advance(60_000);
    expect((await provider.get({ id: 'pg-0abc' }))?.id).toBe('pg-0abc');
    await expect(provider.get({ id: 'pg-other' })).rejects.toThrow('RequestLimitExceeded');
  });
});
