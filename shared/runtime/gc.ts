// The gc function's run (scheduled, Karpenter's 2 minutes): list what the cluster owns in EC2, IAM
// and Kubernetes, ask gc-decisions what is orphaned, delete it, and log and count every deletion
// with its reason. Then the emptiness pass (gc-emptiness.ts) hands nodes that stayed empty past
// consolidateAfter to the termination flow, within the NodePools' budgets. Single-node
// consolidation is not done here: it may need a replacement launched first, and the launch path is
// the drift function's (drift-consolidation.ts).
//
// Only what carries this cluster's tags is ever listed (instances: eks:eks-cluster-name and a
// karpenter.sh/nodeclaim tag; templates and profiles: both cluster tags), and the IAM policy allows
// deleting nothing else. One failed deletion is logged and retried by the next run.

import type { Node } from '../apis/core/v1';
import type { EC2NodeClass, NodePool } from '../apis/v1/types';
import { KUBE, METRIC, TAG } from '../contracts';
import type { KubeClient } from '../kube/types';
import { backfillRecord, withNodeCapacity } from '../nodeclaim/launch-record';
import { instanceIdOf, markInitialized, markRegistered, type NodeClaimRecord } from '../nodeclaim/record';
import { errorMessage } from '../providers/aws-errors';
import type { Clock } from '../providers/clock';
import type { ClusterInstanceProfile, ClusterInstanceProfiles } from '../providers/instanceprofile-gc';
import type { ClusterLaunchTemplate, ClusterLaunchTemplates } from '../providers/launchtemplate-gc';
import type { FullStateStore, NodeClaimStore } from '../providers/state';
import { karpenterClaim } from './claims';
import { mapLimit } from './concurrency';
import type { NodeClaimObjects } from './events';
import {
  type GcVerdict,
  LAUNCH_TEMPLATE_MIN_AGE_MS,
  nodesByInstance,
  nodesWithoutInstance,
  orphanedInstanceProfiles,
  orphanedInstances,
  orphanedLaunchTemplates,
  orphanedRecords,
  registeredInstanceIds,
  unclaimedInstances,
} from './gc-decisions';
import { type EmptinessDeps, type EmptinessReport, runEmptiness } from './gc-emptiness';
import { type ClaimInstance, type ClaimInstances, instanceIdFromProviderID } from './instances';
import { finalizers, resourceVersion } from './objects';
import { isInitialized, isRegistered } from './registration';
import type { Telemetry } from './telemetry';

/** How long an instance seen registered is remembered: past expireAfter's 720 h default, refreshed each run. */
export const REGISTERED_MEMORY_TTL_MS = 31 * 24 * 60 * 60 * 1000;

export interface GcDeps extends Telemetry, EmptinessDeps {
  cluster: string;
  region: string;
  nodePools: NodePool[];
  nodeClasses: EC2NodeClass[];
  instances: Pick<ClaimInstances, 'live' | 'byIds' | 'terminate' | 'unclaimedLaunches'>;
  kube: EmptinessDeps['kube'] & Pick<KubeClient, 'listNodes' | 'deleteNode' | 'patchNode'>;
  state: EmptinessDeps['state'] &
    Pick<FullStateStore, 'drains' | 'deleteDrain' | 'rememberRegistered' | 'registeredInstances' | 'forgetRegistered'>;
  records: Pick<
    NodeClaimStore,
    'nodeClaims' | 'createNodeClaim' | 'deleteNodeClaim' | 'getNodeClaim' | 'markNodeClaimForDeletion'
  >;
  launchTemplates: Pick<ClusterLaunchTemplates, 'list' | 'delete' | 'imageId'>;
  instanceProfiles: Pick<ClusterInstanceProfiles, 'list' | 'delete'>;
  /** Karpenter's NodeClaim objects, read when an instance it launched is adopted (absent: none read). */
  nodeClaimObjects?: NodeClaimObjects;
  clock: Clock;
}

export interface GcReport {
  deleted: GcVerdict[];
  failed: { resource: string; id: string; error: string }[];
  emptiness: EmptinessReport;
}

async function act(deps: GcDeps, report: GcReport, verdict: GcVerdict, run: () => Promise<void>): Promise<void> {
  try {
    await run();
    report.deleted.push(verdict);
    deps.metrics.record(METRIC.garbageCollected, 'Count', 1, { resource: verdict.resource, reason: verdict.reason });
    deps.log.info('garbage collected', { ...verdict });
  } catch (error) {
    report.failed.push({ resource: verdict.resource, id: verdict.id, error: errorMessage(error) });
    deps.metrics.record(METRIC.actionFailures, 'Count', 1);
    deps.log.warn('garbage collection failed, will retry', { ...verdict, error: errorMessage(error) });
  }
}

