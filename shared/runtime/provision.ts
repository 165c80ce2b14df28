// The provision decision: one batch of PodsUnschedulable notices (already validated and merged) →
// NodeClaims launched. The notice is a trigger, never the authority: the decision reads the cluster
// (cluster-read.ts) and plans only the named pods the API server still has pending and marked
// Unschedulable, with their volumes' topology, around everything our live claims already carry
// (capacity.ts). Pods nominated to a live claim are not planned again; claim names derive from the
// decision so a redelivered batch re-finds its instances instead of launching twice. Claims are
// nominated and recorded before they launch (provision-launch.ts): what an invocation has no time
// left to launch, the next one launches from its records, with the claims it plans. Serial per
// cluster (SQS FIFO, one message group), so no two decisions race. A failed read of the cluster
// throws before anything launches: the batch comes back whole.

import type { NodeSelectorRequirement, Pod } from '../apis/core/v1';
import type { NodePool } from '../apis/v1/types';
import { METRIC, REGISTRATION_TTL_MS } from '../contracts';
import type { InstanceType } from '../instancetypes/types';
import { nodeClaimName as generatedName } from '../nodeclaim';
import type { NodeClaimRecord } from '../nodeclaim/record';
import { capacityFromCatalog, nodePoolUsage } from '../nodeclaim/usage';
import { errorMessage } from '../providers/aws-errors';
import type { Clock } from '../providers/clock';
import type { LaunchedInstance } from '../providers/instance';
import type { NodeClaimStore, NoticePartState, StateStore, UnschedulableState } from '../providers/state';
import { type PlannedNodeClaim, podKey, type SchedulingResult, solve, type UnschedulablePod } from '../scheduling';
import { volumeTopology } from '../scheduling/volumetopology';
import { type ClaimCapacity, existingCapacity } from './capacity';
import { type ClusterReader, type IgnoredPod, pendingInCluster, readCluster, readVolumes } from './cluster-read';
import { mapLimit } from './concurrency';
import type { ClaimInstances } from './instances';
import { splitLaunchedDetail } from './launched-events';
import { podUid } from './objects';
import { launchDecision, type RecordedLaunch } from './provision-launch';
import type { Telemetry } from './telemetry';
import { recordUnschedulable } from './unschedulable';

/** What the notices of one batch carry, merged (latest pod spec per uid). */
export interface ProvisionBatch {
  pods: Pod[];
  /** DaemonSet pod templates: overhead on every node. */
  daemonSets: Pod[];
  /** The newest observedAt of the batch's notices: names this decision's claims. */
  observedAt: string;
}

export interface ResolvedInstanceTypes {
  /** NodePool name → its instance types, priced. */
  byNodePool: Record<string, InstanceType[]>;
  /** Where the prices came from ('bundled', 'pricing-api+spot-price-history', …). */
  priceSource: string;
}

export interface NodeClaimToLaunch {
  nodeClaimName: string;
  nodePool: NodePool;
  claim: PlannedNodeClaim;
}

/** What became of one claim of a decision's launches. */
export type ClaimLaunchResult =
  | { nodeClaimName: string; launched: LaunchedInstance }
  | { nodeClaimName: string; error: unknown }
  /** Not started before the invocation neared its end: its record waits for the next one. */
  | { nodeClaimName: string; deferred: true };

/** A claim an earlier decision recorded and did not launch: launched from its record, not planned again. */
export interface RecordedClaimToLaunch {
  nodeClaimName: string;
  nodePool: NodePool;
  record: NodeClaimRecord;
  /** Its NodePool's instance types as this decision resolved them (the record names which it may launch). */
  instanceTypes: InstanceType[];
}

export interface LaunchAllOptions {
  /** Milliseconds this invocation has left (Lambda's getRemainingTimeInMillis). */
  remainingMs?: () => number;
  /** Launches (batches, where the launcher batches) in flight at once. */
  concurrency?: number;
  /** Claims earlier decisions recorded and did not launch: launched first, in the batches their records name. */
  recorded?: readonly RecordedClaimToLaunch[];
}

