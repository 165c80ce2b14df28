// A decision the invocation's end cuts short: its records are the to-do list. The next invocation
// (a redelivery, or another notice naming the same pods under a new observation) launches the
// recorded claims from their records and plans none of their pods again; nothing launches twice.

import { beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import type { LaunchClaim } from '../../shared/launch/request';
import { InsufficientCapacityError, type LaunchedInstance } from '../../shared/providers/instance';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { UNLAUNCHED_RECORD_MAX_AGE_MS } from '../../shared/runtime/capacity';
import { LAUNCH_BATCH_ANNOTATION, launchBatchId } from '../../shared/runtime/launch-batches';
import { AwsClaimLauncher, LAUNCH_RESERVE_MS } from '../../shared/runtime/launcher';
import {
  LaunchesPendingError,
  type ProvisionBatch,
  type ProvisionDeps,
  provision,
} from '../../shared/runtime/provision';
import { nodePool, standardTypes } from '../scheduling/helpers';
import { FakeInstances, FakeKube, pendingPod, RecordingLog, RecordingMetrics, START } from './fakes';

const nodeClass = {
  metadata: { name: 'default' },
  spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }] },
} as EC2NodeClass;
const pool = nodePool('default');

let now: number;
let state: InMemoryStateStore;
let instances: FakeInstances;
let kube: FakeKube;
/** The claims each CreateFleet asked for, by name. */
let fleets: string[][];
let failWith: Error | undefined;
let counter: number;
/** The batch id each batched CreateFleet went out under (fleets' order). */
let fleetBatches: (string | undefined)[];
/** Instances EC2's tokens allow before the deadline (undefined: the launcher is not paced), and the windows asked about. */
let tokens: number | undefined;
let asked: number[];

function launchOne(claim: LaunchClaim): LaunchedInstance & { tagged: boolean } {
  const added = instances.add({
    instanceId: `i-${(counter++).toString(16).padStart(8, '0')}`,
    nodeClaimName: claim.nodeClaimName,
    instanceType: claim.instanceTypes[0]?.name ?? 'm5.large',
  });
  return { ...added, existing: false, tagged: true };
}

/** An AwsClaimLauncher over a fake batching EC2 launcher that puts each instance in `instances`. */
function launcher(): AwsClaimLauncher {
  return new AwsClaimLauncher({
    nodeClasses: [nodeClass],
    cluster: async () => {
      throw new Error('not reached: the node class is resolved in advance');
    },
    resolver: {} as ConstructorParameters<typeof AwsClaimLauncher>[0]['resolver'],
    launcher: {
      async launch(claim) {
        fleets.push([claim.nodeClaimName]);
        fleetBatches.push(undefined);
        if (failWith) throw failWith;
        return launchOne(claim);
      },
      async launchBatch(claims, _resolved, batchId) {
        fleets.push(claims.map((c) => c.nodeClaimName));
        fleetBatches.push(batchId);
        if (failWith) throw failWith;
        return new Map(claims.map((c) => [c.nodeClaimName, launchOne(c)]));
      },
      async tagClaim() {},
    },
    records: state,
    clock: () => now,
    resolveNodeClass: async () => ({}) as never,
    ...(tokens === undefined
      ? {}
      : {
          launchTokens: {
            instancesWithin(ms: number) {
              asked.push(ms);
              return tokens ?? 0;
            },
          },
        }),
  });
}

function deps(): ProvisionDeps {
  return {
    cluster: 'c1',
    nodePools: [pool],
    instanceTypes: async () => ({ byNodePool: { default: standardTypes() }, priceSource: 'bundled' }),
    instances,
    kube,
    state,
    records: state,
    launcher: launcher(),
    // One batch at a time, so the invocation's end falls between two batches.
    launchConcurrency: 1,
    events: { nodeClaimsLaunched: async () => {} },
    clock: () => now,
    log: new RecordingLog(),
    metrics: new RecordingMetrics(),
  };
}

