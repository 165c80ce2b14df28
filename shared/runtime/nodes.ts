// What the watcher does with each Node it sees: register ours and mark them initialized from their
// NodeClaim records (recording Registered and Initialized there), and finish deletions (a Node with
// our finalizer and a deletionTimestamp is drained, its instance terminated). An instance launched
// before records existed gets its record here, once, from its tags.

import type { Node } from '../apis/core/v1';
import { KUBE, METRIC } from '../contracts';
import type { AdoptedClaim } from '../nodeclaim/launch-record';
import { CONDITION, isConditionTrue, markInitialized, markRegistered, type NodeClaimRecord } from '../nodeclaim/record';
import { errorMessage } from '../providers/aws-errors';
import type { NodeClaimStore, StateStore } from '../providers/state';
import { karpenterClaim } from './claims';
import { mapLimit } from './concurrency';
import type { DrainDeps } from './drain';
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
import { ensureTermination, stepTermination, type TerminationDeps } from './termination';

/** What the configuration says about a NodeClaim's node, for claims the records do not cover. */
export interface ClaimKnowledge {
  /**
   * The record of an instance launched before records existed, from its tags, today's NodePool and
   * the launched type's labels, its capacity taken from the Node the kubelet registered
   * (shared/nodeclaim/launch-record.ts backfillRecord); `adopted`: Karpenter's NodeClaim object of
   * an instance it launched, whose creation and expireAfter the record keeps.
   */
  backfill(instance: ClaimInstance, node: Node, adopted?: AdoptedClaim): Promise<NodeClaimRecord>;
  /**
   * The NodePool's terminationGracePeriod in ms, if it has one: only for a node whose claim has no
   * record (the record keeps the one the claim was launched with).
   */
  terminationGracePeriodMs(nodePool: string): number | undefined;
}

/** Nodes registered, initialized or stepped through termination at once. */
export const RECONCILE_CONCURRENCY = 16;

/** Conditional updates tried on a record another function changes at the same time. */
const RECORD_ATTEMPTS = 3;

export interface NodeReconcilerDeps extends DrainDeps, TerminationDeps {
  kube: DrainDeps['kube'] & TerminationDeps['kube'];
  instances: Pick<ClaimInstances, 'byIds' | 'terminate'>;
  state: DrainDeps['state'] & Pick<StateStore, 'releaseNomination'>;
  records: Pick<
    NodeClaimStore,
    'getNodeClaim' | 'createNodeClaim' | 'updateNodeClaim' | 'markNodeClaimForDeletion' | 'deleteNodeClaim'
  >;
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
    const idOf = (n: Node) => instanceIdFromProviderID(n.spec?.providerID) ?? '';
    const unknown = wanted
      .filter((n) => !beingDeleted(n))
      .map(idOf)
      .filter((id) => id !== '' && !this.known.has(id));
    const deleting = wanted
      .filter(beingDeleted)
      .map(idOf)
      .filter((id) => id !== '');
    // One DescribeInstances (200 ids a call) for the whole pass: the drains stepped below read their
    // instances from it instead of each asking when its own turn comes, which would cost a call per
    // node whenever their turns do not happen to overlap.
    const found: Map<string, ClaimInstance> =
      unknown.length + deleting.length > 0 ? await this.deps.instances.byIds([...unknown, ...deleting]) : new Map();
    for (const id of unknown) this.known.set(id, found.get(id) ?? null);
    const instances = passInstances(this.deps.instances, new Set(deleting), found);
    // Nodes at once, as Karpenter's controllers reconcile them: 4,000 nodes of a burst register in
    // minutes, not hours, and their drains' TerminateInstances calls share batched calls.
    await mapLimit(wanted, RECONCILE_CONCURRENCY, (node) => this.reconcileOne(node, instances));
  }

  private async reconcileOne(node: Node, instances: NodeReconcilerDeps['instances']): Promise<void> {
    const deleting = beingDeleted(node);
    try {
      if (deleting) await this.stepDeletion(node, instances);
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

  /** The claim's record; an instance launched before records gets one from its tags (first writer wins). */
  private async recordOf(instance: ClaimInstance, node: Node): Promise<NodeClaimRecord> {
    const name = instance.nodeClaimName;
    let record = this.records.get(name) ?? (await this.deps.records.getNodeClaim(name));
    if (!record) {
      const adopted = await karpenterClaim(this.deps.nodeClaimObjects, name);
      record =
        (await this.deps.records.createNodeClaim(await this.deps.claims.backfill(instance, node, adopted))) ??
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

  /** One step of the node's termination; a deletion nobody began (`kubectl delete node`) begins here. */
  private async stepDeletion(node: Node, instances: NodeReconcilerDeps['instances']): Promise<void> {
    const name = node.metadata.name;
    const deps = { ...this.deps, instances };
    let record = await deps.state.getDrain(name);
    if (!record) {
      const instanceId = instanceIdFromProviderID(node.spec?.providerID) ?? '';
      const instance = instanceId ? (await instances.byIds([instanceId])).get(instanceId) : undefined;
      const pool = instance?.nodePool || node.metadata.labels?.['karpenter.sh/nodepool'];
      const grace = pool ? this.deps.claims.terminationGracePeriodMs(pool) : undefined;
      record = await ensureTermination(deps, {
        nodeName: name,
        instanceId,
        ...(instance ? { nodeClaimName: instance.nodeClaimName } : {}),
        reason: 'deletion',
        ...(grace !== undefined ? { fallbackGraceMs: grace } : {}),
      });
    }
    const step = await stepTermination(deps, record);
    this.counts.drainSteps++;
    if (step.finished) this.counts.drained++;
  }
}

/**
 * The instances as this pass read them: ids read at its start are answered from that reading (a
 * drain's next pass reads again), any other id is asked of EC2.
 */
function passInstances(
  instances: NodeReconcilerDeps['instances'],
  read: ReadonlySet<string>,
  found: ReadonlyMap<string, ClaimInstance>,
): NodeReconcilerDeps['instances'] {
  return {
    byIds: async (ids) => {
      if (!ids.every((id) => read.has(id))) return instances.byIds(ids);
      return new Map(ids.flatMap((id) => (found.has(id) ? [[id, found.get(id) as ClaimInstance] as const] : [])));
    },
    terminate: (ids) => instances.terminate(ids),
  };
}
