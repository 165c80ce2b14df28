// Reading what runs (or would run) in a cluster from manifests: Pods and PodLists as they are, workload
// controllers expanded into their pods, DaemonSets as per-node overhead, Nodes as existing capacity.
// The kind of each document decides its role, whichever flag it came from. Pure: callers read files.

import {
  eachItem,
  integer,
  isRecord,
  oneOf,
  optionalString,
  qualifiedName,
  type Report,
  record,
} from '../apis/core/fields';
import type { Node, Pod, Workload } from '../apis/core/v1';
import { checkObjectMeta, checkPodSpec } from '../apis/core/validation';
import type { LoadedDocument } from '../apis/load';
import type { Problem } from '../apis/problems';
import { resourceQuantityProblem } from '../apis/quantity';
import { DEFAULT_NAMESPACE, desiredPodCount, EXPANDED_KINDS, expandWorkload } from './expand';
import { notProvisionableReason } from './provisionable';

export { DEFAULT_NAMESPACE, desiredPodCount, expandWorkload, templateHash } from './expand';
export { type ExistingNodesResult, toExistingNodes } from './nodes';
export { notProvisionableReason } from './provisionable';

export interface WorkloadSet {
  /**
   * Pods to place: the pods of expanded workloads and pods without spec.nodeName that Karpenter would
   * provision for (see notProvisionableReason: not terminating, not nominated, marked Unschedulable
   * when they carry a PodScheduled condition at all).
   */
  pending: Pod[];
  /** Pods with spec.nodeName: already running, they count on their node (see toExistingNodes). */
  bound: Pod[];
  /** One template pod per DaemonSet. */
  daemonSets: Pod[];
  nodes: Node[];
  problems: Problem[];
  /** Documents skipped on purpose, for stderr. */
  notes: string[];
  /** Inputs that look like mistakes but still give a plan (an object given twice), for stderr. */
  warnings: string[];
  /** How many Pods and workloads were read, whatever number of pods they make (replicas: 0 makes none). */
  workloads: number;
}

const FINISHED_PHASES = new Set(['Succeeded', 'Failed']);

/**
 * Caps that turn absurd inputs into an error instead of an exhausted heap: Kubernetes' own
 * scalability envelope is 150,000 pods per cluster, and real clusters run far fewer.
 */
export const MAX_PODS_PER_WORKLOAD = 100_000;
export const MAX_PODS_PER_PLAN = 150_000;

export interface PodCaps {
  perWorkload: number;
  perPlan: number;
}
const DEFAULT_CAPS: PodCaps = { perWorkload: MAX_PODS_PER_WORKLOAD, perPlan: MAX_PODS_PER_PLAN };

const COUNT_FIELDS = ['replicas', 'parallelism', 'completions'] as const;

