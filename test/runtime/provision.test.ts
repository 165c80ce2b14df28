import { beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import { METRIC } from '../../shared/contracts';
import { KubeApiError, KubeTransportError } from '../../shared/kube/types';
import { markLaunched, type NodeClaimRecord, newNodeClaimRecord } from '../../shared/nodeclaim/record';
import { noticePodFromPod } from '../../shared/notice';
import { entrySize, PUT_EVENTS_MAX_BYTES } from '../../shared/providers/eventbus';
import { InsufficientCapacityError, LaunchError, type LaunchedInstance } from '../../shared/providers/instance';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import type { NodeClaimsLaunchedPart } from '../../shared/runtime/launched-events';
import { parseProvisionRecords } from '../../shared/runtime/notices';
import {
  INITIALIZED_NODE_NOMINATION_MS,
  type NodeClaimsLaunchedDetail,
  type NodeClaimToLaunch,
  nodeClaimName,
  type ProvisionBatch,
  type ProvisionDeps,
  provision,
  RetryableProvisionError,
} from '../../shared/runtime/provision';
import { awsError } from '../providers/fakes';
import { instanceType, nodePool, standardTypes } from '../scheduling/helpers';
import { FakeInstances, FakeKube, FakeState, pendingPod, RecordingLog, RecordingMetrics, START } from './fakes';

let now: number;
let state: FakeState;
let instances: FakeInstances;
let kube: FakeKube;
let launches: NodeClaimToLaunch[];
let events: NodeClaimsLaunchedDetail[];
let log: RecordingLog;
let metrics: RecordingMetrics;
let launchFailure: ((request: NodeClaimToLaunch) => Error | undefined) | undefined;
let counter: number;

/** A launcher that behaves like InstanceLauncher: a claim that has an instance gets it back. */
async function launch(request: NodeClaimToLaunch): Promise<LaunchedInstance> {
  launches.push(request);
  const failure = launchFailure?.(request);
  if (failure) throw failure;
  const existing = [...instances.instances.values()].find((i) => i.nodeClaimName === request.nodeClaimName);
  if (existing) return { ...existing, existing: true };
  const offering = request.claim.offering;
  const added = instances.add({
    instanceId: `i-${(counter++).toString(16).padStart(8, '0')}`,
    nodeClaimName: request.nodeClaimName,
    nodePool: request.nodePool.metadata.name,
    instanceType: offering.instanceType,
    zone: offering.zone,
    capacityType: offering.capacityType,
  });
  return { ...added, existing: false };
}

function deps(overrides: Partial<ProvisionDeps> = {}): ProvisionDeps {
  return {
    cluster: 'c1',
    nodePools: [nodePool('default')],
    instanceTypes: async () => ({ byNodePool: { default: standardTypes() }, priceSource: 'bundled' }),
    instances,
    kube,
    state,
    records: state,
    launcher: { launch },
    events: {
      async nodeClaimsLaunched(detail) {
        events.push(detail);
      },
    },
    clock: () => now,
    log,
    metrics,
    ...overrides,
  };
}

/** A NodeClaim record as the launch writes it; launched (Launched=True) when given a providerID. */
function record(name: string, labels: Record<string, string>, types: string[], providerID?: string): NodeClaimRecord {
  const written = newNodeClaimRecord({
    name,
    labels,
    annotations: {},
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: types }],
      resources: { requests: {} },
      taints: [],
      startupTaints: [],
      expireAfter: '720h',
    },
    now: START,
  });
  if (!providerID) return written;
  return markLaunched(written, { providerID, imageID: 'ami-1', capacity: {}, allocatable: {}, labels: {}, now: START });
}

function pods(count: number, prefix = 'p', cpu = '500m'): Pod[] {
  return Array.from({ length: count }, (_, i) =>
    pendingPod(`${prefix}${i}`, {
      containers: [{ name: 'app', resources: { requests: { cpu, memory: '512Mi' } } }],
    }),
  );
}

