import { describe, expect, it } from 'vitest';
import {
  CONDITION,
  clearCondition,
  condition,
  instanceIdOf,
  isConditionTrue,
  isMarkedForDeletion,
  markForDeletion,
  markInitialized,
  markLaunched,
  markRegistered,
  nodePoolOf,
  setCondition,
} from '../../shared/nodeclaim/record';
import { claimRecord } from '../providers/nodeclaim-contract';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(ms).toISOString();

describe('NodeClaim record', () => {
  it('starts with Launched, Registered and Initialized Unknown and nothing launched', () => {
    const record = claimRecord('default-bcdfg', 'default', T0);
    expect(record.status.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Launched', 'Unknown', 'AwaitingReconciliation'],
      ['Registered', 'Unknown', 'AwaitingReconciliation'],
      ['Initialized', 'Unknown', 'AwaitingReconciliation'],
    ]);
    expect(record.metadata.creationTimestamp).toBe(at(T0));
    expect(instanceIdOf(record)).toBeUndefined();
    expect(nodePoolOf(record)).toBe('default');
  });

  it('moves lastTransitionTime only when the status changes', () => {
    const record = claimRecord('c', 'default', T0);
    const drifted = setCondition(record, CONDITION.drifted, { status: 'True', reason: 'AMIDrift', now: T0 + 1000 });
    expect(condition(drifted, CONDITION.drifted)).toEqual({
      type: 'Drifted',
      status: 'True',
      reason: 'AMIDrift',
      message: '',
      lastTransitionTime: at(T0 + 1000),
    });
    // Same status, another reason: the reason changes, the transition time stays.
    const again = setCondition(drifted, CONDITION.drifted, {
      status: 'True',
      reason: 'NodePoolDrifted',
      now: T0 + 5000,
    });
    expect(condition(again, CONDITION.drifted)).toMatchObject({
      reason: 'NodePoolDrifted',
      lastTransitionTime: at(T0 + 1000),
    });
    // Nothing changes: the very same object comes back, so the caller can skip the write.
    expect(setCondition(again, CONDITION.drifted, { status: 'True', reason: 'NodePoolDrifted', now: T0 + 9000 })).toBe(
      again,
    );
    const cleared = clearCondition(again, CONDITION.drifted);
    expect(condition(cleared, CONDITION.drifted)).toBeUndefined();
    expect(clearCondition(cleared, CONDITION.drifted)).toBe(cleared);
    // The input records were not changed.
    expect(condition(record, CONDITION.drifted)).toBeUndefined();
  });

  it('records the launch: instance, image, resources, and launched labels under the claim’s own', () => {
    const record = claimRecord('c', 'default', T0);
    const launched = markLaunched(record, {
      providerID: 'aws:///us-east-1b/i-0abc',
      imageID: 'ami-9',
      capacity: { cpu: '4', memory: '8Gi' },
      allocatable: { cpu: '3920m', memory: '7Gi' },
      labels: {
        'node.kubernetes.io/instance-type': 'c6a.xlarge',
        'topology.kubernetes.io/zone': 'us-east-1b',
        team: 'x',
      },
      now: T0 + 2000,
    });
    expect(isConditionTrue(launched, CONDITION.launched)).toBe(true);
    expect(condition(launched, CONDITION.launched)?.lastTransitionTime).toBe(at(T0 + 2000));
    expect(instanceIdOf(launched)).toBe('i-0abc');
    expect(launched.status).toMatchObject({ imageID: 'ami-9', capacity: { cpu: '4', memory: '8Gi' } });
    expect(launched.metadata.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'c6a.xlarge',
      'topology.kubernetes.io/zone': 'us-east-1b',
      team: 'b',
    });
    expect(isConditionTrue(record, CONDITION.launched)).toBe(false);
  });

  it('records registration with the node name, then initialization', () => {
    const registered = markRegistered(claimRecord('c', 'default', T0), 'ip-10-0-0-1.ec2.internal', T0 + 3000);
    expect(registered.status.nodeName).toBe('ip-10-0-0-1.ec2.internal');
    expect(isConditionTrue(registered, CONDITION.registered)).toBe(true);
    expect(isConditionTrue(registered, CONDITION.initialized)).toBe(false);
    const initialized = markInitialized(registered, T0 + 4000);
    expect(condition(initialized, CONDITION.initialized)).toMatchObject({
      status: 'True',
      reason: 'Initialized',
      lastTransitionTime: at(T0 + 4000),
    });
  });

  it('marks for deletion once, keeping the first time', () => {
    const record = claimRecord('c', 'default', T0);
    expect(isMarkedForDeletion(record)).toBe(false);
    const marked = markForDeletion(record, T0 + 1);
    expect(marked.metadata.deletionTimestamp).toBe(at(T0 + 1));
    expect(markForDeletion(marked, T0 + 2)).toBe(marked);
    expect(isMarkedForDeletion(marked)).toBe(true);
  });
});
