// `karpless plan --from-cluster --state-table` as a user runs it: a child process reading the fake API
// server and a real DynamoDB state table on moto. A claim the provision function launched a moment
// ago (recorded, two pending pods nominated to it, no NodeClaim object mirrored yet) is in the table
// only: with the table the plan leaves its nominated pods to it, as the function does; without it
// the plan launches for them again. A child cannot carry the per-test account header, so this file
// works in moto's default account with a table of its own.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJSON } from '../../../cli/commands/plan';
import type { Pod } from '../../../shared/apis/core/v1';
import { karpenterCrds } from '../../../shared/apis/v1/crds';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { DynamoStateStore } from '../../../shared/providers/dynamostate';
import { inFlightClaim } from '../../support/claims';
import { pod } from '../../support/kube/builders';
import { FakeApiServer } from '../../support/kube/fake-apiserver';
import { testNodeClass, testNodePool } from '../../support/nodepools';
import { DEFAULT_ACCOUNT_ID, motoAccount } from '../helpers';

const run = promisify(execFile);
const TABLE = `karpless-plan-${randomUUID().slice(0, 8)}`;
const account = motoAccount({ accountId: DEFAULT_ACCOUNT_ID });
let server: FakeApiServer;

function pending(name: string): Pod {
  const p = pod(name, { cpu: '1500m', owner: { kind: 'ReplicaSet', name: 'web' } });
  p.spec.containers[0]!.resources = { requests: { cpu: '1500m', memory: '256Mi' } };
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  return p;
}

/** The CLI's plan of the fake cluster, as JSON, with the flags given. */
async function plan(...flags: string[]): Promise<{ json: PlanJSON; stderr: string }> {
  const args = ['cli/karpless.mjs', 'plan', '--from-cluster', '--kube-endpoint', server.url, '--json', ...flags];
  const { stdout, stderr } = await run(process.execPath, args, { env: { ...process.env, ...account.env } });
  return { json: JSON.parse(stdout) as PlanJSON, stderr };
}

const plannedPods = (json: PlanJSON) => json.nodeClaims.flatMap((c) => c.pods).sort();

beforeAll(async () => {
  server = await FakeApiServer.start();
  server.installCustomResources(karpenterCrds());
  server.putObject('ec2nodeclasses', testNodeClass({ discovery: 'c1', role: 'KarpenterNodeRole-c1' }));
  server.putObject(
    'nodepools',
    testNodePool({
      template: {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5', 'c5'] },
        ],
      },
    }),
  );
  const webs = [0, 1, 2, 3].map((i) => server.addPod(pending(`web-${i}`)));

  await createStateTable(dynamoApi(account.dynamodb), TABLE);
  const state = new DynamoStateStore(dynamoApi(account.dynamodb), TABLE);
  // The child plans at its own wall-clock time: the claim and its nomination are recent and live for minutes.
  const now = Date.now();
  await state.createNodeClaim(inFlightClaim(now));
  expect(
    await state.nominate({
      nodeClaimName: 'general-inflight',
      nodePool: 'general',
      podUids: webs.slice(0, 2).map((p) => String(p.metadata.uid)),
      expiresAt: now + 10 * 60_000,
    }),
  ).toBe(true);
});

afterAll(async () => {
  await server?.stop();
});

describe('karpless plan --from-cluster --state-table on moto', () => {
  it('leaves the pods nominated to a claim in flight to it, as the provision function does', async () => {
    const withTable = await plan(
      '--state-table',
      TABLE,
      '--region',
      account.region,
      '--endpoint-url',
      account.endpoint,
    );
    expect(withTable.stderr).toMatch(
      new RegExp(`note: state table ${TABLE}: 1 claim record, 1 nomination counted as the function counts them`),
    );
    expect(plannedPods(withTable.json)).toEqual(['default/web-2', 'default/web-3']);

    // Without the table the claim in flight is not seen: its pods are planned a second claim.
    const without = await plan();
    expect(without.stderr).toMatch(/note: the state table is not read/);
    expect(plannedPods(without.json)).toEqual(['default/web-0', 'default/web-1', 'default/web-2', 'default/web-3']);
  });

  it('names the table when it cannot be read', async () => {
    const missing = `${TABLE}-missing`;
    const failed = await plan(
      '--state-table',
      missing,
      '--region',
      account.region,
      '--endpoint-url',
      account.endpoint,
    ).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).not.toBe(0);
    expect(failed?.stderr).toMatch(
      new RegExp(`state table ${missing}: .*ResourceNotFoundException.*check that the table exists in this region`),
    );
  });
});
