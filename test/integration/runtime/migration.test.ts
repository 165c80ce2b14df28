// The README's "Migrating from Karpenter" on moto and the fake API server, with a fake clock: nodes
// Karpenter launched (its tags on the instances, its labels and finalizer on the Nodes, its NodeClaim
// objects with its finalizer) on a cluster where Karpenter runs. karpless refuses to act while
// Karpenter's leader Lease is renewed; once Karpenter is stopped the watcher adopts the instances
// (records from their tags), drift replaces an adopted node onto a released AMI, `kubectl delete
// node` terminates another, and the NodeClaim objects Karpenter left are finished with their nodes.
// Adopted nodes also expire, counted from their Karpenter NodeClaim's creation as upstream's
// expiration controller counts (creationTimestamp + spec.expireAfter), and empty ones are
// consolidated within the NodePool's budget. Every function runs under its own synthesized role (the
// IAM harness); each test has its own account, cluster and clock.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeInstancesCommand, RegisterImageCommand, RunInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import type { Context } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHandler as driftHandler } from '../../../lambdas/drift/handler';
import { createHandler as gcHandler } from '../../../lambdas/gc/handler';
import { createHandler as watcherHandler } from '../../../lambdas/watcher/handler';
import type { Node } from '../../../shared/apis/core/v1';
import { karpenterCrds } from '../../../shared/apis/v1/crds';
import { KUBE } from '../../../shared/contracts';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { DynamoStateStore } from '../../../shared/providers/dynamostate';
import { KARPENTER_LEASE, KarpenterRunningError } from '../../../shared/runtime/coexistence';
import { runningKarpenterGuard } from '../../../shared/runtime/deps/coexistence';
import { driftDeps } from '../../../shared/runtime/deps/drift';
import { gcDeps } from '../../../shared/runtime/deps/gc';
import { watcherDeps } from '../../../shared/runtime/deps/watcher';
import type { DriftReport } from '../../../shared/runtime/drift';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import { fakeClock } from '../../providers/fakes';
import { pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { M5_LARGE_ON_DEMAND, testNodeClass, testNodePool } from '../../support/nodepools';
import { createCluster, createNetwork, injectFault, type MotoAccount, motoAccount, type Network } from '../helpers';
import { type FunctionRuntimes, formatDenial, functionRuntimes, takeDenials } from '../iam';
import { SEED_K8S_VERSION } from '../moto/seed';

const CLUSTER = 'migrate';
const DISCOVERY = { 'karpenter.sh/discovery': CLUSTER };
/** The node role a Karpenter install made; karpless is deployed on it (-c nodeRole=…). */
const ROLE = `KarpenterNodeRole-${CLUSTER}`;
const RECOMMENDED = `/aws/service/eks/optimized-ami/${SEED_K8S_VERSION}/amazon-linux-2023/x86_64/standard/recommended/image_id`;

const nodeClass = testNodeClass({ discovery: CLUSTER, role: ROLE });

const nodePool = testNodePool({
  template: { requirements: M5_LARGE_ON_DEMAND, expireAfter: '720h' },
  disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '1h', budgets: [{ nodes: '1' }] },
});

const context = {
  getRemainingTimeInMillis: () => 20_000,
  awsRequestId: 'req',
  functionName: 'fn',
} as unknown as Context;
const scheduled = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };

let account: MotoAccount;
let network: Network;
let api: FakeApiServer | undefined;
let runtimes: FunctionRuntimes;
let tools: Powertools;
let clock: ReturnType<typeof fakeClock>;

const HOUR = 3_600_000;

/**
 * One node as Karpenter v1 launched it: its instance tags, Node labels and finalizer, NodeClaim object
 * (created `ageMs` before the clock's now, with the NodePool's expireAfter as Karpenter copies it), and
 * a running pod unless `empty`.
 */
