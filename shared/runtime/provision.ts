// The provision decision: one batch of PodsUnschedulable notices (already validated and merged) →
// NodeClaims launched. Pods nominated to a claim still in flight are not planned again; in-flight
// claims (our instances whose claim still has a nomination) count as nodes the scheduler can fill;
// claim names derive from the decision so a redelivered batch re-finds its instances instead of
// launching twice. Serial per cluster (SQS FIFO, one message group), so no two decisions race.

import type { Pod } from '../apis/core/v1';
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_NODEPOOL, LABEL_ZONE } from '../apis/v1/labels';
import type { NodePool } from '../apis/v1/types';
import { METRIC, REGISTRATION_TTL_MS } from '../contracts';
import type { InstanceType } from '../instancetypes/types';
import { settleReservations } from '../launch/reservations';
import { nodeClaimName as generatedName } from '../nodeclaim';
import { capacityFromCatalog, nodePoolUsage } from '../nodeclaim/usage';
import { errorMessage } from '../providers/aws-errors';
import type { Clock } from '../providers/clock';
import { InsufficientCapacityError, LaunchError, type LaunchedInstance } from '../providers/instance';
import type { Nomination, StateStore } from '../providers/state';
import { type ExistingNode, type PlannedNodeClaim, podKey, type SchedulingResult, solve } from '../scheduling';
import type { ClaimInstance, ClaimInstances } from './instances';
import { podUid } from './objects';
import type { Telemetry } from './telemetry';

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

/** Turns a planned claim into an instance (shared/providers/instance under the hood). */
export interface ClaimLauncher {
  launch(request: NodeClaimToLaunch): Promise<LaunchedInstance>;
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
}

export interface ProvisionDeps extends Telemetry {
  cluster: string;
  nodePools: NodePool[];
  instanceTypes(): Promise<ResolvedInstanceTypes>;
  instances: Pick<ClaimInstances, 'live'>;
  state: Pick<StateStore, 'nominations' | 'nominate'>;
  launcher: ClaimLauncher;
  events: { nodeClaimsLaunched(detail: NodeClaimsLaunchedDetail): Promise<void> };
  clock: Clock;
  /** Claims launched at once (default 8). */
  launchConcurrency?: number;
}

/** A launch failed for a reason retrying may cure (throttling, API errors): the batch goes back. */
export class RetryableProvisionError extends Error {
  override readonly name = 'RetryableProvisionError';
}

export interface ProvisionReport {
  detail: NodeClaimsLaunchedDetail;
  /** Pods dropped because a claim in flight already holds them. */
  alreadyNominated: number;
  decisionMs: number;
}

/** Karpenter's `<nodepool>-xxxxx`, seeded by the decision and the claim's pods: stable across redeliveries. */
export function nodeClaimName(nodePool: string, observedAt: string, podUids: readonly string[]): string {
  return generatedName(nodePool, `${observedAt}\n${[...podUids].sort().join('\n')}`);
}

interface InFlightClaim {
  instance: ClaimInstance;
  nomination: Nomination;
  node: ExistingNode;
}

function inFlightClaims(
  deps: ProvisionDeps,
  live: readonly ClaimInstance[],
  nominations: readonly Nomination[],
  byNodePool: Record<string, InstanceType[]>,
  pods: ReadonlyMap<string, Pod>,
  daemonSets: readonly Pod[],
): InFlightClaim[] {
  const byClaim = new Map(nominations.map((n) => [n.nodeClaimName, n]));
  const out: InFlightClaim[] = [];
  for (const instance of live) {
    const nomination = byClaim.get(instance.nodeClaimName);
    const type = byNodePool[instance.nodePool]?.find((t) => t.name === instance.instanceType);
    const pool = deps.nodePools.find((p) => p.metadata.name === instance.nodePool);
    if (!nomination || !type || !pool) continue;
    out.push({
      instance,
      nomination,
      node: {
        name: instance.nodeClaimName,
        labels: {
          ...pool.spec.template.metadata?.labels,
          ...type.labels,
          [LABEL_NODEPOOL]: instance.nodePool,
          [LABEL_ZONE]: instance.zone,
          [LABEL_CAPACITY_TYPE]: instance.capacityType,
          [LABEL_HOSTNAME]: instance.nodeClaimName,
        },
        taints: pool.spec.template.spec.taints ?? [],
        allocatable: type.allocatable,
        // Its nominated pods still pending in this batch, and the DaemonSets: what it will carry.
        pods: [...nomination.podUids.flatMap((uid) => pods.get(uid) ?? []), ...daemonSets],
        inFlight: true,
      },
    });
  }
  return out;
}

function priceOf(claim: PlannedNodeClaim, launched: LaunchedInstance): number {
  const type = claim.instanceTypes.find((t) => t.name === launched.instanceType);
  const offering = type?.offerings.find((o) => o.zone === launched.zone && o.capacityType === launched.capacityType);
  return offering?.price ?? claim.offering.price;
}

async function inBatches<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(work));
}

interface Decision {
  result: SchedulingResult;
  inFlight: InFlightClaim[];
  alreadyNominated: number;
  priceSource: string;
}

