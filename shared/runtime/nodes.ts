// What the watcher does with each Node it sees: register ours and mark them initialized from their
// NodeClaim records (recording Registered and Initialized there), and finish deletions (a Node with
// our finalizer and a deletionTimestamp is drained, its instance terminated). An instance launched
// before records existed gets its record here, once, from its tags.

import type { Node } from '../apis/core/v1';
import { KUBE, METRIC } from '../contracts';
import { claimTerminationGracePeriodMs } from '../disruption/expiration';
import type { KubeClient } from '../kube/types';
import { CONDITION, isConditionTrue, markInitialized, markRegistered, type NodeClaimRecord } from '../nodeclaim/record';
import { errorMessage } from '../providers/aws-errors';
import type { NodeClaimStore, StateStore } from '../providers/state';
import { type DrainDeps, NO_DEADLINE, startDrain, stepDrain } from './drain';
import { type ClaimInstance, type ClaimInstances, instanceIdFromProviderID } from './instances';
import { deletionTimestamp, finalizers } from './objects';
import {
  initializationPatch,
  isInitialized,
  isRegistered,
  needsInitialization,
  needsRegistration,
  registrationPatch,
} from './registration';

/** What the configuration says about a NodeClaim's node, for claims the records do not cover. */
export interface ClaimKnowledge {
  /**
   * The record of an instance launched before records existed, from its tags, today's NodePool and
   * the launched type's labels, its capacity taken from the Node the kubelet registered
   * (shared/nodeclaim/launch-record.ts backfillRecord).
   */
  backfill(instance: ClaimInstance, node: Node): Promise<NodeClaimRecord>;
  /**
   * The NodePool's terminationGracePeriod in ms, if it has one: only for a node whose claim has no
   * record (the record keeps the one the claim was launched with).
   */
  terminationGracePeriodMs(nodePool: string): number | undefined;
}

/** Conditional updates tried on a record another function changes at the same time. */
const RECORD_ATTEMPTS = 3;

export interface NodeReconcilerDeps extends DrainDeps {
  kube: DrainDeps['kube'] & Pick<KubeClient, 'patchNode'>;
  instances: Pick<ClaimInstances, 'byIds' | 'terminate'>;
  state: DrainDeps['state'] & Pick<StateStore, 'releaseNomination'>;
  records: Pick<NodeClaimStore, 'getNodeClaim' | 'createNodeClaim' | 'updateNodeClaim'>;
  claims: ClaimKnowledge;
}

export interface NodeCounts {
  registered: number;
  initialized: number;
  drainSteps: number;
  drained: number;
  registrationFailures: number;
}

/** The node got further than its record says (registered or initialized by an earlier invocation). */
function recordBehind(node: Node, record: NodeClaimRecord): boolean {
  if (
    isRegistered(node) &&
    (!isConditionTrue(record, CONDITION.registered) || record.status.nodeName !== node.metadata.name)
  ) {
    return true;
  }
  return isInitialized(node) && !isConditionTrue(record, CONDITION.initialized);
}

function beingDeleted(node: Node): boolean {
  return deletionTimestamp(node) !== undefined && finalizers(node).includes(KUBE.terminationFinalizer);
}

/** Reconciles nodes; an error on one node is logged and does not stop the others. */
export class NodeReconciler {
  readonly counts: NodeCounts = {
    registered: 0,
    initialized: 0,
    drainSteps: 0,
    drained: 0,
    registrationFailures: 0,
  };
  /** instance id → ours (or null: not ours), for this invocation. */
  private readonly known = new Map<string, ClaimInstance | null>();
  /** NodeClaim name → its record as last read or written by this invocation. */
  private readonly records = new Map<string, NodeClaimRecord>();

  constructor(private readonly deps: NodeReconcilerDeps) {}

  /** Nodes that need something from us now. */
  wants(node: Node): boolean {
    if (beingDeleted(node)) return true;
    if (deletionTimestamp(node)) return false;
    if (!instanceIdFromProviderID(node.spec?.providerID)) return false;
    const instance = this.known.get(instanceIdFromProviderID(node.spec?.providerID) ?? '');
    if (instance === null) return false;
    if (needsRegistration(node)) return true;
    const record = instance ? this.records.get(instance.nodeClaimName) : undefined;
    // Not read yet: a node not initialized is looked at once, which reads its record.
    if (!record) return !isInitialized(node);
    return needsInitialization(node, record) || recordBehind(node, record);
  }

  async reconcile(nodes: readonly Node[]): Promise<void> {
    const wanted = nodes.filter((n) => this.wants(n));
    const unknown = wanted
      .filter((n) => !beingDeleted(n))
      .map((n) => instanceIdFromProviderID(n.spec?.providerID) ?? '')
      .filter((id) => id !== '' && !this.known.has(id));
    if (unknown.length > 0) {
      const found = await this.deps.instances.byIds(unknown);
      for (const id of unknown) this.known.set(id, found.get(id) ?? null);
    }
    for (const node of wanted) {
      const deleting = beingDeleted(node);
      try {
        if (deleting) await this.stepDeletion(node);
        else await this.registerOrInitialize(node);
      } catch (error) {
        if (!deleting) {
          // A node that keeps failing here keeps its unregistered taint until gc terminates it.
          // No dimension of its own: the alarm watches the function's {service, cluster} metric.
          this.counts.registrationFailures++;
          this.deps.metrics.record(METRIC.registrationFailures, 'Count', 1);
        }
        this.deps.log.warn('node reconcile failed, will retry', {
          node: node.metadata.name,
          error: errorMessage(error),
        });
      }
    }
  }

