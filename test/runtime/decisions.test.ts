import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import type { Taint } from '../../shared/apis/v1/types';
import { KUBE } from '../../shared/contracts';
import { Batcher } from '../../shared/runtime/batcher';
import { instanceIdFromProviderID } from '../../shared/runtime/instances';
import { isProvisionable } from '../../shared/runtime/pending';
import {
  DO_NOT_SYNC_TAINTS_LABEL,
  initializationBlocker,
  initializationPatch,
  needsInitialization,
  needsRegistration,
  type RegistrationRecord,
  registrationPatch,
} from '../../shared/runtime/registration';
import { pendingPod } from './fakes';

function withPod(change: (pod: Pod) => void): Pod {
  const pod = pendingPod('p');
  change(pod);
  return pod;
}

describe('isProvisionable', () => {
  it('takes a pod the scheduler marked Unschedulable', () => {
    expect(isProvisionable(pendingPod('p'))).toBe(true);
  });

  it.each<[string, (pod: Pod) => void]>([
    ['bound', (p) => Object.assign(p.spec, { nodeName: 'n1' })],
    ['succeeded', (p) => Object.assign(p.status ?? {}, { phase: 'Succeeded' })],
    ['failed', (p) => Object.assign(p.status ?? {}, { phase: 'Failed' })],
    ['being deleted', (p) => Object.assign(p.metadata, { deletionTimestamp: '2026-01-01T00:00:00Z' })],
    ['being preempted onto a node', (p) => Object.assign(p.status ?? {}, { nominatedNodeName: 'n1' })],
    [
      'DaemonSet-owned',
      (p) =>
        Object.assign(p.metadata, {
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'd', controller: true }],
        }),
    ],
    [
      'a mirror pod',
      (p) =>
        Object.assign(p.metadata, {
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', controller: true }],
        }),
    ],
    ['not yet looked at by the scheduler', (p) => Object.assign(p, { status: { phase: 'Pending' } })],
    [
      'waiting for something else',
      (p) =>
        Object.assign(p, {
          status: {
            phase: 'Pending',
            conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
          },
        }),
    ],
  ])('skips a pod that is %s', (_, change) => {
    expect(isProvisionable(withPod(change))).toBe(false);
  });
});

describe('Batcher', () => {
  it('is due 1 s after the last trigger', () => {
    const b = new Batcher();
    expect(b.due(0)).toBe(false);
    b.trigger(0);
    b.trigger(600);
    expect(b.due(1_500)).toBe(false);
    expect(b.dueAt()).toBe(1_600);
    expect(b.due(1_600)).toBe(true);
  });

  it('is due 10 s after the first trigger however busy', () => {
    const b = new Batcher();
    for (let t = 0; t <= 10_000; t += 500) b.trigger(t);
    expect(b.due(9_999)).toBe(false);
    expect(b.due(10_000)).toBe(true);
    b.close();
    expect(b.open).toBe(false);
    expect(b.due(20_000)).toBe(false);
  });
});

describe('instanceIdFromProviderID', () => {
  it('reads the instance id of an AWS providerID only', () => {
    expect(instanceIdFromProviderID('aws:///us-west-2a/i-0123abcd')).toBe('i-0123abcd');
    expect(instanceIdFromProviderID('aws:///us-west-2a/fargate-ip-10-0-0-1')).toBeUndefined();
    expect(instanceIdFromProviderID('kind://docker/kind/kind-worker')).toBeUndefined();
    expect(instanceIdFromProviderID(undefined)).toBeUndefined();
  });
});

function node(change: (n: Node) => void = () => {}): Node {
  const n: Node = {
    metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' }, resourceVersion: '7' } as Node['metadata'],
    spec: {
      providerID: 'aws:///us-west-2a/i-0abc',
      taints: [
        { key: KUBE.unregisteredTaintKey, effect: 'NoExecute' },
        { key: 'example.com/startup', effect: 'NoSchedule' },
      ],
    },
  };
  change(n);
  return n;
}