async function karpenterNode(
  claim: string,
  imageId: string,
  options: { ageMs?: number; empty?: boolean } = {},
): Promise<{ claim: string; name: string; instanceId: string }> {
  const api = server();
  const subnet = network.subnets[0];
  const launched = await account.ec2.send(
    new RunInstancesCommand({
      ImageId: imageId,
      InstanceType: 'm5.large',
      MinCount: 1,
      MaxCount: 1,
      SubnetId: subnet?.id,
      SecurityGroupIds: network.securityGroups.map((g) => g.id),
      TagSpecifications: [
        {
          ResourceType: 'instance',
          Tags: [
            { Key: 'karpenter.sh/nodepool', Value: 'general' },
            { Key: 'karpenter.sh/nodeclaim', Value: claim },
            { Key: 'karpenter.k8s.aws/ec2nodeclass', Value: 'default' },
            { Key: `kubernetes.io/cluster/${CLUSTER}`, Value: 'owned' },
            { Key: 'eks:eks-cluster-name', Value: CLUSTER },
            { Key: 'Name', Value: `general/${claim}` },
          ],
        },
      ],
    }),
  );
  const instance = launched.Instances?.[0];
  const instanceId = instance?.InstanceId ?? '';
  const zone = instance?.Placement?.AvailabilityZone ?? subnet?.zone ?? '';
  const name = instance?.PrivateDnsName || `ip-${instanceId}.internal`;
  const providerID = `aws:///${zone}/${instanceId}`;
  const labels = {
    'karpenter.sh/nodepool': 'general',
    'karpenter.k8s.aws/ec2nodeclass': 'default',
    'karpenter.sh/capacity-type': 'on-demand',
    'node.kubernetes.io/instance-type': 'm5.large',
    'topology.kubernetes.io/zone': zone,
    [KUBE.registeredLabel]: 'true',
    [KUBE.initializedLabel]: 'true',
  };
  const node: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels, finalizers: ['karpenter.sh/termination'] } as Node['metadata'],
    spec: { providerID },
    status: {
      capacity: { cpu: '2', memory: '7910Mi', pods: '29' },
      allocatable: { cpu: '1930m', memory: '7134Mi', pods: '29' },
    },
  };
  api.addNode(node);
  if (!options.empty) {
    api.addPod({
      ...pod(`web-${claim}`, { cpu: '1', nodeName: name, owner: { kind: 'ReplicaSet', name: 'web' } }),
      status: { phase: 'Running' },
    });
  }
  api.putObject('nodeclaims', {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: claim,
      labels,
      finalizers: ['karpenter.sh/termination'],
      creationTimestamp: new Date(clock() - (options.ageMs ?? 0)).toISOString(),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: nodePool.spec.template.spec.requirements,
      expireAfter: nodePool.spec.template.spec.expireAfter,
    },
    status: { providerID, nodeName: name, imageID: imageId },
  } as { metadata: { name: string } });
  return { claim, name, instanceId };
}

/** Karpenter's controller holding its leader Lease, last renewed `agoMs` before the clock's now. */
function karpenterLease(agoMs: number): void {
  server().putLease({
    metadata: { name: KARPENTER_LEASE, namespace: 'kube-system' },
    spec: {
      holderIdentity: 'karpenter-6d9f8c7b5-x2x9p_0c1d',
      leaseDurationSeconds: 15,
      renewTime: new Date(clock() - agoMs).toISOString(),
    },
  });
}

const watcher = () =>
  watcherHandler(
    once(() => watcherDeps(runtimes.watcher, tools.telemetry)),
    tools,
    runningKarpenterGuard(async () => runtimes.watcher, tools.telemetry),
  );
const gc = () =>
  gcHandler(
    once(() => gcDeps(runtimes.gc, tools.telemetry)),
    tools,
    runningKarpenterGuard(async () => runtimes.gc, tools.telemetry),
  )(scheduled, context);
const drift = () => {
  const handler = driftHandler(
    once(() => driftDeps(runtimes.drift, tools.telemetry)),
    tools,
    runningKarpenterGuard(async () => runtimes.drift, tools.telemetry),
  );
  return async (): Promise<DriftReport> => {
    const result = await handler(scheduled, context);
    if (!('trigger' in result)) throw new Error(`drift run failed: ${JSON.stringify(result)}`);
    return result;
  };
};

async function stateOf(instanceId: string): Promise<string | undefined> {
  const out = await account.ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
  return out.Reservations?.[0]?.Instances?.[0]?.State?.Name;
}