/**
 * The instance is gone, so there is nothing to drain: its pods cannot be evicted from a dead kubelet
 * (a drain would wait on them forever). Delete the Node, drop our finalizer and any drain record;
 * the pod garbage collector then removes the pods of the missing Node and their controllers replace them.
 */
async function removeNode(deps: GcDeps, node: Node): Promise<void> {
  const current = finalizers(node);
  if (current.includes(KUBE.terminationFinalizer)) {
    const version = resourceVersion(node);
    await deps.kube.patchNode(node.metadata.name, {
      metadata: {
        finalizers: current.filter((f) => f !== KUBE.terminationFinalizer),
        ...(version ? { resourceVersion: version } : {}),
      },
    });
  }
  await deps.kube.deleteNode(node.metadata.name);
  await deps.state.deleteDrain(node.metadata.name);
}

/** Leaked instances terminated at once. */
const GC_CONCURRENCY = 16;

async function collectNodesAndInstances(deps: GcDeps, report: GcReport, nodes: Node[]): Promise<void> {
  const [live, remembered, drains, unclaimed] = await Promise.all([
    deps.instances.live(),
    deps.state.registeredInstances(),
    deps.state.drains(),
    deps.instances.unclaimedLaunches(),
  ]);
  const now = deps.clock();
  const liveIds = new Set(live.map((i) => i.instanceId));
  const draining = new Set(drains.map((d) => d.instanceId));
  const nodeOf = nodesByInstance(nodes);
  const orphans = [
    ...orphanedInstances({ now, instances: live, nodes, registeredBefore: new Set(remembered), draining }),
    ...unclaimedInstances(now, unclaimed),
  ];
  // At once: their TerminateInstances calls share batched calls (instance-batches.ts).
  await mapLimit(orphans, GC_CONCURRENCY, async (verdict) => {
    const node = nodeOf.get(verdict.id);
    await act(deps, report, verdict, async () => {
      await deps.instances.terminate([verdict.id]);
      // An unregistered Node of a timed-out instance has no finalizer: deleting it is all there is.
      if (node) await deps.kube.deleteNode(node.metadata.name);
    });
  });
  // Nodes whose instance is not live: look those instances up (terminated ones stay visible a while).
  const missing = nodes
    .map((n) => instanceIdFromProviderID(n.spec?.providerID) ?? '')
    .filter((id) => id !== '' && !liveIds.has(id));
  const found = await deps.instances.byIds(missing);
  for (const instance of live) found.set(instance.instanceId, instance);
  for (const verdict of nodesWithoutInstance({ nodes, instances: found })) {
    const node = nodes.find((n) => n.metadata.name === verdict.id);
    if (node) await act(deps, report, verdict, () => removeNode(deps, node));
  }
  const terminated = new Set(report.deleted.filter((v) => v.resource === 'instance').map((v) => v.id));
  const registered = registeredInstanceIds(live, nodes).filter((id) => !terminated.has(id));
  const known = new Set(remembered);
  await deps.state.rememberRegistered(
    registered.filter((id) => !known.has(id)),
    REGISTERED_MEMORY_TTL_MS,
  );
  await deps.state.forgetRegistered(remembered.filter((id) => !liveIds.has(id) || terminated.has(id)));
  const stillLive = live.filter((i) => !terminated.has(i.instanceId));
  await collectRecords(deps, report, stillLive, nodeOf);
}

/**
 * Deletes the records of claims that are over, and writes once the record of each registered
 * instance launched before records existed (from its tags, today's NodePool and its Node's
 * capacity). Instances without a Node yet get theirs from the watcher when it registers them.
 */
async function collectRecords(
  deps: GcDeps,
  report: GcReport,
  live: readonly ClaimInstance[],
  nodeOf: ReadonlyMap<string, Node>,
): Promise<void> {
  const records = await deps.records.nodeClaims();
  const liveIds = new Set(live.map((i) => i.instanceId));
  const launchedElsewhere = records.map((r) => instanceIdOf(r) ?? '').filter((id) => id !== '' && !liveIds.has(id));
  const others = await deps.instances.byIds(launchedElsewhere);
  for (const verdict of orphanedRecords({ now: deps.clock(), records, live, others })) {
    await act(deps, report, verdict, () => deps.records.deleteNodeClaim(verdict.id));
  }
  const named = new Set(records.map((r) => r.metadata.name));
  for (const instance of live) {
    const node = nodeOf.get(instance.instanceId);
    if (named.has(instance.nodeClaimName) || !node || !isRegistered(node)) continue;
    const nodePool = deps.nodePools.find((p) => p.metadata.name === instance.nodePool);
    try {
      // An instance Karpenter launched keeps its NodeClaim's creation and expireAfter (its expiry).
      const adopted = await karpenterClaim(deps.nodeClaimObjects, instance.nodeClaimName);
      const record = registeredBackfill(
        backfillRecord({
          instance,
          ...(nodePool ? { nodePool } : {}),
          ...(adopted ? { adopted } : {}),
          now: deps.clock(),
        }),
        node,
        deps.clock(),
      );
      if (await deps.records.createNodeClaim(record)) {
        deps.log.info('nodeclaim record written from the instance tags', {
          nodeclaim: instance.nodeClaimName,
          instanceId: instance.instanceId,
          node: node.metadata.name,
        });
      }
    } catch (error) {
      deps.log.warn('writing a nodeclaim record from tags failed, will retry', {
        nodeclaim: instance.nodeClaimName,
        error: errorMessage(error),
      });
    }
  }
}

