// Karpenter's EC2NodeClass termination (aws/karpenter-provider-aws, the nodeclass termination
// controller), for a configuration read from the cluster: every EC2NodeClass karpless serves carries
// the `karpenter.k8s.aws/termination` finalizer, so `kubectl delete ec2nodeclass` only marks it; the
// object stays while any NodeClaim record still names it (a `WaitingOnNodeClaimTermination` event
// every ten minutes says which), and the finalizer goes once none does. As upstream, deleting the
// class terminates nothing by itself: its claims leave through the one termination path when their
// NodePool or NodeClaim is deleted, or by disruption, within their budgets. Meanwhile no claim is
// launched for it: the configuration read from the cluster leaves a class being deleted out
// (../apis/cluster-configuration) and its NodePools' status says NodeClassTerminating.
// Before the finalizer goes, what karpless created for the class goes, as upstream's Finalize does:
// the instance profiles it made for spec.role (never a spec.instanceProfile the user gave) and the
// class's launch templates. A failed deletion keeps the finalizer; the next pass retries.

import type { EC2NodeClass } from '../apis/v1/types';
import { TAG } from '../contracts';
import type { EventRecorder } from '../kube/events';
import type { KarpenterObject, KarpenterObjectsApi } from '../kube/karpenter';
import { isKubeApiError } from '../kube/types';
import type { NodeClaimRecord } from '../nodeclaim/record';
import type { Clock } from '../providers/clock';
import type { ClusterInstanceProfile } from '../providers/instanceprofile-gc';
import type { ClusterLaunchTemplate } from '../providers/launchtemplate-gc';
import { clusterOwned, regionalClusterProfile } from './gc-decisions';
import type { RuntimeLog } from './telemetry';

export const NODECLASS_TERMINATION_FINALIZER = 'karpenter.k8s.aws/termination';
/** Upstream requeues a class waiting on its claims every ten minutes, publishing the event each time. */
export const WAITING_EVENT_INTERVAL_MS = 10 * 60_000;
/** How many claim names the event lists before "and N other(s)" (upstream's PrettySlice of 5). */
const LISTED_CLAIMS = 5;

export type NodeClassFinalizerAction =
  /** A live class without the finalizer: add it. */
  | { kind: 'add'; nodeClass: KarpenterObject }
  /** Being deleted while claim records still name it: keep the finalizer. */
  | { kind: 'wait'; nodeClass: KarpenterObject; nodeClaims: string[] }
  /** Being deleted and no record names it: remove the finalizer (the API server then removes the object). */
  | { kind: 'release'; nodeClass: KarpenterObject };

/** What the finalizer of each EC2NodeClass needs now (pure). */
export function nodeClassFinalizerActions(
  nodeClasses: readonly KarpenterObject[],
  records: readonly NodeClaimRecord[],
): NodeClassFinalizerAction[] {
  const actions: NodeClassFinalizerAction[] = [];
  for (const nodeClass of nodeClasses) {
    const has = (nodeClass.metadata.finalizers ?? []).includes(NODECLASS_TERMINATION_FINALIZER);
    if (nodeClass.metadata.deletionTimestamp === undefined) {
      if (!has) actions.push({ kind: 'add', nodeClass });
      continue;
    }
    // Another finalizer's business, or ours already gone: nothing of ours holds it.
    if (!has) continue;
    // Records being deleted still count: their instances may still run (upstream lists every NodeClaim).
    const nodeClaims = records
      .filter((r) => r.spec.nodeClassRef.name === nodeClass.metadata.name)
      .map((r) => r.metadata.name)
      .sort();
    actions.push(nodeClaims.length > 0 ? { kind: 'wait', nodeClass, nodeClaims } : { kind: 'release', nodeClass });
  }
  return actions;
}

