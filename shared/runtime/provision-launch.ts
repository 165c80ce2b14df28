// The launch half of a provision decision. The pods of every claim the decision planned are
// nominated to it before anything launches, and the launcher writes each claim's record before its
// CreateFleet: a claim the invocation has no time left for stays recorded and nominated, so the next
// decision counts its pods as placed (capacity.ts offers it as in-flight capacity) and launches it
// from its record instead of planning those pods again. Claims earlier decisions left that way are
// launched here with the new ones. A claim that cannot launch (no capacity, a fleet error) loses its
// record and its nomination, so its pods are planned again.

import { METRIC } from '../contracts';
import type { InstanceType } from '../instancetypes/types';
import { errorMessage } from '../providers/aws-errors';
import { InsufficientCapacityError, LaunchError, type LaunchedInstance } from '../providers/instance';
import { podKey } from '../scheduling';
import { mapLimit } from './concurrency';
import { podUid } from './objects';
import type {
  ClaimLaunchResult,
  NodeClaimsLaunchedDetail,
  NodeClaimToLaunch,
  ProvisionDeps,
  ProvisionOptions,
  RecordedClaimToLaunch,
} from './provision';

/** Nomination writes at once (one state-table transaction each). */
const NOMINATION_CONCURRENCY = 16;

/** A recorded claim with the pods nominated to it (those this decision placed there too). */
export interface RecordedLaunch {
  claim: RecordedClaimToLaunch;
  podUids: string[];
  /** namespace/name of the nominated pods still pending. */
  pods: string[];
}

export interface DecisionLaunches {
  planned: NodeClaimToLaunch[];
  recorded: RecordedLaunch[];
  /** When the nominations of these claims lapse unless their nodes register. */
  expiresAt: number;
}

export interface LaunchesSettled {
  /** Claims not started before the invocation's end: recorded, nominated, for the next invocation. */
  deferred: number;
  /** Launches that failed for a reason retrying may cure. */
  retryable: string[];
}

/** One claim of the decision, planned now or recorded earlier, as the settling needs it. */
interface ClaimOfDecision {
  nodePool: string;
  podUids: string[];
  pods: string[];
  instanceTypes: readonly InstanceType[];
  /** USD/hour the plan expected, for a launched type the catalog no longer prices. */
  plannedPrice: number;
  recorded: boolean;
}

function priceOf(claim: ClaimOfDecision, launched: LaunchedInstance): number {
  const type = claim.instanceTypes.find((t) => t.name === launched.instanceType);
  const offering = type?.offerings.find((o) => o.zone === launched.zone && o.capacityType === launched.capacityType);
  return offering?.price ?? claim.plannedPrice;
}

/** The launches of a decision: batched where the launcher batches, else a few claims at a time. */
async function launchClaims(
  deps: ProvisionDeps,
  launches: DecisionLaunches,
  options: ProvisionOptions,
): Promise<ClaimLaunchResult[]> {
  const { planned, recorded } = launches;
  if (deps.launcher.launchAll) {
    return deps.launcher.launchAll(planned, {
      ...(options.remainingMs ? { remainingMs: options.remainingMs } : {}),
      ...(deps.launchConcurrency !== undefined ? { concurrency: deps.launchConcurrency } : {}),
      ...(recorded.length > 0 ? { recorded: recorded.map((r) => r.claim) } : {}),
    });
  }
  // Only launchAll writes records that wait for a later invocation; a launcher without it has none.
  if (recorded.length > 0) {
    deps.log.warn('recorded claims left unlaunched: this launcher launches planned claims only', {
      count: recorded.length,
    });
  }
  return mapLimit(planned, deps.launchConcurrency ?? 8, async (r): Promise<ClaimLaunchResult> => {
    try {
      return { nodeClaimName: r.nodeClaimName, launched: await deps.launcher.launch(r) };
    } catch (error) {
      return { nodeClaimName: r.nodeClaimName, error };
    }
  });
}

/** Each planned claim's pods nominated to it, before its launch (see the header). */
async function nominatePlanned(deps: ProvisionDeps, launches: DecisionLaunches): Promise<void> {
  await mapLimit(launches.planned, NOMINATION_CONCURRENCY, async ({ nodeClaimName, claim }) => {
    const nominated = await deps.state.nominate({
      nodeClaimName,
      nodePool: claim.nodePool,
      podUids: claim.pods.map(podUid),
      expiresAt: launches.expiresAt,
    });
    if (!nominated) {
      deps.log.warn('pods already nominated elsewhere', {
        nodeclaim: nodeClaimName,
        nodePool: claim.nodePool,
        pods: claim.pods.length,
      });
    }
  });
}

