// What garbage collection deletes, decided from data (Karpenter's nodeclaim/garbagecollection, the
// AWS orphaned-instance collector, launch template eviction and instance profile collection; reference
// §8). Every verdict names its reason and says why, so the gc function can log and count it. Nothing
// here calls AWS or Kubernetes: shared/runtime/gc.ts lists, asks these functions, then acts.

import type { Node } from '../apis/core/v1';
import type { EC2NodeClass, NodePool } from '../apis/v1/types';
import { KUBE, REGISTRATION_TTL_MS, TAG } from '../contracts';
import { instanceIdOf, type NodeClaimRecord } from '../nodeclaim/record';
import type { ClusterInstanceProfile } from '../providers/instanceprofile-gc';
import type { ClusterLaunchTemplate } from '../providers/launchtemplate-gc';
import { type ClaimInstance, instanceIdFromProviderID, type UnclaimedLaunch } from './instances';
import { deletionTimestamp, finalizers, nodeCondition } from './objects';
import { isRegistered } from './registration';

/** Why something was deleted: the `reason` dimension of METRIC.garbageCollected and of every log line. */
export type GcReason =
  /** Launched 15 min ago (Karpenter's registration TTL) and its Node never registered. */
  | 'RegistrationTimeout'
  /** The instance had a registered Node, and the Node is gone without the termination flow. */
  | 'NodeGone'
  /** A Node we registered whose instance is terminated or no longer exists. */
  | 'InstanceGone'
  /** A launch template of a NodePool / EC2NodeClass pair today's configuration no longer has. */
  | 'NotInConfiguration'
  /** A template of a current pair whose AMI no instance of the cluster runs (superseded by a release). */
  | 'Unused'
  /** An instance profile of an EC2NodeClass removed from the configuration. */
  | 'NodeClassRemoved'
  /** A NodeClaim record written before CreateFleet whose instance never appeared within the registration TTL. */
  | 'NeverLaunched'
  /** An instance a launch batch started that no claim was tagged on within the registration TTL. */
  | 'Unclaimed';

export type GcResource = 'instance' | 'node' | 'launch-template' | 'instance-profile' | 'nodeclaim';

export interface GcVerdict {
  resource: GcResource;
  /** Instance id, node name, launch template id or instance profile name. */
  id: string;
  reason: GcReason;
  /** Human text: what was seen ("launched 2026-12-03T06:00:00Z, no Node registered after 15 min"). */
  detail: string;
}

/**
 * A template younger than this is never collected: a provision invocation still running on the
 * previous configuration during a deployment may be about to launch from it.
 */
export const LAUNCH_TEMPLATE_MIN_AGE_MS = 10 * 60 * 1000;

const iso = (ms: number) => new Date(ms).toISOString();

export interface InstanceInput {
  now: number;
  /** Our pending and running instances. */
  instances: readonly ClaimInstance[];
  nodes: readonly Node[];
  /** Instances an earlier run saw with a registered Node. */
  registeredBefore: ReadonlySet<string>;
  /** Instances a drain record is terminating: the termination flow owns them. */
  draining: ReadonlySet<string>;
}

/** Node of each instance id, by providerID. */
export function nodesByInstance(nodes: readonly Node[]): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const node of nodes) {
    const id = instanceIdFromProviderID(node.spec?.providerID);
    if (id) out.set(id, node);
  }
  return out;
}

/**
 * Instances to terminate: those that lost their registered Node (at once: a running instance with
 * no Node only bills) and those whose Node did not register within the registration TTL.
 */
export function orphanedInstances(input: InstanceInput): GcVerdict[] {
  const byInstance = nodesByInstance(input.nodes);
  const out: GcVerdict[] = [];
  for (const instance of input.instances) {
    if (input.draining.has(instance.instanceId)) continue;
    const node = byInstance.get(instance.instanceId);
    if (node && isRegistered(node)) continue;
    const base = { resource: 'instance' as const, id: instance.instanceId };
    if (!node && input.registeredBefore.has(instance.instanceId)) {
      out.push({
        ...base,
        reason: 'NodeGone',
        detail: `NodeClaim ${instance.nodeClaimName}: its registered Node is gone`,
      });
      continue;
    }
    if (instance.launchTime === undefined || input.now - instance.launchTime < REGISTRATION_TTL_MS) continue;
    out.push({
      ...base,
      reason: 'RegistrationTimeout',
      detail: `NodeClaim ${instance.nodeClaimName}: launched ${iso(instance.launchTime)}, ${node ? `Node ${node.metadata.name} not registered` : 'no Node'} after ${REGISTRATION_TTL_MS / 60_000} min`,
    });
  }
  return out;
}

