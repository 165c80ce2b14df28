import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../shared/apis/load';
import { collectWorkloads } from '../../shared/workloads';

function collect(yaml: string) {
  return collectWorkloads(parseManifests(yaml, 'in.yaml').documents);
}

const container = '{containers: [{name: c, resources: {requests: {cpu: 100m}}}]}';

describe('collectWorkloads', () => {
  it.each([
    ['a pending Pod', `kind: Pod\nmetadata: {name: p}\nspec: ${container}`, { pending: 1 }],
    ['a bound Pod', `kind: Pod\nmetadata: {name: p}\nspec: {nodeName: n1, containers: [{name: c}]}`, { bound: 1 }],
    [
      'a PodList',
      `kind: PodList\nitems:\n- {kind: Pod, metadata: {name: a}, spec: ${container}}\n- {kind: Pod, metadata: {name: b}, spec: ${container}}`,
      { pending: 2 },
    ],
    [
      'a Deployment',
      `kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 3, template: {spec: ${container}}}`,
      { pending: 3 },
    ],
    [
      'a StatefulSet',
      `kind: StatefulSet\nmetadata: {name: s}\nspec: {replicas: 2, template: {spec: ${container}}}`,
      { pending: 2 },
    ],
    ['a ReplicaSet', `kind: ReplicaSet\nmetadata: {name: r}\nspec: {template: {spec: ${container}}}`, { pending: 1 }],
    [
      'a Job',
      `kind: Job\nmetadata: {name: j}\nspec: {parallelism: 4, completions: 3, template: {spec: ${container}}}`,
      { pending: 3 },
    ],
    ['a DaemonSet', `kind: DaemonSet\nmetadata: {name: ds}\nspec: {template: {spec: ${container}}}`, { daemonSets: 1 }],
    [
      'a Node',
      'kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "2", memory: 4Gi, pods: "20"}}',
      { nodes: 1 },
    ],
    ['a Service (skipped with a note)', 'kind: Service\nmetadata: {name: svc}', { notes: 1 }],
    [
      'a Pod the scheduler marked Unschedulable',
      `kind: Pod\nmetadata: {name: p}\nspec: ${container}\nstatus: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]}`,
      { pending: 1 },
    ],
    [
      'a terminating Pod (skipped with a note, as upstream provisions nothing for it)',
      `kind: Pod\nmetadata: {name: p, deletionTimestamp: "2026-01-01T00:00:00Z"}\nspec: ${container}\nstatus: {conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]}`,
      { notes: 1 },
    ],
    [
      'a Pod not marked Unschedulable (SchedulingGated: skipped with a note, as IsProvisionable)',
      `kind: Pod\nmetadata: {name: p}\nspec: ${container}\nstatus: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: SchedulingGated}]}`,
      { notes: 1 },
    ],
    [
      'a Pod nominated by a preemption (skipped with a note)',
      `kind: Pod\nmetadata: {name: p}\nspec: ${container}\nstatus: {nominatedNodeName: n1, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]}`,
      { notes: 1 },
    ],
    [
      'a Pod owned by a DaemonSet (skipped with a note)',
      `kind: Pod\nmetadata: {name: p, ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds}]}\nspec: ${container}`,
      { notes: 1 },
    ],
    [
      'a terminating bound Pod (still counts on its node)',
      `kind: Pod\nmetadata: {name: p, deletionTimestamp: "2026-01-01T00:00:00Z"}\nspec: {nodeName: n1, containers: [{name: c}]}`,
      { bound: 1 },
    ],
    [
      'a finished Pod (skipped with a note)',
      `kind: Pod\nmetadata: {name: p}\nspec: ${container}\nstatus: {phase: Succeeded}`,
      { notes: 1 },
    ],
  ])('sorts %s', (_, yaml, expected) => {
    const set = collect(yaml);
    const counts = {
      pending: set.pending.length,
      bound: set.bound.length,
      daemonSets: set.daemonSets.length,
      nodes: set.nodes.length,
      notes: set.notes.length,
      problems: set.problems.length,
    };
    expect(counts).toEqual({ pending: 0, bound: 0, daemonSets: 0, nodes: 0, notes: 0, problems: 0, ...expected });
  });

  it('defaults the namespace of a given Pod to "default" and keeps an explicit one', () => {
    const set = collect(
      `kind: Pod\nmetadata: {name: a}\nspec: ${container}\n---\nkind: Pod\nmetadata: {name: b, namespace: x}\nspec: ${container}`,
    );
    expect(set.pending.map((p) => p.metadata.namespace)).toEqual(['default', 'x']);
  });

  it.each([
    ['Pod without a name', `kind: Pod\nmetadata: {}\nspec: ${container}`, 'Pod/default/<no name>', 'metadata.name'],
    [
      'Pod without containers',
      'kind: Pod\nmetadata: {name: p}\nspec: {containers: []}',
      'Pod/default/p',
      'spec.containers',
    ],
    [
      'bad cpu quantity',
      'kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}',
      'Pod/default/p',
      'spec.containers[0].resources.requests.cpu',
    ],
    [
      'Deployment without template',
      'kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}',
      'Deployment/default/d',
      'spec.template',
    ],
    [
      'negative replicas',
      `kind: Deployment\nmetadata: {name: d}\nspec: {replicas: -1, template: {spec: ${container}}}`,
      'Deployment/default/d',
      'spec.replicas',
    ],
    [
      'fractional parallelism',
      `kind: Job\nmetadata: {name: j}\nspec: {parallelism: 1.5, template: {spec: ${container}}}`,
      'Job/default/j',
      'spec.parallelism',
    ],
    [
      'bad init container quantity',
      `kind: StatefulSet\nmetadata: {name: s}\nspec: {template: {spec: {containers: [{name: c}], initContainers: [{name: i, resources: {limits: {memory: 1GG}}}]}}}`,
      'StatefulSet/default/s',
      'spec.template.spec.initContainers[0].resources.limits.memory',
    ],
    ['Node without allocatable', 'kind: Node\nmetadata: {name: n}', 'Node/n', 'status.allocatable'],
    [
      'Node with a bad quantity',
      'kind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: x}}',
      'Node/n',
      'status.allocatable.cpu',
    ],
  ])('reports %s with the file, object and field', (_, yaml, object, path) => {
    const set = collect(yaml);
    expect(set.problems).toContainEqual(expect.objectContaining({ severity: 'error', file: 'in.yaml', object, path }));
    expect(set.pending).toEqual([]);
  });
});
