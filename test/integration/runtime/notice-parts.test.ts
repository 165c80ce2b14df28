// Parts of a split notice through the real provision handler on moto, under the function's own role
// and on a fake clock: the parts that arrive first are kept in the state table and their messages
// acknowledged, and the invocation that brings the rest plans the whole observation in one decision
// (one CreateFleet for its identical claims, every pod nominated). A part that never arrives holds
// the others back for NOTICE_PART_WAIT_MS only: after that the next invocation plans what arrived
// and names the missing parts in a warning.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeFleetsCommand } from '@aws-sdk/client-ec2';
import { CreateEventBusCommand } from '@aws-sdk/client-eventbridge';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import type { Context, SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler as provisionHandler } from '../../../lambdas/provision/handler';
import type { Pod } from '../../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { noticePodFromPod, splitNotice } from '../../../shared/notice';
import type { PodsUnschedulableDetail } from '../../../shared/notice/types';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { provisionDeps } from '../../../shared/runtime/deps/provision';
import { NOTICE_PART_WAIT_MS } from '../../../shared/runtime/notice-parts';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import { fakeClock } from '../../providers/fakes';
import { RecordingLog, RecordingMetrics, RecordingRetryQueue } from '../../runtime/fakes';
import { pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { createCluster, createNetwork, type MotoAccount, motoAccount } from '../helpers';
import { type FunctionRuntimes, functionRuntimes } from '../iam';

const CLUSTER = 'c1';

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'KarpenterNodeRole-c1',
  },
};

// One instance type: every claim is the same request, so one decision is one CreateFleet.
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
  },
};

let account: MotoAccount;
let api: FakeApiServer;
let runtimes: FunctionRuntimes;
let tools: Powertools;
const clock = fakeClock(Date.parse('2026-12-04T09:00:00.000Z'));
const log = new RecordingLog();

const forever = { getRemainingTimeInMillis: () => 600_000, awsRequestId: 'req', functionName: 'fn' } as Context;

function pendingPod(name: string): Pod {
  // 1.5 vCPU: one pod per m5.large.
  const p = pod(name, { cpu: '1500m', owner: { kind: 'ReplicaSet', name: 'rs-parts' } });
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  return p;
}

/** One observation of these pods, split as the watcher splits a notice too large for one entry. */
function splitObservation(pods: readonly Pod[], observedAt: string): PodsUnschedulableDetail[] {
  const detail = { cluster: CLUSTER, observedAt, pods: pods.map(noticePodFromPod), daemonSets: [] };
  const parts = splitNotice(detail, 500);
  expect(parts.length).toBeGreaterThanOrEqual(3);
  return parts;
}

/** The queue's delivery of these notices (one message each). */
function delivery(details: readonly PodsUnschedulableDetail[], id: string): SQSEvent {
  return {
    Records: details.map((detail, i) => ({
      messageId: `${id}-${i}`,
      body: JSON.stringify({ source: 'karpless', 'detail-type': 'PodsUnschedulable', detail }),
    })),
  } as unknown as SQSEvent;
}

async function fleetCount(): Promise<number> {
  return ((await account.ec2.send(new DescribeFleetsCommand({}))).Fleets ?? []).length;
}

/** The parts of this observation kept in the state table (the tests share it, in any order). */
async function keptOf(parts: readonly PodsUnschedulableDetail[]) {
  const batchId = parts[0]?.part?.batchId;
  return (await runtimes.provision.state.noticeParts()).filter((k) => k.batchId === batchId);
}

/** The warnings that this observation was planned without some of its parts. */
function warningsFor(parts: readonly PodsUnschedulableDetail[]) {
  return log.lines.filter(
    (l) =>
      l.message === 'notice parts never arrived: planning the observation with the parts that did' &&
      l.fields?.batchId === parts[0]?.part?.batchId,
  );
}

async function nominatedUids(): Promise<Set<string>> {
  return new Set((await runtimes.provision.state.nominations()).flatMap((n) => n.podUids));
}

const provisionFn = () =>
  provisionHandler(
    once(async () => provisionDeps(runtimes.provision, { log, metrics: new RecordingMetrics() })),
    tools,
    () => new RecordingRetryQueue(),
  );

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('itest', CLUSTER);
  account = motoAccount();
  await createNetwork(account, {
    subnets: [{ zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroups: [{ name: 'nodes', tags: { 'karpenter.sh/discovery': CLUSTER } }],
  });
  await createCluster(account, CLUSTER, { serviceCIDR: '172.20.0.0/16' });
  await account.iam.send(
    new CreateRoleCommand({
      RoleName: 'KarpenterNodeRole-c1',
      AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
    }),
  );
  await createStateTable(dynamoApi(account.dynamodb), 'karpless-state');
  await account.eventbridge.send(new CreateEventBusCommand({ Name: 'karpless' }));
  api = await FakeApiServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'karpless-parts-'));
  const configFile = join(dir, 'karpless-config.json');
  writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [nodeClass] }));
  runtimes = await functionRuntimes(account, {
    env: {
      KARPLESS_CLUSTER_NAME: CLUSTER,
      KARPLESS_STATE_TABLE: 'karpless-state',
      KARPLESS_NOTICE_BUS: 'karpless',
      KARPLESS_CONFIG_FILE: configFile,
      KARPLESS_KUBE_ENDPOINT: api.url,
      AWS_REGION: account.region,
    },
    clock,
  });
  return async () => {
    await api?.stop();
  };
});

