import { describe, expect, it } from 'vitest';
import type { Node } from '../../shared/apis/core/v1';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { KUBE, REGISTRATION_TTL_MS, TAG } from '../../shared/contracts';
import type { ClusterInstanceProfile } from '../../shared/providers/instanceprofile-gc';
import type { ClusterLaunchTemplate } from '../../shared/providers/launchtemplate-gc';
import {
  LAUNCH_TEMPLATE_MIN_AGE_MS,
  nodesWithoutInstance,
  orphanedInstanceProfiles,
  orphanedInstances,
  orphanedLaunchTemplates,
  registeredInstanceIds,
  unclaimedInstances,
} from '../../shared/runtime/gc-decisions';
import type { ClaimInstance } from '../../shared/runtime/instances';

const NOW = Date.parse('2026-12-03T07:00:00Z');
const MIN = 60_000;

function instance(id: string, launchedAgoMs: number, extra: Partial<ClaimInstance> = {}): ClaimInstance {
  return {
    instanceId: id,
    nodeClaimName: `general-${id}`,
    nodePool: 'general',
    nodeClass: 'default',
    instanceType: 'm5.large',
    zone: 'us-west-2a',
    capacityType: 'on-demand',
    state: 'running',
    launchTime: NOW - launchedAgoMs,
    ...extra,
  };
}

function kubeNode(name: string, instanceId: string, options: { registered?: boolean; ready?: boolean } = {}): Node {
  const registered = options.registered ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: registered ? { [KUBE.registeredLabel]: 'true' } : {},
      ...(registered ? { finalizers: [KUBE.terminationFinalizer] } : {}),
    },
    spec: { providerID: `aws:///us-west-2a/${instanceId}` },
    status: { conditions: [{ type: 'Ready', status: options.ready ? 'True' : 'Unknown' }] },
  } as Node;
}

const pool = (name: string, nodeClass = 'default'): NodePool =>
  ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: { requirements: [], nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass } },
      },
    },
  }) as NodePool;

const ownedTags = (cluster: string, extra: Record<string, string>) => ({
  [TAG.clusterName]: cluster,
  [TAG.clusterOwned(cluster)]: 'owned',
  ...extra,
});

describe('orphanedInstances', () => {
  const base = { now: NOW, registeredBefore: new Set<string>(), draining: new Set<string>() };

  it('terminates an instance with no Node only once the 15-minute registration TTL passed', () => {
    // Prepare
    const instances = [instance('i-young', REGISTRATION_TTL_MS - 1), instance('i-old', REGISTRATION_TTL_MS)];
    // Act
    const verdicts = orphanedInstances({ ...base, instances, nodes: [] });
    // Assess
    expect(verdicts.map((v) => [v.id, v.reason])).toEqual([['i-old', 'RegistrationTimeout']]);
    expect(verdicts[0]?.detail).toContain('no Node after 15 min');
  });

  it('counts a Node that exists but never registered as not registered', () => {
    const verdicts = orphanedInstances({
      ...base,
      instances: [instance('i-1', 20 * MIN)],
      nodes: [kubeNode('n1', 'i-1', { registered: false })],
    });
    expect(verdicts.map((v) => v.reason)).toEqual(['RegistrationTimeout']);
    expect(verdicts[0]?.detail).toContain('Node n1 not registered');
  });

  it('terminates at once an instance that had a registered Node which is gone', () => {
    const verdicts = orphanedInstances({
      ...base,
      instances: [instance('i-1', 2 * MIN)],
      nodes: [],
      registeredBefore: new Set(['i-1']),
    });
    expect(verdicts.map((v) => [v.id, v.reason])).toEqual([['i-1', 'NodeGone']]);
  });

  it('leaves registered instances and those the termination flow is draining', () => {
    const verdicts = orphanedInstances({
      ...base,
      instances: [instance('i-0aa', 60 * MIN), instance('i-0bb', 60 * MIN)],
      nodes: [kubeNode('n1', 'i-0aa')],
      registeredBefore: new Set(['i-0bb']),
      draining: new Set(['i-0bb']),
    });
    expect(verdicts).toEqual([]);
  });

  it('remembers exactly the instances whose Node is registered', () => {
    const ids = registeredInstanceIds(
      [instance('i-1', MIN), instance('i-2', MIN), instance('i-3', MIN)],
      [kubeNode('n1', 'i-1'), kubeNode('n2', 'i-2', { registered: false })],
    );
    expect(ids).toEqual(['i-1']);
  });
});

describe('unclaimedInstances', () => {
  it('terminates a batch-launched instance no claim took once the registration TTL passed, naming its batch', () => {
    const launches = [
      { instanceId: 'i-young', batch: 'b1', launchTime: NOW - (REGISTRATION_TTL_MS - 1) },
      { instanceId: 'i-old', batch: 'b2', launchTime: NOW - REGISTRATION_TTL_MS },
      { instanceId: 'i-unknown-age', batch: 'b3' },
    ];
    const verdicts = unclaimedInstances(NOW, launches);
    expect(verdicts.map((v) => [v.resource, v.id, v.reason])).toEqual([['instance', 'i-old', 'Unclaimed']]);
    expect(verdicts[0]?.detail).toContain('launch batch b2');
  });
});

