import { describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import { notProvisionableReason } from '../../shared/workloads/provisionable';

function pod(change: (p: Pod) => void = () => undefined): Pod {
  const p: Pod = {
    metadata: { name: 'p', namespace: 'default' },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu: '1' } } }] },
  };
  change(p);
  return p;
}

const unschedulable = (p: Pod) => {
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
};

describe('notProvisionableReason: one rule for the API server’s pods and for manifests', () => {
  it('plans a manifest without status, but not the API server’s pod no scheduler marked Unschedulable', () => {
    expect(notProvisionableReason(pod(), { manifest: true })).toBeUndefined();
    expect(notProvisionableReason(pod())).toBe(
      'not marked Unschedulable by the kube-scheduler (no PodScheduled condition)',
    );
    expect(notProvisionableReason(pod(unschedulable))).toBeUndefined();
    expect(notProvisionableReason(pod(unschedulable), { manifest: true })).toBeUndefined();
  });

  it.each([
    ['bound', (p: Pod) => void Object.assign(p.spec, { nodeName: 'n1' }), 'bound to node n1'],
    ['finished', (p: Pod) => void Object.assign(p.status ?? {}, { phase: 'Succeeded' }), 'finished (phase Succeeded)'],
    [
      'terminating',
      (p: Pod) => void Object.assign(p.metadata, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      'terminating',
    ],
    [
      'being preempted onto a node',
      (p: Pod) => void Object.assign(p.status ?? {}, { nominatedNodeName: 'n2' }),
      'nominated to node n2 by the kube-scheduler (preemption)',
    ],
    [
      'made by a DaemonSet',
      (p: Pod) =>
        void Object.assign(p.metadata, {
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', controller: true }],
        }),
      'made by DaemonSet ds: it follows nodes',
    ],
    [
      'gated',
      (p: Pod) =>
        void Object.assign(p.status ?? {}, {
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
        }),
      'not marked Unschedulable by the kube-scheduler (PodScheduled=False reason SchedulingGated)',
    ],
  ])('gives the same reason either way for a pod %s', (_, change, reason) => {
    const p = pod((q) => {
      unschedulable(q);
      change(q);
    });
    expect(notProvisionableReason(p)).toBe(reason);
    expect(notProvisionableReason(p, { manifest: true })).toBe(reason);
  });
});
