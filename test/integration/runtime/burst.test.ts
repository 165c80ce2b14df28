// A burst through the real provision handler on moto, under the function's own role: identical
// NodeClaims launch as one CreateFleet with their combined target capacity, each claim gets its own
// instance and its karpenter.sh/nodeclaim tag after the launch, a redelivered batch launches
// nothing, and a decision cut short by the invocation's end is finished by the next invocation
// from the records it wrote first (its pods not planned again), with no instance launched twice.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeFleetsCommand, DescribeInstancesCommand, type Instance } from '@aws-sdk/client-ec2';
import { CreateEventBusCommand } from '@aws-sdk/client-eventbridge';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler as provisionHandler } from '../../../lambdas/provision/handler';
import type { Pod } from '../../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { TAG } from '../../../shared/contracts';
import { noticePodFromPod } from '../../../shared/notice';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { provisionDeps } from '../../../shared/runtime/deps/provision';
import { LAUNCH_BATCH_ANNOTATION } from '../../../shared/runtime/launch-batches';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import { RecordingRetryQueue } from '../../runtime/fakes';
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

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      spec: {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge'] },
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

/** A context whose remaining time is read from `remaining` at each call. */
function context(remaining: () => number): Context {
  return { getRemainingTimeInMillis: remaining, awsRequestId: 'req', functionName: 'fn' } as unknown as Context;
}

function pendingPod(name: string, cpu: string): Pod {
  const p = pod(name, { cpu, owner: { kind: 'ReplicaSet', name: `rs-${cpu}` } });
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  return p;
}

/** One PodsUnschedulable notice for these pods, as the watcher puts it and the queue delivers it. */
function notice(pods: readonly Pod[], observedAt: string): SQSEvent {
  const detail = { cluster: CLUSTER, observedAt, pods: pods.map(noticePodFromPod), daemonSets: [] };
  const body = JSON.stringify({ source: 'karpless', 'detail-type': 'PodsUnschedulable', detail });
  return { Records: [{ messageId: 'm0', body }] } as unknown as SQSEvent;
}

async function ourInstances(): Promise<Instance[]> {
  const out = await account.ec2.send(
    new DescribeInstancesCommand({ Filters: [{ Name: `tag:${TAG.clusterName}`, Values: [CLUSTER] }] }),
  );
  return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
}

async function fleets(): Promise<number[]> {
  const out = await account.ec2.send(new DescribeFleetsCommand({}));
  return (out.Fleets ?? []).map((f) => f.TargetCapacitySpecification?.TotalTargetCapacity ?? 0);
}

const tag = (instance: Instance, key: string) => instance.Tags?.find((t) => t.Key === key)?.Value;

const provisionFn = () =>
  provisionHandler(
    once(async () => provisionDeps(runtimes.provision, tools.telemetry)),
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
  const dir = mkdtempSync(join(tmpdir(), 'karpless-burst-'));
  const configFile = join(dir, 'karpless-config.json');
  writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [nodeClass] }));
  runtimes = await functionRuntimes(account, {
    env: {
      KARPLESS_CLUSTER_NAME: CLUSTER,
      KARPLESS_STATE_TABLE: 'karpless-state',
      KARPLESS_NOTICE_BUS: 'karpless',
      KARPLESS_CONFIG_FILE: configFile,
      KARPLESS_KUBE_ENDPOINT: api.url,
      // One batch at a time, so a simulated timeout falls between two batches.
      KARPLESS_LAUNCH_CONCURRENCY: '1',
      AWS_REGION: account.region,
    },
  });
});

afterAll(async () => {
  await api?.stop();
});