describe('nodesWithoutInstance', () => {
  it('deletes our Node whose instance is terminated, or missing while the Node is not Ready', () => {
    const verdicts = nodesWithoutInstance({
      nodes: [
        kubeNode('dead', 'i-dead'),
        kubeNode('missing', 'i-0c1'),
        kubeNode('missing-ready', 'i-0c2', { ready: true }),
        kubeNode('running', 'i-0c3'),
        kubeNode('foreign', 'i-0c4', { registered: false }),
      ],
      instances: new Map([
        ['i-dead', instance('i-dead', 60 * MIN, { state: 'terminated' })],
        ['i-0c3', instance('i-0c3', 60 * MIN)],
      ]),
    });
    expect(verdicts.map((v) => [v.id, v.reason])).toEqual([
      ['dead', 'InstanceGone'],
      ['missing', 'InstanceGone'],
    ]);
  });
});

describe('orphanedLaunchTemplates', () => {
  const old = NOW - LAUNCH_TEMPLATE_MIN_AGE_MS;
  const template = (id: string, tags: Record<string, string>, createdAt = old): ClusterLaunchTemplate => ({
    id,
    name: `karpenter.k8s.aws/${id}`,
    tags,
    createdAt,
  });

  it('deletes templates of removed NodePools or of a node class the pool no longer uses, keeps current ones', () => {
    const templates = [
      template('lt-current', ownedTags('c1', { [TAG.nodePool]: 'general', [TAG.nodeClass]: 'default' })),
      template('lt-removed', ownedTags('c1', { [TAG.nodePool]: 'gone', [TAG.nodeClass]: 'default' })),
      template('lt-moved', ownedTags('c1', { [TAG.nodePool]: 'general', [TAG.nodeClass]: 'old' })),
      template('lt-young', ownedTags('c1', { [TAG.nodePool]: 'gone', [TAG.nodeClass]: 'default' }), NOW - MIN),
    ];
    const verdicts = orphanedLaunchTemplates({ now: NOW, cluster: 'c1', templates, nodePools: [pool('general')] });
    expect(verdicts.map((v) => [v.id, v.reason])).toEqual([
      ['lt-removed', 'NotInConfiguration'],
      ['lt-moved', 'NotInConfiguration'],
    ]);
    expect(verdicts[1]?.detail).toContain('now uses EC2NodeClass/default, not old');
  });

  it('deletes a current pair’s template whose AMI no live instance runs, keeps the one in use', () => {
    const current = ownedTags('c1', { [TAG.nodePool]: 'general', [TAG.nodeClass]: 'default' });
    const verdicts = orphanedLaunchTemplates({
      now: NOW,
      cluster: 'c1',
      templates: [template('lt-old-ami', current), template('lt-in-use', current), template('lt-unknown', current)],
      nodePools: [pool('general')],
      imageIds: new Map([
        ['lt-old-ami', 'ami-old'],
        ['lt-in-use', 'ami-new'],
      ]),
      imagesInUse: new Set(['ami-new']),
    });
    expect(verdicts.map((v) => [v.id, v.reason])).toEqual([['lt-old-ami', 'Unused']]);
    expect(verdicts[0]?.detail).toContain('ami-old');
  });

  it('never touches a template that is not owned by this cluster by both tags', () => {
    const templates = [
      template('lt-other', ownedTags('c2', { [TAG.nodePool]: 'gone', [TAG.nodeClass]: 'default' })),
      template('lt-half', { [TAG.clusterName]: 'c1', [TAG.nodePool]: 'gone', [TAG.nodeClass]: 'default' }),
    ];
    expect(orphanedLaunchTemplates({ now: NOW, cluster: 'c1', templates, nodePools: [] })).toEqual([]);
  });
});

describe('orphanedInstanceProfiles', () => {
  const profile = (name: string, tags: Record<string, string>): ClusterInstanceProfile => ({
    name,
    path: '/karpenter/us-west-2/c1/x/',
    tags,
    roles: ['NodeRole'],
  });
  const nodeClass = { metadata: { name: 'default' } } as EC2NodeClass;
  const regional = (cluster: string, nodeClassName: string) =>
    ownedTags(cluster, { [TAG.nodeClass]: nodeClassName, 'topology.kubernetes.io/region': 'us-west-2' });

  it('deletes profiles of removed node classes no instance uses; keeps current, in-use and foreign ones', () => {
    const verdicts = orphanedInstanceProfiles({
      cluster: 'c1',
      region: 'us-west-2',
      nodeClasses: [nodeClass],
      inUse: new Set(['draining-class']),
      profiles: [
        profile('c1_current', regional('c1', 'default')),
        profile('c1_removed', regional('c1', 'removed')),
        profile('c1_in_use', regional('c1', 'draining-class')),
        profile('c2_removed', regional('c2', 'removed')),
        profile('c1_other_region', { ...regional('c1', 'removed'), 'topology.kubernetes.io/region': 'eu-west-1' }),
      ],
    });
    expect(verdicts.map((v) => [v.id, v.reason])).toEqual([['c1_removed', 'NodeClassRemoved']]);
  });
});
