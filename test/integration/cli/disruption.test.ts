// `karpless disruption` as a user runs it: a child process against moto (its default account, with
// names of this file's own) and the fake API server. A node launched with one EC2NodeClass spec is
// drifted (NodeClassDrift) once the manifests change it; the dry run says so and changes nothing.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DisruptionJSON } from '../../../cli/commands/disruption';
import type { Node } from '../../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { KUBE, TAG } from '../../../shared/contracts';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { driftDeps } from '../../../shared/runtime/deps/drift';
import { instanceTypeSource } from '../../../shared/runtime/environment';
import { noMetrics, silentLog } from '../../../shared/runtime/telemetry';
import { solve } from '../../../shared/scheduling';
import { pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { createCluster, createNetwork, DEFAULT_ACCOUNT_ID, motoAccount } from '../helpers';
import { functionRuntimes } from '../iam';

const run = promisify(execFile);
const suffix = randomUUID().slice(0, 8);
const CLUSTER = `disruption-${suffix}`;
const ROLE = `KarpenterNodeRole-${suffix}`;
const DISCOVERY = { 'karpenter.sh/discovery': CLUSTER };
const telemetry = { log: silentLog, metrics: noMetrics };

function nodeClass(version: string): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      subnetSelectorTerms: [{ tags: DISCOVERY }],
      securityGroupSelectorTerms: [{ tags: DISCOVERY }],
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: ROLE,
      tags: { 'app-version': version },
    },
  };
}

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      spec: {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
        ],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      },
    },
    disruption: { consolidateAfter: '0s', budgets: [{ nodes: '1' }] },
  },
};

const account = motoAccount({ accountId: DEFAULT_ACCOUNT_ID });
let api: FakeApiServer;
let dir: string;
const nodeNames: string[] = [];

async function disruption(...flags: string[]) {
  return disruptionWith(['--kube-endpoint', api.url, ...flags]);
}

async function disruptionWith(flags: string[]) {
  const args = ['cli/karpless.mjs', 'disruption', '--manifests', dir, '--cluster-name', CLUSTER];
  const all = [...args, '--endpoint-url', account.endpoint, '--region', account.region, ...flags];
  try {
    const { stdout, stderr } = await run(process.execPath, all, { env: { ...process.env, ...account.env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  await createNetwork(account, {
    subnets: [{ zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: DISCOVERY }],
    securityGroups: [{ name: `nodes-${suffix}`, tags: DISCOVERY }],
  });
  await createCluster(account, CLUSTER);
  await account.iam.send(
    new CreateRoleCommand({
      RoleName: ROLE,
      AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
    }),
  );
  await createStateTable(dynamoApi(account.dynamodb), `state-${suffix}`);
  api = await FakeApiServer.start();
  // Two nodes launched through the real launch path with app-version 1.
  const configDir = mkdtempSync(join(tmpdir(), 'karpless-disruption-config-'));
  const configFile = join(configDir, 'karpless-config.json');
  writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [nodeClass('1')] }));
  // The nodes are launched as the drift function launches replacements, under its own synthesized role.
  const { drift: runtime } = await functionRuntimes(account, {
    env: {
      KARPLESS_CLUSTER_NAME: CLUSTER,
      KARPLESS_STATE_TABLE: `state-${suffix}`,
      KARPLESS_NOTICE_BUS: 'unused',
      KARPLESS_CONFIG_FILE: configFile,
      KARPLESS_KUBE_ENDPOINT: api.url,
      AWS_REGION: account.region,
    },
  });
  const types = await instanceTypeSource(runtime, telemetry)();
  const session = await (await driftDeps(runtime, telemetry)).session();
  for (const index of [0, 1]) {
    const web = pod(`web-${index}`, { cpu: '1500m', owner: { kind: 'ReplicaSet', name: 'web' } });
    const claim = solve({ pods: [web], nodePools: [nodePool], instanceTypes: types.byNodePool }).nodeClaims[0];
    if (!claim) throw new Error('nothing planned');
    const launched = await session.launcher.launch({ nodeClaimName: `general-${suffix}-${index}`, nodePool, claim });
    const name = `ip-${launched.instanceId}.internal`;
    nodeNames.push(name);
    api.addNode({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true', [TAG.nodePool]: 'general' },
        finalizers: [KUBE.terminationFinalizer],
      } as Node['metadata'],
      spec: { providerID: `aws:///${launched.zone}/${launched.instanceId}` },
      status: { allocatable: { cpu: '2', memory: '8Gi', pods: '29' } },
    });
    api.addPod({
      ...pod(`web-${index}`, { cpu: '1500m', nodeName: name, owner: { kind: 'ReplicaSet', name: 'web' } }),
      status: { phase: 'Running' },
    });
  }
  dir = mkdtempSync(join(tmpdir(), 'karpless-disruption-'));
  writeFileSync(join(dir, 'manifests.yaml'), [nodePool, nodeClass('1')].map((o) => JSON.stringify(o)).join('\n---\n'));
});

