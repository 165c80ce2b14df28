// What the watcher does with each Node it sees: register ours, mark them initialized, and finish
// deletions (a Node with our finalizer and a deletionTimestamp is drained, its instance terminated).

import type { Node } from '../apis/core/v1';
import type { Taint } from '../apis/v1/types';
import { KUBE, METRIC } from '../contracts';
import type { KubeClient } from '../kube/types';
import { errorMessage } from '../providers/aws-errors';
import type { StateStore } from '../providers/state';
import { type DrainDeps, NO_DEADLINE, startDrain, stepDrain } from './drain';
import { type ClaimInstance, type ClaimInstances, instanceIdFromProviderID } from './instances';
import { deletionTimestamp, finalizers } from './objects';
import { initializationPatch, needsInitialization, needsRegistration, registrationPatch } from './registration';

/** What the configuration says about a NodeClaim's node (built from the NodePool and the launched type). */
export interface ClaimKnowledge {
  /** The claim's labels plus the launched instance type's labels (registration). */
  registrationLabels(instance: ClaimInstance): Promise<Record<string, string>>;
  startupTaints(nodePool: string): Taint[];
  /** The NodePool's terminationGracePeriod in ms, if it has one. */
  terminationGracePeriodMs(nodePool: string): number | undefined;
}

export interface NodeReconcilerDeps extends DrainDeps {
  kube: DrainDeps['kube'] & Pick<KubeClient, 'patchNode'>;
  instances: Pick<ClaimInstances, 'byIds' | 'terminate'>;
  state: DrainDeps['state'] & Pick<StateStore, 'releaseNomination'>;
  claims: ClaimKnowledge;
}

export interface NodeCounts {
  registered: number;
  initialized: number;
  drainSteps: number;
  drained: number;
  registrationFailures: number;
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

  constructor(private readonly deps: NodeReconcilerDeps) {}

  /** Nodes that need something from us now. */
  wants(node: Node): boolean {
    if (beingDeleted(node)) return true;
    if (deletionTimestamp(node)) return false;
    if (!instanceIdFromProviderID(node.spec?.providerID)) return false;
    const instance = this.known.get(instanceIdFromProviderID(node.spec?.providerID) ?? '');
    if (instance === null) return false;
    return needsRegistration(node) || needsInitialization(node, this.startupTaints(node));
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

  private startupTaints(node: Node): Taint[] {
    const pool = node.metadata.labels?.['karpenter.sh/nodepool'];
    return pool ? this.deps.claims.startupTaints(pool) : [];
  }

  private async registerOrInitialize(node: Node): Promise<void> {
    const instanceId = instanceIdFromProviderID(node.spec?.providerID) ?? '';
    const instance = this.known.get(instanceId);
    if (!instance) return;
    const fields = { node: node.metadata.name, nodeclaim: instance.nodeClaimName, instanceId };
    if (needsRegistration(node)) {
      const labels = await this.deps.claims.registrationLabels(instance);
      const registered = await this.deps.kube.patchNode(node.metadata.name, registrationPatch(node, labels));
      this.counts.registered++;
      this.deps.metrics.record(METRIC.registrations, 'Count', 1, { nodePool: instance.nodePool });
      this.deps.log.info('node registered', { ...fields, instanceType: instance.instanceType });
      node = registered;
    }
    if (needsInitialization(node, this.startupTaints(node))) {
      await this.deps.kube.patchNode(node.metadata.name, initializationPatch);
      // The node can take its pods now: they are no longer waiting on an in-flight claim.
      await this.deps.state.releaseNomination(instance.nodeClaimName);
      this.counts.initialized++;
      this.deps.log.info('node initialized', fields);
    }
  }

  private async stepDeletion(node: Node): Promise<void> {
    const pool = node.metadata.labels?.['karpenter.sh/nodepool'];
    const grace = pool ? this.deps.claims.terminationGracePeriodMs(pool) : undefined;
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