/** Turns a planned claim into an instance (shared/providers/instance under the hood). */
export interface ClaimLauncher {
  launch(request: NodeClaimToLaunch): Promise<LaunchedInstance>;
  /** The decision's claims at once, identical ones in one CreateFleet (see launcher.ts). */
  launchAll?(requests: readonly NodeClaimToLaunch[], options?: LaunchAllOptions): Promise<ClaimLaunchResult[]>;
}

export interface LaunchedClaim {
  nodeClaimName: string;
  nodePool: string;
  instanceId: string;
  instanceType: string;
  zone: string;
  capacityType: string;
  /** USD/hour of the launched offering. */
  price: number;
  pods: string[];
  /** The instance already existed (a redelivered batch). */
  existing: boolean;
}

/** Detail of the NodeClaimsLaunched event put after each decision. */
export interface NodeClaimsLaunchedDetail {
  cluster: string;
  decidedAt: string;
  observedAt: string;
  priceSource: string;
  nodeClaims: LaunchedClaim[];
  /** Pods placed on claims already in flight: nothing new launched for them. */
  inFlight: { nodeClaimName: string; pods: string[] }[];
  /** Pods that fit nowhere, or whose claim could not launch, with why. */
  unschedulable: { pod: string; reasons: string[] }[];
  /** Pods the notices named that the cluster says are not pending (bound, gone, terminating …), with why. */
  ignored: IgnoredPod[];
}

export interface ProvisionDeps extends Telemetry {
  cluster: string;
  nodePools: NodePool[];
  instanceTypes(): Promise<ResolvedInstanceTypes>;
  instances: Pick<ClaimInstances, 'live'>;
  /** Read access to the API server: pods, nodes, and the volume objects of pods that mount claims. */
  kube: ClusterReader;
  state: Pick<StateStore, 'nominations' | 'nominate' | 'releaseNomination'>;
  /** The NodeClaim records: what every claim was launched as, and what counts against NodePool limits. */
  records: Pick<NodeClaimStore, 'nodeClaims' | 'deleteNodeClaim'>;
  launcher: ClaimLauncher;
  events: { nodeClaimsLaunched(detail: NodeClaimsLaunchedDetail): Promise<void> };
  clock: Clock;
  /** Launches in flight at once: claims, or batches of identical claims where the launcher batches. */
  launchConcurrency?: number;
  /** Where pods that fit nowhere are kept with their reasons, for the watcher's FailedScheduling events. */
  unschedulable?: Pick<UnschedulableState, 'recordUnschedulable'>;
  /** Where parts of a split notice wait for the rest (notice-parts.ts); without it each part is planned as it comes. */
  noticeParts?: NoticePartState;
}

export interface ProvisionOptions {
  /** Milliseconds the invocation has left: launches not started near the end wait for the next one. */
  remainingMs?: () => number;
}

/** A launch failed for a reason retrying may cure (throttling, API errors): the batch goes back. */
export class RetryableProvisionError extends Error {
  override readonly name: string = 'RetryableProvisionError';
}

/**
 * The decision's records are written but some of its launches were not started before the
 * invocation's end: the batch comes back and the next invocation launches them from their records.
 */
export class LaunchesPendingError extends RetryableProvisionError {
  override readonly name: string = 'LaunchesPendingError';
}

export interface ProvisionReport {
  detail: NodeClaimsLaunchedDetail;
  /** Pending pods dropped because a live claim already holds them. */
  alreadyNominated: number;
  decisionMs: number;
}

/** Karpenter's `<nodepool>-xxxxx`, seeded by the decision and the claim's pods: stable across redeliveries. */
export function nodeClaimName(nodePool: string, observedAt: string, podUids: readonly string[]): string {
  return generatedName(nodePool, `${observedAt}\n${[...podUids].sort().join('\n')}`);
}

