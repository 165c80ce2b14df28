// The PodsUnschedulable notice (source `karpless`, detail-type `PodsUnschedulable`): what the
// scheduling core needs of each pending pod and of each DaemonSet's pod template. Anyone may put it
// (the watcher, CI, an in-cluster agent); docs/notice.schema.json is its JSON Schema and
// shared/notice/validate.ts its one validator.

import type { Affinity, Container, Toleration, TopologySpreadConstraint } from '../apis/core/v1';
import type { ResourceList } from '../apis/v1/types';

export interface NoticePod {
  namespace: string;
  name: string;
  uid: string;
  labels?: Record<string, string>;
  /** Kind of the controlling owner (ReplicaSet, StatefulSet, Job, DaemonSet …), if any. */
  ownerKind?: string;
  /** Requests per container, init container (with restartPolicy for sidecars) and pod overhead. */
  containers: Pick<Container, 'name' | 'resources'>[];
  initContainers?: Pick<Container, 'name' | 'resources' | 'restartPolicy'>[];
  overhead?: ResourceList;
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations?: Toleration[];
  topologySpreadConstraints?: TopologySpreadConstraint[];
  priority?: number;
}

export interface NoticeDaemonSet {
  namespace: string;
  name: string;
  /** The pod template as a NoticePod without uid (overhead on every node where it would run). */
  template: Omit<NoticePod, 'uid' | 'namespace' | 'name'>;
}

export interface PodsUnschedulableDetail {
  cluster: string;
  /** RFC 3339 time the pending set was observed. */
  observedAt: string;
  pods: NoticePod[];
  daemonSets: NoticeDaemonSet[];
  /** When one observation is split across entries to stay under PutEvents' 256 KB: part i of n. */
  part?: { index: number; count: number; batchId: string };
}
