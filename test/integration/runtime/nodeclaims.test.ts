// NodeClaims end to end against moto and the fake API server (issue 18): a pod that selects one value
// of a NodePool's `In [a, b]` requirement gets a Node labelled with that value and binds there; a
// NodePool's limits hold across decisions; a NodeClaim record that cannot be written launches
// nothing and sends the batch back; two pods that want one host port get a node each.

import type { Instance } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../shared/apis/core/v1';
import type { NodePool } from '../../../shared/apis/v1/types';
import { TAG } from '../../../shared/contracts';
import { dynamoErrorBody, injectFault, ProvisionFixture } from '../helpers';

const CLUSTER = 'claims';
const CAPPED_TAINT = { key: 'example.com/capped', value: 'true', effect: 'NoSchedule' as const };
const NODECLAIM_ITEM = '"pk":{"S":"nodeclaim"}';
/** What the kubelet of an m5.large reports under AL2023 (near enough for the stand-in scheduler). */
const M5_LARGE_ALLOCATABLE = { cpu: '1930m', memory: '7134Mi', pods: '29' };

function pool(name: string, spec: Partial<NodePool['spec']>, extra: Partial<NodePool['spec']['template']['spec']>) {
  const nodePool: NodePool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      ...spec,
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          ...extra,
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
            ...(extra.requirements ?? []),
          ],
        },
      },
    },
  };
  return nodePool;
}

const teams = pool('teams', {}, { requirements: [{ key: 'team', operator: 'In', values: ['a', 'b'] }] });
const capped = pool('capped', { limits: { cpu: '2' } }, { taints: [CAPPED_TAINT] });

let fixture: ProvisionFixture;

beforeAll(async () => {
  fixture = await ProvisionFixture.start({ cluster: CLUSTER, nodePools: [teams, capped] });
});

afterAll(async () => {
  await fixture?.stop();
});

beforeEach(async () => {
  await fixture.reset();
});

function forCapped(p: Pod): void {
  p.spec.nodeSelector = { 'karpenter.sh/nodepool': 'capped' };
  p.spec.tolerations = [{ key: CAPPED_TAINT.key, operator: 'Exists', effect: 'NoSchedule' }];
}

const claimOf = (i: Instance) => i.Tags?.find((t) => t.Key === TAG.nodeClaim)?.Value ?? '';

describe('NodeClaims against moto and the fake API server', () => {
  it('labels the Node of a pool with team In [a, b] team=b for the pod that selected b, and the pod binds there', async () => {
    const pod = fixture.pendingPod('team-b-1', '500m', (p) => {
      p.spec.nodeSelector = { team: 'b' };
    });

    expect((await fixture.provision([fixture.notice([pod])])).batchItemFailures).toEqual([]);
    expect(fixture.fleets).toHaveLength(1);
    const instance = await fixture.instanceOf(fixture.fleets[0]!);
    const joined = fixture.joinNode(instance, M5_LARGE_ALLOCATABLE);
    await fixture.register();
    const pass = fixture.schedule();

    const registered = fixture.api.getNode(joined.metadata.name);
    expect(registered?.metadata.labels).toMatchObject({ team: 'b', 'karpenter.sh/nodepool': 'teams' });
    expect((await fixture.runtime.state.getNodeClaim(claimOf(instance)))?.metadata.labels.team).toBe('b');
    // The fixture's cluster is shared by the file's tests (run in random order): other pods may bind too.
    expect(pass.bound).toContainEqual({ pod: 'default/team-b-1', node: joined.metadata.name });
    expect(fixture.api.getPod('default', 'team-b-1')?.spec.nodeName).toBe(joined.metadata.name);
  }, 120_000);

  it('holds a NodePool’s limits across two decisions: the second launches nothing for that pool', async () => {
    // Prepare: limits cpu 2 and m5.large only; the first decision's claim takes the whole limit.
    const first = fixture.pendingPod('capped-1', '1500m', forCapped);
    expect((await fixture.provision([fixture.notice([first])])).batchItemFailures).toEqual([]);
    expect(fixture.fleets).toHaveLength(1);
    // Act: a pod that does not fit beside the first on its claim, in a later decision.
    const second = fixture.pendingPod('capped-2', '1500m', forCapped);
    const response = await fixture.provision([fixture.notice([second])]);
    // Assess: acknowledged, nothing launched, one live claim of the pool.
    expect(response.batchItemFailures).toEqual([]);
    expect(fixture.fleets).toHaveLength(1);
    const live = (await fixture.liveInstances()).filter((i) =>
      i.Tags?.some((t) => t.Key === TAG.nodePool && t.Value === 'capped'),
    );
    expect(live).toHaveLength(1);
    const records = await fixture.runtime.state.nodeClaims({ nodePool: 'capped' });
    expect(records.filter((r) => r.metadata.name === claimOf(live[0]!))).toHaveLength(1);
  }, 120_000);

  it.each([
    ['a DynamoDB error', 500, 'InternalServerError', 'Internal server error'],
    ['a failed conditional check', 400, 'ConditionalCheckFailedException', 'The conditional request failed'],
  ])(
    'launches nothing and gets the batch back when the NodeClaim record cannot be written (%s)',
    async (_, status, type, message) => {
      const pod = fixture.pendingPod(`rec-${status}`);
      const body = fixture.notice([pod]);
      await injectFault(fixture.account, {
        action: 'PutItem',
        contains: NODECLAIM_ITEM,
        status,
        body: dynamoErrorBody(type, message),
        times: -1,
      });

      const failed = await fixture.provision([body]);

      expect(failed.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
      expect(fixture.fleets).toEqual([]);
      expect(await fixture.liveInstances()).toEqual([]);
      // The batch comes back once DynamoDB answers again, and launches then.
      await fixture.reset();
      expect((await fixture.provision([body])).batchItemFailures).toEqual([]);
      expect(fixture.fleets).toHaveLength(1);
    },
    120_000,
  );

  it('puts two pods that want one host port on two nodes', async () => {
    const withPort = (p: Pod) => {
      p.spec.containers = p.spec.containers.map((c) => ({ ...c, ports: [{ containerPort: 80, hostPort: 8080 }] }));
    };
    const pods = [fixture.pendingPod('port-1', '250m', withPort), fixture.pendingPod('port-2', '250m', withPort)];

    expect((await fixture.provision([fixture.notice(pods)])).batchItemFailures).toEqual([]);

    const live = await fixture.liveInstances();
    expect(live).toHaveLength(2);
    expect(new Set(live.map(claimOf)).size).toBe(2);
  }, 120_000);
});
