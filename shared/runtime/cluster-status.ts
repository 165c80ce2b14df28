// The watcher's status writer, for clusters with Karpenter's v1 CRDs: NodeClaim records mirrored as
// NodeClaim objects (created, status kept current, deleted with their record), NodePool objects'
// status written back (EC2NodeClass status is the drift function's: nodeclass-status.ts), and
// `kubectl delete nodeclaim` turned into the one termination path (the record marked for deletion,
// the Node deleted). Without the CRDs it logs once
// and writes nothing; it never creates NodePools or EC2NodeClasses (those are the user's).

import { type ClusterObject, clusterObjectProblems } from '../apis/cluster-configuration';
import { formatProblem } from '../apis/problems';
import { LABEL_NODEPOOL } from '../apis/v1/labels';
import type { Condition } from '../apis/v1/types';
import type { EventRecorder } from '../kube/events';
import type { KarpenterObject, KarpenterObjectsApi, KarpenterResource } from '../kube/karpenter';
import type { KubeClient } from '../kube/types';
import { canonicalJson } from '../launch/canonical';
import { mirroredNodeClaim, nodeClaimStatus, nodePoolStatus, TERMINATION_FINALIZER } from '../nodeclaim/mirror';
import type { NodeClaimRecord } from '../nodeclaim/record';
import type { Clock } from '../providers/clock';
import type { NodeClaimStore } from '../providers/state';
import type { ObservedObjects } from './cluster-configuration';
import type { NodeClassTermination } from './nodeclass-termination';
import type { RuntimeLog } from './telemetry';

/** Marks the NodeClaim objects karpless mirrors: only these are ever deleted for want of a record. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'karpless';
/** How long the answer to "are the CRDs installed?" is trusted. */
const SERVED_TTL_MS = 5 * 60_000;

export interface ClusterStatusDeps {
  karpenter: KarpenterObjectsApi;
  records: Pick<NodeClaimStore, 'nodeClaims' | 'markNodeClaimForDeletion'>;
  kube: Pick<KubeClient, 'deleteNode'>;
  log: RuntimeLog;
  clock: Clock;
  /** A Warning event on a NodePool that fails validation, naming the field (deduplicated by the recorder). */
  recorder?: Pick<EventRecorder, 'publish'>;
  /**
   * Where the configuration is read from the cluster: Karpenter's EC2NodeClass finalizer, held while
   * claim records name the class (./nodeclass-termination). Bundled classes are no objects of ours.
   */
  nodeClassTermination?: Pick<NodeClassTermination, 'reconcile'>;
  /** Given the NodePools and EC2NodeClasses each pass lists: the configuration re-read on change. */
  observeConfiguration?: (lists: ObservedObjects) => Promise<void>;
}

export interface ClusterStatusReport {
  /** False when the CRDs are not installed (nothing was written). */
  crds: boolean;
  created: number;
  updated: number;
  deleted: number;
  terminated: number;
}

export class ClusterStatusWriter {
  private served: { resources: Set<KarpenterResource>; at: number } | undefined;
  private warnedMissing = false;

  constructor(private readonly deps: ClusterStatusDeps) {}

  async sync(): Promise<ClusterStatusReport> {
    const report: ClusterStatusReport = { crds: false, created: 0, updated: 0, deleted: 0, terminated: 0 };
    const served = await this.servedResources();
    if (served.size === 0) return report;
    report.crds = true;
    const records = await this.deps.records.nodeClaims();
    const nodePools = served.has('nodepools') ? (await this.deps.karpenter.list('nodepools')).items : [];
    const nodeClasses = served.has('ec2nodeclasses') ? (await this.deps.karpenter.list('ec2nodeclasses')).items : [];
    if (served.has('nodepools') && served.has('ec2nodeclasses')) {
      await this.deps.observeConfiguration?.({ nodePools, nodeClasses });
    }
    if (served.has('nodeclaims')) await this.syncNodeClaims(records, nodePools, report);
    if (served.has('nodepools')) await this.syncNodePools(records, nodePools, nodeClasses, report);
    if (served.has('ec2nodeclasses')) await this.deps.nodeClassTermination?.reconcile(nodeClasses, records);
    return report;
  }

  private async servedResources(): Promise<Set<KarpenterResource>> {
    const now = this.deps.clock();
    if (this.served && now - this.served.at < SERVED_TTL_MS) return this.served.resources;
    const resources = await this.deps.karpenter.servedResources();
    this.served = { resources, at: now };
    if (resources.size < 3 && !this.warnedMissing) {
      this.warnedMissing = true;
      this.deps.log.warn(
        "Karpenter's v1 CRDs are not all installed; apply infra/kubernetes/crds/ to see NodeClaims and statuses with kubectl",
        { served: [...resources] },
      );
    }
    return resources;
  }