/**
 * How long pods placed on an initialized node stay nominated there: long enough for the kube-scheduler
 * to bind them, short enough that pods it will not bind there (it knows better) are planned again soon.
 */
export const INITIALIZED_NODE_NOMINATION_MS = 60_000;

/** What a decision reads: `karpless plan --from-cluster` runs the same decision on the same reads. */
export type DecisionDeps = Pick<
  ProvisionDeps,
  'nodePools' | 'instanceTypes' | 'instances' | 'kube' | 'state' | 'clock'
> & {
  records: Pick<NodeClaimStore, 'nodeClaims'>;
};

export interface Decision {
  result: SchedulingResult;
  capacity: ClaimCapacity[];
  ignored: IgnoredPod[];
  pending: number;
  alreadyNominated: number;
  priceSource: string;
  instanceTypes: Record<string, InstanceType[]>;
  /** Recorded claims past their launch window: the launching decision deletes them (capacity.ts). */
  abandoned: NodeClaimRecord[];
}

const EMPTY_RESULT: SchedulingResult = { nodeClaims: [], existingNodes: [], unschedulable: [], totalPrice: 0 };

/** Reads the cluster; any failure means the batch comes back, with nothing planned on partial data. */
async function read<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new RetryableProvisionError(
      `reading the cluster (${what}) failed, nothing launched: ${errorMessage(error)}`,
      {
        cause: error,
      },
    );
  }
}

/** The provision decision without its launches: read the cluster, hold nominated pods, solve. */
export async function decide(deps: DecisionDeps, batch: ProvisionBatch): Promise<Decision> {
  const [types, nominations, live, records, cluster] = await Promise.all([
    deps.instanceTypes(),
    deps.state.nominations(),
    deps.instances.live(),
    deps.records.nodeClaims(),
    read('pods and nodes', () => readCluster(deps.kube)),
  ]);
  const { pods: pending, ignored } = pendingInCluster(batch.pods, cluster.pods);
  const { claims, held, abandoned } = existingCapacity({
    nodePools: deps.nodePools,
    instanceTypes: types.byNodePool,
    live,
    nominations,
    records,
    nodes: cluster.nodes,
    pods: cluster.pods,
    daemonSets: batch.daemonSets,
    now: deps.clock(),
  });
  const unheld = pending.filter((p) => !held.has(podUid(p)));
  const volumes = await read('volumes', () => readVolumes(deps.kube, unheld));
  const toPlace: Pod[] = [];
  const unplaceable: UnschedulablePod[] = [];
  const volumeRequirements = new Map<Pod, NodeSelectorRequirement[]>();
  for (const pod of unheld) {
    const topology = volumes ? volumeTopology(pod, volumes) : { requirements: [] };
    if ('unschedulable' in topology) unplaceable.push({ pod, reasons: [topology.unschedulable] });
    else {
      toPlace.push(pod);
      if (topology.requirements.length > 0) volumeRequirements.set(pod, topology.requirements);
    }
  }
  // The plan counts each reservation's instances (strict mode: a pod whose reservations the plan's
  // other claims hold waits for the next decision, as Karpenter's provisioner defers it).
  const solved =
    toPlace.length === 0
      ? EMPTY_RESULT
      : solve({
          pods: toPlace,
          nodePools: deps.nodePools,
          instanceTypes: types.byNodePool,
          daemonSets: batch.daemonSets,
          existingNodes: claims.map((c) => c.node),
          volumeRequirements,
          // Every claim of a pool that is not being deleted counts against its limits: the records
          // (in flight ones too, at the largest type they may launch), our instances without one,
          // and Nodes of the pool neither accounts for.
          nodePoolUsage: nodePoolUsage({
            records,
            instances: live,
            nodes: cluster.nodes,
            typeCapacity: capacityFromCatalog(types.byNodePool),
          }),
        });
  return {
    result: { ...solved, unschedulable: [...unplaceable, ...solved.unschedulable] },
    capacity: claims,
    ignored,
    pending: pending.length,
    alreadyNominated: pending.length - unheld.length,
    priceSource: types.priceSource,
    instanceTypes: types.byNodePool,
    abandoned,
  };
}

