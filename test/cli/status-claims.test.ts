import { describe, expect, it } from 'vitest';
import { formatClaims, formatNodePoolLimits, readiness } from '../../cli/commands/status-claims';
import { markInitialized, markLaunched, markRegistered, newNodeClaimRecord } from '../../shared/nodeclaim/record';
import { nodePool } from '../scheduling/helpers';

const NOW = Date.parse('2026-12-03T12:00:00Z');
const spec = {
  nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
  requirements: [],
  resources: { requests: {} },
  taints: [],
  startupTaints: [],
  expireAfter: '720h',
};

function launched(name: string, cpu: string, minutesAgo: number) {
  const created = NOW - minutesAgo * 60_000;
  const record = newNodeClaimRecord({
    name,
    labels: { 'karpenter.sh/nodepool': 'general' },
    annotations: {},
    spec,
    now: created,
  });
  return markLaunched(record, {
    providerID: `aws:///us-west-2a/i-${name}`,
    imageID: 'ami-1',
    capacity: { cpu, memory: '8Gi', pods: '29' },
    allocatable: { cpu, memory: '7Gi', pods: '29' },
    labels: {
      'node.kubernetes.io/instance-type': 'm5.large',
      'karpenter.sh/capacity-type': 'on-demand',
      'topology.kubernetes.io/zone': 'us-west-2a',
    },
    now: created + 1000,
  });
}

describe('karpless status claims', () => {
  it('prints the records like kubectl get nodeclaims: NAME TYPE CAPACITY ZONE NODE READY AGE', () => {
    const ready = markInitialized(markRegistered(launched('general-abcde', '2', 90), 'ip-10-0-1-5', NOW), NOW);
    const pending = launched('general-fghjk', '2', 3);
    expect(formatClaims([ready, pending], NOW)).toBe(
      [
        'NAME            TYPE       CAPACITY    ZONE         NODE          READY     AGE',
        'general-abcde   m5.large   on-demand   us-west-2a   ip-10-0-1-5   True      90m',
        'general-fghjk   m5.large   on-demand   us-west-2a                 Unknown   3m',
        '',
      ].join('\n'),
    );
    expect(readiness(pending)).toBe('Unknown');
    expect(formatClaims([], NOW)).toBe('No NodeClaims found.\n');
  });

  it('prints each NodePool with limits and what its claims use, leaving out claims being deleted', () => {
    const deleting = launched('general-zzzzz', '2', 5);
    deleting.metadata.deletionTimestamp = new Date(NOW).toISOString();
    const text = formatNodePoolLimits(
      [nodePool('general', { limits: { cpu: '4', nodes: '10' } }), nodePool('free')],
      [launched('general-a', '2', 5), launched('general-b', '2', 5), deleting],
    );
    expect(text).toBe(
      ['NODEPOOL   USED/LIMIT            EXHAUSTED', 'general    cpu 4/4, nodes 2/10   yes', ''].join('\n'),
    );
  });
});