/** A notice for these pods; the pods are also put in the cluster (pending) unless it has them already. */
function batch(list: Pod[], observedAt = '2026-01-01T00:00:00.000Z'): ProvisionBatch {
  for (const pod of list) if (!kube.pods.has(`default/${pod.metadata.name}`)) kube.putPod(pod);
  return { pods: list, daemonSets: [], observedAt };
}

beforeEach(() => {
  now = START;
  state = new FakeState(() => now);
  instances = new FakeInstances();
  kube = new FakeKube(async () => {});
  launches = [];
  events = [];
  log = new RecordingLog();
  metrics = new RecordingMetrics();
  launchFailure = undefined;
  counter = 1;
});

describe('provision', () => {
  it('launches no more claims into a reservation than it has instances; the pod left waits for the next decision, then takes on-demand', async () => {
    // What the capacity reservation provider lists: `left` instances, unavailable once none is left.
    let left = 1;
    const reservedType = () => {
      const t = instanceType('m5.large', { cpu: 2, memoryGiB: 8, price: 0.096, zones: ['us-west-2a'] });
      t.offerings.push({
        zone: 'us-west-2a',
        capacityType: 'reserved',
        price: 0.096 / 10_000_000,
        available: left > 0,
        reservationId: 'cr-1',
        reservationCapacity: left,
      });
      return t;
    };
    const pool = nodePool('default', {
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved', 'on-demand'] }],
    });
    const d = deps({
      nodePools: [pool],
      instanceTypes: async () => ({ byNodePool: { default: [reservedType()] }, priceSource: 'bundled' }),
    });
    const first = await provision(d, batch(pods(2, 'p', '1500m')));
    // Karpenter's strict reserved-offering mode: no on-demand while the reservation may still serve it.
    expect(launches.map((l) => l.claim.offering.capacityType)).toEqual(['reserved']);
    expect(launches[0]?.claim.requirements).toContainEqual({
      key: 'karpenter.k8s.aws/capacity-reservation-id',
      operator: 'In',
      values: ['cr-1'],
    });
    expect(first.detail.unschedulable).toEqual([
      { pod: 'default/p1', reasons: [expect.stringContaining('could not be reserved')] },
    ]);
    // Deferred, not failed: one log line, no FailedScheduling record.
    expect(log.lines.find((l) => l.message.startsWith('pods deferred'))?.fields).toEqual({ pods: ['default/p1'] });
    expect(log.lines.some((l) => l.message === 'pod fits nowhere')).toBe(false);

    left = 0;
    now += 10_000;
    const second = await provision(d, batch(pods(2, 'p', '1500m')));
    expect(launches.map((l) => l.claim.offering.capacityType)).toEqual(['reserved', 'on-demand']);
    expect(second.detail.nodeClaims.flatMap((c) => c.pods)).toEqual(['default/p1']);
    expect(second.detail.unschedulable).toEqual([]);
  });

  it('plans, launches, nominates the pods and reports the claims with their prices', async () => {
    const report = await provision(deps(), batch(pods(6)));

    expect(report.detail.nodeClaims.length).toBeGreaterThan(0);
    const placed = report.detail.nodeClaims.flatMap((c) => c.pods);
    expect(placed.sort()).toEqual(
      pods(6)
        .map((p) => `default/${p.metadata.name}`)
        .sort(),
    );
    for (const claim of report.detail.nodeClaims) {
      expect(claim.nodeClaimName).toMatch(/^default-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(claim.price).toBeGreaterThan(0);
      expect(state.nominationsByClaim.get(claim.nodeClaimName)?.podUids).toHaveLength(claim.pods.length);
      expect(state.nominationsByClaim.get(claim.nodeClaimName)?.expiresAt).toBe(START + 15 * 60 * 1000);
    }
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ cluster: 'c1', priceSource: 'bundled', unschedulable: [] });
    expect(metrics.sum(METRIC.launches, { capacityType: 'on-demand' })).toBe(report.detail.nodeClaims.length);
    expect(metrics.sum(METRIC.podsPerDecision)).toBe(6);
    expect(metrics.points.some((p) => p.name === METRIC.decisionLatency && p.unit === 'Milliseconds')).toBe(true);
    expect(log.lines.find((l) => l.message === 'provision decision')?.fields).toMatchObject({ priceSource: 'bundled' });
  });

  it('announces a 10,000-pod decision in parts PutEvents accepts, every claim once', async () => {
    const puts: string[] = [];
    const report = await provision(
      deps({
        events: {
          async nodeClaimsLaunched(detail) {
            const entry = { Source: 'karpless', DetailType: 'NodeClaimsLaunched', Detail: JSON.stringify(detail) };
            if (entrySize(entry) > PUT_EVENTS_MAX_BYTES) throw new Error(`entry of ${entrySize(entry)} bytes refused`);
            puts.push(entry.Detail);
          },
        },
      }),
      batch(pods(10_000, 'burst-pod-with-a-realistic-name-', '100m')),
    );
    const parts = puts.map((p) => JSON.parse(p) as NodeClaimsLaunchedPart);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.every((p) => p.part.count === parts.length)).toBe(true);
    const announced = parts.flatMap((p) => p.nodeClaims.map((c) => c.nodeClaimName));
    expect(announced).toEqual(report.detail.nodeClaims.map((c) => c.nodeClaimName));
    expect(parts.flatMap((p) => p.nodeClaims.flatMap((c) => c.pods))).toHaveLength(10_000);
  });

  it('keeps a decision whose launches went out when its event cannot be put, and says so', async () => {
    const report = await provision(
      deps({
        events: {
          async nodeClaimsLaunched() {
            throw new Error('PutEvents on bus b failed: InternalFailure');
          },
        },
      }),
      batch(pods(6)),
    );
    expect(report.detail.nodeClaims.length).toBeGreaterThan(0);
    expect(instances.instances.size).toBe(report.detail.nodeClaims.length);
    expect(log.lines.find((l) => l.message === 'NodeClaimsLaunched event not put; the launches stand')).toBeDefined();
    expect(metrics.sum(METRIC.actionFailures)).toBe(1);
  });

  it('launches nothing new when the same batch is delivered three times', async () => {
    for (let i = 0; i < 3; i++) await provision(deps(), batch(pods(6)));
    const names = new Set(launches.map((l) => l.nodeClaimName));
    expect(instances.instances.size).toBe(names.size);
    expect(launches).toHaveLength(names.size);
    expect(events.at(-1)?.nodeClaims).toEqual([]);
    expect(events.at(-1)?.inFlight).toEqual([]);
  });

  it('launches nothing when nominating fails (the pods are nominated before any launch); the retry launches each claim once', async () => {
    const nominate = state.nominate.bind(state);
    state.nominate = async () => {
      throw awsError('InternalServerError');
    };
    await expect(provision(deps(), batch(pods(4)))).rejects.toThrow();
    expect(launches).toEqual([]);
    state.nominate = nominate;

    const report = await provision(deps(), batch(pods(4)));
    expect(report.detail.nodeClaims.length).toBeGreaterThan(0);
    expect(instances.instances.size).toBe(report.detail.nodeClaims.length);
    expect(metrics.sum(METRIC.launches)).toBe(report.detail.nodeClaims.length);
  });

  it('names claims from the decision: another observation of the same pods gets new names', () => {
    const a = nodeClaimName('default', '2026-01-01T00:00:00Z', ['u2', 'u1']);
    expect(nodeClaimName('default', '2026-01-01T00:00:00Z', ['u1', 'u2'])).toBe(a);
    expect(nodeClaimName('default', '2026-01-01T00:01:00Z', ['u1', 'u2'])).not.toBe(a);
  });

  it('puts new pods on a claim in flight that has room instead of launching', async () => {
    await provision(deps(), batch(pods(1, 'first', '100m')));
    expect(launches).toHaveLength(1);
    const claim = launches[0]!.nodeClaimName;

    const report = await provision(
      deps(),
      batch([...pods(1, 'first', '100m'), ...pods(1, 'second', '100m')], '2026-01-01T00:00:05.000Z'),
    );
    expect(launches).toHaveLength(1);
    expect(report.alreadyNominated).toBe(1);
    expect(report.detail.inFlight).toEqual([{ nodeClaimName: claim, pods: ['default/second0'] }]);
    expect(state.nominationsByClaim.get(claim)?.podUids.sort()).toEqual(['uid-first0', 'uid-second0']);
  });

  it('plans again pods whose claim has no live instance any more', async () => {
    await state.nominate({
      nodeClaimName: 'default-gone',
      nodePool: 'default',
      podUids: ['uid-p0'],
      expiresAt: START + 60_000,
    });
    const report = await provision(deps(), batch(pods(1)));
    expect(report.alreadyNominated).toBe(0);
    expect(launches).toHaveLength(1);
  });

  it('counts the claims earlier decisions launched against NodePool limits: the second decision launches nothing', async () => {
    // Prepare: cpu limit 8; the first decision fills it with one 8-vCPU claim (whose nomination then expires).
    const limited = { nodePools: [nodePool('default', { limits: { cpu: '8' } })] };
    const first = await provision(deps(limited), batch(pods(1, 'a', '7')));
    expect(first.detail.nodeClaims.map((c) => c.instanceType)).toEqual([expect.stringMatching(/\.2xlarge$/)]);
    now += 16 * 60 * 1000;
    // Act: new pods in a later decision.
    const second = await provision(deps(limited), batch(pods(2, 'b', '1'), '2026-01-01T00:20:00.000Z'));
    // Assess: the live instance holds the whole limit, so nothing is launched and the pods say why.
    expect(second.detail.nodeClaims).toEqual([]);
    expect(launches).toHaveLength(1);
    expect(second.detail.unschedulable.map((u) => u.reasons[0])).toEqual([
      'NodePool default: limits exhausted (cpu 8 of 8 used)',
      'NodePool default: limits exhausted (cpu 8 of 8 used)',
    ]);
  });

  it('counts a claim whose record is written but not launched yet against limits, at the largest type it may launch', async () => {
    // Prepare: cpu limit 8; a record another function wrote before its CreateFleet, allowed up to an 8-vCPU type.
    state.records = [record('default-inflight', { 'karpenter.sh/nodepool': 'default' }, ['m5.large', 'm5.2xlarge'])];
    const limited = { nodePools: [nodePool('default', { limits: { cpu: '8' } })] };
    // Act
    const report = await provision(deps(limited), batch(pods(1, 'a', '1')));
    // Assess: nothing launched, the limit is held by the claim in flight.
    expect(launches).toEqual([]);
    expect(report.detail.unschedulable[0]?.reasons[0]).toBe('NodePool default: limits exhausted (cpu 8 of 8 used)');
  });

  it('neither counts nor offers a claim whose record is marked for deletion', async () => {
    // Prepare: the pool's whole cpu limit is one live 8-vCPU claim that is being deleted, with room left.
    instances.add({ instanceId: 'i-0del', nodeClaimName: 'default-del', instanceType: 'm5.2xlarge', zone: 'zone-a' });
    const deleting = record(
      'default-del',
      { 'karpenter.sh/nodepool': 'default' },
      ['m5.2xlarge'],
      'aws:///zone-a/i-0del',
    );
    deleting.metadata.deletionTimestamp = new Date(START).toISOString();
    state.records = [deleting];
    await state.nominate({ nodeClaimName: 'default-del', nodePool: 'default', podUids: [], expiresAt: START + 60_000 });
    const limited = { nodePools: [nodePool('default', { limits: { cpu: '8' } })] };
    // Act
    const report = await provision(deps(limited), batch(pods(1, 'a', '1')));
    // Assess: a new claim, not the deleting one.
    expect(report.detail.inFlight).toEqual([]);
    expect(launches).toHaveLength(1);
  });

  it('offers a claim in flight with its record’s labels: a pod selecting team=b joins the claim launched for team=b', async () => {
    // Prepare: team In [a, b]; the claim in flight was narrowed to team=b (its record says so, its pool cannot).
    const pool = nodePool('default', { requirements: [{ key: 'team', operator: 'In', values: ['a', 'b'] }] });
    instances.add({ instanceId: 'i-0b', nodeClaimName: 'default-teamb', instanceType: 'm5.xlarge', zone: 'zone-a' });
    state.records = [
      record('default-teamb', { 'karpenter.sh/nodepool': 'default', team: 'b' }, ['m5.xlarge'], 'aws:///zone-a/i-0b'),
    ];
    await state.nominate({
      nodeClaimName: 'default-teamb',
      nodePool: 'default',
      podUids: [],
      expiresAt: START + 60_000,
    });
    const forB = pendingPod('b0', {
      nodeSelector: { team: 'b' },
      containers: [{ name: 'app', resources: { requests: { cpu: '1', memory: '512Mi' } } }],
    });
    const forA = pendingPod('a0', {
      nodeSelector: { team: 'a' },
      containers: [{ name: 'app', resources: { requests: { cpu: '1', memory: '512Mi' } } }],
    });
    // Act
    const report = await provision(deps({ nodePools: [pool] }), batch([forB, forA]));
    // Assess: team=b rides the claim in flight, team=a gets a claim of its own.
    expect(report.detail.inFlight).toEqual([{ nodeClaimName: 'default-teamb', pods: ['default/b0'] }]);
    expect(launches.map((l) => l.claim.pods.map((p) => p.metadata.name))).toEqual([['a0']]);
  });

  it('reports pods that fit nowhere with the reasons, and keeps them for their FailedScheduling events', async () => {
    const huge = pods(2, 'huge', '500');
    const unschedulable = new InMemoryStateStore(() => now);
    const report = await provision(deps({ unschedulable }), batch(huge));
    expect(launches).toEqual([]);
    expect(report.detail.unschedulable.map((u) => u.pod)).toEqual(['default/huge0', 'default/huge1']);
    const reasons = report.detail.unschedulable[0]?.reasons ?? [];
    expect(reasons.length).toBeGreaterThan(0);
    // One record for the two replicas, which share their reasons.
    expect(await unschedulable.unschedulable()).toMatchObject([
      { reasons, podUids: huge.map((p) => p.metadata.uid), expiresAt: now + 5 * 60_000 },
    ]);
  });

  it('counts a capacity error, reports its pods, and does not ask for the batch again', async () => {
    launchFailure = (r) =>
      new InsufficientCapacityError(r.nodeClaimName, [
        { offering: 'on-demand:m5.large:zone-a', code: 'InsufficientInstanceCapacity', message: 'none' },
      ]);
    const report = await provision(deps(), batch(pods(2)));
    expect(metrics.sum(METRIC.capacityErrors)).toBeGreaterThan(0);
    expect(report.detail.unschedulable.map((u) => u.pod).sort()).toEqual(['default/p0', 'default/p1']);
    expect(report.detail.unschedulable[0]?.reasons[0]).toContain('no offering has capacity');
    expect(state.nominationsByClaim.size).toBe(0);
  });

  it('acknowledges a launch error retrying cannot cure', async () => {
    launchFailure = (r) =>
      new LaunchError(r.nodeClaimName, [{ offering: '', code: 'UnauthorizedOperation', message: 'denied' }]);
    const report = await provision(deps(), batch(pods(2)));
    expect(report.detail.nodeClaims).toEqual([]);
    expect(events).toHaveLength(1);
  });

  it('launches what it can and asks for the batch again after a retryable failure', async () => {
    let first = true;
    launchFailure = () => {
      if (!first) return undefined;
      first = false;
      return awsError('RequestLimitExceeded');
    };
    const many = pods(40, 'p', '1');
    await expect(provision(deps(), batch(many))).rejects.toBeInstanceOf(RetryableProvisionError);
    const launched = instances.instances.size;
    expect(launched).toBeGreaterThan(0);
    expect(events).toHaveLength(1);

    await provision(deps(), batch(many));
    expect(instances.instances.size).toBe(launched + 1);
  });
});

