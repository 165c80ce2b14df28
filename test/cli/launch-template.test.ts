import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../../cli/karpless.mjs');
// Child processes compile the CLI through tsx; on a loaded machine that takes seconds.
const SLOW = 60_000;

async function karpless(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The command in-process, for the error matrix (same code path as the binary, without the start-up cost). */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  });
  return { code, stdout, stderr };
}

function manifests(nodeClassSpec: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'karpless-userdata-'));
  writeFileSync(
    join(dir, 'pool.yaml'),
    `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: test
spec:
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
  securityGroupSelectorTerms: [{id: sg-0123}]
${nodeClassSpec.includes('instanceProfile:') ? '' : '  role: NodeRole\n'}${nodeClassSpec}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool
spec:
  template:
    metadata:
      labels:
        testing/cluster: unspecified
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: test}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
      taints:
        - {key: foo, value: bar, effect: NoExecute}
`,
  );
  return dir;
}

const CLUSTER = [
  '--cluster-name',
  'test-cluster',
  '--cluster-endpoint',
  'https://test-cluster',
  '--cluster-ca',
  'Y2EtYnVuZGxlCg==',
  '--cluster-cidr',
  '10.100.0.0/16',
];

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
        'ami-0abc',
        '--manifests',
        dir,
        '--nodepool',
        'pool',
        '--instance-type',
        'm5.large',
        '--capacity-type',
        'spot',
        ...CLUSTER,
      ]);
      expect(code).toBe(0);
      const request = JSON.parse(stdout);
      expect(request.LaunchTemplateName).toMatch(/^karpenter\.k8s\.aws\/\d+$/);
      expect(request.LaunchTemplateData.ImageId).toBe('ami-0abc');
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