/** Two shapes, so two launch batches: small pods and large ones. */
function burst(): Pod[] {
  const shape = (name: string, cpu: string) =>
    pendingPod(name, { containers: [{ name: 'app', resources: { requests: { cpu, memory: '1Gi' } } }] }, `uid-${name}`);
  const pods = [
    ...Array.from({ length: 4 }, (_, i) => shape(`small-${i}`, '1500m')),
    ...Array.from({ length: 4 }, (_, i) => shape(`large-${i}`, '7')),
  ];
  for (const pod of pods) kube.putPod(pod);
  return pods;
}

function batch(pods: Pod[], observedAt: string): ProvisionBatch {
  return { pods, daemonSets: [], observedAt };
}

/** Remaining time: a minute for the first batch, then too little to start another. */
function cutAfterFirstBatch(): () => number {
  let calls = 0;
  return () => (calls++ === 0 ? 60_000 : 1_000);
}

beforeEach(() => {
  now = START;
  state = new InMemoryStateStore(() => now);
  instances = new FakeInstances();
  kube = new FakeKube(async () => {});
  fleets = [];
  failWith = undefined;
  counter = 1;
  fleetBatches = [];
  tokens = undefined;
  asked = [];
});

describe('a decision cut short by the invocation’s end', () => {
  it('is finished by the next invocation from its records, none of their pods planned again, nothing launched twice', async () => {
    const pods = burst();
    await expect(
      provision(deps(), batch(pods, '2026-01-01T00:00:00.000Z'), { remainingMs: cutAfterFirstBatch() }),
    ).rejects.toBeInstanceOf(LaunchesPendingError);
    const records = await state.nodeClaims();
    const waiting = records.filter((r) => r.status.providerID === undefined).map((r) => r.metadata.name);
    expect(fleets).toHaveLength(1);
    expect(waiting.length).toBeGreaterThan(0);
    expect(instances.instances.size).toBe(records.length - waiting.length);
    // Every planned pod is nominated before anything launched, the waiting claims' too.
    const nominated = (await state.nominations()).flatMap((n) => n.podUids);
    expect(nominated.sort()).toEqual(pods.map((p) => p.metadata.uid).sort());

    // The next invocation sees the pods under a new observation: a re-plan would name new claims.
    now += 10_000;
    const report = await provision(deps(), batch(pods, '2026-01-01T00:00:10.000Z'));
    expect((await state.nodeClaims()).map((r) => r.metadata.name).sort()).toEqual(
      records.map((r) => r.metadata.name).sort(),
    );
    expect(fleets.slice(1).flat().sort()).toEqual([...waiting].sort());
    expect(report.detail.nodeClaims.map((c) => c.nodeClaimName).sort()).toEqual([...waiting].sort());
    expect(instances.instances.size).toBe(records.length);
    expect(new Set([...instances.instances.values()].map((i) => i.nodeClaimName)).size).toBe(records.length);
    for (const record of await state.nodeClaims()) expect(record.status.providerID).toMatch(/^aws:\/\/\/.+\/i-/);

    // Delivered again: everything is launched, nothing is planned or launched.
    const again = await provision(deps(), batch(pods, '2026-01-01T00:00:00.000Z'));
    expect(again.detail.nodeClaims).toEqual([]);
    expect(fleets).toHaveLength(2);
  });

  it('deletes a record that waited past the launch window, frees its pods and plans them again', async () => {
    const pods = burst();
    await expect(
      provision(deps(), batch(pods, '2026-01-01T00:00:00.000Z'), { remainingMs: cutAfterFirstBatch() }),
    ).rejects.toBeInstanceOf(LaunchesPendingError);
    const stale = (await state.nodeClaims())
      .filter((r) => r.status.providerID === undefined)
      .map((r) => r.metadata.name);
    now += UNLAUNCHED_RECORD_MAX_AGE_MS;
    await provision(deps(), batch(pods, '2026-01-01T00:10:00.000Z'));
    const records = await state.nodeClaims();
    for (const name of stale) expect(records.find((r) => r.metadata.name === name)).toBeUndefined();
    // Their pods planned again, under new claims nominated in full (no lock of the old claims left).
    expect(records.every((r) => r.status.providerID !== undefined)).toBe(true);
    expect(instances.instances.size).toBe(records.length);
    const nominated = (await state.nominations()).flatMap((n) => n.podUids);
    expect(nominated.sort()).toEqual(pods.map((p) => p.metadata.uid).sort());
    expect(fleets.flat().filter((name) => stale.includes(name))).toEqual([]);
  });

  it('frees the pods of a recorded claim EC2 has no capacity for, so the next decision plans them again', async () => {
    const pods = burst();
    await expect(
      provision(deps(), batch(pods, '2026-01-01T00:00:00.000Z'), { remainingMs: cutAfterFirstBatch() }),
    ).rejects.toBeInstanceOf(LaunchesPendingError);
    const waiting = (await state.nodeClaims()).filter((r) => r.status.providerID === undefined);
    failWith = new InsufficientCapacityError('batch', []);
    const report = await provision(deps(), batch(pods, '2026-01-01T00:00:10.000Z'));
    expect(report.detail.unschedulable.length).toBeGreaterThan(0);
    const nominatedTo = new Set((await state.nominations()).map((n) => n.nodeClaimName));
    for (const record of waiting) {
      expect(await state.getNodeClaim(record.metadata.name)).toBeUndefined();
      expect(nominatedTo.has(record.metadata.name)).toBe(false);
    }
  });
});