describe('provision reads the cluster', () => {
  it('launches nothing for a notice of bound, deleted, nonexistent, terminating or not-Unschedulable pods, and says why', async () => {
    const named = [
      ...pods(1, 'bound'),
      ...pods(1, 'gone'),
      ...pods(1, 'never'),
      ...pods(1, 'ending'),
      ...pods(1, 'fresh'),
      ...pods(1, 'recreated'),
    ];
    kube.putPod({ ...structuredClone(named[0]!), spec: { ...named[0]!.spec, nodeName: 'ip-10-0-0-1' } });
    kube.putPod(named[3]!);
    kube.pods.get('default/ending0')!.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    kube.putPod({ ...structuredClone(named[4]!), status: { phase: 'Pending' } });
    kube.putPod({ ...structuredClone(named[5]!), metadata: { ...named[5]!.metadata, uid: 'another-uid' } });
    kube.putPod(named[1]!);
    kube.removePod('default', 'gone0');

    const report = await provision(deps(), { pods: named, daemonSets: [], observedAt: '2026-01-01T00:00:00.000Z' });

    expect(launches).toEqual([]);
    expect(state.nominationsByClaim.size).toBe(0);
    const reasons = Object.fromEntries(report.detail.ignored.map((i) => [i.pod, i.reason]));
    expect(reasons).toEqual({
      'default/bound0': 'bound to node ip-10-0-0-1',
      'default/gone0': 'does not exist or has finished',
      'default/never0': 'does not exist or has finished',
      'default/ending0': 'terminating',
      'default/fresh0': expect.stringContaining('not marked Unschedulable'),
      'default/recreated0': expect.stringContaining('now is another-uid'),
    });
    expect(events[0]?.ignored).toEqual(report.detail.ignored);
    const line = log.lines.filter((l) => l.message.startsWith('notice launches nothing'));
    expect(line).toHaveLength(1);
    expect(line[0]?.fields?.pods).toContain('default/bound0: bound to node ip-10-0-0-1');
  });

  it('plans the API server’s object of a pod, not the notice’s copy', async () => {
    const [notice] = pods(1, 'big', '100m');
    kube.putPod({
      ...structuredClone(notice!),
      spec: { containers: [{ name: 'app', resources: { requests: { cpu: '7', memory: '1Gi' } } }] },
    });
    await provision(deps(), batch([notice!]));
    expect(launches).toHaveLength(1);
    expect(launches[0]?.claim.requests.cpu).toBeGreaterThanOrEqual(7000);
  });

  it('retries the batch and launches nothing when the API server times out while the decision reads it', async () => {
    const list = pods(3);
    const b = batch(list);
    kube.failNext.set(
      'listPods',
      new KubeTransportError('GET https://api/api/v1/pods', 'request', 'timed out after 30000 ms'),
    );
    await expect(provision(deps(), b)).rejects.toBeInstanceOf(RetryableProvisionError);
    expect(launches).toEqual([]);
    expect(events).toEqual([]);

    await provision(deps(), b);
    expect(launches.length).toBeGreaterThan(0);
  });

  it('retries when the volume objects cannot be read, with nothing launched', async () => {
    const [withClaim] = pods(1, 'db');
    withClaim!.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }];
    kube.failNext.set(
      'listPersistentVolumes',
      new KubeApiError('GET /api/v1/persistentvolumes', 503, 'ServiceUnavailable', 'etcd'),
    );
    await expect(provision(deps(), batch([withClaim!, ...pods(2)]))).rejects.toBeInstanceOf(RetryableProvisionError);
    expect(launches).toEqual([]);
  });

  it('does not overfill the first decision’s claims with a burst split over two decisions', async () => {
    const types = [instanceType('c6a.xlarge', { cpu: 4, memoryGiB: 8 })];
    const d = deps({ instanceTypes: async () => ({ byNodePool: { default: types }, priceSource: 'bundled' }) });
    await provision(d, batch(pods(12, 'first', '1')));
    // The first burst is still pending (its nodes have not joined); the second notice names only the rest.
    await provision(d, batch(pods(12, 'second', '1'), '2026-01-01T00:00:05.000Z'));

    const allocatable = types[0]!.allocatable.cpu ?? 0;
    expect(state.nominationsByClaim.size).toBe(instances.instances.size);
    for (const nomination of state.nominationsByClaim.values()) {
      expect(nomination.podUids.length * 1000).toBeLessThanOrEqual(allocatable);
    }
    const nominated = [...state.nominationsByClaim.values()].flatMap((n) => n.podUids);
    expect(new Set(nominated).size).toBe(24);
  });

  it('reuses an uninitialized node of ours with a startup taint and room: no second launch', async () => {
    const startup = { key: 'example.com/agent-not-ready', effect: 'NoSchedule' as const };
    const pool = nodePool('default', { startupTaints: [startup] });
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-x2b4k', instanceType: 'm5.xlarge', zone: 'zone-a' });
    kube.putNode({
      metadata: {
        name: 'ip-10-0-1-1',
        labels: {
          'karpenter.sh/nodepool': 'default',
          'karpenter.sh/registered': 'true',
          'kubernetes.io/hostname': 'ip-10-0-1-1',
          'topology.kubernetes.io/zone': 'zone-a',
        },
      },
      spec: {
        providerID: 'aws:///zone-a/i-0abc',
        taints: [startup, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
      },
      status: { allocatable: { cpu: '3920m', memory: '14Gi', pods: '58' } },
    });
    const report = await provision(deps({ nodePools: [pool] }), batch(pods(2, 'p', '1')));

    expect(launches).toEqual([]);
    expect(report.detail.inFlight).toEqual([{ nodeClaimName: 'default-x2b4k', pods: ['default/p0', 'default/p1'] }]);
    expect(state.nominationsByClaim.get('default-x2b4k')?.podUids.sort()).toEqual(['uid-p0', 'uid-p1']);
  });

  it('launches beside an initialized node whose taint the pods do not tolerate', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-x2b4k', instanceType: 'm5.xlarge', zone: 'zone-a' });
    kube.putNode({
      metadata: {
        name: 'ip-10-0-1-1',
        labels: { 'karpenter.sh/nodepool': 'default', 'karpenter.sh/initialized': 'true' },
      },
      spec: {
        providerID: 'aws:///zone-a/i-0abc',
        taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
      },
      status: { allocatable: { cpu: '3920m', memory: '14Gi', pods: '58' } },
    });
    await provision(deps(), batch(pods(2, 'p', '1')));
    expect(launches).toHaveLength(1);
  });

  it('counts what is bound on our node: a full node gets no more pods', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-x2b4k', instanceType: 'm5.xlarge', zone: 'zone-a' });
    kube.putNode({
      metadata: {
        name: 'ip-10-0-1-1',
        labels: { 'karpenter.sh/nodepool': 'default', 'karpenter.sh/initialized': 'true' },
      },
      spec: { providerID: 'aws:///zone-a/i-0abc' },
      status: { allocatable: { cpu: '3920m', memory: '14Gi', pods: '58' } },
    });
    for (const running of pods(2, 'running', '1')) {
      kube.putPod({ ...running, spec: { ...running.spec, nodeName: 'ip-10-0-1-1' }, status: { phase: 'Running' } });
    }
    const report = await provision(deps(), batch(pods(2, 'p', '1')));
    expect(report.detail.inFlight).toEqual([{ nodeClaimName: 'default-x2b4k', pods: ['default/p0'] }]);
    expect(launches).toHaveLength(1);
    expect(state.nominationsByClaim.get('default-x2b4k')?.expiresAt).toBe(START + INITIALIZED_NODE_NOMINATION_MS);
  });
});