/** The event's message as upstream words it: "Waiting on NodeClaim termination for a, b and 3 other(s)". */
export function waitingOnNodeClaimsMessage(names: readonly string[]): string {
  const listed = names.slice(0, LISTED_CLAIMS).join(', ');
  const others = names.length - LISTED_CLAIMS;
  return `Waiting on NodeClaim termination for ${listed}${others > 0 ? ` and ${others} other(s)` : ''}`;
}

/** The cluster's launch templates and managed instance profiles, as garbage collection lists and deletes them. */
export interface NodeClassResources {
  cluster: string;
  region: string;
  instanceProfiles: {
    list(): Promise<ClusterInstanceProfile[]>;
    delete(profile: Pick<ClusterInstanceProfile, 'name' | 'roles'>): Promise<void>;
  };
  launchTemplates: { list(): Promise<ClusterLaunchTemplate[]>; delete(id: string): Promise<void> };
}

/**
 * What karpless created for the class and deletes with it (pure): the cluster's profiles tagged with
 * the class in this region, only while the class names spec.role (upstream deletes the profile only
 * then: a spec.instanceProfile is the user's), and the cluster's templates tagged with the class.
 * By name, not uid: a class re-applied under the same name reuses its profile (../providers/instanceprofile).
 */
export function nodeClassCleanup(
  nodeClass: KarpenterObject,
  context: { cluster: string; region: string },
  found: { profiles: readonly ClusterInstanceProfile[]; templates: readonly ClusterLaunchTemplate[] },
): { profiles: ClusterInstanceProfile[]; templates: ClusterLaunchTemplate[] } {
  const name = nodeClass.metadata.name;
  const ofClass = (tags: Record<string, string>) => tags[TAG.nodeClass] === name;
  return {
    profiles: hasManagedProfile(nodeClass)
      ? found.profiles.filter((p) => ofClass(p.tags) && regionalClusterProfile(p.tags, context.cluster, context.region))
      : [],
    templates: found.templates.filter((t) => ofClass(t.tags) && clusterOwned(t.tags, context.cluster)),
  };
}

/** Whether karpless made the class's instance profile (spec.role), rather than the user (spec.instanceProfile). */
function hasManagedProfile(nodeClass: KarpenterObject): boolean {
  const spec = (nodeClass.spec ?? {}) as Partial<EC2NodeClass['spec']>;
  return Boolean(spec.role) && !spec.instanceProfile;
}

export interface NodeClassTerminationDeps {
  karpenter: Pick<KarpenterObjectsApi, 'patch'>;
  /** Absent: the finalizer goes without deleting anything (garbage collection collects later). */
  resources?: NodeClassResources;
  recorder?: Pick<EventRecorder, 'publish'>;
  log: RuntimeLog;
  clock: Clock;
}

export interface NodeClassTerminationReport {
  added: string[];
  waiting: string[];
  released: string[];
  /** Classes whose profiles or templates could not be deleted: the finalizer stays for the next pass. */
  failed: string[];
}

export class NodeClassTermination {
  /** uid (or name) → when the waiting event was last published by this instance. */
  private readonly announced = new Map<string, number>();

  constructor(private readonly deps: NodeClassTerminationDeps) {}

  async reconcile(
    nodeClasses: readonly KarpenterObject[],
    records: readonly NodeClaimRecord[],
  ): Promise<NodeClassTerminationReport> {
    const report: NodeClassTerminationReport = { added: [], waiting: [], released: [], failed: [] };
    for (const action of nodeClassFinalizerActions(nodeClasses, records)) {
      const name = action.nodeClass.metadata.name;
      if (action.kind === 'wait') {
        report.waiting.push(name);
        await this.announceWaiting(action.nodeClass, action.nodeClaims);
        continue;
      }
      if (action.kind === 'release' && !(await this.deleteResources(action.nodeClass))) {
        report.failed.push(name);
        continue;
      }
      const others = (action.nodeClass.metadata.finalizers ?? []).filter((f) => f !== NODECLASS_TERMINATION_FINALIZER);
      const finalizers = action.kind === 'add' ? [...others, NODECLASS_TERMINATION_FINALIZER] : others;
      if (!(await this.writeFinalizers(action.nodeClass, finalizers))) continue;
      if (action.kind === 'add') report.added.push(name);
      else {
        report.released.push(name);
        this.announced.delete(action.nodeClass.metadata.uid ?? name);
        this.deps.log.info('EC2NodeClass deleted: no NodeClaim uses it any more, finalizer removed', {
          nodeClass: name,
        });
      }
    }
    return report;
  }

