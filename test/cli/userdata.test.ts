import { describe, expect, it } from 'vitest';
import { common, manifests } from './node-fixtures';
import { inProcess, karplessAsync as karpless } from './run';

// Child processes compile the CLI through tsx; on a loaded machine that takes seconds.
const SLOW = 60_000;

describe('karpless userdata', () => {
  it(
    'prints AL2 userData with the pod density of the instance type and the claim labels',
    async () => {
      const dir = manifests('  amiSelectorTerms: [{alias: al2@latest}]');
      const { code, stdout } = await karpless(['userdata', ...common(dir), '--capacity-type', 'spot']);
      expect(code).toBe(0);
      expect(stdout).toContain("/etc/eks/bootstrap.sh 'test-cluster' --apiserver-endpoint 'https://test-cluster'");
      expect(stdout).toContain("--dns-cluster-ip '10.100.0.10'");
      expect(stdout).toContain('--max-pods=29');
      expect(stdout).toContain('karpenter.sh/capacity-type=spot');
      expect(stdout).toContain('karpenter.sh/nodepool=pool');
      expect(stdout).toContain('karpenter.k8s.aws/ec2nodeclass=test');
      expect(stdout).toContain('testing/cluster=unspecified');
      expect(stdout).toContain('--register-with-taints="foo=bar:NoExecute,karpenter.sh/unregistered:NoExecute"');
      expect(stdout).not.toContain('node.kubernetes.io/instance-type');
    },
    SLOW,
  );

  it('puts only the labels Karpenter puts in userData in --node-labels, none of the instance type', async () => {
    const dir = manifests('  amiSelectorTerms: [{alias: al2@latest}]');
    const { code, stdout } = await inProcess(['userdata', ...common(dir), '--capacity-type', 'on-demand']);
    expect(code).toBe(0);
    const flag = /--node-labels="([^"]*)"/.exec(stdout)?.[1];
    expect(flag?.split(',')).toEqual([
      'karpenter.k8s.aws/ec2nodeclass=test',
      'karpenter.sh/capacity-type=on-demand',
      'karpenter.sh/do-not-sync-taints=true',
      'karpenter.sh/nodepool=pool',
      'testing/cluster=unspecified',
    ]);
    expect(stdout).not.toContain('karpenter.k8s.aws/instance-');
  });

  it(
    'honours --cluster-dns and the node class kubelet maxPods',
    async () => {
      const dir = manifests(
        '  amiSelectorTerms: [{alias: bottlerocket@v1.45.0}]\n  instanceStorePolicy: RAID0\n  kubelet: {maxPods: 42}',
      );
      const { code, stdout } = await karpless([
        'userdata',
        ...common(dir),
        '--capacity-type',
        'on-demand',
        '--cluster-dns',
        '10.0.100.10',
      ]);
      expect(code).toBe(0);
      expect(stdout).toContain("cluster-dns-ip = '10.0.100.10'");
      expect(stdout).toContain('max-pods = 42');
      expect(stdout).toContain("'--dirs'");
    },
    SLOW,
  );

  it('fails with the node class and field for malformed custom userData', async () => {
    const dir = manifests("  amiSelectorTerms: [{alias: bottlerocket@latest}]\n  userData: '[settings'");
    const { code, stderr } = await inProcess(['userdata', ...common(dir), '--capacity-type', 'spot']);
    expect(code).toBe(1);
    expect(stderr).toContain('EC2NodeClass/test: spec.userData:');
    expect(stderr).toContain('not valid TOML');
  });

  it.each([
    [['--capacity-type', 'cheap'], 2, '--capacity-type must be spot or on-demand'],
    [['--capacity-type', 'spot', '--nodepool', 'nope'], 1, 'NodePool/nope not found'],
    [['--capacity-type', 'spot', '--instance-type', 'zz9.huge'], 1, 'instance type zz9.huge is not in'],
  ])('refuses %j with exit %i', async (extra, exitCode, message) => {
    const dir = manifests('  amiSelectorTerms: [{alias: al2023@latest}]');
    const { code, stderr } = await inProcess(['userdata', ...common(dir), ...extra]);
    expect(code).toBe(exitCode);
    expect(stderr).toContain(message);
  });
});

/** The example of a command's --help, as the argument list a shell would pass. */
function helpExample(help: string): string[] {
  const example = help.split('Example:\n')[1]?.split('\n\n')[0] ?? '';
  return example.replace(/\\\n/g, ' ').trim().split(/\s+/).slice(1);
}

describe.each(['userdata', 'launch-template'])('karpless %s --help', (command) => {
  it('gives the exit codes and an example that runs as printed', async () => {
    const help = await inProcess([command, '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Exit status: 0 when the output was printed; 1 when .*; 2 on bad flags\.$/ms);
    const example = helpExample(help.stdout);
    expect(example[0]).toBe(command);
    const result = await inProcess(example);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toBe('');
  });
});
