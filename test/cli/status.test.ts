import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/command';
import { formatStatus, humanDuration, statusCommand } from '../../cli/commands/status';
import { main } from '../../cli/main';
import type { Condition, EC2NodeClass } from '../../shared/apis/v1/types';
import { inProcess } from './run';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('humanDuration (kubectl AGE)', () => {
  it.each([
    [-5 * S, '<invalid>'],
    [-500, '0s'],
    [0, '0s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [5 * M + 30 * S, '5m30s'],
    [10 * M + 30 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [7 * H + 59 * M, '7h59m'],
    [8 * H + 5 * M, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [3 * D + 4 * H, '3d4h'],
    [8 * D, '8d'],
    [729 * D, '729d'],
    [730 * D, '2y'],
    [800 * D, '2y70d'],
    [9 * 365 * D, '9y'],
  ])('%d ms → %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

const now = Date.parse('2026-03-01T12:00:00Z');

function nodeClass(
  name: string,
  ready: Condition['status'],
  extra: Partial<EC2NodeClass['metadata']> = {},
  role?: string,
): EC2NodeClass {
  const conditions: Condition[] = [
    { type: 'AMIsReady', status: 'True', reason: 'AMIsReady' },
    ready === 'True'
      ? { type: 'SubnetsReady', status: 'True', reason: 'SubnetsReady' }
      : {
          type: 'SubnetsReady',
          status: 'False',
          reason: 'SubnetsNotFound',
          message: 'SubnetSelector did not match any Subnets',
        },
    { type: 'SecurityGroupsReady', status: 'True', reason: 'SecurityGroupsReady' },
    { type: 'InstanceProfileReady', status: 'True', reason: 'InstanceProfileReady' },
    ready === 'True'
      ? { type: 'Ready', status: 'True', reason: 'Ready' }
      : { type: 'Ready', status: 'False', reason: 'UnhealthyDependents', message: 'SubnetsReady=False' },
  ];
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name, ...extra },
    spec: {
      subnetSelectorTerms: [],
      securityGroupSelectorTerms: [],
      amiSelectorTerms: [],
      ...(role ? { role } : { instanceProfile: 'given' }),
    },
    status: { conditions },
  };
}

describe('formatStatus', () => {
  const classes = [
    nodeClass('default', 'True', { creationTimestamp: '2026-02-27T12:00:00Z' }, 'KarpenterNodeRole-c1'),
    nodeClass('gpu-nodes', 'False'),
  ];

  it('prints NAME READY AGE ROLE like kubectl get ec2nodeclasses', () => {
    expect(formatStatus(classes, now, false)).toBe(
      [
        'NAME        READY   AGE         ROLE',
        'default     True    2d          KarpenterNodeRole-c1',
        'gpu-nodes   False   <unknown>',
        '',
      ].join('\n'),
    );
  });

  it('adds each condition with its reason and message in wide output', () => {
    const wide = formatStatus(classes, now, true);
    expect(wide.split('\n')[0]).toBe(
      'NAME        READY   AGE         ROLE                   AMISREADY   SUBNETSREADY   SECURITYGROUPSREADY   INSTANCEPROFILEREADY',
    );
    expect(wide).toContain('gpu-nodes:\n');
    expect(wide).toContain(
      '  SubnetsReady           False   SubnetsNotFound: SubnetSelector did not match any Subnets\n',
    );
    expect(wide).toContain('  Ready                  False   UnhealthyDependents: SubnetsReady=False\n');
  });
});

describe('karpless status flags', () => {
  const io = () => {
    let out = '';
    let err = '';
    return {
      io: { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) } },
      out: () => out,
      err: () => err,
    };
  };

  it.each([
    [[], /missing required flag --manifests/],
    [['--manifests', 'x', '-o', 'yaml'], /-o must be wide or json, not "yaml"/],
    [['--manifests', 'x', 'extra'], /unexpected argument extra/],
  ])('refuses %j', async (args, message) => {
    await expect(statusCommand.run(args, io().io)).rejects.toThrow(UsageError);
    await expect(statusCommand.run(args, io().io)).rejects.toThrow(message);
  });

  it('exits 2 with the usage on a bad flag', async () => {
    const streams = io();
    expect(await main(['status', '--bogus'], streams.io)).toBe(2);
    expect(streams.err()).toContain('unknown flag --bogus');
    expect(streams.err()).toContain('Usage: karpless status --manifests');
  });
});

describe('karpless status without AWS credentials', () => {
  // Nothing the SDK could sign with: no keys, no profile files, no instance metadata to ask.
  const cleared = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE'];
  const saved = { ...process.env };
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'karpless-nocreds-'));
    for (const key of cleared) delete process.env[key];
    Object.assign(process.env, {
      HOME: home,
      AWS_CONFIG_FILE: join(home, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
    });
  });
  afterEach(() => {
    process.env = { ...saved };
    rmSync(home, { recursive: true, force: true });
  });

  it('says so plainly and exits 1, instead of a table of Unknown', async () => {
    const args = ['status', '--manifests', 'examples/manifests', '--region', 'us-east-1'];
    const result = await inProcess([...args, '--endpoint-url', 'http://127.0.0.1:9']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^karpless status: no AWS credentials found \(.*\): set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run 'aws sso login', then try again\n$/,
    );
  });
});

describe('karpless status --help', () => {
  it('lists -o with both its values', async () => {
    let out = '';
    expect(
      await main(['status', '--help'], { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => 0 } }),
    ).toBe(0);
    expect(out).toMatch(/^ {2}-o wide\|json {5}wide: every condition/m);
  });
});