  /** Deletes the class's profiles and templates; false (logged) when one could not be deleted. */
  private async deleteResources(nodeClass: KarpenterObject): Promise<boolean> {
    const { resources, log } = this.deps;
    if (!resources) return true;
    const name = nodeClass.metadata.name;
    try {
      const cleanup = nodeClassCleanup(nodeClass, resources, {
        // Listing IAM costs a call per profile: only when the class may have a profile of ours.
        profiles: hasManagedProfile(nodeClass) ? await resources.instanceProfiles.list() : [],
        templates: await resources.launchTemplates.list(),
      });
      for (const profile of cleanup.profiles) await resources.instanceProfiles.delete(profile);
      for (const template of cleanup.templates) await resources.launchTemplates.delete(template.id);
      log.info('EC2NodeClass deleted: its instance profiles and launch templates deleted', {
        nodeClass: name,
        instanceProfiles: cleanup.profiles.map((p) => p.name),
        launchTemplates: cleanup.templates.map((t) => t.name),
      });
      return true;
    } catch (error) {
      log.warn(
        `EC2NodeClass/${name} is being deleted but its instance profiles or launch templates could not be deleted; the finalizer stays and the next pass retries (check the watcher role's IAM and EC2 permissions)`,
        { nodeClass: name, error: String(error) },
      );
      return false;
    }
  }

  /**
   * A merge patch replaces the whole finalizers list, so it carries the resourceVersion it was computed
   * from: a concurrent change to the list is a conflict, retried on the next pass, never lost.
   */
  private async writeFinalizers(nodeClass: KarpenterObject, finalizers: string[]): Promise<boolean> {
    const { name, resourceVersion } = nodeClass.metadata;
    try {
      const patch = { metadata: { finalizers, ...(resourceVersion ? { resourceVersion } : {}) } };
      return (await this.deps.karpenter.patch('ec2nodeclasses', name, patch)) !== undefined;
    } catch (error) {
      if (!isKubeApiError(error, 409)) throw error;
      this.deps.log.debug('EC2NodeClass changed while its finalizer was written; retrying next pass', {
        nodeClass: name,
      });
      return false;
    }
  }

  private async announceWaiting(nodeClass: KarpenterObject, nodeClaims: string[]): Promise<void> {
    const key = nodeClass.metadata.uid ?? nodeClass.metadata.name;
    const now = this.deps.clock();
    const last = this.announced.get(key);
    if (last !== undefined && now - last < WAITING_EVENT_INTERVAL_MS) return;
    this.announced.set(key, now);
    const message = waitingOnNodeClaimsMessage(nodeClaims);
    this.deps.log.info('EC2NodeClass being deleted waits on its NodeClaims', {
      nodeClass: nodeClass.metadata.name,
      nodeClaims: nodeClaims.length,
    });
    if (!this.deps.recorder) return;
    try {
      await this.deps.recorder.publish({
        object: {
          kind: 'EC2NodeClass',
          apiVersion: 'karpenter.k8s.aws/v1',
          name: nodeClass.metadata.name,
          ...(nodeClass.metadata.uid ? { uid: nodeClass.metadata.uid } : {}),
        },
        type: 'Normal',
        reason: 'WaitingOnNodeClaimTermination',
        message,
      });
    } catch (error) {
      this.deps.log.warn('recording the EC2NodeClass termination event failed', { error: String(error) });
    }
  }
}
