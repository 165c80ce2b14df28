// Workload expansion: the pods a controller would create for a Deployment, ReplicaSet, StatefulSet or
// Job, so `karpless plan` can answer "what would my chart need?" without a cluster. Pure functions.

import type { OwnerReference, Pod, PodTemplateSpec, Workload } from '../apis/core/v1';

export const DEFAULT_NAMESPACE = 'default';

/** Kinds expanded into pods (DaemonSets are overhead, not pods to place, and are handled apart). */
export const EXPANDED_KINDS = ['Deployment', 'ReplicaSet', 'StatefulSet', 'Job'] as const;
export type ExpandedKind = (typeof EXPANDED_KINDS)[number];

// The alphabet Kubernetes uses for generated name suffixes (rand.SafeEncodeString): no vowels, so
// generated names never spell words, and no look-alike characters.
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function fnv1a(text: string, seed: number): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

function safeEncode(value: number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out += SAFE_ALPHABET[value % SAFE_ALPHABET.length];
    value = Math.floor(value / SAFE_ALPHABET.length);
  }
  return out;
}

/** A stable 10-character pod-template-hash, shaped like the Deployment controller's. */
export function templateHash(template: PodTemplateSpec): string {
  const text = JSON.stringify(template);
  return safeEncode(fnv1a(text, 0x811c9dc5), 5) + safeEncode(fnv1a(text, 0x9747b28c), 5);
}

/** How many pods the controller runs at once: replicas (default 1), or for a Job min(parallelism, completions). */
export function desiredPodCount(workload: Workload): number {
  if (workload.kind === 'Job') {
    const parallelism = workload.spec.parallelism ?? 1;
    const completions = workload.spec.completions;
    return completions === undefined ? parallelism : Math.min(parallelism, completions);
  }
  if (workload.kind === 'DaemonSet') return 1;
  return workload.spec.replicas ?? 1;
}

function owner(kind: string, name: string, uid: string | undefined): OwnerReference {
  const reference: OwnerReference = {
    apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1',
    kind,
    name,
    controller: true,
  };
  if (uid !== undefined) reference.uid = uid;
  return reference;
}

function podFromTemplate(
  workload: Workload,
  name: string,
  extraLabels: Record<string, string>,
  ownerReference: OwnerReference,
): Pod {
  const template = workload.spec.template;
  const namespace = workload.metadata.namespace ?? template.metadata?.namespace ?? DEFAULT_NAMESPACE;
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid: `${namespace}/${name}`,
      labels: { ...(template.metadata?.labels ?? {}), ...extraLabels },
      ownerReferences: [ownerReference],
    },
    // Deep copy: the scheduler may annotate or relax a pod's constraints, and sibling pods must not
    // see that through a shared template object.
    spec: structuredClone(template.spec),
  };
  if (template.metadata?.annotations) pod.metadata.annotations = { ...template.metadata.annotations };
  if (workload.metadata.creationTimestamp) pod.metadata.creationTimestamp = workload.metadata.creationTimestamp;
  return pod;
}

/**
 * The pods a controller would run for this workload, named as the controller names them:
 * Deployment `name-<hash>-<i>` (owned by ReplicaSet `name-<hash>`), ReplicaSet and Job `name-<i>`,
 * StatefulSet `name-<ordinal>`, DaemonSet one pod named after it (its template, for overhead).
 */
export function expandWorkload(workload: Workload): Pod[] {
  const name = workload.metadata.name;
  const count = desiredPodCount(workload);
  const uid = workload.metadata.uid;
  const pods: Pod[] = [];
  switch (workload.kind) {
    case 'Deployment': {
      const hash = templateHash(workload.spec.template);
      const replicaSet = `${name}-${hash}`;
      for (let i = 0; i < count; i++) {
        pods.push(
          podFromTemplate(
            workload,
            `${replicaSet}-${i}`,
            { 'pod-template-hash': hash },
            owner('ReplicaSet', replicaSet, undefined),
          ),
        );
      }
      break;
    }
    case 'ReplicaSet':
      for (let i = 0; i < count; i++)
        pods.push(podFromTemplate(workload, `${name}-${i}`, {}, owner('ReplicaSet', name, uid)));
      break;
    case 'StatefulSet':
      for (let i = 0; i < count; i++) {
        const podName = `${name}-${i}`;
        const labels = { 'statefulset.kubernetes.io/pod-name': podName, 'apps.kubernetes.io/pod-index': String(i) };
        pods.push(podFromTemplate(workload, podName, labels, owner('StatefulSet', name, uid)));
      }
      break;
    case 'Job':
      for (let i = 0; i < count; i++) {
        const labels = { 'job-name': name, 'batch.kubernetes.io/job-name': name };
        pods.push(podFromTemplate(workload, `${name}-${i}`, labels, owner('Job', name, uid)));
      }
      break;
    case 'DaemonSet':
      pods.push(podFromTemplate(workload, name, {}, owner('DaemonSet', name, uid)));
      break;
  }
  return pods;
}