describe('provision: volume topology', () => {
  function withClaim(name: string, claimName: string): Pod {
    const [pod] = pods(1, name);
    pod!.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName } }];
    return pod!;
  }

  it('plans a pod whose claim is bound to a volume in zone b only in zone b', async () => {
    kube.persistentVolumeClaims.push({
      metadata: { name: 'data', namespace: 'default' },
      spec: { storageClassName: 'gp3', volumeName: 'pv-1' },
    });
    kube.persistentVolumes.push({
      metadata: { name: 'pv-1' },
      spec: {
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['zone-b'] }] },
            ],
          },
        },
      },
    });
    await provision(deps(), batch([withClaim('db', 'data')]));
    expect(launches).toHaveLength(1);
    const zones = launches[0]!.claim.instanceTypes.flatMap((t) => t.offerings.map((o) => o.zone));
    expect(launches[0]!.claim.offering.zone).toBe('zone-b');
    expect(launches[0]!.claim.requirements).toContainEqual(
      expect.objectContaining({ key: 'topology.kubernetes.io/zone', values: ['zone-b'] }),
    );
    expect(zones).toContain('zone-b');
  });

  it('takes the first allowed topology of a WaitForFirstConsumer class for an unbound claim', async () => {
    kube.persistentVolumeClaims.push({
      metadata: { name: 'data', namespace: 'default' },
      spec: { storageClassName: 'zonal' },
    });
    kube.storageClasses.push({
      metadata: { name: 'zonal' },
      volumeBindingMode: 'WaitForFirstConsumer',
      allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['zone-c'] }] }],
    });
    await provision(deps(), batch([withClaim('db', 'data')]));
    expect(launches[0]?.claim.offering.zone).toBe('zone-c');
  });

  it('reports a pod with a missing claim, or an unbound one bound Immediately, as unschedulable with the reason', async () => {
    kube.persistentVolumeClaims.push({
      metadata: { name: 'now', namespace: 'default' },
      spec: { storageClassName: 'gp2' },
    });
    kube.storageClasses.push({ metadata: { name: 'gp2' }, volumeBindingMode: 'Immediate' });
    const report = await provision(
      deps(),
      batch([withClaim('a', 'missing'), withClaim('b', 'now'), ...pods(1, 'plain')]),
    );

    expect(launches.flatMap((l) => l.claim.pods.map((p) => p.metadata.name))).toEqual(['plain0']);
    const reasons = Object.fromEntries(report.detail.unschedulable.map((u) => [u.pod, u.reasons]));
    expect(reasons['default/a0']).toEqual(['persistentvolumeclaim default/missing (volume data) does not exist']);
    expect(reasons['default/b0']?.[0]).toMatch(/default\/now is not bound and binds Immediately \(storageclass gp2\)/);
  });

  it('reads no volume objects when no pod mounts a claim', async () => {
    await provision(deps(), batch(pods(2)));
    expect(kube.callsTo('listPersistentVolumeClaims')).toEqual([]);
    expect(kube.callsTo('listStorageClasses')).toEqual([]);
  });
});

describe('a notice naming another cluster', () => {
  it('is acknowledged with one problem that names its pods', () => {
    const body = JSON.stringify({
      'detail-type': 'PodsUnschedulable',
      detail: {
        cluster: 'other',
        observedAt: '2026-01-01T00:00:00.000Z',
        pods: pods(2).map(noticePodFromPod),
        daemonSets: [],
      },
    });
    const parsed = parseProvisionRecords([{ messageId: 'm0', body }], 'c1');
    expect(parsed.batch).toBeUndefined();
    expect(parsed.rejected).toEqual([
      {
        messageId: 'm0',
        problems: [
          'detail.cluster: "other" is not this function\'s cluster "c1": nothing planned for pods default/p0, default/p1',
        ],
      },
    ]);
  });
});
