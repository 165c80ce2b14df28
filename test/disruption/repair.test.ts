// Node repair's decisions, pure (shared/disruption/repair.ts), and its forceful termination deadline
// (shared/runtime/termination.ts ensureTermination). Names mirror kubernetes-sigs/karpenter
// pkg/controllers/node/health/suite_test.go.

import { describe, expect, it } from 'vitest';
import type { Node, NodeCondition } from '../../shared/apis/core/v1';
import { allowedUnhealthy, planRepair, type RepairSubject, unhealthyCondition } from '../../shared/disruption/repair';
import type { DrainRecord } from '../../shared/providers/state';
import { ensureTermination } from '../../shared/runtime/termination';
import { FakeState, RecordingLog, RecordingMetrics, START } from '../runtime/fakes';

const HEALTH = 'pkg/controllers/node/health/suite_test.go';
const MINUTE = 60_000;
const now = START + 24 * 60 * MINUTE;

function healthNode(name: string, conditions: [type: string, status: NodeCondition['status'], agoMin: number][]): Node {
  return {
    metadata: { name, labels: { 'karpenter.sh/nodepool': 'general' } },
    status: {
      conditions: conditions.map(([type, status, ago]) => ({
        type,
        status,
        lastTransitionTime: new Date(now - ago * MINUTE).toISOString(),
      })),
    },
  };
}

/** nodePool null: a node of no pool. */
const subject = (node: Node, nodePool: string | null = 'general', managed = true): RepairSubject => ({
  node,
  managed,
  ...(nodePool !== null ? { nodePool } : {}),
});
const healthy = (i: number, pool: string | null = 'general') =>
  subject(healthNode(`ok-${i}`, [['Ready', 'True', 60]]), pool);
const names = (decisions: readonly { nodeName: string }[]) => decisions.map((d) => d.nodeName);

describe(`${HEALTH}: Reconciliation`, () => {
  it('should delete nodes that are unhealthy by the cloud provider (Ready False and Unknown past 30 minutes)', () => {
    const plan = planRepair({
      now,
      subjects: [
        subject(healthNode('false', [['Ready', 'False', 31]])),
        subject(healthNode('unknown', [['Ready', 'Unknown', 30]])),
        ...[1, 2, 3, 4, 5, 6, 7, 8].map((i) => healthy(i)),
      ],
    });
    expect(names(plan.repair)).toEqual(['false', 'unknown']);
    expect(plan.repair[0]).toMatchObject({ condition: 'Ready=False', nodePool: 'general', since: now - 31 * MINUTE });
  });

  it('should not delete node when unhealthy type does not match cloud provider passed in value', () => {
    const plan = planRepair({ now, subjects: [subject(healthNode('bad', [['BadNode', 'False', 120]]))] });
    expect(plan).toEqual({ repair: [], blocked: [], waiting: [] });
  });

  it('should not delete node when health status does not match cloud provider passed in value', () => {
    // AcceleratedHardwareReady's policy is False; Unknown is not unhealthy.
    const node = healthNode('gpu', [
      ['Ready', 'True', 120],
      ['AcceleratedHardwareReady', 'Unknown', 120],
    ]);
    expect(unhealthyCondition(node)).toBeUndefined();
    expect(planRepair({ now, subjects: [subject(node)] }).repair).toEqual([]);
  });

  it('should not delete node when health duration is not reached (it waits, due at the toleration)', () => {
    const plan = planRepair({ now, subjects: [subject(healthNode('late', [['Ready', 'False', 29]]))] });
    expect(plan.repair).toEqual([]);
    expect(plan.waiting).toEqual([expect.objectContaining({ nodeName: 'late', dueAt: now + MINUTE })]);
  });

  it('should return the requeue interval for the condition closest to its terminationDuration (accelerated hardware: 10 minutes)', () => {
    const node = healthNode('gpu', [
      ['Ready', 'False', 25],
      ['AcceleratedHardwareReady', 'False', 8],
    ]);
    // Ready comes due in 5 minutes, the accelerator in 2: the accelerator decides.
    expect(unhealthyCondition(node)).toEqual({
      condition: 'AcceleratedHardwareReady=False',
      since: now - 8 * MINUTE,
      dueAt: now + 2 * MINUTE,
    });
    const repaired = planRepair({ now: now + 2 * MINUTE, subjects: [subject(node), healthy(1), healthy(2)] });
    expect(names(repaired.repair)).toEqual(['gpu']);
  });

  it('counts a condition without a lastTransitionTime from the epoch, as upstream (due at once)', () => {
    const node: Node = { metadata: { name: 'blank' }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } };
    expect(unhealthyCondition(node)?.dueAt).toBe(30 * MINUTE);
  });
});

