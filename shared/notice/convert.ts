// Kubernetes objects ↔ notice entries. A notice carries requests only (limits fill requests a
// container leaves out, as API-server defaulting does) and the controller owner's kind; the way
// back yields the core Pod the scheduling core's solve() takes.

import type { Container, OwnerReference, Pod, PodSpec, Workload } from '../apis/core/v1';
import type { ResourceList } from '../apis/v1/types';
import type { NoticeDaemonSet, NoticePod } from './types';

type NoticeTemplate = NoticeDaemonSet['template'];

function requestsOf(container: Container): ResourceList | undefined {
  const r = container.resources;
  if (!r?.requests && !r?.limits) return undefined;
  const requests = { ...(r.limits ?? {}), ...(r.requests ?? {}) };
  return Object.keys(requests).length > 0 ? requests : undefined;
}

function noticeContainer(c: Container): NoticePod['containers'][number] {
  const requests = requestsOf(c);
  return { name: c.name, ...(requests ? { resources: { requests } } : {}) };
}

function nonEmpty<T extends object>(value: T | undefined): value is T {
  return value !== undefined && Object.keys(value).length > 0;
}

function templateFrom(spec: PodSpec, labels: Record<string, string> | undefined, ownerKind?: string): NoticeTemplate {
  const out: NoticeTemplate = { containers: spec.containers.map(noticeContainer) };
  if (nonEmpty(labels)) out.labels = { ...labels };
  if (ownerKind !== undefined) out.ownerKind = ownerKind;
  if (spec.initContainers && spec.initContainers.length > 0) {
    out.initContainers = spec.initContainers.map((c) => ({
      ...noticeContainer(c),
      ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}),
    }));
  }
  if (nonEmpty(spec.overhead)) out.overhead = { ...spec.overhead };
  if (nonEmpty(spec.nodeSelector)) out.nodeSelector = { ...spec.nodeSelector };
  if (nonEmpty(spec.affinity)) out.affinity = spec.affinity;
  if (spec.tolerations && spec.tolerations.length > 0) out.tolerations = spec.tolerations;
  if (spec.topologySpreadConstraints && spec.topologySpreadConstraints.length > 0) {
    out.topologySpreadConstraints = spec.topologySpreadConstraints;
  }
  if (spec.priority !== undefined) out.priority = spec.priority;
  return out;
}

/** The controlling owner's kind (the ownerReference with controller: true), if any. */
export function controllerKind(refs: readonly OwnerReference[] | undefined): string | undefined {
  return refs?.find((r) => r.controller === true)?.kind;
}

/**
 * A pending Kubernetes Pod as a notice entry. The uid falls back to `namespace/name` for pods that
 * never went through an API server (manifests, tests), so such entries still deduplicate.
 */
export function noticePodFromPod(pod: Pod): NoticePod {
  const namespace = pod.metadata.namespace ?? 'default';
  return {
    namespace,
    name: pod.metadata.name,
    uid: pod.metadata.uid ?? `${namespace}/${pod.metadata.name}`,
    ...templateFrom(pod.spec, pod.metadata.labels, controllerKind(pod.metadata.ownerReferences)),
  };
}

const OWNER_API_VERSION: Record<string, string> = {
  ReplicaSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  DaemonSet: 'apps/v1',
  Deployment: 'apps/v1',
  Job: 'batch/v1',
  CronJob: 'batch/v1',
};

function specFrom(t: NoticeTemplate): PodSpec {
  const spec: PodSpec = { containers: t.containers.map((c) => ({ ...c })) };
  if (t.initContainers) spec.initContainers = t.initContainers.map((c) => ({ ...c }));
  if (t.overhead) spec.overhead = t.overhead;
  if (t.nodeSelector) spec.nodeSelector = t.nodeSelector;
  if (t.affinity) spec.affinity = t.affinity;
  if (t.tolerations) spec.tolerations = t.tolerations;
  if (t.topologySpreadConstraints) spec.topologySpreadConstraints = t.topologySpreadConstraints;
  if (t.priority !== undefined) spec.priority = t.priority;
  return spec;
}

function podFrom(namespace: string, name: string, uid: string, t: NoticeTemplate): Pod {
  const ownerReferences: OwnerReference[] | undefined =
    t.ownerKind === undefined
      ? undefined
      : [{ apiVersion: OWNER_API_VERSION[t.ownerKind] ?? 'v1', kind: t.ownerKind, name: '', controller: true }];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid,
      ...(t.labels ? { labels: t.labels } : {}),
      ...(ownerReferences ? { ownerReferences } : {}),
    },
    spec: specFrom(t),
  };
}

/** A notice entry as the core Pod solve() takes (the owner is known by kind only). */
export function podFromNoticePod(np: NoticePod): Pod {
  return podFrom(np.namespace, np.name, np.uid, np);
}

/** A DaemonSet as a notice entry: its pod template, owned by the DaemonSet. */
export function noticeDaemonSetFromDaemonSet(ds: Workload): NoticeDaemonSet {
  const template = ds.spec.template;
  return {
    namespace: ds.metadata.namespace ?? 'default',
    name: ds.metadata.name,
    template: templateFrom(template.spec, template.metadata?.labels, 'DaemonSet'),
  };
}

/** The pod a DaemonSet would run on a new node, for solve()'s `daemonSets` (overhead per claim). */
export function podFromNoticeDaemonSet(ds: NoticeDaemonSet): Pod {
  return podFrom(ds.namespace, ds.name, `daemonset:${ds.namespace}/${ds.name}`, ds.template);
}
