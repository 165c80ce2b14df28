import { beforeEach, describe, expect, it } from 'vitest';
import type { Node } from '../../shared/apis/core/v1';
import { KUBE, METRIC } from '../../shared/contracts';
import type { InterruptionMessage } from '../../shared/interruption/types';
import { KubeTransportError } from '../../shared/kube/types';
import { handleInterruption, type InterruptionDeps, isRetryable } from '../../shared/runtime/interruption';
import { awsError } from '../providers/fakes';
import {
  boundPod,
  FakeInstances,
  FakeKube,
  FakeState,
  RecordingLog,
  RecordingMetrics,
  START,
  type VirtualTime,
  virtualTime,
} from './fakes';

let time: VirtualTime;
let kube: FakeKube;
let state: FakeState;
let instances: FakeInstances;
let log: RecordingLog;
let metrics: RecordingMetrics;

/** A stand-in parser over a tiny JSON shape: the real registry is shared/interruption's. */
function parse(body: string): InterruptionMessage {
  const value = JSON.parse(body) as Partial<InterruptionMessage>;
  if (typeof value.kind !== 'string') throw new Error('field "kind" is missing');
  return {
    kind: value.kind,
    eventId: value.eventId ?? 'e1',
    instanceIds: value.instanceIds ?? [],
    time: value.time ?? START,
    action: value.action ?? 'CordonAndDrain',
  };
}

function deps(overrides: Partial<InterruptionDeps> = {}): InterruptionDeps {
  return {
    cluster: 'c1',
    kube,
    instances,
    state,
    parse,
    rebalanceAction: 'record',
    isEvictable: (pod) => pod.metadata.ownerReferences?.[0]?.kind !== 'DaemonSet',
    clock: time.clock,
    sleep: time.sleep,
    invocationDeadline: START + 5 * 60_000,
    log,
    metrics,
    ...overrides,
  };
}

function registeredNode(name: string, instanceId: string): Node {
  return {
    metadata: {
      name,
      labels: { [KUBE.registeredLabel]: 'true' },
      finalizers: [KUBE.terminationFinalizer],
    } as Node['metadata'],
    spec: { providerID: `aws:///us-west-2a/${instanceId}`, taints: [] },
  };
}

function spot(instanceId: string, eventId = 'e1'): string {
  return JSON.stringify({ kind: 'SpotInterruption', eventId, instanceIds: [instanceId], time: START });
}

beforeEach(() => {
  time = virtualTime();
  kube = new FakeKube(time.sleep);
  state = new FakeState(time.clock);
  instances = new FakeInstances();
  log = new RecordingLog();
  metrics = new RecordingMetrics();
});