/** A backfilled record completed from its registered Node: its capacity, name and lifecycle. */
function registeredBackfill(record: NodeClaimRecord, node: Node, now: number): NodeClaimRecord {
  const out = markRegistered(withNodeCapacity(record, node), node.metadata.name, now);
  return isInitialized(node) ? markInitialized(out, now) : out;
}

/** The AMIs of the templates the Unused rule may judge: current pairs, past the minimum age. */
async function templateImages(deps: GcDeps, templates: readonly ClusterLaunchTemplate[], now: number) {
  const pairs = new Set(deps.nodePools.map((p) => `${p.metadata.name}\u0000${p.spec.template.spec.nodeClassRef.name}`));
  const out = new Map<string, string | undefined>();
  for (const t of templates) {
    if (t.createdAt === undefined || now - t.createdAt < LAUNCH_TEMPLATE_MIN_AGE_MS) continue;
    if (!pairs.has(`${t.tags[TAG.nodePool]}\u0000${t.tags[TAG.nodeClass]}`)) continue;
    out.set(t.id, await deps.launchTemplates.imageId(t.id));
  }
  return out;
}

async function collectLaunchTemplates(deps: GcDeps, report: GcReport): Promise<void> {
  const [templates, live] = await Promise.all([deps.launchTemplates.list(), deps.instances.live()]);
  const now = deps.clock();
  const verdicts = orphanedLaunchTemplates({
    now,
    cluster: deps.cluster,
    templates,
    nodePools: deps.nodePools,
    imageIds: await templateImages(deps, templates, now),
    imagesInUse: new Set(live.flatMap((i) => (i.imageId ? [i.imageId] : []))),
  });
  for (const verdict of verdicts) await act(deps, report, verdict, () => deps.launchTemplates.delete(verdict.id));
}

async function collectInstanceProfiles(deps: GcDeps, report: GcReport): Promise<void> {
  const [profiles, live] = await Promise.all([deps.instanceProfiles.list(), deps.instances.live()]);
  const byName = new Map<string, ClusterInstanceProfile>(profiles.map((p) => [p.name, p]));
  const verdicts = orphanedInstanceProfiles({
    cluster: deps.cluster,
    region: deps.region,
    profiles,
    nodeClasses: deps.nodeClasses,
    inUse: new Set(live.map((i) => i.nodeClass)),
  });
  for (const verdict of verdicts) {
    const profile = byName.get(verdict.id);
    if (profile) await act(deps, report, verdict, () => deps.instanceProfiles.delete(profile));
  }
}

/** One gc run. Each part runs even when another failed; a part that failed is logged and reported. */
export async function runGarbageCollection(deps: GcDeps): Promise<GcReport> {
  const report: GcReport = {
    deleted: [],
    failed: [],
    emptiness: { marked: [], cleared: [], disrupted: [], blocked: [], finished: [] },
  };
  const part = async (name: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (error) {
      report.failed.push({ resource: name, id: '*', error: errorMessage(error) });
      deps.metrics.record(METRIC.actionFailures, 'Count', 1);
      deps.log.error(`garbage collection of ${name} failed`, { error: errorMessage(error) });
    }
  };
  let nodes: Node[] | undefined;
  await part('nodes', async () => {
    nodes = (await deps.kube.listNodes()).items;
    await collectNodesAndInstances(deps, report, nodes);
  });
  await part('launch-templates', () => collectLaunchTemplates(deps, report));
  await part('instance-profiles', () => collectInstanceProfiles(deps, report));
  if (nodes) {
    const listed = nodes;
    const gone = new Set(report.deleted.filter((v) => v.resource === 'node').map((v) => v.id));
    await part('emptiness', async () => {
      report.emptiness = await runEmptiness(
        deps,
        listed.filter((n) => !gone.has(n.metadata.name)),
      );
    });
  }
  return report;
}

/**
 * Why a run did nothing of its job: every part failed (nothing could even be listed). A run in
 * which some deletions failed did its job otherwise; those count in METRIC.actionFailures.
 */
export function gcRunFailure(report: GcReport): string | undefined {
  const parts = report.failed.filter((f) => f.id === '*');
  const listing = ['nodes', 'launch-templates', 'instance-profiles'];
  if (!listing.every((name) => parts.some((f) => f.resource === name))) return undefined;
  return parts.map((f) => `${f.resource}: ${f.error}`).join('; ');
}