describe('a decision larger than EC2’s instance tokens', () => {
  it('launches what the tokens allow before the deadline, part of a batch under its own id, the rest next time', async () => {
    const pods = burst();
    tokens = 1;
    await expect(
      provision(deps(), batch(pods, '2026-01-01T00:00:00.000Z'), { remainingMs: () => 100_000 }),
    ).rejects.toBeInstanceOf(LaunchesPendingError);
    // Asked once, for the time before the reserve.
    expect(asked).toEqual([100_000 - LAUNCH_RESERVE_MS]);
    const records = await state.nodeClaims();
    expect(records.length).toBeGreaterThan(1);
    expect(fleets.flat()).toHaveLength(1);
    expect(instances.instances.size).toBe(1);
    const batchOf = new Map(records.map((r) => [r.metadata.name, r.metadata.annotations[LAUNCH_BATCH_ANNOTATION]]));
    // A batch cut short launched its first members in name order, under the id its records name.
    fleets.forEach((names, i) => {
      const id = fleetBatches[i] ?? batchOf.get(names[0] ?? '');
      const members = records
        .filter((r) => batchOf.get(r.metadata.name) === id)
        .map((r) => r.metadata.name)
        .sort();
      expect(names).toEqual(members.slice(0, names.length));
    });
    const first = fleets.length;

    // The next invocation has tokens for the rest: it launches exactly the waiting records.
    tokens = 100;
    now += 10_000;
    const waiting = records.filter((r) => r.status.providerID === undefined).map((r) => r.metadata.name);
    await provision(deps(), batch(pods, '2026-01-01T00:00:10.000Z'), { remainingMs: () => 100_000 });
    expect(fleets.slice(first).flat().sort()).toEqual(waiting.sort());
    // The rest of the cut batch went out under the same id; a claim alone launched on its own.
    fleets.slice(first).forEach((names, i) => {
      for (const name of names) expect(fleetBatches[first + i] ?? launchBatchId([name])).toBe(batchOf.get(name));
    });
    const cut = fleetBatches.slice(0, first).filter((id) => id !== undefined);
    expect(fleetBatches.slice(first).some((id) => id !== undefined && cut.includes(id))).toBe(true);
    expect(instances.instances.size).toBe(records.length);
    expect(new Set([...instances.instances.values()].map((i) => i.nodeClaimName)).size).toBe(records.length);
  });

  it('launches nothing and keeps every record when the bucket has no token before the deadline', async () => {
    const pods = burst();
    tokens = 0;
    await expect(
      provision(deps(), batch(pods, '2026-01-01T00:00:00.000Z'), { remainingMs: () => 100_000 }),
    ).rejects.toBeInstanceOf(LaunchesPendingError);
    expect(fleets).toEqual([]);
    const records = await state.nodeClaims();
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.status.providerID === undefined)).toBe(true);
  });
});
