import { describe, expect, it } from 'vitest';
import type { Node } from '../../shared/apis/core/v1';
import {
  addClaim,
  capacityFromCatalog,
  claimUsages,
  nodePoolUsage,
  plannedCapacity,
  removeClaim,
  type UsageRecord,
} from '../../shared/nodeclaim/usage';
import { GiB, instanceType } from '../scheduling/helpers';

const catalog = {
  general: [instanceType('m5.large', { cpu: 2, memoryGiB: 8 }), instanceType('m5.2xlarge', { cpu: 8, memoryGiB: 32 })],
  gpu: [instanceType('g5.xlarge', { cpu: 4, memoryGiB: 16, extra: { 'nvidia.com/gpu': 1 } })],
};
const typeCapacity = capacityFromCatalog(catalog);

function record(
  name: string,
  o: Partial<UsageRecord['status']> & { pool?: string; types?: string[]; deleting?: boolean } = {},
) {
  const { pool = 'general', types = ['m5.large'], deleting, ...status } = o;
  return {
    metadata: {
      name,
      labels: { 'karpenter.sh/nodepool': pool },
      ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In' as const, values: types }] },
    status: { capacity: {}, ...status },
  } satisfies UsageRecord;
}

function node(name: string, o: { pool?: string; cpu?: string; providerID?: string; deleting?: boolean } = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      ...(o.pool ? { labels: { 'karpenter.sh/nodepool': o.pool } } : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: o.providerID ? { providerID: o.providerID } : {},
    status: o.cpu ? { capacity: { cpu: o.cpu, memory: '8Gi', pods: '29' } } : {},
  } as Node;
}

describe('NodePool usage', () => {
  it('sums the capacity of every claim of a pool that is not being deleted, one node each', () => {
    // Prepare: a launched record, a record being deleted, an instance without a record.
    const usage = nodePoolUsage({
      records: [
        record('general-a', { capacity: { cpu: '2', memory: '8Gi' }, providerID: 'aws:///zone-a/i-0a' }),
        record('general-b', { capacity: { cpu: '8' }, providerID: 'aws:///zone-a/i-0b', deleting: true }),
      ],
      instances: [
        { instanceId: 'i-0a', nodeClaimName: 'general-a', nodePool: 'general', instanceType: 'm5.large' },
        { instanceId: 'i-0b', nodeClaimName: 'general-b', nodePool: 'general', instanceType: 'm5.2xlarge' },
        { instanceId: 'i-0c', nodeClaimName: 'general-c', nodePool: 'general', instanceType: 'm5.2xlarge' },
      ],
      typeCapacity,
    });
    // Assess: a (2 cpu) + c (8 cpu, from its type); b is deleting and not counted.
    expect(usage.general).toEqual({ cpu: 10_000, memory: 40 * GiB, pods: 110, nodes: 2 });
  });

  it('charges a record not launched yet with the largest type it may still get', () => {
    const usage = nodePoolUsage({
      records: [record('general-a', { types: ['m5.large', 'm5.2xlarge'] })],
      typeCapacity,
    });
    expect(usage.general?.cpu).toBe(8000);
    expect(usage.general?.nodes).toBe(1);
  });

  it('leaves out a launched record whose instance is no longer live', () => {
    const usage = nodePoolUsage({
      records: [record('general-a', { capacity: { cpu: '2' }, providerID: 'aws:///zone-a/i-0a' })],
      instances: [],
      typeCapacity,
    });
    expect(usage).toEqual({});
  });

  it("sizes a registered claim from its Node's capacity and leaves out a claim whose Node is deleting", () => {
    const claims = claimUsages({
      instances: [
        { instanceId: 'i-0a', nodeClaimName: 'general-a', nodePool: 'general', instanceType: 'm5.large' },
        { instanceId: 'i-0b', nodeClaimName: 'general-b', nodePool: 'general', instanceType: 'm5.large' },
      ],
      nodes: [
        node('ip-a', { cpu: '4', providerID: 'aws:///zone-a/i-0a', pool: 'general' }),
        node('ip-b', { cpu: '2', providerID: 'aws:///zone-a/i-0b', pool: 'general', deleting: true }),
      ],
      typeCapacity,
    });
    expect(claims).toEqual([
      { name: 'general-a', nodePool: 'general', capacity: { cpu: 4000, memory: 8 * GiB, pods: 29 } },
    ]);
  });

  it('counts Nodes nothing else accounts for by their karpenter.sh/nodepool label (karpless plan --nodes)', () => {
    const usage = nodePoolUsage({
      nodes: [
        node('n1', { pool: 'general', cpu: '8' }),
        node('n2', { cpu: '8' }),
        node('n3', { pool: 'gpu', cpu: '4' }),
      ],
      typeCapacity,
    });
    expect(usage.general).toMatchObject({ cpu: 8000, nodes: 1 });
    expect(usage.gpu).toMatchObject({ cpu: 4000, nodes: 1 });
    expect(Object.keys(usage).sort()).toEqual(['general', 'gpu']);
  });

  it('leaves out claims being replaced, by node name or instance id', () => {
    const usage = nodePoolUsage({
      instances: [
        { instanceId: 'i-0a', nodeClaimName: 'general-a', nodePool: 'general', instanceType: 'm5.large' },
        { instanceId: 'i-0b', nodeClaimName: 'general-b', nodePool: 'general', instanceType: 'm5.large' },
        { instanceId: 'i-0c', nodeClaimName: 'general-c', nodePool: 'general', instanceType: 'm5.large' },
      ],
      nodes: [node('ip-a', { providerID: 'aws:///zone-a/i-0a', pool: 'general' })],
      typeCapacity,
      deleting: { nodeNames: new Set(['ip-a']), instanceIds: new Set(['i-0b']) },
    });
    expect(usage.general).toMatchObject({ cpu: 2000, nodes: 1 });
  });

  it('sizes an instance whose type its pool no longer allows from any pool that has the type', () => {
    const usage = nodePoolUsage({
      instances: [{ instanceId: 'i-0a', nodeClaimName: 'gpu-a', nodePool: 'gpu', instanceType: 'm5.large' }],
      typeCapacity,
    });
    expect(usage.gpu).toMatchObject({ cpu: 2000, nodes: 1 });
  });

  it('adds and removes planned claims at the largest capacity they may launch', () => {
    const usage = nodePoolUsage({ nodes: [node('n1', { pool: 'general', cpu: '2' })], typeCapacity });
    const charged = plannedCapacity(catalog.general);
    addClaim(usage, 'general', charged);
    expect(usage.general).toMatchObject({ cpu: 10_000, nodes: 2 });
    removeClaim(usage, 'general', { cpu: 2000, memory: 8 * GiB, pods: 29 });
    expect(usage.general).toMatchObject({ cpu: 8000, nodes: 1 });
  });
});
