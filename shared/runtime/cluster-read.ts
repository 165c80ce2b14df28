// What the provision decision reads from the API server before it plans (the cluster is the truth
// at decision time): every pod that has not finished and every node, and, when a pending pod mounts
// a claim, the claims, volumes and storage classes. A notice only names pods: each is looked up by
// namespace and name, must still be the same pod (uid) and still provisionable; the others are
// reported with why and never planned.
//
// What is left out of the read, and why that is safe: finished pods (Succeeded, Failed) hold no
// resources on their node (the kube-scheduler does not count them either) and are never planned, so
// the API server filters them out. Both lists stay paginated reads of the latest state rather than
// resourceVersion=0 reads from the watch cache (which Karpenter's informers amount to): the cache
// answers a whole list at once, which at 150,000 pods is ~580 MB of JSON, past what one response can
// be parsed from, and even the 5,000 nodes' 50 MB answer raised the function's peak memory by about
// 60 MB in bench/scale.ts for no time saved.

import type { Node, Pod } from '../apis/core/v1';
import type { KubeClient } from '../kube/types';
import { usesClaims, type VolumeObjects } from '../scheduling/volumetopology';
import { podUid } from './objects';
import { notProvisionableReason } from './pending';

export type ClusterReader = Pick<
  KubeClient,
  'listPods' | 'listNodes' | 'listPersistentVolumeClaims' | 'listPersistentVolumes' | 'listStorageClasses'
>;

export interface ClusterSnapshot {
  pods: Pod[];
  nodes: Node[];
}

/** A pod a notice named that is not planned, and why. */
export interface IgnoredPod {
  pod: string;
  reason: string;
}

export interface PendingPods {
  /** The API server's objects of the named pods that are still provisionable. */
  pods: Pod[];
  ignored: IgnoredPod[];
}

function keyOf(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

/** The pods that hold resources on their node or may still get one: all but finished ones. */
export const UNFINISHED_PODS = 'status.phase!=Succeeded,status.phase!=Failed';

export async function readCluster(kube: ClusterReader): Promise<ClusterSnapshot> {
  const [pods, nodes] = await Promise.all([kube.listPods({ fieldSelector: UNFINISHED_PODS }), kube.listNodes()]);
  return { pods: pods.items, nodes: nodes.items };
}

/** Claims, volumes and classes, read only when some pod to plan mounts a claim. */
export async function readVolumes(kube: ClusterReader, pods: readonly Pod[]): Promise<VolumeObjects | undefined> {
  if (!pods.some(usesClaims)) return undefined;
  const [claims, volumes, classes] = await Promise.all([
    kube.listPersistentVolumeClaims(),
    kube.listPersistentVolumes(),
    kube.listStorageClasses(),
  ]);
  return {
    claims: new Map(claims.items.map((c) => [`${c.metadata.namespace ?? 'default'}/${c.metadata.name}`, c])),
    volumes: new Map(volumes.items.map((v) => [v.metadata.name, v])),
    classes: new Map(classes.items.map((c) => [c.metadata.name, c])),
  };
}

/**
 * The named pods as the API server has them, if karpless should still provision for them. A notice
 * entry without a real uid (its uid is "namespace/name") matches by name alone.
 */
export function pendingInCluster(named: readonly Pod[], cluster: readonly Pod[]): PendingPods {
  const byKey = new Map(cluster.map((p) => [keyOf(p), p]));
  const pods: Pod[] = [];
  const ignored: IgnoredPod[] = [];
  for (const notice of named) {
    const key = keyOf(notice);
    const current = byKey.get(key);
    const uid = podUid(notice);
    if (!current) {
      ignored.push({ pod: key, reason: 'does not exist or has finished' });
      continue;
    }
    if (uid !== key && current.metadata.uid !== undefined && current.metadata.uid !== uid) {
      ignored.push({
        pod: key,
        reason: `does not exist (uid ${uid}; the pod of that name now is ${current.metadata.uid})`,
      });
      continue;
    }
    const reason = notProvisionableReason(current);
    if (reason) ignored.push({ pod: key, reason });
    else pods.push(current);
  }
  return { pods, ignored };
}
