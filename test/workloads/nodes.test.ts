import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import { toExistingNodes } from '../../shared/workloads';

const GiB = 2 ** 30;

function node(name: string, extra: Partial<Node> = {}): Node {
  return {
    kind: 'Node',
    metadata: { name, labels: { 'topology.kubernetes.io/zone': 'us-east-1a' } },
    status: { allocatable: { cpu: '3920m', memory: '14Gi', pods: '58' }, capacity: { cpu: '4', memory: '16Gi' } },
    ...extra,
  };
}

function pod(name: string, nodeName: string): Pod {
  return { metadata: { name, namespace: 'default' }, spec: { nodeName, containers: [{ name: 'c' }] } };
}

describe('toExistingNodes', () => {
  it('turns a Node into an ExistingNode with its labels, a hostname label and allocatable in base units', () => {
    const { existingNodes } = toExistingNodes([node('n1')], []);
    expect(existingNodes).toEqual([
      {
        name: 'n1',
        labels: { 'kubernetes.io/hostname': 'n1', 'topology.kubernetes.io/zone': 'us-east-1a' },
        taints: [],
        allocatable: { cpu: 3920, memory: 14 * GiB, pods: 58 },
        pods: [],
      },
    ]);
  });

  it.each([
    ['allocatable when given', { allocatable: { cpu: '1' }, capacity: { cpu: '2' } }, 1000],
    ['capacity when allocatable is missing', { capacity: { cpu: '2' } }, 2000],
  ])('uses %s', (_, status, cpu) => {
    expect(toExistingNodes([node('n1', { status })], []).existingNodes[0]?.allocatable.cpu).toBe(cpu);
  });

  it.each([
    [{ unschedulable: true }, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }]],
    [
      { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' as const }] },
      [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }],
    ],
    [{}, []],
  ])('keeps taints and treats a cordon as the unschedulable taint: %j', (spec, taints) => {
    expect(toExistingNodes([node('n1', { spec })], []).existingNodes[0]?.taints).toEqual(taints);
  });

  it('attaches bound pods to their node and notes the ones whose node is not given', () => {
    const { existingNodes, notes } = toExistingNodes(
      [node('n1'), node('n2')],
      [pod('a', 'n1'), pod('b', 'n9'), pod('c', 'n1')],
    );
    expect(existingNodes.map((n) => [n.name, n.pods.map((p) => p.metadata.name)])).toEqual([
      ['n1', ['a', 'c']],
      ['n2', []],
    ]);
    expect(notes).toEqual([expect.stringContaining('default/b is bound to node n9')]);
  });

  it('marks a node of a NodePool without karpenter.sh/initialized as uninitialized, with its NodePool startup taints', () => {
    const startupTaints = [{ key: 'example.com/agent', effect: 'NoSchedule' as const }];
    const pool = {
      apiVersion: 'karpenter.sh/v1' as const,
      kind: 'NodePool' as const,
      metadata: { name: 'default' },
      spec: {
        template: {
          spec: {
            requirements: [],
            startupTaints,
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          },
        },
      },
    };
    const ours = (name: string, labels: Record<string, string>) =>
      node(name, { metadata: { name, labels: { 'karpenter.sh/nodepool': 'default', ...labels } } });
    const { existingNodes } = toExistingNodes(
      [ours('starting', {}), ours('ready', { 'karpenter.sh/initialized': 'true' }), node('not-ours')],
      [],
      [pool],
    );
    expect(existingNodes.map((n) => [n.name, n.initialized, n.startupTaints])).toEqual([
      ['starting', false, startupTaints],
      ['ready', undefined, undefined],
      ['not-ours', undefined, undefined],
    ]);
  });
});
