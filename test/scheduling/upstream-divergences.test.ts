// Cases where `karpless plan` used to disagree with Karpenter's own scheduler tests
// (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/suite_test.go, topology_test.go):
// each test is named after the upstream It it mirrors and fails if the divergence comes back.

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import type { Taint } from '../../shared/apis/v1/types';
import { type ExistingNode, type SchedulingInput, solve } from '../../shared/scheduling';
import { nodePool, pod, pods, standardTypes } from './helpers';
import { violations } from './invariants';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

function run(input: Partial<SchedulingInput> & { pods: Pod[] }) {
  const pools = input.nodePools ?? [nodePool('default')];
  const full: SchedulingInput = {
    instanceTypes: Object.fromEntries(pools.map((p) => [p.metadata.name, standardTypes()])),
    ...input,
    nodePools: pools,
  };
  const result = solve(full);
  expect(violations(full, result)).toEqual([]);
  return result;
}

const requirementOf = (result: ReturnType<typeof solve>, key: string) =>
  result.nodeClaims[0]?.requirements.find((r) => r.key === key && r.operator === 'In')?.values;

/** A node of the default NodePool, as registration leaves it (not yet initialized unless said). */
function ourNode(
  name: string,
  o: { taints?: Taint[]; initialized?: boolean; startupTaints?: Taint[] } = {},
): ExistingNode {
  return {
    name,
    labels: {
      [HOST]: name,
      [ZONE]: 'zone-a',
      'karpenter.sh/nodepool': 'default',
      'node.kubernetes.io/instance-type': 'm5.2xlarge',
      'karpenter.sh/capacity-type': 'on-demand',
    },
    taints: o.taints ?? [],
    allocatable: { cpu: 8000, memory: 32 * 2 ** 30, pods: 110 },
    pods: [],
    ...(o.initialized !== undefined ? { initialized: o.initialized } : {}),
    ...(o.startupTaints ? { startupTaints: o.startupTaints } : {}),
  };
}

describe('Custom Constraints > Well Known Labels', () => {
  it('should not schedule nodes with a hostname selector (suite_test.go:225)', () => {
    const result = run({ pods: [pod('p', { nodeSelector: { [HOST]: 'red-node' } })] });
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable.map((u) => u.pod.metadata.name)).toEqual(['p']);
    expect(result.unschedulable[0]!.reasons.join(' ')).toMatch(/hostname/);
  });

  it('schedules a hostname selector onto the existing node of that name', () => {
    const result = run({
      pods: [pod('p', { nodeSelector: { [HOST]: 'red-node' } })],
      existingNodes: [ourNode('red-node', { initialized: true })],
    });
    expect(result.nodeClaims).toEqual([]);
    expect(result.existingNodes.map((n) => n.name)).toEqual(['red-node']);
  });

  it('plans a claim for a hostname NotIn or Exists requirement, which a new node satisfies', () => {
    const notIn = pod('not-in', {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: HOST, operator: 'NotIn', values: ['red-node'] }] }],
          },
        },
      },
    });
    const result = run({ pods: [notIn] });
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
  });

  it.each([
    ['failure-domain.beta.kubernetes.io/zone', 'zone-b', ZONE],
    ['beta.kubernetes.io/arch', 'arm64', 'kubernetes.io/arch'],
    ['beta.kubernetes.io/os', 'linux', 'kubernetes.io/os'],
    ['beta.kubernetes.io/instance-type', 'c5.xlarge', 'node.kubernetes.io/instance-type'],
    ['topology.ebs.csi.aws.com/zone', 'zone-c', ZONE],
  ])(
    'should support well known labels: %s selects %s on its stable key (suite_test.go, NormalizedLabels)',
    (key, value, stable) => {
      const result = run({ pods: [pod('p', { nodeSelector: { [key]: value } })] });
      expect(result.unschedulable).toEqual([]);
      expect(result.nodeClaims).toHaveLength(1);
      const claim = result.nodeClaims[0]!;
      if (stable === 'node.kubernetes.io/instance-type') expect(claim.offering.instanceType).toBe(value);
      else expect(requirementOf(result, stable)).toEqual([value]);
      expect(claim.requirements.some((r) => r.key === key)).toBe(false);
    },
  );

  it('should not schedule a deprecated-key selector no instance type satisfies', () => {
    const result = run({ pods: [pod('p', { nodeSelector: { 'beta.kubernetes.io/arch': 's390x' } })] });
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable).toHaveLength(1);
  });
});