/** A newer AL2023 image that `al2023@latest` resolves to from now on (this account only). */
async function releaseNewAMI(): Promise<string> {
  const image = await account.ec2.send(
    new RegisterImageCommand({
      Name: `amazon-eks-node-al2023-x86_64-standard-${SEED_K8S_VERSION}-v20261001`,
      Architecture: 'x86_64',
      RootDeviceName: '/dev/xvda',
      VirtualizationType: 'hvm',
    }),
  );
  const imageId = image.ImageId ?? '';
  await injectFault(account, {
    action: 'GetParameter',
    contains: RECOMMENDED,
    status: 200,
    times: -1,
    body: JSON.stringify({
      Parameter: { Name: RECOMMENDED, Type: 'String', Value: imageId, Version: 2, DataType: 'aws:ec2:image' },
    }),
    ...{ content_type: 'application/x-amz-json-1.1' },
  } as Parameters<typeof injectFault>[1]);
  return imageId;
}

/** The kubelets of instances without a Node join (registered by the watcher's next run). */
async function joinNewInstances(): Promise<string[]> {
  const out = await account.ec2.send(
    new DescribeInstancesCommand({
      Filters: [
        { Name: 'tag:eks:eks-cluster-name', Values: [CLUSTER] },
        { Name: 'instance-state-name', Values: ['pending', 'running'] },
      ],
    }),
  );
  const api = server();
  const known = new Set(api.nodes().map((n) => n.spec?.providerID?.split('/').pop()));
  const fresh = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).filter((i) => !known.has(i.InstanceId));
  return fresh.map((i) => {
    const name = `ip-${i.InstanceId}.internal`;
    api.addNode({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'karpenter.sh/nodepool': 'general' } } as Node['metadata'],
      spec: {
        providerID: `aws:///${i.Placement?.AvailabilityZone}/${i.InstanceId}`,
        taints: [{ key: KUBE.unregisteredTaintKey, effect: 'NoExecute' }],
      },
      status: {
        capacity: { cpu: '2', memory: '7910Mi', pods: '29' },
        allocatable: { cpu: '1930m', memory: '7134Mi', pods: '29' },
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
    return name;
  });
}

function server(): FakeApiServer {
  if (!api) throw new Error('the test has not started its cluster (karpenterCluster)');
  return api;
}

beforeAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('itest-migration', CLUSTER);
});

/**
 * A fresh account and API server with the cluster as a Karpenter install left it (network, node
 * role, CRDs, NodePool and EC2NodeClass), and karpless's functions deployed for it, on a clock
 * starting at `start`.
 */
async function karpenterCluster(start: number): Promise<void> {
  clock = fakeClock(start);
  account = motoAccount();
  network = await createNetwork(account, {
    subnets: [{ zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: DISCOVERY }],
    securityGroups: [{ name: 'nodes', tags: DISCOVERY }],
  });
  await account.iam.send(
    new CreateRoleCommand({
      RoleName: ROLE,
      AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
    }),
  );
  await createCluster(account, CLUSTER);
  await createStateTable(dynamoApi(account.dynamodb), `state-${CLUSTER}`);
  api = await FakeApiServer.start();
  // Karpenter's CRDs and the user's NodePool and EC2NodeClass, as Karpenter left them.
  api.installCustomResources(karpenterCrds());
  api.putObject('nodepools', nodePool);
  api.putObject('ec2nodeclasses', nodeClass);
  // Step 1 of the guide: the same objects exported as karpless's configuration.
  const configFile = join(mkdtempSync(join(tmpdir(), 'karpless-migration-')), 'karpless-config.json');
  writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [nodeClass] }));
  runtimes = await functionRuntimes(account, {
    env: {
      KARPLESS_CLUSTER_NAME: CLUSTER,
      KARPLESS_STATE_TABLE: `state-${CLUSTER}`,
      KARPLESS_NOTICE_BUS: 'unused',
      KARPLESS_CONFIG_FILE: configFile,
      KARPLESS_KUBE_ENDPOINT: api.url,
      AWS_REGION: account.region,
    },
    clock,
    sleep: async (ms) => clock.advance(ms),
  });
}

afterEach(async () => {
  await api?.stop();
  api = undefined;
});