/**
 * Batch-launched instances no claim took: terminated once older than the registration TTL. Until
 * then the next attempt at their batch may still adopt them (the launcher's adoption by batch tag),
 * and a record waits at most UNLAUNCHED_RECORD_MAX_AGE_MS, less than the TTL, for that attempt.
 */
export function unclaimedInstances(now: number, launches: readonly UnclaimedLaunch[]): GcVerdict[] {
  return launches.flatMap((launch) => {
    if (launch.launchTime === undefined || now - launch.launchTime < REGISTRATION_TTL_MS) return [];
    return [
      {
        resource: 'instance' as const,
        id: launch.instanceId,
        reason: 'Unclaimed' as const,
        detail: `launch batch ${launch.batch}: launched ${iso(launch.launchTime)}, no NodeClaim tagged on it after ${REGISTRATION_TTL_MS / 60_000} min`,
      },
    ];
  });
}

/** The instances whose Node is registered now: what the next run remembers. */
export function registeredInstanceIds(instances: readonly ClaimInstance[], nodes: readonly Node[]): string[] {
  const byInstance = nodesByInstance(nodes);
  return instances.flatMap((i) => {
    const node = byInstance.get(i.instanceId);
    return node && isRegistered(node) ? [i.instanceId] : [];
  });
}

/** Registered by karpless: the registered label and our finalizer (a node group's nodes carry neither). */
function ours(node: Node): boolean {
  return isRegistered(node) && finalizers(node).includes(KUBE.terminationFinalizer);
}

export interface NodeInput {
  nodes: readonly Node[];
  /** The nodes' instances as DescribeInstances found them (ours, in any state); absent means not found. */
  instances: ReadonlyMap<string, ClaimInstance>;
}

/**
 * Nodes we registered whose instance is terminated, or not found while the Node is not Ready (a
 * Ready node's kubelet is alive, whatever a lagging DescribeInstances says).
 */
export function nodesWithoutInstance(input: NodeInput): GcVerdict[] {
  const out: GcVerdict[] = [];
  for (const node of input.nodes) {
    const id = instanceIdFromProviderID(node.spec?.providerID);
    if (!id || !ours(node)) continue;
    const instance = input.instances.get(id);
    const base = { resource: 'node' as const, id: node.metadata.name, reason: 'InstanceGone' as const };
    if (instance && (instance.state === 'terminated' || instance.state === 'shutting-down')) {
      out.push({ ...base, detail: `instance ${id} is ${instance.state}` });
    } else if (!instance && nodeCondition(node, 'Ready')?.status !== 'True' && !deletionTimestamp(node)) {
      out.push({ ...base, detail: `instance ${id} does not exist and the Node is not Ready` });
    } else if (!instance && deletionTimestamp(node)) {
      out.push({ ...base, detail: `instance ${id} does not exist; the Node is being deleted` });
    }
  }
  return out;
}

/** The NodePool → EC2NodeClass pairs today's configuration launches with. */
function currentPairs(nodePools: readonly NodePool[]): Set<string> {
  return new Set(nodePools.map((p) => `${p.metadata.name}\u0000${p.spec.template.spec.nodeClassRef.name}`));
}

/**
 * Tagged for this cluster exactly as launchTags does, name and owned tag both, never just one: what
 * karpless created for it.
 */
export function clusterOwned(tags: Record<string, string>, cluster: string): boolean {
  return tags[TAG.clusterName] === cluster && tags[TAG.clusterOwned(cluster)] === 'owned';
}

/** A managed instance profile karpless made for this cluster in this region (IAM is global). */
export function regionalClusterProfile(tags: Record<string, string>, cluster: string, region: string): boolean {
  return clusterOwned(tags, cluster) && tags['topology.kubernetes.io/region'] === region;
}

export interface LaunchTemplateInput {
  now: number;
  cluster: string;
  templates: readonly ClusterLaunchTemplate[];
  nodePools: readonly NodePool[];
  /** Template id → the AMI of its latest version, for the templates of current pairs that were looked up. */
  imageIds?: ReadonlyMap<string, string | undefined>;
  /** AMIs our live instances run. */
  imagesInUse?: ReadonlySet<string>;
}

/**
 * Templates of this cluster whose NodePool is gone or now uses another EC2NodeClass, and templates
 * of a current pair whose AMI no live instance runs: after an AMI release and the drift rollout, the
 * previous AMI's templates would otherwise pile up (one per shape per release). Deleting one that a
 * later launch wants again costs only its re-creation: EC2 keeps no reference from an instance to
 * its template, and the launcher re-creates a template CreateFleet reports missing.
 */