describe(`${HEALTH}: Forceful termination`, () => {
  it('should ignore unhealthy nodes if more then 20% of the nodes are unhealthy in a nodepool', () => {
    const sick = [1, 2, 3].map((i) => subject(healthNode(`sick-${i}`, [['Ready', 'False', 40]])));
    const plan = planRepair({ now, subjects: [...sick, ...[1, 2, 3, 4, 5, 6, 7].map((i) => healthy(i))] });
    expect(plan.repair).toEqual([]);
    expect(names(plan.blocked)).toEqual(['sick-1', 'sick-2', 'sick-3']);
    expect(plan.blocked[0]?.message).toBe('more than 20% nodes are unhealthy in the nodepool general (3 of 10)');
    // Another pool's health is its own.
    const other = planRepair({
      now,
      subjects: [...sick, subject(healthNode('x', [['Ready', 'False', 40]]), 'other'), healthy(9, 'other')],
    });
    expect(names(other.repair)).toEqual(['x']);
  });

  it('should ignore unhealthy nodes if more then 20% of the nodes are unhealthy in a cluster (nodes of no pool)', () => {
    const plan = planRepair({
      now,
      subjects: [
        subject(healthNode('a', [['Ready', 'False', 40]]), null),
        subject(healthNode('b', [['Ready', 'False', 40]]), null),
        subject(healthNode('unmanaged', [['Ready', 'True', 40]]), null, false),
        subject(healthNode('c', [['Ready', 'True', 40]]), null, false),
      ],
    });
    expect(names(plan.blocked)).toEqual(['a', 'b']);
    expect(plan.blocked[0]?.message).toContain('in the cluster (2 of 4)');
  });

  it('should consider round up when there is a low number of nodes for a nodepool (1 of 3 is repaired)', () => {
    expect([allowedUnhealthy(3), allowedUnhealthy(10), allowedUnhealthy(11), allowedUnhealthy(0)]).toEqual([
      1, 2, 3, 0,
    ]);
    const plan = planRepair({
      now,
      subjects: [subject(healthNode('sick', [['Ready', 'False', 40]])), healthy(1), healthy(2)],
    });
    expect(names(plan.repair)).toEqual(['sick']);
  });

  it('never repairs a node karpless did not launch, though it counts it', () => {
    const plan = planRepair({
      now,
      subjects: [subject(healthNode('theirs', [['Ready', 'False', 90]]), 'general', false)],
    });
    expect(plan).toEqual({ repair: [], blocked: [], waiting: [] });
  });
});

describe('forceful termination (node repair through the one termination path)', () => {
  const deps = (state: FakeState, clock: () => number) => ({
    log: new RecordingLog(),
    metrics: new RecordingMetrics(),
    clock,
    kube: { deleteNode: async () => {} },
    state,
  });
  const drain = (deadline: number): DrainRecord => ({
    nodeName: 'n',
    instanceId: 'i-1',
    reason: 'Drifted',
    phase: 'draining',
    startedAt: now - 10 * MINUTE,
    deadline,
    expiresAt: now + 60 * MINUTE,
  });

  it('should not respect termination grace period if set on the nodepool: the deadline is now', async () => {
    const state = new FakeState(() => now);
    const record = await ensureTermination(
      deps(state, () => now),
      {
        nodeName: 'n',
        instanceId: 'i-1',
        reason: 'Unhealthy',
        fallbackGraceMs: 60 * MINUTE,
        forceful: true,
      },
    );
    expect(record.deadline).toBe(now);
  });

  it('should set annotation termination grace period when force termination is started: a later deadline comes forward', async () => {
    const state = new FakeState(() => now);
    await state.putDrain(drain(now + 60 * MINUTE));
    await ensureTermination(
      deps(state, () => now),
      { nodeName: 'n', instanceId: 'i-1', reason: 'Unhealthy', forceful: true },
    );
    expect(await state.getDrain('n')).toMatchObject({ deadline: now, reason: 'Unhealthy', phase: 'draining' });
  });

  it('should not update termination grace period if set before the current time', async () => {
    const state = new FakeState(() => now);
    await state.putDrain(drain(now - MINUTE));
    await ensureTermination(
      deps(state, () => now),
      { nodeName: 'n', instanceId: 'i-1', reason: 'Unhealthy', forceful: true },
    );
    expect(await state.getDrain('n')).toMatchObject({ deadline: now - MINUTE, reason: 'Drifted' });
  });
});