/**
 * Puts the decision's NodeClaimsLaunched event in parts that fit PutEvents. The launches have gone
 * out and their records say what launched: an event that cannot be put is logged and counted, never
 * a reason to send the batch back (which would only re-find the same instances).
 */
async function announce(deps: ProvisionDeps, detail: NodeClaimsLaunchedDetail): Promise<void> {
  const parts = splitLaunchedDetail(detail);
  let failed = 0;
  for (const part of parts) {
    try {
      await deps.events.nodeClaimsLaunched(part);
    } catch (error) {
      failed++;
      deps.log.error('NodeClaimsLaunched event not put; the launches stand', {
        part: part.part.index,
        parts: part.part.count,
        error: errorMessage(error),
      });
    }
  }
  if (failed > 0) deps.metrics.record(METRIC.actionFailures, 'Count', failed);
}

/**
 * Claims recorded long ago and never launched (EC2's instance bucket is slow to refill after a burst):
 * deleted with their nominations, so gc cannot delete a record under a launch and their pods are
 * planned again now. Provision decisions run one at a time per cluster and a record this old has no
 * launch in progress.
 */
async function abandon(deps: ProvisionDeps, records: readonly NodeClaimRecord[]): Promise<void> {
  if (records.length === 0) return;
  deps.log.warn('recorded claims not launched in time: deleted, their pods planned again', {
    count: records.length,
    nodeclaims: records.slice(0, 20).map((r) => r.metadata.name),
  });
  await mapLimit(records, 16, async (record) => {
    await deps.state.releaseNomination(record.metadata.name);
    await deps.records.deleteNodeClaim(record.metadata.name);
  });
}

/** The claims earlier decisions recorded and did not launch, with every pod now nominated to them. */
function recordedLaunches(
  deps: ProvisionDeps,
  capacity: readonly ClaimCapacity[],
  placed: SchedulingResult['existingNodes'],
  nominatedTo: ReadonlyMap<string, string[]>,
  instanceTypes: Record<string, InstanceType[]>,
): RecordedLaunch[] {
  const out: RecordedLaunch[] = [];
  for (const c of capacity) {
    const nodePool = deps.nodePools.find((p) => p.metadata.name === c.nodePool);
    if (!c.unlaunched || !nodePool) continue;
    const added = placed.find((p) => p.name === c.node.name)?.pods ?? [];
    out.push({
      claim: {
        nodeClaimName: c.nodeClaimName,
        nodePool,
        record: c.unlaunched.record,
        instanceTypes: instanceTypes[c.nodePool] ?? [],
      },
      podUids: nominatedTo.get(c.nodeClaimName) ?? c.nomination?.podUids ?? [],
      pods: [...c.unlaunched.pods, ...added].map(podKey),
    });
  }
  return out;
}