export function orphanedLaunchTemplates(input: LaunchTemplateInput): GcVerdict[] {
  const pairs = currentPairs(input.nodePools);
  const out: GcVerdict[] = [];
  for (const t of input.templates) {
    if (!clusterOwned(t.tags, input.cluster)) continue;
    const pool = t.tags[TAG.nodePool];
    const nodeClass = t.tags[TAG.nodeClass];
    if (pool === undefined || nodeClass === undefined) continue;
    if (t.createdAt === undefined || input.now - t.createdAt < LAUNCH_TEMPLATE_MIN_AGE_MS) continue;
    if (pairs.has(`${pool}\u0000${nodeClass}`)) {
      const image = input.imageIds?.get(t.id);
      if (image !== undefined && input.imagesInUse && !input.imagesInUse.has(image)) {
        out.push({
          resource: 'launch-template',
          id: t.id,
          reason: 'Unused',
          detail: `${t.name}: no instance of the cluster runs its AMI ${image}`,
        });
      }
      continue;
    }
    const current = input.nodePools.find((p) => p.metadata.name === pool);
    out.push({
      resource: 'launch-template',
      id: t.id,
      reason: 'NotInConfiguration',
      detail: current
        ? `${t.name}: NodePool/${pool} now uses EC2NodeClass/${current.spec.template.spec.nodeClassRef.name}, not ${nodeClass}`
        : `${t.name}: NodePool/${pool} is not in the configuration`,
    });
  }
  return out;
}

export interface InstanceProfileInput {
  cluster: string;
  region: string;
  profiles: readonly ClusterInstanceProfile[];
  nodeClasses: readonly EC2NodeClass[];
  /** Node classes some live instance of ours still runs with: their profiles hold its credentials. */
  inUse: ReadonlySet<string>;
}

/** Managed profiles of node classes no longer in the configuration and no longer used by any instance. */
export function orphanedInstanceProfiles(input: InstanceProfileInput): GcVerdict[] {
  const current = new Set(input.nodeClasses.map((c) => c.metadata.name));
  const out: GcVerdict[] = [];
  for (const p of input.profiles) {
    const nodeClass = p.tags[TAG.nodeClass];
    if (!regionalClusterProfile(p.tags, input.cluster, input.region)) continue;
    if (nodeClass === undefined || current.has(nodeClass) || input.inUse.has(nodeClass)) continue;
    out.push({
      resource: 'instance-profile',
      id: p.name,
      reason: 'NodeClassRemoved',
      detail: `EC2NodeClass/${nodeClass} is not in the configuration and no instance of it is running`,
    });
  }
  return out;
}

const GONE_STATES = new Set(['shutting-down', 'terminated']);

export interface OrphanedRecordsInput {
  now: number;
  records: readonly NodeClaimRecord[];
  /** Our pending or running instances. */
  live: readonly ClaimInstance[];
  /** Instances of launched records that are not live, as EC2 still reports them (absent: unknown to EC2). */
  others: ReadonlyMap<string, ClaimInstance>;
}

/**
 * NodeClaim records whose claim is over: written before CreateFleet but no instance of the claim
 * appeared within the registration TTL (the launch failed without cleaning up, or its invocation
 * died), or launched and their instance is terminated or no longer known to EC2.
 */
export function orphanedRecords(input: OrphanedRecordsInput): GcVerdict[] {
  const liveIds = new Set(input.live.map((i) => i.instanceId));
  const liveClaims = new Set(input.live.map((i) => i.nodeClaimName));
  const out: GcVerdict[] = [];
  for (const record of input.records) {
    const name = record.metadata.name;
    const instanceId = instanceIdOf(record);
    if (instanceId === undefined) {
      // Its instance exists but the launch has not recorded it yet (it will, on retry).
      if (liveClaims.has(name)) continue;
      const created = Date.parse(record.metadata.creationTimestamp);
      if (!(input.now - created >= REGISTRATION_TTL_MS)) continue;
      out.push({
        resource: 'nodeclaim',
        id: name,
        reason: 'NeverLaunched',
        detail: `record written ${record.metadata.creationTimestamp}, no instance after ${REGISTRATION_TTL_MS / 60_000} min`,
      });
      continue;
    }
    if (liveIds.has(instanceId)) continue;
    const other = input.others.get(instanceId);
    if (other && !GONE_STATES.has(other.state)) continue;
    out.push({
      resource: 'nodeclaim',
      id: name,
      reason: 'InstanceGone',
      detail: `instance ${instanceId} is ${other ? other.state : 'no longer known to EC2'}`,
    });
  }
  return out;
}
