// The provision function reads the cluster before it decides (issue 18), against moto and the fake
// API server: notices for pods that are bound, gone or never existed launch nothing; a pod whose
// claim is bound to a volume in zone b gets CreateFleet overrides in zone b only; zones without a
// subnet of the node class are never planned; an uninitialized node of ours with a startup taint
// and room is reused; an API server that times out while the decision reads it launches nothing
// and gets the batch back.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CreateFleetCommandInput,
  DescribeInstancesCommand,
  type Instance,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2';
import { CreateEventBusCommand } from '@aws-sdk/client-eventbridge';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHandler as provisionHandler } from '../../../lambdas/provision/handler';
import type { Pod } from '../../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { DETAIL_TYPE, EVENT_SOURCE, KUBE, TAG } from '../../../shared/contracts';
import { noticePodFromPod } from '../../../shared/notice';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { provisionDeps } from '../../../shared/runtime/deps/provision';
import { buildRuntime, type Runtime } from '../../../shared/runtime/environment';
import { once, type Powertools, powertools } from '../../../shared/runtime/powertools';
import { RecordingRetryQueue } from '../../runtime/fakes';
import { node, pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { createCluster, createNetwork, type MotoAccount, motoAccount } from '../helpers';

const CLUSTER = 'truth';
const STARTUP_TAINT = { key: 'example.com/agent-not-ready', value: 'true', effect: 'NoSchedule' as const };

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'KarpenterNodeRole-truth',
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
        startupTaints: [STARTUP_TAINT],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      },
    },
  },
};

let account: MotoAccount;
let api: FakeApiServer;
let runtime: Runtime;
let tools: Powertools;
let fleets: CreateFleetCommandInput[];
let noticeCount = 0;

const context = {
  getRemainingTimeInMillis: () => 60_000,
  awsRequestId: 'req',
  functionName: 'fn',
} as unknown as Context;

let handler: ReturnType<typeof provisionHandler>;

/** One function instance for the file, as a warm Lambda: its caches (catalog, prices) carry over. */
const provision = (records: string[]) =>
  handler({ Records: records.map((body, i) => ({ messageId: `m${i}`, body })) } as unknown as SQSEvent, context);

/** A notice as the watcher would put it, at a new observation time each (new claim names). */
function notice(pods: Pod[]): string {
  noticeCount++;
  return JSON.stringify({
    version: '0',
    source: EVENT_SOURCE,
    'detail-type': DETAIL_TYPE.podsUnschedulable,
    detail: {
      cluster: CLUSTER,
      observedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, noticeCount)).toISOString(),
      pods: pods.map(noticePodFromPod),
      daemonSets: [],
    },
  });
}

function pendingPod(name: string, cpu = '500m'): Pod {
  const p = pod(name, { cpu, owner: { kind: 'ReplicaSet', name: 'web' } });
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  return api.addPod(p);
}

const zonesOf = (fleet: CreateFleetCommandInput) =>
  new Set((fleet.LaunchTemplateConfigs ?? []).flatMap((c) => (c.Overrides ?? []).map((o) => o.AvailabilityZone ?? '')));

async function liveInstances(): Promise<Instance[]> {
  const out = await account.ec2.send(
    new DescribeInstancesCommand({
      Filters: [
        { Name: `tag:${TAG.clusterName}`, Values: [CLUSTER] },
        { Name: 'instance-state-name', Values: ['pending', 'running'] },
      ],
    }),
  );
  return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
}

beforeAll(async () => {
  process.env.POWERTOOLS_LOG_LEVEL = process.env.DEBUG_LOG ?? 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('itest', CLUSTER);
  account = motoAccount();
  // Subnets in a and b only: us-west-2c and d exist in the region but not for this node class.
  await createNetwork(account, {
    subnets: [
      { zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } },
      { zone: 'us-west-2b', cidr: '10.0.2.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } },
      { zone: 'us-west-2c', cidr: '10.0.3.0/24' },
    ],
    securityGroups: [{ name: 'nodes', tags: { 'karpenter.sh/discovery': CLUSTER } }],
  });
  await createCluster(account, CLUSTER, { serviceCIDR: '172.20.0.0/16' });
  await account.iam.send(
    new CreateRoleCommand({
      RoleName: 'KarpenterNodeRole-truth',
      AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
    }),
  );
  await createStateTable(dynamoApi(account.dynamodb), 'karpless-state');
  await account.eventbridge.send(new CreateEventBusCommand({ Name: 'karpless' }));
  account.ec2.middlewareStack.add(
    (next, ctx) => async (args) => {
      if (ctx.commandName === 'CreateFleetCommand') fleets.push(structuredClone(args.input as CreateFleetCommandInput));
      return next(args);
    },
    { step: 'initialize', name: 'recordCreateFleet' },
  );
  api = await FakeApiServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'karpless-truth-'));
  const configFile = join(dir, 'karpless-config.json');
  writeFileSync(configFile, JSON.stringify({ nodePools: [nodePool], nodeClasses: [nodeClass] }));
  runtime = buildRuntime({
    env: {
      KARPLESS_CLUSTER_NAME: CLUSTER,
      KARPLESS_STATE_TABLE: 'karpless-state',
      KARPLESS_NOTICE_BUS: 'karpless',
      KARPLESS_CONFIG_FILE: configFile,
      KARPLESS_KUBE_ENDPOINT: api.url,
      AWS_REGION: account.region,
    },
    clients: account,
  });
  handler = provisionHandler(
    once(async () => provisionDeps(runtime, tools.telemetry)),
    tools,
    () => new RecordingRetryQueue(),
  );
});