/** Plans and launches for one batch; throws RetryableProvisionError when the batch should come back. */
export async function provision(
  deps: ProvisionDeps,
  batch: ProvisionBatch,
  options: ProvisionOptions = {},
): Promise<ProvisionReport> {
  const started = deps.clock();
  const { result, capacity, ignored, pending, alreadyNominated, priceSource, instanceTypes, abandoned } = await decide(
    deps,
    batch,
  );
  // Before any nomination: their pods' locks must be free for the claims planned now.
  await abandon(deps, abandoned);
  const decisionMs = deps.clock() - started;
  deps.metrics.record(METRIC.decisionLatency, 'Milliseconds', decisionMs);
  deps.metrics.record(METRIC.podsPerDecision, 'Count', pending);
  if (ignored.length > 0) {
    // One line for the whole notice: a stale or forged notice is visible, and says which pods and why.
    deps.log.warn(pending === 0 ? 'notice launches nothing: none of its pods is pending' : 'notice pods not planned', {
      count: ignored.length,
      pods: ignored.slice(0, 100).map((i) => `${i.pod}: ${i.reason}`),
    });
  }
  deps.log.info('provision decision', {
    pods: batch.pods.length,
    pending,
    alreadyNominated,
    existingClaims: capacity.length,
    recordedToLaunch: capacity.filter((c) => c.unlaunched).length,
    nodeClaims: result.nodeClaims.length,
    unschedulable: result.unschedulable.length,
    priceSource,
    decisionMs,
  });

  // Pods waiting for a reservation are deferred, not failed: like Karpenter, one log line and no
  // FailedScheduling event; the watcher notices them again and the next decision plans them.
  const waiting = result.unschedulable.filter((u) => u.reservedOffering);
  const failed = waiting.length === 0 ? result.unschedulable : result.unschedulable.filter((u) => !u.reservedOffering);
  if (waiting.length > 0) {
    deps.log.info('pods deferred to the next decision: their reserved offerings are held by this decision', {
      pods: waiting.slice(0, 100).map((u) => podKey(u.pod)),
    });
  }
  for (const { pod, reasons } of failed.slice(0, 20)) {
    deps.log.warn('pod fits nowhere', { pod: podKey(pod), reasons });
  }
  const now = deps.clock();
  await recordUnschedulable(deps, failed, now);
  const expiresAt = now + REGISTRATION_TTL_MS;
  const detail: NodeClaimsLaunchedDetail = {
    cluster: deps.cluster,
    decidedAt: new Date(started).toISOString(),
    observedAt: batch.observedAt,
    priceSource,
    nodeClaims: [],
    inFlight: [],
    unschedulable: result.unschedulable.map((u) => ({ pod: podKey(u.pod), reasons: u.reasons })),
    ignored,
  };

  // Pods the scheduler put on live claims join those claims' nominations, so the next decision
  // counts them there until they bind.
  const nominatedTo = new Map<string, string[]>();
  for (const placed of result.existingNodes) {
    const claim = capacity.find((c) => c.node.name === placed.name);
    if (!claim) continue;
    const uids = [...(claim.nomination?.podUids ?? []), ...placed.pods.map(podUid)];
    nominatedTo.set(claim.nodeClaimName, uids);
    await deps.state.nominate({
      nodeClaimName: claim.nodeClaimName,
      nodePool: claim.nodePool,
      podUids: uids,
      expiresAt: claim.nomination?.expiresAt ?? (claim.initialized ? now + INITIALIZED_NODE_NOMINATION_MS : expiresAt),
    });
    detail.inFlight.push({ nodeClaimName: claim.nodeClaimName, pods: placed.pods.map(podKey) });
  }

  const planned: NodeClaimToLaunch[] = [];
  for (const claim of result.nodeClaims) {
    const name = nodeClaimName(claim.nodePool, batch.observedAt, claim.pods.map(podUid));
    const nodePool = deps.nodePools.find((p) => p.metadata.name === claim.nodePool);
    if (nodePool) planned.push({ nodeClaimName: name, nodePool, claim });
  }
  const recorded = recordedLaunches(deps, capacity, result.existingNodes, nominatedTo, instanceTypes);
  const { deferred, retryable } = await launchDecision(deps, detail, { planned, recorded, expiresAt }, options);
  await announce(deps, detail);
  if (deferred > 0) {
    throw new LaunchesPendingError(
      `${deferred} NodeClaim(s) not launched before the invocation's end; their records are written and the next invocation launches them`,
    );
  }
  if (retryable.length > 0) {
    throw new RetryableProvisionError(`${retryable.length} NodeClaim launch(es) failed: ${retryable.join('; ')}`);
  }
  return { detail, alreadyNominated, decisionMs };
}
