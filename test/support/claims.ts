// A NodeClaim record of pool `general` on class `default` that was launched moments ago and whose
// node has not registered: the in-flight claim `karpless plan --state-table` and the provision
// function both count, with room for the pods nominated to it.

import { markLaunched, type NodeClaimRecord, newNodeClaimRecord } from '../../shared/nodeclaim/record';

/** An m5.xlarge on-demand claim in us-east-1a asking 3 vCPU, created 10 s and launched 5 s before `now`. */
export function inFlightClaim(now: number, name = 'general-inflight'): NodeClaimRecord {
  const labels = { 'karpenter.sh/nodepool': 'general', 'karpenter.k8s.aws/ec2nodeclass': 'default' };
  const created = newNodeClaimRecord({
    name,
    labels,
    annotations: {},
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge'] }],
      resources: { requests: { cpu: '3' } },
      taints: [],
      startupTaints: [],
      expireAfter: '720h',
    },
    now: now - 10_000,
  });
  return markLaunched(created, {
    providerID: 'aws:///us-east-1a/i-0fedcba9876543210',
    imageID: 'ami-1',
    capacity: { cpu: '4', memory: '15Gi', pods: '58' },
    allocatable: { cpu: '3920m', memory: '14Gi', pods: '58' },
    labels: {
      ...labels,
      'node.kubernetes.io/instance-type': 'm5.xlarge',
      'topology.kubernetes.io/zone': 'us-east-1a',
      'karpenter.sh/capacity-type': 'on-demand',
    },
    now: now - 5_000,
  });
}
