// `karpless status` as a user runs it: a child process against moto. A child cannot carry the
// per-test account header, so this file works in moto's default account with names of its own.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EC2NodeClass } from '../../../shared/apis/v1/types';
import { InstanceProfileProvider } from '../../../shared/providers/instanceprofile';
import { iamApi } from '../../../shared/providers/ports';
import { createCluster, createNetwork, DEFAULT_ACCOUNT_ID, type MotoAccount, motoAccount } from '../helpers';

const run = promisify(execFile);
const suffix = randomUUID().slice(0, 8);
const CLUSTER = `status-${suffix}`;
const ROLE = `KarpenterNodeRole-${suffix}`;

function manifest(name: string, discovery: string, extra: Record<string, unknown> = {}): string {
  return [
    'apiVersion: karpenter.k8s.aws/v1',
    'kind: EC2NodeClass',
    'metadata:',
    `  name: ${name}`,
    ...Object.entries(extra).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`),
    'spec:',
    `  role: ${ROLE}`,
    '  amiSelectorTerms:',
    '    - alias: al2023@latest',
    '  subnetSelectorTerms:',
    `    - tags: { karpenter.sh/discovery: ${discovery} }`,
    '  securityGroupSelectorTerms:',
    `    - tags: { karpenter.sh/discovery: ${discovery} }`,
    '',
  ].join('\n');
}

async function status(account: MotoAccount, dir: string, ...flags: string[]) {
  const args = [
    'cli/karpless.mjs',
    'status',
    '--manifests',
    dir,
    '--endpoint-url',
    account.endpoint,
    '--region',
    account.region,
    '--cluster-name',
    CLUSTER,
    ...flags,
  ];
  try {
    const { stdout, stderr } = await run(process.execPath, args, { env: { ...process.env, ...account.env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('karpless status against moto', () => {
  const account = motoAccount({ accountId: DEFAULT_ACCOUNT_ID });
  const dir = mkdtempSync(join(tmpdir(), 'karpless-status-'));
  // 3 days and 30 minutes ago: AGE reads "3d" for the next half hour, however slow the run.
  const created = new Date(Date.now() - (3 * 24 * 60 + 30) * 60 * 1000).toISOString();

  beforeAll(async () => {
    await createNetwork(account, {
      subnets: [{ zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } }],
      securityGroups: [{ name: `nodes-${suffix}`, tags: { 'karpenter.sh/discovery': CLUSTER } }],
    });
    await createCluster(account, CLUSTER);
    await account.iam.send(
      new CreateRoleCommand({
        RoleName: ROLE,
        AssumeRolePolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
        }),
      }),
    );
    writeFileSync(join(dir, 'ready.yaml'), manifest('ready', CLUSTER, { creationTimestamp: created }));
    writeFileSync(join(dir, 'broken.yaml'), manifest('broken', `nothing-${suffix}`));
    // The first launch creates the managed profile; status itself only looks.
    const ready = {
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'ready' },
      spec: { role: ROLE, amiSelectorTerms: [], subnetSelectorTerms: [], securityGroupSelectorTerms: [] },
    } satisfies EC2NodeClass;
    await new InstanceProfileProvider(iamApi(account.iam), { clusterName: CLUSTER, region: account.region }).ensure(
      ready,
    );
  });

  it('prints NAME READY AGE ROLE and exits 1 while a node class is not ready', async () => {
    const result = await status(account, dir);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]?.split(/\s+/)).toEqual(['NAME', 'READY', 'AGE', 'ROLE']);
    expect(lines.slice(1).map((l) => l.split(/\s+/))).toEqual([
      ['broken', 'False', '<unknown>', ROLE],
      ['ready', 'True', '3d', ROLE],
    ]);
  });

  it('adds each condition and its message with -o wide', async () => {
    const result = await status(account, dir, '-o', 'wide');
    expect(result.stdout).toMatch(/broken\s+False\s+<unknown>\s+\S+\s+True\s+False\s+False\s+Unknown/);
    expect(result.stdout).toMatch(
      / {2}SubnetsReady\s+False\s+SubnetsNotFound: SubnetSelector did not match any Subnets/,
    );
    expect(result.stdout).toMatch(
      / {2}SecurityGroupsReady\s+False\s+SecurityGroupsNotFound: SecurityGroupSelector did not match any SecurityGroups/,
    );
    expect(result.stdout).toMatch(
      / {2}InstanceProfileReady\s+Unknown\s+InstanceProfileNotCreated: instance profile "status-/,
    );
    expect(result.stdout).toMatch(
      / {2}Ready\s+False\s+UnhealthyDependents: SubnetsReady=False, SecurityGroupsReady=False, InstanceProfileReady=Unknown/,
    );
  });

  it('prints the resolved status as JSON with -o json', async () => {
    const result = await status(account, dir, '-o', 'json');
    const classes = JSON.parse(result.stdout) as EC2NodeClass[];
    const ready = classes.find((c) => c.metadata.name === 'ready');
    expect(ready?.status?.subnets?.map((s) => s.zone)).toEqual(['us-west-2a']);
    expect(ready?.status?.securityGroups?.map((g) => g.name)).toEqual([`nodes-${suffix}`]);
    expect(ready?.status?.amis).toHaveLength(5);
    expect(ready?.status?.instanceProfile).toMatch(new RegExp(`^${CLUSTER}_\\d+$`));
  });
});
