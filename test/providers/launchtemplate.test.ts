import { describe, expect, it } from 'vitest';
import { LaunchTemplateProvider } from '../../shared/providers/launchtemplate';
import type { EC2Api } from '../../shared/providers/ports';
import { awsError, fakeClock, recordingFake } from './fakes';

const input = { LaunchTemplateName: 'karpenter.k8s.aws/123', LaunchTemplateData: { ImageId: 'ami-1' } };

describe('LaunchTemplateProvider', () => {
  it('creates a template that does not exist, then serves it from cache', async () => {
    const ec2 = recordingFake<EC2Api>({
      describeLaunchTemplates: () => {
        throw awsError('InvalidLaunchTemplateName.NotFoundException');
      },
      createLaunchTemplate: () => ({ LaunchTemplate: { LaunchTemplateId: 'lt-1' } }),
    });
    const provider = new LaunchTemplateProvider(ec2, fakeClock());
    expect(await provider.ensure(input)).toEqual({ name: 'karpenter.k8s.aws/123', id: 'lt-1', created: true });
    expect(await provider.ensure(input)).toEqual({ name: 'karpenter.k8s.aws/123', id: 'lt-1', created: false });
    expect(ec2.calls.map((c) => c.method)).toEqual(['describeLaunchTemplates', 'createLaunchTemplate']);
    expect(ec2.callsTo('createLaunchTemplate')).toEqual([input]);
  });

  it('reuses an existing template of the same name', async () => {
    const ec2 = recordingFake<EC2Api>({
      describeLaunchTemplates: () => ({ LaunchTemplates: [{ LaunchTemplateId: 'lt-9' }] }),
    });
    expect(await new LaunchTemplateProvider(ec2).ensure(input)).toEqual({
      name: input.LaunchTemplateName,
      id: 'lt-9',
      created: false,
    });
    expect(ec2.callsTo('describeLaunchTemplates')).toEqual([{ LaunchTemplateNames: ['karpenter.k8s.aws/123'] }]);
  });

  it('describes again after the 1-minute cache expires or after invalidate', async () => {
    const clock = fakeClock();
    const ec2 = recordingFake<EC2Api>({
      describeLaunchTemplates: () => ({ LaunchTemplates: [{ LaunchTemplateId: 'lt-9' }] }),
    });
    const provider = new LaunchTemplateProvider(ec2, clock);
    await provider.ensure(input);
    clock.advance(59_000);
    await provider.ensure(input);
    expect(ec2.calls).toHaveLength(1);
    clock.advance(60_000);
    await provider.ensure(input);
    expect(ec2.calls).toHaveLength(2);
    provider.invalidate(input.LaunchTemplateName);
    await provider.ensure(input);
    expect(ec2.calls).toHaveLength(3);
  });

  it('adopts the template a concurrent launch created first', async () => {
    let described = 0;
    const ec2 = recordingFake<EC2Api>({
      describeLaunchTemplates: () => {
        described++;
        if (described === 1) throw awsError('InvalidLaunchTemplateName.NotFoundException');
        return { LaunchTemplates: [{ LaunchTemplateId: 'lt-other' }] };
      },
      createLaunchTemplate: () => {
        throw awsError('InvalidLaunchTemplateName.AlreadyExistsException');
      },
    });
    expect(await new LaunchTemplateProvider(ec2).ensure(input)).toMatchObject({ id: 'lt-other', created: false });
  });

  it('passes other errors through', async () => {
    const ec2 = recordingFake<EC2Api>({
      describeLaunchTemplates: () => {
        throw awsError('UnauthorizedOperation');
      },
    });
    await expect(new LaunchTemplateProvider(ec2).ensure(input)).rejects.toMatchObject({
      name: 'UnauthorizedOperation',
    });
  });
});
