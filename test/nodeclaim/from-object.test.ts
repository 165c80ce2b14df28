// A NodeClaim object read back as the record and instance the provision decision counts: the round
// trip through the watcher's mirror keeps what the decision reads.

import { describe, expect, it } from 'vitest';
import { instanceFromNodeClaimObject, recordFromNodeClaimObject } from '../../shared/nodeclaim/from-object';
import { mirroredNodeClaim } from '../../shared/nodeclaim/mirror';
import { markLaunched, markRegistered, newNodeClaimRecord } from '../../shared/nodeclaim/record';

const T0 = Date.parse('2026-12-04T09:00:00Z');

const created = newNodeClaimRecord({
  name: 'general-x2k9p',
  labels: { 'karpenter.sh/nodepool': 'general', 'karpenter.k8s.aws/ec2nodeclass': 'default' },
  annotations: { 'karpenter.sh/nodepool-hash': '123' },
  spec: {
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
    requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }],
    resources: { requests: { cpu: '500m' } },
    taints: [],
    startupTaints: [{ key: 'agent', effect: 'NoSchedule' }],
    expireAfter: '720h',
  },
  now: T0,
});

describe('NodeClaim objects read back', () => {
  it('gives back the record the watcher mirrored, Ready left out', () => {
    const launched = markRegistered(
      markLaunched(created, {
        providerID: 'aws:///us-west-2a/i-0123456789abcdef0',
        imageID: 'ami-1',
        capacity: { cpu: '2' },
        allocatable: { cpu: '1930m' },
        labels: { 'node.kubernetes.io/instance-type': 'm5.large', 'topology.kubernetes.io/zone': 'us-west-2a' },
        now: T0 + 1000,
      }),
      'ip-10-0-1-17',
      T0 + 2000,
    );
    const object = mirroredNodeClaim(launched);
    const record = recordFromNodeClaimObject({
      ...object,
      metadata: { ...object.metadata, creationTimestamp: launched.metadata.creationTimestamp },
    });
    expect(record).toEqual(launched);
    expect(instanceFromNodeClaimObject(object)).toEqual({
      instanceId: 'i-0123456789abcdef0',
      nodeClaimName: 'general-x2k9p',
      nodePool: 'general',
      nodeClass: 'default',
      instanceType: 'm5.large',
      zone: 'us-west-2a',
      capacityType: 'on-demand',
      state: 'running',
      launchTime: T0 + 1000,
    });
  });

  it('has no instance before launch', () => {
    expect(instanceFromNodeClaimObject(mirroredNodeClaim(created))).toBeUndefined();
  });
});
