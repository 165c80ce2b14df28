// Reading what runs (or would run) in a cluster from manifests: Pods and PodLists as they are, workload
// controllers expanded into their pods, DaemonSets as per-node overhead, Nodes as existing capacity.
// The kind of each document decides its role, whichever flag it came from. Pure: callers read files.

import type { Node, Pod, Workload } from '../apis/core/v1';
import type { LoadedDocument } from '../apis/load';
import type { Problem } from '../apis/problems';
import { parseQuantityOrUndefined } from '../apis/quantity';
import { DEFAULT_NAMESPACE, EXPANDED_KINDS, expandWorkload } from './expand';

export { DEFAULT_NAMESPACE, desiredPodCount, expandWorkload, templateHash } from './expand';
export { type ExistingNodesResult, toExistingNodes } from './nodes';

export interface WorkloadSet {
  /** Pods to place: pods without spec.nodeName and the pods of expanded workloads. */
  pending: Pod[];
  /** Pods with spec.nodeName: already running, they count on their node (see toExistingNodes). */
  bound: Pod[];
  /** One template pod per DaemonSet. */
  daemonSets: Pod[];
  nodes: Node[];
  problems: Problem[];
  /** Documents skipped on purpose, for stderr. */
  notes: string[];
}

const FINISHED_PHASES = new Set(['Succeeded', 'Failed']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isQuantity(value: unknown): boolean {
  return (typeof value === 'string' || typeof value === 'number') && parseQuantityOrUndefined(value) !== undefined;
}

function checkPodSpec(spec: unknown, path: string, report: (path: string, message: string) => void): void {
  if (!isRecord(spec)) {
    report(path, 'is required: a pod spec with at least one container');
    return;
  }
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0) {
    report(`${path}.containers`, 'needs at least one container');
  }
  for (const field of ['containers', 'initContainers'] as const) {
    const list = spec[field];
    if (!Array.isArray(list)) continue;
    list.forEach((container: unknown, i) => {
      if (!isRecord(container)) {
        report(`${path}.${field}[${i}]`, 'expected a container object');
        return;
      }
      const resources = container.resources;
      if (!isRecord(resources)) return;
      for (const kind of ['requests', 'limits'] as const) {
        const list = resources[kind];
        if (list === undefined) continue;
        if (!isRecord(list)) {
          report(`${path}.${field}[${i}].resources.${kind}`, 'expected a map of resource name to quantity');
          continue;
        }
        for (const [name, quantity] of Object.entries(list)) {
          if (!isQuantity(quantity)) {
            report(
              `${path}.${field}[${i}].resources.${kind}.${name}`,
              `"${String(quantity)}" is not a valid resource quantity (examples: 500m, 2, 16Gi)`,
            );
          }
        }
      }
    });
  }
}

function checkCount(spec: Record<string, unknown>, field: string, report: (path: string, message: string) => void) {
  const value = spec[field];
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    report(`spec.${field}`, `must be a whole number ≥ 0, got ${JSON.stringify(value)}`);
  }
}

/** Sorts documents into pending pods, bound pods, DaemonSet templates and nodes, with problems for bad ones. */
export function collectWorkloads(documents: readonly LoadedDocument[]): WorkloadSet {
  const set: WorkloadSet = { pending: [], bound: [], daemonSets: [], nodes: [], problems: [], notes: [] };
  for (const doc of documents) {
    const object = doc.object;
    const kind = typeof object.kind === 'string' ? object.kind : undefined;
    const metadata = isRecord(object.metadata) ? object.metadata : undefined;
    const name = typeof metadata?.name === 'string' ? metadata.name : undefined;
    const label = `${kind ?? '<no kind>'}/${name ?? '<no name>'}`;
    const errors: Problem[] = [];
    const report = (path: string, message: string) =>
      errors.push({ severity: 'error', file: doc.file, object: label, path, message });

    if (kind !== 'Pod' && kind !== 'Node' && kind !== 'DaemonSet' && !EXPANDED_KINDS.includes(kind as never)) {
      set.notes.push(`${doc.file}: skipped ${label} (not a Pod, workload, DaemonSet or Node)`);
      continue;
    }
    if (name === undefined || name === '') report('metadata.name', 'is required');
    const spec = isRecord(object.spec) ? object.spec : undefined;
    if (kind === 'Pod') checkPodSpec(spec, 'spec', report);
    else if (kind !== 'Node') {
      const template = isRecord(spec?.template) ? spec.template : undefined;
      if (!template) report('spec.template', 'is required: the pod template the controller creates pods from');
      else checkPodSpec(template.spec, 'spec.template.spec', report);
      if (spec) for (const field of ['replicas', 'parallelism', 'completions']) checkCount(spec, field, report);
    } else {
      const status = isRecord(object.status) ? object.status : {};
      for (const field of ['allocatable', 'capacity'] as const) {
        const list = status[field];
        if (!isRecord(list)) continue;
        for (const [resource, quantity] of Object.entries(list)) {
          if (!isQuantity(quantity))
            report(`status.${field}.${resource}`, `"${String(quantity)}" is not a valid resource quantity`);
        }
      }
      if (!isRecord(status.allocatable) && !isRecord(status.capacity)) {
        report('status.allocatable', 'is required: the node capacity pods can use (cpu, memory, pods)');
      }
    }
    if (errors.length > 0) {
      set.problems.push(...errors);
      continue;
    }

    if (kind === 'Node') {
      set.nodes.push(object as unknown as Node);
    } else if (kind === 'Pod') {
      const pod = structuredClone(object) as unknown as Pod;
      pod.metadata.namespace ??= DEFAULT_NAMESPACE;
      if (pod.status?.phase && FINISHED_PHASES.has(pod.status.phase)) {
        set.notes.push(`${doc.file}: skipped Pod/${name} (${pod.status.phase}: it uses no capacity)`);
      } else if (pod.spec.nodeName) set.bound.push(pod);
      else set.pending.push(pod);
    } else if (kind === 'DaemonSet') {
      set.daemonSets.push(...expandWorkload(object as unknown as Workload));
    } else {
      set.pending.push(...expandWorkload(object as unknown as Workload));
    }
  }
  return set;
}