describe('burst launches on moto', () => {
  it('launches identical claims as one CreateFleet, one instance and one name tag per claim; a redelivered batch launches nothing', async () => {
    // 1.5 vCPU each: one pod per m5.large, so six identical claims.
    const pods = Array.from({ length: 6 }, (_, i) => pendingPod(`same-${i}`, '1500m'));
    for (const p of pods) api.addPod(p);
    const event = notice(pods, '2026-12-03T10:00:00.000Z');
    const provision = provisionFn();
    const forever = context(() => 600_000);
    // The tests share the account: count what this one adds.
    const fleetsBefore = (await fleets()).length;
    const before = (await ourInstances()).length;

    expect((await provision(event, forever)).batchItemFailures).toEqual([]);
    // The packer puts two pods on an m5.xlarge where that is cheaper: however many claims, one fleet.
    const launched = (await fleets()).slice(fleetsBefore);
    expect(launched).toHaveLength(1);
    const claims = launched[0] ?? 0;
    expect(claims).toBeGreaterThan(1);
    const instances = (await ourInstances()).filter((i) => tag(i, TAG.nodeClaim) !== undefined);
    expect(instances).toHaveLength(before + claims);
    const names = instances.map((i) => tag(i, TAG.nodeClaim));
    expect(new Set(names).size).toBe(before + claims);
    for (const instance of instances) {
      expect(tag(instance, 'Name')).toBe(tag(instance, TAG.nodeClaim));
      const record = await runtimes.provision.state.getNodeClaim(tag(instance, TAG.nodeClaim) ?? '');
      expect(record?.status.providerID).toBe(`aws:///us-west-2a/${instance.InstanceId}`);
      expect(record?.metadata.annotations[LAUNCH_BATCH_ANNOTATION]).toMatch(/^b-[0-9a-f]{20}$/);
    }

    expect((await provision(event, forever)).batchItemFailures).toEqual([]);
    expect((await fleets()).slice(fleetsBefore)).toEqual(launched);
    expect(await ourInstances()).toHaveLength(before + claims);
  }, 180_000);

  it('finishes a decision cut short by the invocation’s end in the next invocation, launching nothing twice', async () => {
    const before = (await ourInstances()).length;
    const fleetsBefore = (await fleets()).length;
    // Two shapes, two batches: three claims of m5.large (or larger) and three of m5.xlarge only.
    const small = Array.from({ length: 3 }, (_, i) => pendingPod(`small-${i}`, '1500m'));
    const large = Array.from({ length: 3 }, (_, i) => pendingPod(`large-${i}`, '3500m'));
    for (const p of [...small, ...large]) api.addPod(p);
    const event = notice([...small, ...large], '2026-12-03T11:00:00.000Z');
    const provision = provisionFn();

    // The first batch starts with a minute left; by the second, 5 s are left: it waits.
    let calls = 0;
    const first = await provision(
      event,
      context(() => (calls++ === 0 ? 60_000 : 5_000)),
    );
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
    const records = await runtimes.provision.state.nodeClaims();
    const waiting = records.filter((r) => r.status.providerID === undefined);
    const ofThisDecision = records.length - before;
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting.length).toBeLessThan(ofThisDecision);
    expect((await ourInstances()).length - before).toBe(ofThisDecision - waiting.length);
    expect((await fleets()).length - fleetsBefore).toBe(1);

    // The next invocation gets the same pods under a new observation (the watcher's next notice):
    // planning them again would name new claims; the records are the to-do list instead.
    const second = await provision(
      notice([...small, ...large], '2026-12-03T11:00:30.000Z'),
      context(() => 600_000),
    );
    expect(second.batchItemFailures).toEqual([]);
    expect((await runtimes.provision.state.nodeClaims()).map((r) => r.metadata.name).sort()).toEqual(
      records.map((r) => r.metadata.name).sort(),
    );
    const after = await ourInstances();
    expect(after.length - before).toBe(ofThisDecision);
    expect((await fleets()).length - fleetsBefore).toBe(2);
    expect(new Set(after.map((i) => tag(i, TAG.nodeClaim))).size).toBe(after.length);
    for (const record of waiting) {
      const done = await runtimes.provision.state.getNodeClaim(record.metadata.name);
      expect(done?.status.providerID).toMatch(/^aws:\/\/\/us-west-2a\/i-/);
    }

    // The first notice delivered again: nothing left to launch, nothing planned.
    expect(
      (
        await provision(
          event,
          context(() => 600_000),
        )
      ).batchItemFailures,
    ).toEqual([]);
    expect(await ourInstances()).toHaveLength(after.length);
    expect((await fleets()).length - fleetsBefore).toBe(2);
  }, 180_000);
});