function claimsOfDecision(launches: DecisionLaunches): Map<string, ClaimOfDecision> {
  const out = new Map<string, ClaimOfDecision>();
  for (const { nodeClaimName, claim } of launches.planned) {
    out.set(nodeClaimName, {
      nodePool: claim.nodePool,
      podUids: claim.pods.map(podUid),
      pods: claim.pods.map(podKey),
      instanceTypes: claim.instanceTypes,
      plannedPrice: claim.offering.price,
      recorded: false,
    });
  }
  for (const { claim, podUids, pods } of launches.recorded) {
    out.set(claim.nodeClaimName, {
      nodePool: claim.nodePool.metadata.name,
      podUids,
      pods,
      instanceTypes: claim.instanceTypes,
      plannedPrice: 0,
      recorded: true,
    });
  }
  return out;
}

function settleLaunched(
  deps: ProvisionDeps,
  detail: NodeClaimsLaunchedDetail,
  name: string,
  claim: ClaimOfDecision,
  launched: LaunchedInstance,
): void {
  const fields = { nodeclaim: name, nodePool: claim.nodePool, pods: claim.podUids.length };
  if (!launched.existing) {
    deps.metrics.record(METRIC.launches, 'Count', 1, { capacityType: launched.capacityType });
  }
  detail.nodeClaims.push({
    nodeClaimName: name,
    nodePool: claim.nodePool,
    instanceId: launched.instanceId,
    instanceType: launched.instanceType,
    zone: launched.zone,
    capacityType: launched.capacityType,
    price: priceOf(claim, launched),
    pods: claim.pods,
    existing: launched.existing,
  });
  deps.log.info(launched.existing ? 'nodeclaim already launched' : 'nodeclaim launched', {
    ...fields,
    ...(claim.recorded ? { recorded: true } : {}),
    instanceId: launched.instanceId,
    instanceType: launched.instanceType,
    zone: launched.zone,
    capacityType: launched.capacityType,
  });
}

function settleFailed(
  deps: ProvisionDeps,
  detail: NodeClaimsLaunchedDetail,
  name: string,
  claim: ClaimOfDecision,
  error: unknown,
  retryable: string[],
): void {
  const capacity = error instanceof InsufficientCapacityError;
  if (capacity) deps.metrics.record(METRIC.capacityErrors, 'Count', 1, { nodePool: claim.nodePool });
  if (!capacity && !(error instanceof LaunchError)) retryable.push(`${name}: ${errorMessage(error)}`);
  deps.log.error('nodeclaim launch failed', {
    nodeclaim: name,
    nodePool: claim.nodePool,
    pods: claim.pods.length,
    error: errorMessage(error),
  });
  for (const pod of claim.pods) detail.unschedulable.push({ pod, reasons: [errorMessage(error)] });
}

/** Nominates, launches and settles the decision's claims; the detail gets what launched and what failed. */
export async function launchDecision(
  deps: ProvisionDeps,
  detail: NodeClaimsLaunchedDetail,
  launches: DecisionLaunches,
  options: ProvisionOptions,
): Promise<LaunchesSettled> {
  await nominatePlanned(deps, launches);
  const claims = claimsOfDecision(launches);
  const outcomes = await launchClaims(deps, launches, options);
  await mapLimit(outcomes, NOMINATION_CONCURRENCY, (outcome) => renominate(deps, claims, outcome, launches.expiresAt));
  const settled: LaunchesSettled = { deferred: 0, retryable: [] };
  for (const outcome of outcomes) {
    const claim = claims.get(outcome.nodeClaimName);
    if (!claim) continue;
    if ('deferred' in outcome) settled.deferred++;
    else if ('launched' in outcome) settleLaunched(deps, detail, outcome.nodeClaimName, claim, outcome.launched);
    else settleFailed(deps, detail, outcome.nodeClaimName, claim, outcome.error, settled.retryable);
  }
  return settled;
}

/**
 * A claim that cannot launch (no capacity, a fleet error: the launcher deleted its record) frees its
 * pods for the next decision; a claim an earlier invocation recorded keeps its pods nominated, from
 * its launch, as long as a new claim's.
 */
async function renominate(
  deps: ProvisionDeps,
  claims: ReadonlyMap<string, ClaimOfDecision>,
  outcome: ClaimLaunchResult,
  expiresAt: number,
): Promise<void> {
  const claim = claims.get(outcome.nodeClaimName);
  if (!claim) return;
  const name = outcome.nodeClaimName;
  if ('error' in outcome) {
    if (outcome.error instanceof InsufficientCapacityError || outcome.error instanceof LaunchError) {
      await deps.state.releaseNomination(name);
    }
  } else if ('launched' in outcome && claim.recorded) {
    await deps.state.nominate({ nodeClaimName: name, nodePool: claim.nodePool, podUids: claim.podUids, expiresAt });
  }
}