  /** The claim's record; an instance launched before records gets one from its tags (first writer wins). */
  private async recordOf(instance: ClaimInstance, node: Node): Promise<NodeClaimRecord> {
    const name = instance.nodeClaimName;
    let record = this.records.get(name) ?? (await this.deps.records.getNodeClaim(name));
    if (!record) {
      record =
        (await this.deps.records.createNodeClaim(await this.deps.claims.backfill(instance, node))) ??
        (await this.deps.records.getNodeClaim(name));
      if (!record) throw new Error(`NodeClaim ${name}: its record could neither be read nor written`);
      this.deps.log.info('nodeclaim record written from the instance tags', {
        nodeclaim: name,
        instanceId: instance.instanceId,
      });
    }
    this.records.set(name, record);
    return record;
  }

  /** Applies `change` to the claim's record with conditional updates, re-reading on a conflict. */
  private async updateRecord(
    record: NodeClaimRecord,
    change: (r: NodeClaimRecord) => NodeClaimRecord,
  ): Promise<NodeClaimRecord> {
    let current: NodeClaimRecord | undefined = record;
    for (let attempt = 0; attempt < RECORD_ATTEMPTS && current; attempt++) {
      const next = change(current);
      if (next === current) return current;
      const updated = await this.deps.records.updateNodeClaim(next);
      if (updated) {
        this.records.set(updated.metadata.name, updated);
        return updated;
      }
      current = await this.deps.records.getNodeClaim(record.metadata.name);
    }
    throw new Error(`NodeClaim ${record.metadata.name}: its record changed under ${RECORD_ATTEMPTS} updates in a row`);
  }

  private async registerOrInitialize(node: Node): Promise<void> {
    const instanceId = instanceIdFromProviderID(node.spec?.providerID) ?? '';
    const instance = this.known.get(instanceId);
    if (!instance) return;
    const fields = { node: node.metadata.name, nodeclaim: instance.nodeClaimName, instanceId };
    let record = await this.recordOf(instance, node);
    const now = this.deps.clock();
    if (needsRegistration(node)) {
      const registered = await this.deps.kube.patchNode(node.metadata.name, registrationPatch(node, record));
      this.counts.registered++;
      this.deps.metrics.record(METRIC.registrations, 'Count', 1, { nodePool: instance.nodePool });
      this.deps.log.info('node registered', { ...fields, instanceType: instance.instanceType });
      node = registered;
    }
    if (isRegistered(node)) record = await this.updateRecord(record, (r) => markRegistered(r, node.metadata.name, now));
    if (needsInitialization(node, record)) {
      node = await this.deps.kube.patchNode(node.metadata.name, initializationPatch);
      // The node can take its pods now: they are no longer waiting on an in-flight claim.
      await this.deps.state.releaseNomination(instance.nodeClaimName);
      this.counts.initialized++;
      this.deps.log.info('node initialized', fields);
    }
    if (isInitialized(node)) await this.updateRecord(record, (r) => markInitialized(r, now));
  }

  /**
   * How long a deletion may drain: the terminationGracePeriod the claim was launched with (its record),
   * never today's NodePool's, which may have changed since; the NodePool's only for a node without one.
   */
  private async deletionGraceMs(node: Node): Promise<number | undefined> {
    const instanceId = instanceIdFromProviderID(node.spec?.providerID);
    let instance = instanceId ? this.known.get(instanceId) : null;
    if (instanceId && instance === undefined) {
      instance = (await this.deps.instances.byIds([instanceId])).get(instanceId) ?? null;
      this.known.set(instanceId, instance);
    }
    const name = instance?.nodeClaimName;
    const record = name ? (this.records.get(name) ?? (await this.deps.records.getNodeClaim(name))) : undefined;
    if (record) return claimTerminationGracePeriodMs(record, undefined);
    const pool = node.metadata.labels?.['karpenter.sh/nodepool'];
    return pool ? this.deps.claims.terminationGracePeriodMs(pool) : undefined;
  }

  private async stepDeletion(node: Node): Promise<void> {
    // The deadline is fixed when the drain starts; a drain already under way keeps its own.
    const started = await this.deps.state.getDrain(node.metadata.name);
    const grace = started ? undefined : await this.deletionGraceMs(node);
    const deletedAt = Date.parse(deletionTimestamp(node) ?? '');
    const record = await startDrain(this.deps, {
      nodeName: node.metadata.name,
      instanceId: instanceIdFromProviderID(node.spec?.providerID) ?? '',
      reason: 'deletion',
      deadline: grace !== undefined && Number.isFinite(deletedAt) ? deletedAt + grace : NO_DEADLINE,
    });
    const step = await stepDrain(this.deps, record, { deleteNode: false });
    this.counts.drainSteps++;
    if (step.finished) this.counts.drained++;
  }
}
