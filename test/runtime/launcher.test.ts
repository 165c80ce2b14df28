// The launch writes the claim's NodeClaim record before CreateFleet: a record that cannot be written
// launches nothing and sends the batch back; the record carries the requirements as the decision
// narrowed them (a pod that selected team=b from `team In [a, b]` gets a claim labelled team=b).

import { describe, expect, it } from 'vitest';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import { markForDeletion } from '../../shared/nodeclaim/record';
import { InsufficientCapacityError, LaunchError, type LaunchRequest } from '../../shared/providers/instance';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { AwsClaimLauncher, NodeClaimRecordError } from '../../shared/runtime/launcher';
import { solve } from '../../shared/scheduling';
import { awsError } from '../providers/fakes';
import { claimRecord } from '../providers/nodeclaim-contract';
import { nodePool, standardTypes } from '../scheduling/helpers';
import { pendingPod, START } from './fakes';

const nodeClass = {
  metadata: { name: 'default' },
  spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }] },
} as EC2NodeClass;
const pool = nodePool('default', {
  requirements: [{ key: 'team', operator: 'In', values: ['a', 'b'] }],
  taints: [{ key: 'teams', effect: 'NoSchedule' }],
  startupTaints: [{ key: 'cni', effect: 'NoSchedule' }],
});

function teamPod(name: string) {
  return pendingPod(name, {
    nodeSelector: { team: 'b' },
    tolerations: [{ key: 'teams', operator: 'Exists', effect: 'NoSchedule' }],
    containers: [{ name: 'app', resources: { requests: { cpu: '1', 'nvidia.com/gpu': '0' } } }],
  });
}

/** An AwsClaimLauncher whose node class never resolves: a launch stops right after its record. */
function launcher(records: ConstructorParameters<typeof AwsClaimLauncher>[0]['records']) {
  const launched: LaunchRequest[] = [];
  const claims = new AwsClaimLauncher({
    nodeClasses: [nodeClass],
    cluster: async () => {
      throw new Error('DescribeCluster: not reached in this test');
    },
    resolver: {} as ConstructorParameters<typeof AwsClaimLauncher>[0]['resolver'],
    launcher: {
      launch: async (request) => {
        launched.push(request);
        throw new Error('CreateFleet must not be called');
      },
    },
    records,
    clock: () => START,
  });
  return { claims, launched };
}

function planned() {
  const result = solve({ pods: [teamPod('b-1')], nodePools: [pool], instanceTypes: { default: standardTypes() } });
  const [claim] = result.nodeClaims;
  if (!claim) throw new Error(`nothing planned: ${JSON.stringify(result.unschedulable)}`);
  return claim;
}

describe('AwsClaimLauncher and the NodeClaim record', () => {
  it('writes the record before it launches, with the narrowed requirement (team=b), taints and hashes', async () => {
    const records = new InMemoryStateStore(() => START);
    const { claims, launched } = launcher(records);
    await expect(claims.launch({ nodeClaimName: 'default-bcdfg', nodePool: pool, claim: planned() })).rejects.toThrow(
      'DescribeCluster',
    );
    expect(launched).toEqual([]);
    const record = await records.getNodeClaim('default-bcdfg');
    expect(record?.metadata.labels).toMatchObject({
      team: 'b',
      'karpenter.sh/nodepool': 'default',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
    });
    expect(record?.spec.requirements).toContainEqual({ key: 'team', operator: 'In', values: ['b'] });
    expect(record?.spec).toMatchObject({
      taints: [{ key: 'teams', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'cni', effect: 'NoSchedule' }],
      expireAfter: '720h',
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
    });
    expect(record?.spec.resources.requests.cpu).toMatch(/m$/);
    expect(Object.keys(record?.metadata.annotations ?? {})).toEqual(
      expect.arrayContaining(['karpenter.sh/nodepool-hash', 'karpenter.k8s.aws/ec2nodeclass-hash-version']),
    );
    expect(record?.status.conditions.map((c) => [c.type, c.status])).toEqual([
      ['Launched', 'Unknown'],
      ['Registered', 'Unknown'],
      ['Initialized', 'Unknown'],
    ]);
  });

  it('launches nothing when the record cannot be written, with an error provision retries the batch for', async () => {
    const records = new InMemoryStateStore(() => START);
    records.createNodeClaim = async () => {
      throw awsError('ProvisionedThroughputExceededException', 'state table throttled');
    };
    const { claims, launched } = launcher(records);
    const error = await claims
      .launch({ nodeClaimName: 'default-bcdfg', nodePool: pool, claim: planned() })
      .catch((e: unknown) => e);
    expect(String(error)).toContain('state table throttled');
    // Neither a capacity nor a launch error: provision() sends the batch back (RetryableProvisionError).
    expect(error).not.toBeInstanceOf(LaunchError);
    expect(error).not.toBeInstanceOf(InsufficientCapacityError);
    expect(launched).toEqual([]);
  });

  it('launches nothing when another writer created the record first (the batch is retried)', async () => {
    const records = new InMemoryStateStore(() => START);
    const { claims, launched } = launcher({
      getNodeClaim: async () => undefined,
      createNodeClaim: async () => undefined,
      updateNodeClaim: (r) => records.updateNodeClaim(r),
      deleteNodeClaim: (n) => records.deleteNodeClaim(n),
    });
    const error = await claims
      .launch({ nodeClaimName: 'default-bcdfg', nodePool: pool, claim: planned() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeClaimRecordError);
    expect(String(error)).toContain('NodeClaim default-bcdfg: another invocation wrote its record first');
    expect(launched).toEqual([]);
  });

  it('launches nothing for a claim whose record is marked for deletion', async () => {
    const records = new InMemoryStateStore(() => START);
    await records.createNodeClaim(markForDeletion(claimRecord('default-bcdfg', 'default', START), START));
    const { claims, launched } = launcher(records);
    const error = await claims
      .launch({ nodeClaimName: 'default-bcdfg', nodePool: pool, claim: planned() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LaunchError);
    expect(String(error)).toContain('marked for deletion');
    expect(launched).toEqual([]);
  });
});
