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

const common = (dir: string) => ['--manifests', dir, '--nodepool', 'pool', '--instance-type', 'm5.large', ...CLUSTER];

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