function claim(
  options: {
    labels?: Record<string, string>;
    taints?: Taint[];
    startupTaints?: Taint[];
    requests?: Record<string, string>;
  } = {},
): RegistrationRecord {
  return {
    metadata: { labels: options.labels ?? {}, annotations: {} },
    spec: {
      taints: options.taints ?? [],
      startupTaints: options.startupTaints ?? [],
      resources: { requests: options.requests ?? {} },
    },
  };
}

describe('registration', () => {
  it('adds labels, the finalizer (guarded by resourceVersion) and drops only the unregistered taint', () => {
    const patch = registrationPatch(
      node((n) => {
        n.metadata.labels = { ...n.metadata.labels, [DO_NOT_SYNC_TAINTS_LABEL]: 'true' };
      }),
      claim({ labels: { 'karpenter.sh/nodepool': 'default', 'kubernetes.io/hostname': 'n1' } }),
    );
    expect(patch).toEqual({
      metadata: {
        labels: { 'karpenter.sh/nodepool': 'default', [KUBE.registeredLabel]: 'true' },
        finalizers: [KUBE.terminationFinalizer],
        resourceVersion: '7',
      },
      spec: { taints: [{ key: 'example.com/startup', effect: 'NoSchedule' }] },
    });
  });

  it('syncs the record’s taints and startup taints onto a node without do-not-sync-taints, once each', () => {
    const patch = registrationPatch(
      node(),
      claim({
        taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
        startupTaints: [{ key: 'example.com/startup', effect: 'NoSchedule' }],
      }),
    );
    expect(patch.spec?.taints).toEqual([
      { key: 'example.com/startup', effect: 'NoSchedule' },
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
    ]);
    expect(patch.metadata?.resourceVersion).toBe('7');
  });

  it('needs nothing more once registered', () => {
    const registered = node((n) => {
      n.metadata.labels = { [KUBE.registeredLabel]: 'true' };
      Object.assign(n.metadata, { finalizers: [KUBE.terminationFinalizer] });
      n.spec!.taints = [];
    });
    expect(needsRegistration(registered)).toBe(false);
    expect(needsRegistration(node())).toBe(true);
  });

  it('initializes only a Ready registered node without startup or ephemeral taints, extended resources registered', () => {
    const startup = claim({ startupTaints: [{ key: 'example.com/startup', effect: 'NoSchedule' }] });
    const ready = (spec: NonNullable<Node['spec']>, allocatable: Record<string, string> = {}) =>
      node((n) => {
        n.metadata.labels = { [KUBE.registeredLabel]: 'true' };
        n.spec = spec;
        Object.assign(n, { status: { allocatable, conditions: [{ type: 'Ready', status: 'True' }] } });
      });
    expect(needsInitialization(ready({ taints: [] }), startup)).toBe(true);
    expect(
      needsInitialization(ready({ taints: [{ key: 'example.com/startup', effect: 'NoSchedule' }] }), startup),
    ).toBe(false);
    expect(
      needsInitialization(ready({ taints: [{ key: KUBE.unregisteredTaintKey, effect: 'NoExecute' }] }), claim()),
    ).toBe(false);
    for (const key of [
      'node.kubernetes.io/not-ready',
      'node.kubernetes.io/unreachable',
      'node.kubernetes.io/network-unavailable',
      'node.cloudprovider.kubernetes.io/uninitialized',
    ]) {
      const tainted = ready({ taints: [{ key, effect: 'NoSchedule' }] });
      expect(initializationBlocker(tainted, claim())).toBe(`ephemeral taint ${key}:NoSchedule is still on the node`);
    }
    const gpu = claim({ requests: { cpu: '2', memory: '1Gi', 'nvidia.com/gpu': '1' } });
    expect(initializationBlocker(ready({ taints: [] }, { 'nvidia.com/gpu': '0' }), gpu)).toBe(
      "resource nvidia.com/gpu is not registered in the node's allocatable yet",
    );
    expect(needsInitialization(ready({ taints: [] }, { 'nvidia.com/gpu': '1' }), gpu)).toBe(true);
    expect(needsInitialization(node(), claim())).toBe(false);
    expect(initializationPatch.metadata?.labels).toEqual({ [KUBE.initializedLabel]: 'true' });
  });
});