describe('In-Flight Nodes > Taints', () => {
  const notReady: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };

  it('should assume pod will schedule to a node with ephemeral taint node.kubernetes.io/not-ready:NoExecute when the node is uninitialized (suite_test.go:2040)', () => {
    const uninitialized = run({
      pods: [pod('second')],
      existingNodes: [ourNode('node-1', { taints: [notReady], initialized: false })],
    });
    expect(uninitialized.nodeClaims).toEqual([]);
    expect(uninitialized.existingNodes.map((n) => n.name)).toEqual(['node-1']);
    const initialized = run({
      pods: [pod('third')],
      existingNodes: [ourNode('node-1', { taints: [notReady], initialized: true })],
    });
    expect(initialized.existingNodes).toEqual([]);
    expect(initialized.nodeClaims).toHaveLength(1);
  });

  it('should assume pod will schedule to a tainted node with a custom startup taint (suite_test.go:2110)', () => {
    const startup: Taint = { key: 'foo.com/taint', value: 'tainted', effect: 'NoSchedule' };
    const result = run({
      pods: [pod('second')],
      existingNodes: [ourNode('node-1', { taints: [startup, notReady], initialized: false, startupTaints: [startup] })],
    });
    expect(result.nodeClaims).toEqual([]);
    expect(result.existingNodes.map((n) => n.name)).toEqual(['node-1']);
  });

  it('should not assume pod will schedule to a node with startup taints after initialization (suite_test.go:2143)', () => {
    const startup: Taint = { key: 'ignore-me', value: 'nothing-to-see-here', effect: 'NoSchedule' };
    const result = run({
      pods: [pod('second')],
      existingNodes: [ourNode('node-1', { taints: [startup], initialized: true, startupTaints: [startup] })],
    });
    expect(result.existingNodes).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('should not assume pod will schedule to a tainted node (suite_test.go): a taint that is neither startup nor ephemeral keeps pods off an uninitialized node', () => {
    const other: Taint = { key: 'foo.com/taint', value: 'tainted', effect: 'NoSchedule' };
    const result = run({
      pods: [pod('second')],
      existingNodes: [ourNode('node-1', { taints: [other], initialized: false })],
    });
    expect(result.existingNodes).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('treats an in-flight claim as uninitialized: its unregistered taint does not keep pods off', () => {
    const node = {
      ...ourNode('claim-1', { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] }),
      inFlight: true,
    };
    const result = run({ pods: [pod('p')], existingNodes: [node] });
    expect(result.existingNodes.map((n) => n.name)).toEqual(['claim-1']);
  });
});

describe('In-Flight Nodes > Daemonsets', () => {
  it('Should properly handle DaemonSet resources with Node Affinity for `karpenter.sh/initialized` and `karpenter.sh/registered` (suite_test.go:2364)', () => {
    const daemon = (key: string) =>
      pod(`ds-${key}`, {
        cpu: '1',
        memory: '64Mi',
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: ['true'] }] }],
            },
          },
        },
      });
    const result = run({
      pods: [pod('p', { cpu: '2', memory: '1Gi' })],
      daemonSets: [daemon('karpenter.sh/initialized'), daemon('karpenter.sh/registered')],
    });
    expect(result.nodeClaims).toHaveLength(1);
    const claim = result.nodeClaims[0]!;
    // 2 cpu of pod + 2 of DaemonSets: a 2-vCPU type cannot hold it.
    expect(claim.requests.cpu).toBe(4000);
    expect(claim.instanceTypes.every((t) => (t.allocatable.cpu ?? 0) >= 4000)).toBe(true);
    expect(
      claim.requirements.some(
        (r) => r.key.startsWith('karpenter.sh/registered') || r.key === 'karpenter.sh/initialized',
      ),
    ).toBe(false);
  });

  it('leaves out a DaemonSet that selects karpenter.sh/initialized NotIn [true]: it never runs on our nodes', () => {
    const ds = pod('ds', {
      cpu: '1',
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'karpenter.sh/initialized', operator: 'NotIn', values: ['true'] }] },
            ],
          },
        },
      },
    });
    const result = run({ pods: [pod('p', { cpu: '1', memory: '1Gi' })], daemonSets: [ds] });
    expect(result.nodeClaims[0]!.requests.cpu).toBe(1000);
  });
});

describe('Existing Nodes > host ports', () => {
  const withPort = (name: string, hostPort: number, extra: { protocol?: string; hostIP?: string } = {}) => {
    const p = pod(name);
    p.spec.containers[0]!.ports = [{ containerPort: 80, hostPort, ...extra }];
    return p;
  };

  it('should schedule pods with the same host port to different nodes (suite_test.go:2593)', () => {
    const result = run({ pods: [withPort('a', 8080), withPort('b', 8080)] });
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(2);
  });

  it('puts pods with the same host port on a different node than an existing pod binding it', () => {
    const node = ourNode('node-1', { initialized: true });
    const running = withPort('running', 8080);
    running.spec.nodeName = 'node-1';
    node.pods.push(running);
    const result = run({ pods: [withPort('new', 8080), pod('plain')], existingNodes: [node] });
    expect(result.existingNodes.flatMap((n) => n.pods.map((p) => p.metadata.name))).toEqual(['plain']);
    expect(result.nodeClaims.flatMap((c) => c.pods.map((p) => p.metadata.name))).toEqual(['new']);
  });

  it('lets pods share a node when protocols or specific host addresses differ (hostportusage Matches)', () => {
    const result = run({
      pods: [
        withPort('tcp', 8080),
        withPort('udp', 8080, { protocol: 'UDP' }),
        withPort('ip-1', 9090, { hostIP: '10.0.0.1' }),
        withPort('ip-2', 9090, { hostIP: '10.0.0.2' }),
      ],
    });
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('keeps a pod on 0.0.0.0 apart from one on a specific address of the same port', () => {
    const result = run({ pods: [withPort('any', 9090), withPort('one', 9090, { hostIP: '10.0.0.1' })] });
    expect(result.nodeClaims).toHaveLength(2);
  });

  it('packs many host-port pods one per node beside pods without ports', () => {
    const result = run({
      pods: [...Array.from({ length: 5 }, (_, i) => withPort(`hp-${i}`, 8080)), ...pods('plain', 10)],
    });
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(5);
    for (const c of result.nodeClaims) expect(c.pods.filter((p) => p.metadata.name.startsWith('hp-'))).toHaveLength(1);
  });
});