function checkNode(object: Record<string, unknown>, report: Report): void {
  checkObjectMeta(object.metadata, 'metadata', report, true);
  const spec = record(object.spec, 'spec', report);
  eachItem(spec?.taints, 'spec.taints', report, (item, at) => {
    const taint = record(item, at, report);
    if (!taint) return;
    qualifiedName(taint.key, `${at}.key`, report);
    optionalString(taint.value, `${at}.value`, report);
    if (taint.effect === undefined) report(`${at}.effect`, 'Required value');
    oneOf(taint.effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute'], `${at}.effect`, report);
  });
  const status = record(object.status, 'status', report) ?? {};
  for (const field of ['allocatable', 'capacity'] as const) {
    const list = record(status[field], `status.${field}`, report);
    for (const [resource, quantity] of Object.entries(list ?? {})) {
      const problem = resourceQuantityProblem(resource, quantity);
      if (problem) report(`status.${field}.${resource}`, problem);
    }
  }
  if (!isRecord(status.allocatable) && !isRecord(status.capacity)) {
    report('status.allocatable', 'is required: the node capacity pods can use (cpu, memory, pods)');
  }
}

/** Checks a workload's template and counts; returns how many pods it makes (0 when invalid). */
function checkWorkload(object: Record<string, unknown>, kind: string, report: Report, cap: number): number {
  checkObjectMeta(object.metadata, 'metadata', report, true);
  const spec = record(object.spec, 'spec', report);
  const template = record(spec?.template, 'spec.template', report);
  if (!template) {
    report('spec.template', 'Required value: the pod template the controller creates pods from');
    return 0;
  }
  checkObjectMeta(template.metadata, 'spec.template.metadata', report, false);
  checkPodSpec(template.spec, 'spec.template.spec', report);
  let valid = true;
  for (const field of COUNT_FIELDS) {
    if (spec?.[field] !== undefined && !integer(spec[field], `spec.${field}`, report, 0)) valid = false;
  }
  if (!valid || kind === 'DaemonSet') return 1;
  const count = desiredPodCount({ kind, spec } as unknown as Workload);
  if (count > cap) {
    const field = kind === 'Job' ? 'spec.parallelism' : 'spec.replicas';
    report(field, `Invalid value: ${count}: karpless plans at most ${cap} pods per workload`);
  }
  return count;
}

function zeroCountField(kind: string, object: Record<string, unknown>): string {
  if (kind !== 'Job') return 'spec.replicas';
  return isRecord(object.spec) && object.spec.parallelism === 0 ? 'spec.parallelism' : 'spec.completions';
}

function documentLabel(kind: string | undefined, object: Record<string, unknown>): string {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === 'string' && metadata.name !== '' ? metadata.name : '<no name>';
  if (kind === 'Node') return `Node/${name}`;
  const namespace =
    typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : DEFAULT_NAMESPACE;
  return `${kind ?? '<no kind>'}/${namespace}/${name}`;
}

/** Sorts documents into pending pods, bound pods, DaemonSet templates and nodes, with problems for bad ones. */
export function collectWorkloads(documents: readonly LoadedDocument[], caps: PodCaps = DEFAULT_CAPS): WorkloadSet {
  const set: WorkloadSet = {
    pending: [],
    bound: [],
    daemonSets: [],
    nodes: [],
    problems: [],
    notes: [],
    warnings: [],
    workloads: 0,
  };
  // An API server holds one object per kind, namespace and name: the same one read twice (a
  // DaemonSet in both --pods and --daemonsets) is one object, and counting it twice doubles its pods.
  const seen = new Map<string, string>();
  let planned = 0;
  let capReported = false;
  for (const doc of documents) {
    const object = doc.object;
    const kind = typeof object.kind === 'string' ? object.kind : undefined;
    const label = documentLabel(kind, object);
    let errors = 0;
    const report: Report = (path, message) => {
      errors++;
      set.problems.push({ severity: 'error', file: doc.file, object: label, path, message });
    };

    if (
      kind === undefined ||
      (kind !== 'Pod' && kind !== 'Node' && kind !== 'DaemonSet' && !EXPANDED_KINDS.includes(kind as never))
    ) {
      set.notes.push(`${doc.file}: skipped ${label} (not a Pod, workload, DaemonSet or Node)`);
      continue;
    }
    let count = 0;
    if (kind === 'Node') checkNode(object, report);
    else if (kind === 'Pod') {
      checkObjectMeta(object.metadata, 'metadata', report, true);
      checkPodSpec(object.spec, 'spec', report);
      count = 1;
    } else count = checkWorkload(object, kind, report, caps.perWorkload);
    if (errors > 0) continue;
    const first = seen.get(label);
    if (first !== undefined) {
      const where = first === doc.file ? 'is read twice (its file is given twice)' : `is also in ${first}`;
      set.warnings.push(`${doc.file}: ${label} ${where}: counted once`);
      continue;
    }
    if (kind !== 'DaemonSet' && kind !== 'Node' && planned + count > caps.perPlan) {
      // Expanding past the cap would only exhaust memory; one error says why the plan stops here.
      if (!capReported) {
        report('', `the inputs hold more than ${caps.perPlan} pods, the most karpless plans at once: split them`);
        capReported = true;
      }
      continue;
    }
    planned += count;
    seen.set(label, doc.file);
    if (kind !== 'Node' && kind !== 'DaemonSet') set.workloads++;
    if (kind !== 'Pod' && kind !== 'Node' && kind !== 'DaemonSet' && count === 0) {
      set.notes.push(`${doc.file}: ${label} makes no pods (${zeroCountField(kind, object)} is 0)`);
    }
    addDocument(set, doc, kind, object);
  }
  return set;
}

function addDocument(set: WorkloadSet, doc: LoadedDocument, kind: string, object: Record<string, unknown>): void {
  if (kind === 'Node') {
    set.nodes.push(object as unknown as Node);
  } else if (kind === 'Pod') {
    const pod = structuredClone(object) as unknown as Pod;
    pod.metadata.namespace ||= DEFAULT_NAMESPACE;
    if (pod.status?.phase && FINISHED_PHASES.has(pod.status.phase)) {
      set.notes.push(
        `${doc.file}: skipped Pod/${pod.metadata.namespace}/${pod.metadata.name} (${pod.status.phase}: it uses no capacity)`,
      );
    } else if (pod.spec.nodeName) set.bound.push(pod);
    else {
      const skip = notProvisionableReason(pod, { manifest: true });
      if (skip) set.notes.push(`${doc.file}: skipped Pod/${pod.metadata.namespace}/${pod.metadata.name} (${skip})`);
      else set.pending.push(pod);
    }
  } else {
    // One push per pod: spreading a workload's pods into push() overflows the stack at ~120k.
    const target = kind === 'DaemonSet' ? set.daemonSets : set.pending;
    for (const pod of expandWorkload(object as unknown as Workload)) target.push(pod);
  }
}