afterAll(async () => {
  await api?.stop();
});

async function instanceCount(): Promise<number> {
  const out = await account.ec2.send(
    new DescribeInstancesCommand({ Filters: [{ Name: `tag:${TAG.clusterName}`, Values: [CLUSTER] }] }),
  );
  return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).length;
}

describe('karpless disruption against moto and the fake API server', () => {
  it('says nothing would be disrupted while the manifests are what the nodes were launched with', async () => {
    writeFileSync(
      join(dir, 'manifests.yaml'),
      [nodePool, nodeClass('1')].map((o) => JSON.stringify(o)).join('\n---\n'),
    );
    const result = await disruption();
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual([
      'No node would be disrupted now.',
      'CONSOLIDATION  no node would be consolidated now.',
    ]);
    // Each node was looked at for consolidation, and why it stays is said.
    const stays = lines.filter((l) => /^ {4}ip-[^:]+: \S/.test(l));
    expect(stays).toHaveLength(2);
    expect(stays.some((l) => l.endsWith(": Can't replace with a cheaper node"))).toBe(true);
  });

  it('lists the drifted nodes once the node class changed, one allowed by the budget, priced, and changes nothing', async () => {
    writeFileSync(
      join(dir, 'manifests.yaml'),
      [nodePool, nodeClass('2')].map((o) => JSON.stringify(o)).join('\n---\n'),
    );
    const result = await disruption();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^WOULD DISRUPT {2}ip-i-\S+ {2}\(NodePool general, m5\.large\)$/m);
    expect(result.stdout).toMatch(/^BLOCKED {2}ip-i-\S+/m);
    expect(result.stdout).toContain(
      '    Drifted: NodeClassDrift: EC2NodeClass/default spec changed since the node was launched',
    );
    expect(result.stdout).toContain('budget: NodePool/general budgets[0] (nodes: 1) allows: 1 of 2 node(s) at once');
    expect(result.stdout).toMatch(/replace with m5\.large on-demand in us-west-2a at \$0\.\d{4}\/h/);

    const json = JSON.parse((await disruption('--json')).stdout) as DisruptionJSON;
    expect(json.decisions.map((d) => [d.reason, d.allowed])).toEqual([
      ['Drifted', true],
      ['Drifted', false],
    ]);
    expect(json.decisions[0]?.replacement.nodeClaims[0]?.price).toBeGreaterThan(0);
    // The budget answer per pool and reason, as the drift function puts it on the dashboard.
    expect(json.budgets.find((b) => b.reason === 'Drifted')).toEqual({
      nodePool: 'general',
      reason: 'Drifted',
      eligible: 2,
      allowed: 1,
    });
    expect(result.stdout).toMatch(/^BUDGETS {2}NodePool general: Drifted 1 allowed \(2 eligible\), /m);
    expect(await instanceCount()).toBe(2);
    for (const name of nodeNames) expect(api.getNode(name)?.spec?.taints ?? []).toEqual([]);
  });

  it('pkg/controllers/node/health/suite_test.go: should delete nodes that are unhealthy by the cloud provider (the dry run shows it, NotReady past 30 minutes, and changes nothing)', async () => {
    const sick = nodeNames[0] ?? '';
    const since = new Date(Date.now() - 40 * 60_000).toISOString();
    api.updateNode(sick, (node) => {
      node.status = {
        ...node.status,
        conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: since }],
      };
    });
    try {
      const result = await disruption();
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        `REPAIR  ${sick} (NodePool general): Ready=Unknown since ${since}: terminated forcefully, with nodeRepair`,
      );
      const json = JSON.parse((await disruption('--json')).stdout) as DisruptionJSON;
      expect(json.repair).toEqual({
        repair: [{ node: sick, nodePool: 'general', condition: 'Ready=Unknown', since }],
        blocked: [],
        waiting: [],
      });
      expect(api.getNode(sick)?.metadata.deletionTimestamp).toBeUndefined();
    } finally {
      api.markNodeReady(sick, true);
    }
  });

  it("names its own --kube-endpoint flag when the cluster's API server cannot be used as described", async () => {
    // moto's cluster has no PEM certificate: the API server it describes cannot be trusted.
    const result = await disruptionWith([]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^karpless disruption: EKS cluster ${CLUSTER}: certificateAuthority.data is not a base64 PEM certificate; pass --kube-endpoint URL`,
      ),
    );
    expect(result.stderr).not.toContain('KARPLESS_KUBE_ENDPOINT');
  });
});
