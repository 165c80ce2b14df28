// The configuration read from the cluster: the objects validated as the bundled path validates them,
// one by one, so that an invalid one costs only itself; its last valid version keeps serving, and a
// NodePool waiting for its EC2NodeClass is left out without being called invalid.

import { describe, expect, it } from 'vitest';
import {
  type ClusterObject,
  clusterObjectProblems,
  type LastValid,
  lastValidOf,
  resolveClusterConfiguration,
} from '../../shared/apis/cluster-configuration';
import { formatProblem } from '../../shared/apis/problems';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { testNodePool } from '../support/nodepools';

/** As the API server returns an object: server-set metadata and a status beside what the user wrote. */
function served<T extends NodePool | EC2NodeClass>(object: T, extra: Record<string, unknown> = {}): ClusterObject {
  return {
    ...object,
    metadata: { ...object.metadata, uid: 'u-1', resourceVersion: '7', generation: 2, ...extra },
    status: { conditions: [] },
  } as unknown as ClusterObject;
}

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'KarpenterNodeRole-c1',
  },
};
const general = testNodePool();
const none: LastValid = { nodePools: new Map(), nodeClasses: new Map() };
/** A NodePool the validator refuses: a budget's nodes must be a number or a percentage. */
const broken = (): ClusterObject => served(testNodePool({ disruption: { budgets: [{ nodes: 'lots' }] } as never }));

describe('resolveClusterConfiguration', () => {
  it('serves valid objects defaulted, without what the API server added, and none being deleted', () => {
    const result = resolveClusterConfiguration({
      nodePools: [served(general), served(testNodePool({ name: 'leaving' }), { deletionTimestamp: 'x' })],
      nodeClasses: [served(nodeClass)],
      lastValid: none,
    });
    expect(result.invalid).toEqual([]);
    expect(result.config.nodePools.map((p) => p.metadata)).toEqual([{ name: 'general' }]);
    // Defaulted as the bundled path defaults (Karpenter's CRD defaults).
    expect(result.config.nodePools[0]?.spec.disruption?.consolidateAfter).toBe('0s');
    expect(result.config.nodeClasses.map((c) => c.metadata.name)).toEqual(['default']);
    expect(result.lastValid.nodePools.get('general')).toBe(result.config.nodePools[0]);
  });

  it('reports an invalid NodePool with the field and keeps serving its last valid version', () => {
    const previous = lastValidOf({ nodePools: [general], nodeClasses: [nodeClass] });
    const result = resolveClusterConfiguration({
      nodePools: [broken()],
      nodeClasses: [served(nodeClass)],
      lastValid: previous,
    });
    expect(result.invalid).toHaveLength(1);
    expect(result.invalid[0]).toMatchObject({ kind: 'NodePool', name: 'general', serving: 'last-valid' });
    expect(result.invalid[0]?.problems.map(formatProblem).join()).toMatch(/^spec\.disruption\.budgets\[0\]\.nodes: /);
    expect(result.config.nodePools).toEqual([general]);
    expect(result.lastValid.nodePools.get('general')).toBe(general);
  });

  it('serves nothing for an object invalid since it was first seen, nor the NodePools of such a class', () => {
    const badClass = served({ ...nodeClass, spec: { ...nodeClass.spec, amiSelectorTerms: [] } });
    const result = resolveClusterConfiguration({
      nodePools: [served(general)],
      nodeClasses: [badClass],
      lastValid: none,
    });
    expect(result.invalid.map((i) => [i.kind, i.name, i.serving])).toEqual([['EC2NodeClass', 'default', 'nothing']]);
    expect(result.invalid[0]?.problems[0]?.path).toMatch(/^spec\.amiSelectorTerms/);
    expect(result.config).toEqual({ nodePools: [], nodeClasses: [] });
    expect(result.withoutNodeClass).toEqual(['general']);
  });

  it('leaves out a NodePool whose EC2NodeClass is not in the cluster without calling it invalid', () => {
    const result = resolveClusterConfiguration({ nodePools: [served(general)], nodeClasses: [], lastValid: none });
    expect(result.invalid).toEqual([]);
    expect(result.withoutNodeClass).toEqual(['general']);
    expect(result.config.nodePools).toEqual([]);
  });

  it('forgets the last valid version of an object deleted from the cluster', () => {
    const previous = lastValidOf({ nodePools: [general], nodeClasses: [nodeClass] });
    const result = resolveClusterConfiguration({
      nodePools: [],
      nodeClasses: [served(nodeClass)],
      lastValid: previous,
    });
    expect([...result.lastValid.nodePools.keys()]).toEqual([]);
  });

  it('gives the status writers the problems of one object (list items without apiVersion and kind too)', () => {
    const { apiVersion: _, kind: __, ...bare } = broken();
    expect(clusterObjectProblems('NodePool', bare as ClusterObject, [served(nodeClass)])[0]?.path).toBe(
      'spec.disruption.budgets[0].nodes',
    );
    expect(clusterObjectProblems('NodePool', served(general), [served(nodeClass)])).toEqual([]);
    expect(clusterObjectProblems('EC2NodeClass', served(nodeClass))).toEqual([]);
  });
});
