// The claim's Drifted and Consolidatable conditions, translated from upstream's
// pkg/controllers/nodeclaim/disruption/drift_test.go and consolidation_test.go (names carry the file).

import { describe, expect, it } from 'vitest';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { KUBE } from '../../shared/contracts';
import { withDisruptionConditions } from '../../shared/disruption/conditions';
import { launchHashTags } from '../../shared/disruption/hash';
import type { CandidateInput, ClusterNode } from '../../shared/disruption/plan';
import { isEvictable } from '../../shared/kube/client';
import {
  condition,
  markInitialized,
  markLaunched,
  type NodeClaimRecord,
  newNodeClaimRecord,
} from '../../shared/nodeclaim/record';
import { testNodePool } from '../support/nodepools';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const MINUTE = 60_000;

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [{ alias: 'al2023@latest' }] },
};
const amis = [{ id: 'ami-new', requirements: [] }];

const pool = (consolidateAfter = '30m'): NodePool =>
  testNodePool({ name: 'general', disruption: { consolidateAfter, budgets: [{ nodes: '1' }] } });

function record(
  options: { launched?: boolean; initializedAt?: number; lastPodEventAt?: number } = {},
): NodeClaimRecord {
  let r = newNodeClaimRecord({
    name: 'general-a',
    labels: { 'karpenter.sh/nodepool': 'general' },
    annotations: {},
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [],
      resources: { requests: {} },
      taints: [],
      startupTaints: [],
      expireAfter: 'Never',
    },
    now: NOW - 2 * 60 * MINUTE,
  });
  if (options.launched !== false) {
    r = markLaunched(r, {
      providerID: 'aws:///zone-a/i-a',
      imageID: 'ami-old',
      capacity: {},
      allocatable: {},
      labels: {},
      now: NOW - 2 * 60 * MINUTE,
    });
  }
  if (options.initializedAt !== undefined) r = markInitialized(r, options.initializedAt);
  if (options.lastPodEventAt !== undefined) {
    r = { ...r, status: { ...r.status, lastPodEventTime: new Date(options.lastPodEventAt).toISOString() } };
  }
  return r;
}

function entry(r: NodeClaimRecord, imageId: string, p = pool()): ClusterNode {
  return {
    node: {
      metadata: { name: 'a', labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true' } },
      spec: { providerID: 'aws:///zone-a/i-a' },
    },
    instance: {
      instanceId: 'i-a',
      nodePool: 'general',
      nodeClass: 'default',
      instanceType: 'm5.large',
      zone: 'zone-a',
      capacityType: 'on-demand',
      imageId,
      hashTags: launchHashTags(p, nodeClass),
    },
    pods: [],
    record: r,
  };
}

function input(p = pool(), now = NOW): CandidateInput {
  return {
    now,
    nodes: [],
    nodePools: [p],
    nodeClasses: new Map([['default', { nodeClass, amis }]]),
    instanceTypeLabels: () => ({}),
    isEvictable,
  };
}

const drifted = (r: NodeClaimRecord | undefined) => r && condition(r, 'Drifted');
const consolidatable = (r: NodeClaimRecord | undefined) => r && condition(r, 'Consolidatable');

describe('nodeclaim/disruption/drift_test.go', () => {
  it('should detect drift', () => {
    const next = withDisruptionConditions(input(), entry(record(), 'ami-old'));
    expect(drifted(next)).toMatchObject({ status: 'True', reason: 'AMIDrift' });
    expect(drifted(next)?.message).toContain('ami-new');
    // Set once: a later run keeps the time it drifted, which orders drift candidates.
    const later = withDisruptionConditions(input(pool(), NOW + 10 * MINUTE), entry(next as NodeClaimRecord, 'ami-old'));
    expect(later).toBe(next);
  });

  it('should remove the status condition from the nodeClaim if the nodeClaim is no longer drifted', () => {
    const was = withDisruptionConditions(input(), entry(record(), 'ami-old')) as NodeClaimRecord;
    expect(drifted(withDisruptionConditions(input(), entry(was, 'ami-new')))).toBeUndefined();
  });

  it('should remove the status condition from the nodeClaim when the nodeClaim launch condition is unknown', () => {
    expect(drifted(withDisruptionConditions(input(), entry(record({ launched: false }), 'ami-old')))).toBeUndefined();
  });

  it('NodePool Static Drift > should detect drift on changes to the static fields (reason NodePoolDrifted, as upstream names it)', () => {
    const before = pool();
    const after = testNodePool({
      name: 'general',
      template: { expireAfter: '100m' },
      disruption: { consolidateAfter: '30m', budgets: [{ nodes: '1' }] },
    });
    const next = withDisruptionConditions(input(after), entry(record(), 'ami-new', before));
    expect(drifted(next)).toMatchObject({ status: 'True', reason: 'NodePoolDrifted' });
  });
});

describe('nodeclaim/disruption/consolidation_test.go', () => {
  it('should mark NodeClaims as consolidatable', () => {
    const r = record({ initializedAt: NOW - 60 * MINUTE, lastPodEventAt: NOW - 31 * MINUTE });
    expect(consolidatable(withDisruptionConditions(input(), entry(r, 'ami-new')))).toMatchObject({ status: 'True' });
  });

  it('should mark NodeClaims as consolidatable based on the nodeclaim initialized time', () => {
    const r = record({ initializedAt: NOW - 31 * MINUTE });
    expect(consolidatable(withDisruptionConditions(input(), entry(r, 'ami-new')))).toMatchObject({ status: 'True' });
    const recent = record({ initializedAt: NOW - 29 * MINUTE });
    expect(consolidatable(withDisruptionConditions(input(), entry(recent, 'ami-new')))).toBeUndefined();
  });

  it('should remove the status condition from the nodeClaim when lastPodEvent is too recent', () => {
    const was = withDisruptionConditions(
      input(),
      entry(record({ initializedAt: NOW - 60 * MINUTE }), 'ami-new'),
    ) as NodeClaimRecord;
    expect(consolidatable(was)).toMatchObject({ status: 'True' });
    const podLeft = { ...was, status: { ...was.status, lastPodEventTime: new Date(NOW - MINUTE).toISOString() } };
    expect(consolidatable(withDisruptionConditions(input(), entry(podLeft, 'ami-new')))).toBeUndefined();
  });

  it('should remove the status condition from the nodeClaim when consolidateAfter is never', () => {
    const r = record({ initializedAt: NOW - 60 * MINUTE });
    const never = pool('Never');
    expect(consolidatable(withDisruptionConditions(input(never), entry(r, 'ami-new', never)))).toBeUndefined();
  });

  it('should remove the status condition from the nodeClaim when the nodeClaim is not initialized', () => {
    expect(consolidatable(withDisruptionConditions(input(), entry(record(), 'ami-new')))).toBeUndefined();
  });
});