  private async syncNodeClaims(
    records: readonly NodeClaimRecord[],
    nodePools: readonly KarpenterObject[],
    report: ClusterStatusReport,
  ): Promise<void> {
    const { karpenter } = this.deps;
    const objects = new Map((await karpenter.list('nodeclaims')).items.map((o) => [o.metadata.name, o]));
    const byRecord = new Map(records.map((r) => [r.metadata.name, r]));
    for (const record of records) {
      const name = record.metadata.name;
      let object = objects.get(name);
      if (!object) {
        const uid = nodePools.find((p) => p.metadata.name === record.metadata.labels[LABEL_NODEPOOL])?.metadata.uid;
        const mirrored = mirroredNodeClaim(record, uid);
        mirrored.metadata.labels[MANAGED_BY_LABEL] = MANAGED_BY;
        object = await karpenter.create('nodeclaims', mirrored as KarpenterObject);
        if (!object) continue;
        report.created++;
      } else if (object.metadata.deletionTimestamp && record.metadata.deletionTimestamp === undefined) {
        await this.terminate(record);
        report.terminated++;
      }
      // Launch adds the instance type, zone and capacity type labels the printer columns show.
      const labels = { ...record.metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY };
      if (!sameJson(object.metadata.labels ?? {}, labels)) {
        await karpenter.patch('nodeclaims', name, { metadata: { labels } });
        report.updated++;
      }
      const status = nodeClaimStatus(record);
      if (!sameJson(object.status, status)) {
        await karpenter.patch('nodeclaims', name, { status }, { status: true });
        report.updated++;
      }
    }
    for (const object of objects.values()) {
      if (byRecord.has(object.metadata.name) || object.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY) continue;
      // The record is gone, so is the instance: the object goes too, finalizer and all.
      if (!object.metadata.deletionTimestamp) await karpenter.remove('nodeclaims', object.metadata.name);
      if ((object.metadata.finalizers ?? []).includes(TERMINATION_FINALIZER)) {
        const finalizers = (object.metadata.finalizers ?? []).filter((f) => f !== TERMINATION_FINALIZER);
        await karpenter.patch('nodeclaims', object.metadata.name, { metadata: { finalizers } });
      }
      report.deleted++;
    }
  }

  /** `kubectl delete nodeclaim`: the one termination path, as every other way a node leaves. */
  private async terminate(record: NodeClaimRecord): Promise<void> {
    const name = record.metadata.name;
    this.deps.log.info('NodeClaim deleted in the cluster: terminating it', { nodeClaim: name });
    await this.deps.records.markNodeClaimForDeletion(name);
    if (record.status.nodeName) await this.deps.kube.deleteNode(record.status.nodeName);
  }

  private async syncNodePools(
    records: readonly NodeClaimRecord[],
    nodePools: readonly KarpenterObject[],
    nodeClasses: readonly KarpenterObject[],
    report: ClusterStatusReport,
  ): Promise<void> {
    const now = new Date(this.deps.clock()).toISOString();
    for (const pool of nodePools) {
      const name = pool.metadata.name;
      // The same validation the configuration read from the cluster makes (../apis/cluster-configuration).
      const problems = clusterObjectProblems('NodePool', pool as ClusterObject, nodeClasses as ClusterObject[]);
      const validationError = problems.length > 0 ? problems.map(formatProblem).join('; ') : undefined;
      if (validationError) await this.reportInvalid(pool, validationError);
      const classRef = (pool.spec as { template?: { spec?: { nodeClassRef?: { name?: string } } } } | undefined)
        ?.template?.spec?.nodeClassRef?.name;
      const nodeClass = nodeClasses.find((c) => c.metadata.name === classRef);
      const ready = conditionsOf(nodeClass).find((c) => c.type === 'Ready');
      const status = nodePoolStatus({
        records: records.filter((r) => r.metadata.labels[LABEL_NODEPOOL] === name),
        ...(ready ? { nodeClassReady: ready } : {}),
        nodeClassTerminating: nodeClass?.metadata.deletionTimestamp !== undefined,
        ...(validationError ? { validationError } : {}),
        now,
        previous: conditionsOf(pool),
      });
      await this.writeStatus('nodepools', pool, status, report);
    }
  }

  /** The event beside the condition: `kubectl describe nodepool` and `kubectl get events` show it. */
  private async reportInvalid(pool: KarpenterObject, message: string): Promise<void> {
    if (!this.deps.recorder) return;
    try {
      await this.deps.recorder.publish({
        object: {
          kind: 'NodePool',
          apiVersion: 'karpenter.sh/v1',
          name: pool.metadata.name,
          ...(pool.metadata.uid ? { uid: pool.metadata.uid } : {}),
        },
        type: 'Warning',
        reason: 'ValidationFailed',
        message: `${message} (karpless ignores this version of the NodePool)`,
      });
    } catch (error) {
      this.deps.log.warn('recording the NodePool validation event failed', { error: String(error) });
    }
  }

  private async writeStatus(
    resource: KarpenterResource,
    object: KarpenterObject,
    status: Record<string, unknown>,
    report: ClusterStatusReport,
  ): Promise<void> {
    if (sameJson(object.status, status)) return;
    const written = await this.deps.karpenter.patch(resource, object.metadata.name, { status }, { status: true });
    if (written) {
      object.status = written.status;
      report.updated++;
    }
  }
}

function conditionsOf(object: KarpenterObject | undefined): Condition[] {
  return ((object?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).filter(
    (c) => typeof c?.type === 'string',
  );
}

function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
