import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { powerShellQuote, shellQuote } from '../../shared/amifamily/userdata/quote';
import type { NodePool } from '../../shared/apis/v1/types';
import type { InstanceType } from '../../shared/instancetypes/types';
import {
  instanceTypeRequirementProblem,
  launchValueProblems,
  MAX_USER_DATA_BYTES,
  userDataSizeProblem,
} from '../../shared/launch/inputchecks';

const names = {
  clusterName: '--cluster-name',
  clusterEndpoint: '--cluster-endpoint',
  caBundle: '--cluster-ca',
  clusterDNS: '--cluster-dns',
  amiId: '--ami-id',
};

describe('launch flags checked as EKS and EC2 check them', () => {
  it.each<[string, Record<string, string>, string[]]>([
    [
      'valid values',
      {
        clusterName: 'prod_eu-1',
        clusterEndpoint: 'https://ABC.gr7.eu-west-1.eks.amazonaws.com',
        caBundle: 'Y2EtYnVuZGxlCg==',
        clusterDNS: 'fd00::a',
        amiId: 'ami-0123456789abcdef0',
      },
      [],
    ],
    ['an 8-digit AMI id', { amiId: 'ami-12345678' }, []],
    [
      'a cluster name that ends the shell argument',
      { clusterName: "x'; touch pwned; echo '" },
      [
        `--cluster-name: "x'; touch pwned; echo '" is not an EKS cluster name (1-100 letters, digits, '-' or '_', starting with a letter or digit)`,
      ],
    ],
    [
      'a cluster name of 101 characters',
      { clusterName: 'a'.repeat(101) },
      [expect.stringContaining('is not an EKS cluster name')] as never,
    ],
    ['an http endpoint', { clusterEndpoint: 'http://x' }, ['--cluster-endpoint: "http://x" must be an https:// URL']],
    [
      'an endpoint that is no URL',
      { clusterEndpoint: 'x y' },
      ['--cluster-endpoint: "x y" is not a URL (expected https://HOST, as DescribeCluster returns it)'],
    ],
    [
      'an endpoint with a quote',
      { clusterEndpoint: "https://x/'y" },
      [`--cluster-endpoint: "https://x/'y" must be a plain https://HOST[:PORT][/PATH] URL`],
    ],
    [
      'an endpoint with credentials',
      { clusterEndpoint: 'https://u:p@x' },
      ['--cluster-endpoint: "https://u:p@x" must not hold credentials'],
    ],
    [
      'a CA that is not base64',
      { caBundle: "abc'; x" },
      ["--cluster-ca: must be the cluster CA bundle in base64 (A-Z, a-z, 0-9, '+', '/', '=' padding)"],
    ],
    [
      'an empty CA',
      { caBundle: '' },
      ["--cluster-ca: must be the cluster CA bundle in base64 (A-Z, a-z, 0-9, '+', '/', '=' padding)"],
    ],
    [
      'a DNS IP that is a name',
      { clusterDNS: 'kube-dns' },
      ['--cluster-dns: "kube-dns" is not an IPv4 or IPv6 address'],
    ],
    [
      'a DNS IP out of range',
      { clusterDNS: '10.0.0.300' },
      ['--cluster-dns: "10.0.0.300" is not an IPv4 or IPv6 address'],
    ],
    [
      'an AMI id in capitals',
      { amiId: 'ami-0ABC1234' },
      ['--ami-id: "ami-0ABC1234" is not an AMI id (ami- and 8 or 17 lowercase hex digits)'],
    ],
    [
      'an AMI id of 4 digits',
      { amiId: 'ami-0abc' },
      ['--ami-id: "ami-0abc" is not an AMI id (ami- and 8 or 17 lowercase hex digits)'],
    ],
  ])('%s', (_, values, expected) => {
    expect(launchValueProblems(values, names)).toEqual(expected);
  });

  it.each([
    ['exactly 16 KB', MAX_USER_DATA_BYTES, undefined],
    [
      'one byte more',
      MAX_USER_DATA_BYTES + 1,
      `userData is ${MAX_USER_DATA_BYTES + 1} bytes; EC2 accepts at most 16384 bytes (16 KB) before base64: shorten spec.userData`,
    ],
  ])('userData of %s', (_, size, expected) => {
    expect(userDataSizeProblem('x'.repeat(size))).toBe(expected);
  });

  it('counts userData in bytes, not characters', () => {
    expect(userDataSizeProblem('é'.repeat(MAX_USER_DATA_BYTES / 2 + 1))).toMatch(/^userData is 16386 bytes/);
  });
});

