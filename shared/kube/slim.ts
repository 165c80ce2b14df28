// What karpless keeps of a listed or watched Pod or Node. At Kubernetes' scale limits (150,000 pods,
// 5,000 nodes) the full objects of a list hold about 890 MiB of heap and peak above the 1,024 MB the
// provision and drift functions have (bench/scale.ts), while the fields below are read by no decision:
// managedFields, a container's env, command, probes and mounts, container statuses, a node's image
// list. Dropped as each page is parsed, so only one page of full objects is ever held.
// A field a decision starts to read must not be listed here: test/kube/slim.test.ts checks that the
// scheduler's and the drain's inputs survive.

import type { Node, Pod } from '../apis/core/v1';

/** Annotations nobody plans with that can be as large as the object itself. */
const HEAVY_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration'];

/** Container fields that say how the container runs, not what it needs from a node. */
const CONTAINER_RUNTIME_FIELDS = [
  'env',
  'envFrom',
  'command',
  'args',
  'workingDir',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'volumeMounts',
  'volumeDevices',
  'securityContext',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'stdin',
  'tty',
] as const;

const POD_STATUS_FIELDS = ['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses'] as const;
const NODE_STATUS_FIELDS = ['images', 'volumesInUse', 'volumesAttached'] as const;

type Loose = Record<string, unknown>;

function dropMetadata(object: { metadata?: unknown }): void {
  const metadata = object.metadata as Loose | undefined;
  if (!metadata) return;
  delete metadata.managedFields;
  const annotations = metadata.annotations as Loose | undefined;
  if (annotations) for (const key of HEAVY_ANNOTATIONS) delete annotations[key];
}

function dropContainerFields(containers: unknown): void {
  if (!Array.isArray(containers)) return;
  for (const container of containers as Loose[]) for (const field of CONTAINER_RUNTIME_FIELDS) delete container[field];
}

/** Strips, in place, what no karpless decision reads from a pod the client just parsed. */
export function slimPod<T extends Pod>(pod: T): T {
  dropMetadata(pod);
  const spec = pod.spec as unknown as Loose | undefined;
  if (spec) {
    dropContainerFields(spec.containers);
    dropContainerFields(spec.initContainers);
    dropContainerFields(spec.ephemeralContainers);
  }
  const status = pod.status as Loose | undefined;
  if (status) for (const field of POD_STATUS_FIELDS) delete status[field];
  return pod;
}

/** Strips, in place, what no karpless decision reads from a node the client just parsed. */
export function slimNode<T extends Node>(node: T): T {
  dropMetadata(node);
  const status = node.status as Loose | undefined;
  if (status) for (const field of NODE_STATUS_FIELDS) delete status[field];
  return node;
}