async function decide(deps: ProvisionDeps, batch: ProvisionBatch): Promise<Decision> {
  const [types, nominations, live] = await Promise.all([
    deps.instanceTypes(),
    deps.state.nominations(),
    deps.instances.live(),
  ]);
  const pods = new Map(batch.pods.map((p) => [podUid(p), p]));
  const inFlight = inFlightClaims(deps, live, nominations, types.byNodePool, pods, batch.daemonSets);
  const held = new Set(inFlight.flatMap((c) => c.nomination.podUids));
  const toPlace = batch.pods.filter((p) => !held.has(podUid(p)));
  // The packer prices every claim as if a reservation held as many instances as wanted; settling
  // gives the claims past its count the offering their launch will really get.
  const result =
    toPlace.length === 0
      ? { nodeClaims: [], existingNodes: [], unschedulable: [], totalPrice: 0 }
      : settleReservations(
          solve({
            pods: toPlace,
            nodePools: deps.nodePools,
            instanceTypes: types.byNodePool,
            daemonSets: batch.daemonSets,
            existingNodes: inFlight.map((c) => c.node),
            // Every claim of a pool counts against its limits, not only the ones this batch fills.
            nodePoolUsage: nodePoolUsage({ instances: live, typeCapacity: capacityFromCatalog(types.byNodePool) }),
          }),
        ).result;
  return { result, inFlight, alreadyNominated: batch.pods.length - toPlace.length, priceSource: types.priceSource };
}

/** Plans and launches for one batch; throws RetryableProvisionError when the batch should come back. */
export async function provision(deps: ProvisionDeps, batch: ProvisionBatch): Promise<ProvisionReport> {
  const started = deps.clock();
  const { result, inFlight, alreadyNominated, priceSource } = await decide(deps, batch);
  const decisionMs = deps.clock() - started;
  deps.metrics.record(METRIC.decisionLatency, 'Milliseconds', decisionMs);
  deps.metrics.record(METRIC.podsPerDecision, 'Count', batch.pods.length);
  deps.log.info('provision decision', {
    pods: batch.pods.length,
    alreadyNominated,
    inFlightClaims: inFlight.length,
    nodeClaims: result.nodeClaims.length,
    unschedulable: result.unschedulable.length,
    priceSource,
    decisionMs,
  });

  for (const { pod, reasons } of result.unschedulable.slice(0, 20)) {
    deps.log.warn('pod fits nowhere', { pod: podKey(pod), reasons });
  }
  const expiresAt = deps.clock() + REGISTRATION_TTL_MS;
  const detail: NodeClaimsLaunchedDetail = {
    cluster: deps.cluster,
    decidedAt: new Date(started).toISOString(),
    observedAt: batch.observedAt,
    priceSource,
    nodeClaims: [],
    inFlight: [],
    unschedulable: result.unschedulable.map((u) => ({ pod: podKey(u.pod), reasons: u.reasons })),
  };

  // Pods the scheduler put on in-flight claims join those claims' nominations.
  for (const placed of result.existingNodes) {
    const claim = inFlight.find((c) => c.node.name === placed.name);
    if (!claim) continue;
    const uids = [...claim.nomination.podUids, ...placed.pods.map(podUid)];
    await deps.state.nominate({ ...claim.nomination, podUids: uids, expiresAt });
    detail.inFlight.push({ nodeClaimName: placed.name, pods: placed.pods.map(podKey) });
  }

  const retryable: string[] = [];
  await inBatches(result.nodeClaims, deps.launchConcurrency ?? 8, async (claim) => {
    const uids = claim.pods.map(podUid);
    const name = nodeClaimName(claim.nodePool, batch.observedAt, uids);
    const nodePool = deps.nodePools.find((p) => p.metadata.name === claim.nodePool);
    if (!nodePool) return;
    const fields = { nodeclaim: name, nodePool: claim.nodePool, pods: uids.length };
    try {
      const launched = await deps.launcher.launch({ nodeClaimName: name, nodePool, claim });
      if (!launched.existing) {
        deps.metrics.record(METRIC.launches, 'Count', 1, { capacityType: launched.capacityType });
      }
      const nominated = await deps.state.nominate({
        nodeClaimName: name,
        nodePool: claim.nodePool,
        podUids: uids,
        expiresAt,
      });
      if (!nominated) deps.log.warn('pods already nominated elsewhere', fields);
      detail.nodeClaims.push({
        nodeClaimName: name,
        nodePool: claim.nodePool,
        instanceId: launched.instanceId,
        instanceType: launched.instanceType,
        zone: launched.zone,
        capacityType: launched.capacityType,
        price: priceOf(claim, launched),
        pods: claim.pods.map(podKey),
        existing: launched.existing,
      });
      deps.log.info(launched.existing ? 'nodeclaim already launched' : 'nodeclaim launched', {
        ...fields,
        instanceId: launched.instanceId,
        instanceType: launched.instanceType,
        zone: launched.zone,
        capacityType: launched.capacityType,
      });
    } catch (error) {
      const capacity = error instanceof InsufficientCapacityError;
      if (capacity) deps.metrics.record(METRIC.capacityErrors, 'Count', 1, { nodePool: claim.nodePool });
      if (!capacity && !(error instanceof LaunchError)) retryable.push(`${name}: ${errorMessage(error)}`);
      deps.log.error('nodeclaim launch failed', { ...fields, error: errorMessage(error) });
      for (const pod of claim.pods) detail.unschedulable.push({ pod: podKey(pod), reasons: [errorMessage(error)] });
    }
  });

  await deps.events.nodeClaimsLaunched(detail);
  if (retryable.length > 0) {
    throw new RetryableProvisionError(`${retryable.length} NodeClaim launch(es) failed: ${retryable.join('; ')}`);
  }
  return { detail, alreadyNominated, decisionMs };
}