describe('interruption', () => {
  it('puts SpotInterrupted and TerminatingOnInterruption on the NodeClaim object too, where one exists', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc', capacityType: 'spot' });
    instances.add({ instanceId: 'i-0def', nodeClaimName: 'default-def', capacityType: 'spot' });
    kube.putNode(registeredNode('n1', 'i-0abc'));
    kube.putNode(registeredNode('n2', 'i-0def'));
    // Only default-abc has its NodeClaim object (the CRDs installed, the watcher mirrored it).
    const nodeClaimObjects = {
      get: async (_: string, name: string) =>
        name === 'default-abc' ? { metadata: { name, uid: 'uid-abc' } } : undefined,
    };
    await time.run(handleInterruption(deps({ nodeClaimObjects }), spot('i-0abc')));
    await time.run(handleInterruption(deps({ nodeClaimObjects }), spot('i-0def', 'e2')));
    const onClaims = kube.events.filter((e) => e.involvedObject.kind === 'NodeClaim');
    expect(onClaims.map((e) => [e.involvedObject, e.reason])).toEqual([
      [{ kind: 'NodeClaim', apiVersion: 'karpenter.sh/v1', name: 'default-abc', uid: 'uid-abc' }, 'SpotInterrupted'],
      [
        { kind: 'NodeClaim', apiVersion: 'karpenter.sh/v1', name: 'default-abc', uid: 'uid-abc' },
        'TerminatingOnInterruption',
      ],
    ]);
    expect(onClaims[1]?.message).toBe('Interruption triggered termination for the NodeClaim');
    expect(kube.events.filter((e) => e.reason === 'SpotInterrupted').map((e) => e.involvedObject.name)).toEqual([
      'n1',
      'default-abc',
      'n2',
    ]);
  });

  it('drains our spot node: taint, evict, terminate, offering unavailable, events on the node', async () => {
    instances.add({
      instanceId: 'i-0abc',
      nodeClaimName: 'default-abc',
      capacityType: 'spot',
      instanceType: 'm5.large',
    });
    kube.putNode(registeredNode('n1', 'i-0abc'));
    kube.putPod(boundPod('web-1', 'n1'));
    kube.putPod(boundPod('web-2', 'n1'));

    const outcome = await time.run(handleInterruption(deps(), spot('i-0abc')));

    expect(outcome).toEqual({ status: 'handled', kind: 'SpotInterruption', instanceIds: ['i-0abc'], evicted: 2 });
    const taint = kube.callsTo('patchNode')[0]?.[1];
    expect(taint).toMatchObject({ spec: { taints: [{ key: KUBE.disruptedTaintKey, effect: 'NoSchedule' }] } });
    expect(kube.events.filter((e) => e.involvedObject.kind === 'Node').map((e) => e.reason)).toEqual([
      'SpotInterrupted',
      'TerminatingOnInterruption',
    ]);
    expect(kube.events.filter((e) => e.reason === 'Evicted').map((e) => e.involvedObject.name)).toEqual([
      'web-1',
      'web-2',
    ]);
    expect(instances.terminated).toEqual(['i-0abc']);
    expect(state.unavailable.get('spot:m5.large:us-west-2a')).toEqual({ reason: 'SpotInterruption', ttlMs: 180_000 });
    expect(kube.pods.size).toBe(0);
    expect(kube.nodes.has('n1')).toBe(false);
    expect(metrics.sum(METRIC.interruptions, { kind: 'SpotInterruption' })).toBe(1);
    // One eviction attempt per step: a PodDisruptionBudget's refusal is retried by a later step, not slept on.
    for (const [, , deadline] of kube.callsTo('evictPod')) expect(deadline).toBeLessThanOrEqual(time.clock());
  });

  it('marks the reservation of an interrupted reserved node unavailable, and drains it', async () => {
    instances.add({
      instanceId: 'i-0res',
      nodeClaimName: 'reserved-abc',
      capacityType: 'reserved',
      instanceType: 'p5.48xlarge',
      reservation: { id: 'cr-1', type: 'default' },
    });
    kube.putNode(registeredNode('n1', 'i-0res'));
    const body = JSON.stringify({
      kind: 'CapacityReservationInterruption',
      eventId: 'e9',
      instanceIds: ['i-0res'],
      time: START,
    });
    const outcome = await time.run(handleInterruption(deps(), body));
    expect(outcome).toMatchObject({
      status: 'handled',
      kind: 'CapacityReservationInterruption',
      instanceIds: ['i-0res'],
    });
    expect(state.unavailable.get('reservation:cr-1')).toEqual({
      reason: 'CapacityReservationInterruption',
      ttlMs: 180_000,
    });
    expect(state.unavailable.has('reserved:p5.48xlarge:us-west-2a')).toBe(false);
    expect(instances.terminated).toEqual(['i-0res']);
  });

  it('finds the node by the instance’s private DNS name without listing every node', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc', privateDnsName: 'ip-10-0-0-1.ec2.internal' });
    kube.putNode(registeredNode('ip-10-0-0-1.ec2.internal', 'i-0abc'));
    const outcome = await time.run(handleInterruption(deps(), spot('i-0abc')));
    expect(outcome.status).toBe('handled');
    expect(kube.callsTo('listNodes')).toEqual([]);
    expect(instances.terminated).toEqual(['i-0abc']);
  });

  it('hands a drain a budget blocks to the watcher after a head start: handled, node deleted, instance running', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc', capacityType: 'spot' });
    kube.putNode(registeredNode('n1', 'i-0abc'));
    kube.putPod(boundPod('web-1', 'n1'));
    kube.evictionAnswers.set('default/web-1', Array(1000).fill({ kind: 'blocked', message: 'pdb' }));

    const outcome = await time.run(handleInterruption(deps(), spot('i-0abc')));
    expect(outcome.status).toBe('handled');
    expect(instances.terminated).toEqual([]);
    expect(time.clock()).toBeLessThanOrEqual(START + 10_000);
    // The Node is being deleted (our finalizer holds it): the watcher resumes from the drain record.
    expect(kube.nodes.get('n1')?.metadata.deletionTimestamp).toBeDefined();
    expect(state.drainRecords.get('n1')).toMatchObject({ phase: 'draining', reason: 'SpotInterruption' });
    expect(kube.events.map((e) => e.reason)).toContain('FailedDraining');
  });

  it('acknowledges another cluster’s (or a missing) instance without touching anything', async () => {
    const outcome = await time.run(handleInterruption(deps(), spot('i-0ther')));
    expect(outcome).toEqual({ status: 'acknowledged', reason: 'SpotInterruption: not an instance of ours' });
    expect(kube.calls).toEqual([]);
    expect(instances.terminated).toEqual([]);
    expect(state.unavailable.size).toBe(0);
  });

  it('does nothing more on redelivery', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc', capacityType: 'spot' });
    kube.putNode(registeredNode('n1', 'i-0abc'));
    kube.putPod(boundPod('web-1', 'n1'));
    await time.run(handleInterruption(deps(), spot('i-0abc')));
    const calls = kube.calls.length;

    const again = await time.run(handleInterruption(deps(), spot('i-0abc')));
    expect(again.status).toBe('handled');
    expect(kube.callsTo('evictPod')).toHaveLength(1);
    expect(kube.calls.slice(calls).map((c) => c.method)).toEqual(['listNodes']);
  });

  it('resumes a drain that an earlier delivery left unfinished', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc' });
    kube.putNode(registeredNode('n1', 'i-0abc'));
    kube.putPod(boundPod('web-1', 'n1'));
    kube.failNext.set('evictPod', Object.assign(new Error('503 ServiceUnavailable'), { code: 503 }));
    const body = JSON.stringify({ kind: 'InstanceStateChange', eventId: 'e2', instanceIds: ['i-0abc'], time: START });

    const first = await time.run(handleInterruption(deps(), body));
    expect(first).toMatchObject({ status: 'failed', retryable: true });
    expect(state.drainRecords.get('n1')).toBeDefined();

    const second = await time.run(handleInterruption(deps(), body));
    expect(second).toMatchObject({ status: 'handled', evicted: 1 });
    expect(instances.terminated).toEqual(['i-0abc']);
  });

  it('terminates an instance of ours that has no node yet and frees its pods', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc', capacityType: 'spot' });
    await state.nominate({
      nodeClaimName: 'default-abc',
      nodePool: 'default',
      podUids: ['u'],
      expiresAt: START + 60_000,
    });
    const outcome = await time.run(handleInterruption(deps(), spot('i-0abc')));
    expect(outcome.status).toBe('handled');
    expect(instances.terminated).toEqual(['i-0abc']);
    expect(state.nominationsByClaim.size).toBe(0);
  });

  it('records a rebalance recommendation, or acts on it when configured to', async () => {
    instances.add({ instanceId: 'i-0abc', nodeClaimName: 'default-abc', capacityType: 'spot' });
    kube.putNode(registeredNode('n1', 'i-0abc'));
    const body = JSON.stringify({
      kind: 'RebalanceRecommendation',
      eventId: 'r1',
      instanceIds: ['i-0abc'],
      action: 'NoAction',
    });
    expect((await time.run(handleInterruption(deps(), body))).status).toBe('acknowledged');
    expect(instances.terminated).toEqual([]);
    expect((await time.run(handleInterruption(deps({ rebalanceAction: 'act' }), body))).status).toBe('handled');
    expect(instances.terminated).toEqual(['i-0abc']);
    expect(state.unavailable.size).toBe(0);
  });

  it('acknowledges an unknown kind', async () => {
    const outcome = await time.run(handleInterruption(deps(), JSON.stringify({ kind: 'Unknown', action: 'NoAction' })));
    expect(outcome.status).toBe('acknowledged');
    expect(metrics.sum(METRIC.interruptions, { kind: 'Unknown' })).toBe(1);
  });

  it('fails an unparseable record without retrying hope, naming the parse error', async () => {
    const outcome = await time.run(handleInterruption(deps(), '{"truncated'));
    expect(outcome).toMatchObject({ status: 'failed', retryable: false });
    expect(outcome.status === 'failed' && outcome.reason).toMatch(/^unparseable message: /);
    const missing = await time.run(handleInterruption(deps(), '{}'));
    expect(missing.status === 'failed' && missing.reason).toContain('field "kind" is missing');
  });

  it('fails a throttled lookup as retryable', async () => {
    instances.failNext = awsError('RequestLimitExceeded');
    const outcome = await time.run(handleInterruption(deps(), spot('i-0abc')));
    expect(outcome).toMatchObject({ status: 'failed', retryable: true });
  });
});

describe('isRetryable', () => {
  it('tells passing failures from lasting ones', () => {
    expect(isRetryable(awsError('ThrottlingException'))).toBe(true);
    expect(isRetryable(Object.assign(new Error('x'), { $metadata: { httpStatusCode: 503 } }))).toBe(true);
    expect(isRetryable(Object.assign(new Error('x'), { code: 500 }))).toBe(true);
    expect(isRetryable(awsError('TimeoutError'))).toBe(true);
    expect(isRetryable(new KubeTransportError('GET /api/v1/nodes', 'connect', 'ECONNREFUSED'))).toBe(true);
    expect(isRetryable(awsError('UnauthorizedOperation'))).toBe(false);
    expect(isRetryable(new Error('boom'))).toBe(false);
  });
});
