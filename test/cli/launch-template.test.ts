import { describe, expect, it } from 'vitest';
import { CLUSTER, common, manifests } from './node-fixtures';
import { inProcess, karplessAsync as karpless } from './run';

// Child processes compile the CLI through tsx; on a loaded machine that takes seconds.
const SLOW = 60_000;

describe('karpless launch-template', () => {
  it(
    'prints the CreateLaunchTemplate request as JSON',
    async () => {
      const dir = manifests(
        '  amiSelectorTerms: [{alias: al2023@latest}]\n  instanceProfile: test-profile\n  associatePublicIPAddress: false\n  tags: {team: a}',
      );
      const { code, stdout } = await karpless([
        'launch-template',
        '--ami-id',
        'ami-0abc1234',
        ...common(dir),
        '--capacity-type',
        'spot',
      ]);
      expect(code).toBe(0);
      const request = JSON.parse(stdout);
      expect(request.LaunchTemplateName).toMatch(/^karpenter\.k8s\.aws\/\d+$/);
      expect(request.LaunchTemplateData.ImageId).toBe('ami-0abc1234');
      expect(request.LaunchTemplateData.IamInstanceProfile).toEqual({ Name: 'test-profile' });
      expect(request.LaunchTemplateData.NetworkInterfaces).toEqual([
        { DeviceIndex: 0, Groups: ['sg-0123'], AssociatePublicIpAddress: false },
      ]);
      expect(request.LaunchTemplateData.BlockDeviceMappings).toEqual([
        { DeviceName: '/dev/xvda', Ebs: { Encrypted: true, VolumeType: 'gp3', VolumeSize: 20 } },
      ]);
      expect(request.LaunchTemplateData.TagSpecifications.map((t: { ResourceType: string }) => t.ResourceType)).toEqual(
        ['network-interface', 'spot-instances-request'],
      );
      expect(request.TagSpecifications[0].Tags).toContainEqual({ Key: 'team', Value: 'a' });
      const userData = Buffer.from(request.LaunchTemplateData.UserData, 'base64').toString();
      expect(userData).toContain('# Karpenter Generated NodeConfig');
      expect(userData).toContain('maxPods: 29');
    },
    SLOW,
  );

  it('needs --ami-id', async () => {
    const dir = manifests('  amiSelectorTerms: [{alias: al2023@latest}]');
    const { code, stderr } = await inProcess(['launch-template', '--manifests', dir, '--nodepool', 'pool', ...CLUSTER]);
    expect(code).toBe(2);
    expect(stderr).toContain('missing required flag --ami-id');
  });
});