describe('split notices on moto', () => {
  it('keeps the first parts, acknowledged, and plans the whole observation in one decision when the rest arrive', async () => {
    // As stored: the API server gives each pod its uid, which the notice carries.
    const pods = Array.from({ length: 6 }, (_, i) => api.addPod(pendingPod(`together-${i}`)));
    const parts = splitObservation(pods, new Date(clock()).toISOString());
    const provision = provisionFn();
    const fleetsBefore = await fleetCount();
    const recordsBefore = (await runtimes.provision.state.nodeClaims()).length;

    // The first invocation gets all but the last part: kept, acknowledged, nothing planned.
    expect((await provision(delivery(parts.slice(0, -1), 'first'), forever)).batchItemFailures).toEqual([]);
    expect((await keptOf(parts)).map((k) => k.index).sort()).toEqual(parts.slice(0, -1).map((p) => p.part?.index));
    expect(await fleetCount()).toBe(fleetsBefore);
    expect((await runtimes.provision.state.nodeClaims()).length).toBe(recordsBefore);

    // Seconds later the last part: one decision for all six pods, one CreateFleet, parts cleared.
    clock.advance(3_000);
    expect((await provision(delivery(parts.slice(-1), 'second'), forever)).batchItemFailures).toEqual([]);
    expect(await fleetCount()).toBe(fleetsBefore + 1);
    const nominated = await nominatedUids();
    for (const p of pods) expect(nominated.has(noticePodFromPod(p).uid)).toBe(true);
    const records = await runtimes.provision.state.nodeClaims();
    expect(records).toHaveLength(recordsBefore + pods.length);
    for (const record of records) expect(record.status.providerID).toMatch(/^aws:\/\/\/us-west-2a\/i-/);
    expect(await keptOf(parts)).toEqual([]);
    expect(warningsFor(parts)).toEqual([]);
  }, 180_000);

  it('plans an observation whose last part never arrives once the bound has passed, and says which part is missing', async () => {
    const pods = Array.from({ length: 6 }, (_, i) => api.addPod(pendingPod(`lost-${i}`)));
    const parts = splitObservation(pods, new Date(clock()).toISOString());
    const lost = parts.at(-1);
    const arrived = parts.slice(0, -1);
    const arrivedUids = arrived.flatMap((p) => p.pods.map((q) => q.uid));
    const lostUids = lost?.pods.map((q) => q.uid) ?? [];
    const provision = provisionFn();
    const fleetsBefore = await fleetCount();
    const recordsBefore = (await runtimes.provision.state.nodeClaims()).length;

    expect((await provision(delivery(arrived, 'early'), forever)).batchItemFailures).toEqual([]);
    expect(await fleetCount()).toBe(fleetsBefore);

    // Another notice just inside the bound (the watcher's next run): planned alone, the parts wait.
    const other = api.addPod(pendingPod('lost-other'));
    const otherNotice = {
      cluster: CLUSTER,
      observedAt: new Date(clock()).toISOString(),
      pods: [noticePodFromPod(other)],
      daemonSets: [],
    };
    clock.advance(NOTICE_PART_WAIT_MS - 1_000);
    expect((await provision(delivery([otherNotice], 'inside'), forever)).batchItemFailures).toEqual([]);
    expect(await fleetCount()).toBe(fleetsBefore + 1);
    let nominated = await nominatedUids();
    expect(nominated.has(noticePodFromPod(other).uid)).toBe(true);
    for (const uid of arrivedUids) expect(nominated.has(uid)).toBe(false);
    expect((await keptOf(parts)).length).toBe(arrived.length);

    // Past the bound the next notice brings the decision on with what arrived, and it says so.
    clock.advance(1_000);
    const later = { ...otherNotice, observedAt: new Date(clock()).toISOString() };
    expect((await provision(delivery([later], 'past'), forever)).batchItemFailures).toEqual([]);
    expect(await fleetCount()).toBe(fleetsBefore + 2);
    nominated = await nominatedUids();
    for (const uid of arrivedUids) expect(nominated.has(uid)).toBe(true);
    for (const uid of lostUids) expect(nominated.has(uid)).toBe(false);
    expect((await runtimes.provision.state.nodeClaims()).length - recordsBefore).toBe(1 + arrivedUids.length);
    expect(await keptOf(parts)).toEqual([]);
    const [warning, ...more] = warningsFor(parts);
    expect(more).toEqual([]);
    expect(warning?.level).toBe('warn');
    expect(warning?.fields).toMatchObject({
      batchId: lost?.part?.batchId,
      missing: [lost?.part?.index],
      waitedMs: NOTICE_PART_WAIT_MS,
    });
  }, 180_000);
});
