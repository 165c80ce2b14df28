// The stand-in kube-scheduler (test/support/kube/scheduler.ts) binds a pod only where the default
// scheduler's filters let it, and marks the rest Unschedulable the way karpless expects to find them.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import type { Taint } from '../../shared/apis/v1/types';
import { daemonSet, node, pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';
import { type SchedulingPass, StandInScheduler } from '../support/kube/scheduler';

let kube: FakeApiServer;
let passes: SchedulingPass[];
let scheduler: StandInScheduler;

beforeEach(async () => {
  kube = await FakeApiServer.start();
  passes = [];
  scheduler = new StandInScheduler(kube, (p) => passes.push(p));
});

afterEach(async () => {
  scheduler.stop();
  await kube.stop();
});

function readyNode(
  name: string,
  cpu: string,
  options: { labels?: Record<string, string>; taints?: Taint[] } = {},
): Node {
  const n = node(name, options);
  n.status = {
    allocatable: { cpu, memory: '16Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True' }],
  };
  return kube.addNode(n);
}

function pending(name: string, cpu: string, change: (p: Pod) => void = () => undefined): Pod {
  const p = pod(name, { cpu });
  change(p);
  return kube.addPod(p);
}

const nodeOf = (name: string) => kube.getPod('default', name)?.spec.nodeName;
const scheduled = (name: string) =>
  kube.getPod('default', name)?.status?.conditions?.find((c) => c.type === 'PodScheduled');

describe('StandInScheduler', () => {
  it('binds a pod only to a node with room for it beside the pods already there', () => {
    readyNode('small', '2');
    readyNode('large', '4');
    kube.addPod(pod('running', { cpu: '1500m', nodeName: 'small' }));
    kube.addPod(pod('busy', { cpu: '3', nodeName: 'large' }));
    pending('web', '1');
    pending('big', '2');
    scheduler.schedule();
    expect(nodeOf('web')).toBe('large');
    expect(nodeOf('big')).toBeUndefined();
    expect(scheduled('big')).toMatchObject({
      status: 'False',
      reason: 'Unschedulable',
      message: '0/2 nodes are available: 2 Insufficient cpu.',
    });
  });

  it('counts the pods it binds in the same pass', () => {
    readyNode('only', '2');
    for (const name of ['a', 'b', 'c']) pending(name, '900m');
    const pass = scheduler.schedule();
    expect(pass.bound.map((b) => b.pod)).toEqual(['default/a', 'default/b']);
    expect(pass.unschedulable.map((u) => u.pod)).toEqual(['default/c']);
  });

  it('reserves room for a DaemonSet that would run on the node but has no pod there yet', () => {
    readyNode('n', '1');
    const agent = daemonSet('agent');
    const container = agent.spec.template.spec.containers[0];
    if (container) container.resources = { requests: { cpu: '300m' } };
    kube.addDaemonSet(agent);
    pending('web', '800m');
    scheduler.schedule();
    expect(nodeOf('web')).toBeUndefined();
    expect(scheduled('web')?.message).toBe('0/1 nodes are available: 1 Insufficient cpu.');
  });

  it('follows nodeSelector and required node affinity with the core requirement semantics', () => {
    readyNode('a', '4', { labels: { team: 'a', gen: '5' } });
    readyNode('b', '4', { labels: { team: 'b', gen: '7' } });
    pending('selects-b', '1', (p) => {
      p.spec.nodeSelector = { team: 'b' };
    });
    pending('newer-than-6', '1', (p) => {
      p.spec.affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['6'] }] }],
          },
        },
      };
    });
    pending('team-c', '1', (p) => {
      p.spec.nodeSelector = { team: 'c' };
    });
    scheduler.schedule();
    expect(nodeOf('selects-b')).toBe('b');
    expect(nodeOf('newer-than-6')).toBe('b');
    expect(scheduled('team-c')?.message).toBe(
      "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
    );
  });

  it('keeps pods off tainted, unregistered, not-ready and cordoned nodes unless they tolerate the taint', () => {
    readyNode('gpu', '4', { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] });
    readyNode('joining', '4', { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] });
    readyNode('cordoned', '4');
    kube.updateNode('cordoned', (n) => {
      n.spec = { ...n.spec, unschedulable: true };
    });
    kube.addNode(node('booting'));
    pending('plain', '1');
    pending('tolerant', '1', (p) => {
      p.spec.tolerations = [{ key: 'gpu', operator: 'Exists' }];
    });
    scheduler.schedule();
    expect(nodeOf('tolerant')).toBe('gpu');
    expect(scheduled('plain')?.message).toBe(
      '0/4 nodes are available: 1 node(s) had untolerated taint {gpu=true:NoSchedule}, ' +
        '1 node(s) had untolerated taint {karpenter.sh/unregistered:NoExecute}, ' +
        '1 node(s) had untolerated taint {node.kubernetes.io/not-ready:NoSchedule}, 1 node(s) were unschedulable.',
    );
  });

  it('puts two pods asking for the same host port on different nodes', () => {
    readyNode('a', '4');
    readyNode('b', '4');
    const withPort = (p: Pod) => {
      p.spec.containers = [
        { name: 'proxy', resources: { requests: { cpu: '100m' } }, ports: [{ containerPort: 80, hostPort: 8080 }] },
      ];
    };
    for (const name of ['p1', 'p2', 'p3']) pending(name, '100m', withPort);
    scheduler.schedule();
    expect(new Set([nodeOf('p1'), nodeOf('p2')])).toEqual(new Set(['a', 'b']));
    expect(scheduled('p3')?.message).toBe(
      "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports.",
    );
  });

  it('prefers the emptier node (LeastAllocated)', () => {
    readyNode('a', '4');
    readyNode('b', '4');
    kube.addPod(pod('there', { cpu: '2', nodeName: 'a' }));
    pending('web', '1');
    scheduler.schedule();
    expect(nodeOf('web')).toBe('b');
  });

  it('reacts to changes once started: a pending pod binds when a node that fits registers', async () => {
    scheduler.start();
    pending('web', '1');
    await scheduler.settled();
    expect(scheduled('web')?.reason).toBe('Unschedulable');
    readyNode('new', '2', { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] });
    await scheduler.settled();
    expect(nodeOf('web')).toBeUndefined();
    kube.updateNode('new', (n) => {
      n.spec = { ...n.spec, taints: [] };
    });
    await scheduler.settled();
    expect(nodeOf('web')).toBe('new');
    expect(passes.at(-1)?.bound).toEqual([{ pod: 'default/web', node: 'new' }]);
  });
});