describe('instance types the NodePool cannot launch', () => {
  const pool = (requirements: NodePool['spec']['template']['spec']['requirements']) =>
    ({ metadata: { name: 'general' }, spec: { template: { spec: { requirements } } } }) as unknown as NodePool;
  const m5 = {
    name: 'm5.large',
    labels: {
      'node.kubernetes.io/instance-type': 'm5.large',
      'karpenter.k8s.aws/instance-category': 'm',
      'karpenter.k8s.aws/instance-generation': '5',
      'kubernetes.io/arch': 'amd64',
    },
  } as unknown as InstanceType;

  it.each<[string, NodePool['spec']['template']['spec']['requirements'], string | undefined, string | undefined]>([
    ['no requirements', [], undefined, undefined],
    [
      'a matching category',
      [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] }],
      undefined,
      undefined,
    ],
    [
      'a zone requirement (not about the type)',
      [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['x'] }],
      undefined,
      undefined,
    ],
    [
      'another category',
      [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'r'] }],
      undefined,
      'NodePool/general cannot launch m5.large: spec.template.spec.requirements[0] karpenter.k8s.aws/instance-category In [c, r] does not allow karpenter.k8s.aws/instance-category=m',
    ],
    [
      'an older generation',
      [{ key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] }],
      undefined,
      'NodePool/general cannot launch m5.large: spec.template.spec.requirements[0] karpenter.k8s.aws/instance-generation Gt [5] does not allow karpenter.k8s.aws/instance-generation=5',
    ],
    [
      'an excluded type',
      [{ key: 'node.kubernetes.io/instance-type', operator: 'NotIn', values: ['m5.large'] }],
      undefined,
      'NodePool/general cannot launch m5.large: spec.template.spec.requirements[0] node.kubernetes.io/instance-type NotIn [m5.large] does not allow node.kubernetes.io/instance-type=m5.large',
    ],
    [
      'a spot-only pool asked for on-demand',
      [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
      'on-demand',
      'NodePool/general cannot launch on-demand m5.large: spec.template.spec.requirements[0] karpenter.sh/capacity-type In [spot] does not allow karpenter.sh/capacity-type=on-demand',
    ],
  ])('%s', (_, requirements, capacityType, expected) => {
    expect(instanceTypeRequirementProblem(pool(requirements), m5, capacityType)).toBe(expected);
  });
});

describe('quoting: no value ends its argument', () => {
  it.each([
    ['plain', "'plain'", "'plain'"],
    ["x'; touch pwned; echo '", `'x'\\''; touch pwned; echo '\\'''`, "'x''; touch pwned; echo '''"],
    ['$(id) `id` $HOME', "'$(id) `id` $HOME'", "'$(id) `id` $HOME'"],
    ['smart ’quote', "'smart ’quote'", "'smart ’’quote'"],
  ])('%j', (value, shell, powerShell) => {
    expect(shellQuote(value)).toBe(shell);
    expect(powerShellQuote(value)).toBe(powerShell);
  });

  it('bash reads every quoted value back as one unchanged argument', () => {
    const values = fc.sample(
      fc.string({ unit: 'binary', maxLength: 20 }).map((s) => s.replaceAll('\u0000', '')),
      100,
    );
    values.push("x'; touch pwned; echo '", "'", "''", '\\', '$(touch pwned)', '\n; id');
    const script = values.map((v) => `printf '%s\\0' ${shellQuote(v)}`).join('\n');
    const out = execFileSync('bash', ['-c', script], { encoding: 'utf8' });
    expect(out.split('\u0000').slice(0, -1)).toEqual(values);
  }, 30_000);
});