afterAll(async () => {
  await api?.stop();
});

// Each case starts without claims in flight, so its pods cannot land on an earlier case's claim.
beforeEach(async () => {
  fleets = [];
  api.clearFaults();
  const ids = (await liveInstances()).flatMap((i) => (i.InstanceId ? [i.InstanceId] : []));
  if (ids.length > 0) await account.ec2.send(new TerminateInstancesCommand({ InstanceIds: ids }));
});

describe('the provision function reads the cluster', () => {
  it('launches nothing for a notice of bound, deleted and nonexistent pods', async () => {
    const bound = pendingPod('bound-1');
    api.bindPod('default', 'bound-1', 'ip-10-0-9-9.us-west-2.compute.internal');
    const deleted = pendingPod('deleted-1');
    api.deletePod('default', 'deleted-1');
    const never = { ...structuredClone(deleted), metadata: { ...deleted.metadata, name: 'never-1', uid: 'u-never' } };

    const response = await provision([notice([bound, deleted, never])]);

    expect(response.batchItemFailures).toEqual([]);
    expect(fleets).toEqual([]);
  });

  it('plans a pod whose claim is bound to a volume in zone b with CreateFleet overrides only in zone b', async () => {
    api.addStorageClass({
      metadata: { name: 'gp3' },
      provisioner: 'ebs.csi.aws.com',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    api.addPersistentVolume({
      metadata: { name: 'pv-data' },
      spec: {
        storageClassName: 'gp3',
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['us-west-2b'] }] },
            ],
          },
        },
      },
    });
    api.addPersistentVolumeClaim({
      metadata: { name: 'data', namespace: 'default' },
      spec: { storageClassName: 'gp3', volumeName: 'pv-data' },
    });
    const db = pod('db-0', { cpu: '500m', owner: { kind: 'StatefulSet', name: 'db' } });
    db.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }];
    db.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
    const added = api.addPod(db);

    expect((await provision([notice([added])])).batchItemFailures).toEqual([]);

    expect(fleets).toHaveLength(1);
    expect([...zonesOf(fleets[0]!)]).toEqual(['us-west-2b']);
  });

  it('plans only zones where the node class has a subnet', async () => {
    const plain = pendingPod('plain-1');
    const inC = pod('zonal-c', { cpu: '500m', owner: { kind: 'ReplicaSet', name: 'c' } });
    inC.spec.nodeSelector = { 'topology.kubernetes.io/zone': 'us-west-2c' };
    inC.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
    const zonal = api.addPod(inC);

    expect((await provision([notice([plain, zonal])])).batchItemFailures).toEqual([]);

    expect(fleets).toHaveLength(1);
    for (const zone of zonesOf(fleets[0]!)) expect(['us-west-2a', 'us-west-2b']).toContain(zone);
  });

  it('reuses an uninitialized node of ours with a startup taint and room: no second launch', async () => {
    const first = pendingPod('burst-1', '250m');
    expect((await provision([notice([first])])).batchItemFailures).toEqual([]);
    expect(fleets).toHaveLength(1);
    const claimName = fleets[0]?.TagSpecifications?.[0]?.Tags?.find((t) => t.Key === TAG.nodeClaim)?.Value;
    const instance = (await liveInstances()).find((i) =>
      i.Tags?.some((t) => t.Key === TAG.nodeClaim && t.Value === claimName),
    );
    expect(instance).toBeDefined();
    // The node joined and registered; its startup taint and not-ready are still on it.
    const name = 'ip-10-0-1-77.us-west-2.compute.internal';
    api.addNode(
      node(name, {
        providerID: `aws:///${instance?.Placement?.AvailabilityZone}/${instance?.InstanceId}`,
        labels: { [KUBE.registeredLabel]: 'true', 'karpenter.sh/nodepool': 'general' },
        taints: [STARTUP_TAINT, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
        finalizers: [KUBE.terminationFinalizer],
      }),
    );
    api.updateNode(name, (n) => {
      n.status = { allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' } };
    });
    api.bindPod('default', 'burst-1', name);
    const second = pendingPod('burst-2', '250m');

    expect((await provision([notice([second])])).batchItemFailures).toEqual([]);

    expect(fleets).toHaveLength(1);
  });

  it('gets the batch back and launches nothing when the API server times out while the decision reads it', async () => {
    const late = pendingPod('late-1');
    api.injectFault({ method: 'GET', path: '/api/v1/pods', status: 504, message: 'etcd request timed out', times: 4 });
    const body = notice([late]);

    const failed = await provision([body]);

    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
    expect(fleets).toEqual([]);
    expect((await provision([body])).batchItemFailures).toEqual([]);
    expect(fleets).toHaveLength(1);
  });
});
