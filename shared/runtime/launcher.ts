// The provision decision's launch port over AWS: resolve the claim's EC2NodeClass (subnets,
// security groups, AMIs, instance profile; cached briefly), shape the claim as Karpenter does
// (shared/launch/claim: labels, userData labels, requirements, capacity type) and launch it through
// InstanceLauncher, which re-finds a claim's existing instance instead of launching twice. The
// claim's NodeClaim record is written before CreateFleet and completed after it, so a retried or
// redelivered launch finds both its record and its instance; a record that cannot be written
// launches nothing (the error sends the batch back).

import type { EC2NodeClass } from '../apis/v1/types';
import { launchClaimFromPlan } from '../launch/claim';
import { nodeClaimFromPlan } from '../nodeclaim';
import { launchedRecord, launchRecord } from '../nodeclaim/launch-record';
import { isConditionTrue, type NodeClaimRecord } from '../nodeclaim/record';
import { type NodeClassResolverDeps, readyNodeClass, resolveNodeClass } from '../nodeclass';
import { type Clock, TTLCache } from '../providers/clock';
import type { Cluster } from '../providers/cluster';
import {
  type InstanceLauncher,
  InsufficientCapacityError,
  LaunchError,
  type LaunchedInstance,
  type ResolvedNodeClass,
} from '../providers/instance';
import type { NodeClaimStore } from '../providers/state';
import type { ClaimLauncher, NodeClaimToLaunch } from './provision';

/** How long a resolved node class is reused: subnets' free IPs and AMIs change slowly. */
export const NODECLASS_CACHE_TTL_MS = 60_000;

export interface AwsClaimLauncherDeps {
  nodeClasses: EC2NodeClass[];
  cluster: () => Promise<Cluster>;
  resolver: Omit<NodeClassResolverDeps, 'k8sVersion' | 'clock' | 'mode'>;
  launcher: Pick<InstanceLauncher, 'launch'>;
  records: Pick<NodeClaimStore, 'getNodeClaim' | 'createNodeClaim' | 'updateNodeClaim' | 'deleteNodeClaim'>;
  clock: Clock;
}

/** Conditional updates tried when completing a record another function is updating at the same time. */
const RECORD_UPDATE_ATTEMPTS = 3;

/** The claim's record could not be written: nothing was launched, the batch should come back. */
export class NodeClaimRecordError extends Error {
  override readonly name = 'NodeClaimRecordError';
}

export class AwsClaimLauncher implements ClaimLauncher {
  private readonly resolved: TTLCache<Promise<ResolvedNodeClass>>;

  constructor(private readonly deps: AwsClaimLauncherDeps) {
    this.resolved = new TTLCache(deps.clock, NODECLASS_CACHE_TTL_MS);
  }

  private resolve(nodeClass: EC2NodeClass): Promise<ResolvedNodeClass> {
    const name = nodeClass.metadata.name;
    let pending = this.resolved.get(name);
    if (!pending) {
      pending = (async () => {
        const cluster = await this.deps.cluster();
        const resolution = await resolveNodeClass(nodeClass, {
          ...this.deps.resolver,
          k8sVersion: cluster.version,
          clock: this.deps.clock,
          mode: 'ensure',
        });
        return readyNodeClass(resolution, cluster);
      })();
      // A failed resolution is not remembered: the next claim tries again.
      pending.catch(() => this.resolved.delete(name));
      this.resolved.set(name, pending);
    }
    return pending;
  }

  async launch({ nodeClaimName, nodePool, claim }: NodeClaimToLaunch): Promise<LaunchedInstance> {
    const ref = nodePool.spec.template.spec.nodeClassRef.name;
    const nodeClass = this.deps.nodeClasses.find((c) => c.metadata.name === ref);
    if (!nodeClass) {
      throw new Error(`NodePool/${nodePool.metadata.name}: EC2NodeClass/${ref} is not in the bundled configuration`);
    }
    const shaped = nodeClaimFromPlan({ claim, nodePool, nodeClass, seed: nodeClaimName });
    // The request carries the claim's own name (the instance's karpenter.sh/nodeclaim tag), so
    // the record and the instance are found under one name.
    const record = await this.ensureRecord(
      launchRecord({ shaped: { ...shaped, name: nodeClaimName }, claim, nodePool, nodeClass, now: this.deps.clock() }),
    );
    const request = launchClaimFromPlan({ nodeClaimName, claim, nodePool, nodeClass });
    let launched: LaunchedInstance;
    try {
      launched = await this.deps.launcher.launch(request, await this.resolve(nodeClass));
    } catch (error) {
      // Karpenter deletes a claim whose launch cannot succeed; its pods are planned again.
      if (error instanceof InsufficientCapacityError || error instanceof LaunchError) {
        await this.deps.records.deleteNodeClaim(nodeClaimName);
      }
      throw error;
    }
    await this.recordLaunch(record, launched, shaped.instanceTypes);
    return launched;
  }

  /** The claim's record: the one a previous attempt wrote, or a new one (first writer wins). */
  private async ensureRecord(record: NodeClaimRecord): Promise<NodeClaimRecord> {
    const name = record.metadata.name;
    const existing = await this.deps.records.getNodeClaim(name);
    if (existing?.metadata.deletionTimestamp !== undefined) {
      throw new LaunchError(name, [
        { offering: '', code: 'NodeClaimDeleting', message: 'the NodeClaim is marked for deletion; nothing launched' },
      ]);
    }
    if (existing) return existing;
    const created = await this.deps.records.createNodeClaim(record);
    if (!created) {
      throw new NodeClaimRecordError(
        `NodeClaim ${name}: another invocation wrote its record first; nothing launched, the batch is retried`,
      );
    }
    return created;
  }

  /** Completes the record from what EC2 launched (Launched=True), unless it already says so. */
  private async recordLaunch(
    record: NodeClaimRecord,
    launched: LaunchedInstance,
    types: NodeClaimToLaunch['claim']['instanceTypes'],
  ): Promise<void> {
    const providerID = `aws:///${launched.zone}/${launched.instanceId}`;
    let current: NodeClaimRecord | undefined = record;
    for (let attempt = 0; attempt < RECORD_UPDATE_ATTEMPTS && current; attempt++) {
      if (isConditionTrue(current, 'Launched') && current.status.providerID === providerID) return;
      const updated = await this.deps.records.updateNodeClaim(
        launchedRecord(current, launched, types, this.deps.clock()),
      );
      if (updated) return;
      current = await this.deps.records.getNodeClaim(record.metadata.name);
    }
    throw new NodeClaimRecordError(
      `NodeClaim ${record.metadata.name}: instance ${launched.instanceId} launched but its record could not be ` +
        'marked Launched (changed or deleted concurrently); the batch is retried and finds the instance',
    );
  }
}