describe("the README's migration from Karpenter", () => {
  it('refuses beside a running Karpenter, then adopts, drifts and terminates the nodes Karpenter launched', {
    timeout: 240_000,
  }, async () => {
    await karpenterCluster(Date.parse('2026-06-01T12:00:00Z'));
    const api = server();
    const current = await account.ssm.send(new GetParameterCommand({ Name: RECOMMENDED }));
    const launchedImage = current.Parameter?.Value ?? '';
    const a = await karpenterNode('general-kp1ab', launchedImage);
    const b = await karpenterNode('general-kp2cd', launchedImage);
    const records = new DynamoStateStore(dynamoApi(account.dynamodb), `state-${CLUSTER}`);

    // Karpenter runs: karpless is deployed beside it (step 3 before step 2) and acts on nothing.
    karpenterLease(2_000);
    await expect(watcher()({}, context)).rejects.toBeInstanceOf(KarpenterRunningError);
    await expect(drift()()).rejects.toThrow(/Karpenter is running on this cluster/);
    await expect(gc()).rejects.toThrow(/Karpenter is running on this cluster/);
    expect(await records.nodeClaims()).toEqual([]);

    // Step 2: Karpenter scaled to zero; its Lease is no longer renewed.
    clock.advance(5 * 60_000);
    // Step 4: gc's next run adopts every registered instance Karpenter launched, from its tags and
    // Node; the watcher's run beside it leaves the nodes as they are.
    await watcher()({}, context);
    await gc();
    const adopted = await records.nodeClaims();
    expect(adopted.map((r) => r.metadata.name).sort()).toEqual(['general-kp1ab', 'general-kp2cd']);
    for (const record of adopted) {
      expect(record.metadata.labels['karpenter.sh/nodepool']).toBe('general');
      expect(record.spec.nodeClassRef.name).toBe('default');
    }
    for (const { name, instanceId } of [a, b]) {
      expect(api.getNode(name)?.metadata.finalizers).toEqual(['karpenter.sh/termination']);
      expect(api.getNode(name)?.metadata.deletionTimestamp).toBeUndefined();
      expect(await stateOf(instanceId)).toBe('running');
    }
    // From the watcher's next run, Karpenter's NodeClaim objects are karpless's mirrors of the records.
    await watcher()({}, context);
    expect(api.getObject('nodeclaims', 'general-kp1ab')?.metadata.labels?.['app.kubernetes.io/managed-by']).toBe(
      'karpless',
    );

    // Drift: an AMI release replaces an adopted node, one at a time (the budget), replacement first.
    const newImage = await releaseNewAMI();
    const started = (await drift()()).started;
    expect(started).toHaveLength(1);
    expect(started[0]?.reason).toBe('Drifted');
    expect(started[0]?.detail).toContain(`now resolves ${newImage}`);
    const drifted = [a, b].find((n) => n.name === started[0]?.node) ?? a;
    const kept = drifted === a ? b : a;
    expect(await joinNewInstances()).toHaveLength(1);
    await watcher()({}, context);
    expect((await drift()()).draining).toEqual([drifted.name]);
    for (let run = 0; run < 4 && api.getNode(drifted.name); run++) await watcher()({}, context);
    expect(api.getNode(drifted.name)).toBeUndefined();
    expect(await stateOf(drifted.instanceId)).toMatch(/shutting-down|terminated/);

    // `kubectl delete node` on the other adopted node: drained, its instance terminated, its Node gone.
    api.deleteNode(kept.name);
    for (let run = 0; run < 4 && api.getNode(kept.name); run++) await watcher()({}, context);
    expect(api.getNode(kept.name)).toBeUndefined();
    expect(await stateOf(kept.instanceId)).toMatch(/shutting-down|terminated/);

    // Step 5: the NodeClaim objects Karpenter created go with their nodes, its finalizer removed.
    for (let run = 0; run < 2; run++) await watcher()({}, context);
    const left = (await records.nodeClaims()).map((r) => r.metadata.name);
    expect(left).not.toContain(a.claim);
    expect(left).not.toContain(b.claim);
    const objects = api.listObjects('nodeclaims').map((o) => o.metadata.name);
    expect(objects).not.toContain(a.claim);
    expect(objects).not.toContain(b.claim);
    // Every call above ran under its function's synthesized role: nothing IAM would deny.
    expect(takeDenials().map(formatDenial)).toEqual([]);
  });

  it("expires an adopted node by its Karpenter NodeClaim's age and consolidates the empty ones within the budget", {
    timeout: 240_000,
  }, async () => {
    // Real time: moto stamps the instances' LaunchTime with it, and karpless reads that too.
    await karpenterCluster(Date.now());
    const image = (await account.ssm.send(new GetParameterCommand({ Name: RECOMMENDED }))).Parameter?.Value ?? '';
    // Karpenter created this one's NodeClaim 719 h ago: 1 h of its 720 h left, whatever its launch says.
    const oldCreated = new Date(clock() - 719 * HOUR).toISOString();
    const old = await karpenterNode('general-kpold', image, { ageMs: 719 * HOUR });
    const empties = [
      await karpenterNode('general-kpe1', image, { empty: true }),
      await karpenterNode('general-kpe2', image, { empty: true }),
    ];
    const busy = await karpenterNode('general-kpbsy', image);
    const records = new DynamoStateStore(dynamoApi(account.dynamodb), `state-${CLUSTER}`);

    // Karpenter stopped long ago; gc adopts its nodes.
    await watcher()({}, context);
    await gc();
    const adopted = new Map((await records.nodeClaims()).map((r) => [r.metadata.name, r]));
    expect([...adopted.keys()].sort()).toEqual([old.claim, ...empties.map((e) => e.claim), busy.claim].sort());
    expect(adopted.get(old.claim)?.metadata.creationTimestamp).toBe(oldCreated);
    expect(adopted.get(old.claim)?.spec.expireAfter).toBe('720h');

    // Half an hour on: nothing expired, nothing empty for consolidateAfter (1 h) yet.
    clock.advance(30 * 60_000);
    expect((await drift()()).started).toEqual([]);
    expect((await gc()).emptiness.disrupted).toEqual([]);

    // An hour on: the old node is past its 720 h, counted from Karpenter's NodeClaim (from its launch
    // it would have 719 h left): expired. Its pod fits on the empty nodes, so nothing is launched and
    // it drains at once. The empty nodes wait: the budget (1 node) counts the expiring node.
    clock.advance(31 * 60_000);
    const expiring = await drift()();
    expect(expiring.started.map((d) => [d.node, d.reason, d.replacements])).toEqual([[old.name, 'Expired', []]]);
    expect(expiring.started[0]?.detail).toBe(`NodeClaim created ${oldCreated}, expireAfter 720h`);
    expect(expiring.draining).toEqual([old.name]);
    const waiting = (await gc()).emptiness;
    expect(waiting.disrupted).toEqual([]);
    expect(waiting.blocked.map((b) => b.node).sort()).toEqual(empties.map((e) => e.name).sort());
    expect(waiting.blocked[0]?.message).toMatch(/budgets\[0\] \(nodes: 1\) blocks: .*1 already disrupting/);
    const gone = async (name: string) => {
      for (let run = 0; run < 4 && server().getNode(name); run++) await watcher()({}, context);
      return server().getNode(name) === undefined;
    };
    expect(await gone(old.name)).toBe(true);
    expect(await stateOf(old.instanceId)).toMatch(/shutting-down|terminated/);

    // The scheduler puts the evicted pod on one empty node. The expiry finished, its budget slot is
    // free: consolidation deletes the node still empty.
    const [filled, empty] = empties as [(typeof empties)[0], (typeof empties)[0]];
    server().addPod({
      ...pod(`web-${old.claim}`, { cpu: '1', nodeName: filled.name, owner: { kind: 'ReplicaSet', name: 'web' } }),
      status: { phase: 'Running' },
    });
    const consolidating = await drift()();
    expect(consolidating.finished).toEqual([old.name]);
    expect(consolidating.started.map((d) => [d.node, d.reason, d.replacements])).toEqual([[empty.name, 'Empty', []]]);
    expect((await gc()).emptiness.disrupted).toEqual([]);
    expect(await gone(empty.name)).toBe(true);
    expect(await stateOf(empty.instanceId)).toMatch(/shutting-down|terminated/);

    // The nodes with pods, neither expired nor empty, stay.
    for (const kept of [filled, busy]) {
      expect(server().getNode(kept.name)?.metadata.deletionTimestamp).toBeUndefined();
      expect(await stateOf(kept.instanceId)).toBe('running');
    }
    expect(takeDenials().map(formatDenial)).toEqual([]);
  });
});
