// Consolidation carried out by the drift function, after drift and expiration, through the same
// resumable disruption machine (drift.ts): for each candidate of the command a budget slot for its
// reason (Empty for emptiness, Underutilized for multi- and single-node) on the shared ledger, a
// disruption record and the karpenter.sh/disrupted taint; then
//   replace: one cheaper node launched through the provision launch path (for every candidate of a
//            multi-node command at once), and the old nodes handed to the termination flow only once
//            it is Initialized, or
//   delete:  the nodes are empty or their pods fit on other nodes, so they are handed over at once,
//            nothing launched.
// The plan is shared/disruption/consolidation.ts (pure); this file reads the cluster, re-validates
// and starts.
//
// Kept from Karpenter's disruption controller: methods run in order and the first that acts ends the
// pass, so nothing is consolidated in a run that started a drift or an expiration; one command per
// pass (the schedule runs every minute); the command is re-validated after commandValidationDelay
// (15 s) on a fresh read of the cluster and dropped unless its candidates still make the same kind
// of command.

import type { Pod } from '../apis/core/v1';
import { METRIC } from '../contracts';
import { budgetCounts, budgetLimit } from '../disruption/budgets';
import { pdbLimits } from '../disruption/candidates';
import {
  type ConsolidationCommand,
  type ConsolidationInput,
  type ConsolidationPlan,
  planConsolidation,
} from '../disruption/consolidation';
import { consolidateAfterMs } from '../disruption/emptiness';
import { reserveBudgetSlot } from '../disruption/ledger';
import { budgetMembers } from '../disruption/plan';
import { withPodEvents } from '../disruption/podevents';
import { nodeClaimName } from '../nodeclaim';
import type { NodeClaimRecord } from '../nodeclaim/record';
import { errorMessage } from '../providers/aws-errors';
import type { DisruptionRecord } from '../providers/state';
import { readClaims } from './claims';
import {
  clusterNodes,
  DISRUPTION_RECORD_TTL_MS,
  type DriftDeps,
  type DriftReport,
  disruptingByPool,
  disruptionEvent,
  finish,
  handOver,
  type Snapshot,
  taint,
  usageOf,
} from './drift';
import { instanceIdFromProviderID } from './instances';
import { podsByNode } from './objects';

const NO_CONSOLIDATION = 'no NodePool consolidates (consolidateAfter Never on every one)';

/** Karpenter's commandValidationDelay: a command must still hold this long after it was computed. */
export const CONSOLIDATION_VALIDATION_DELAY_MS = 15_000;

export interface ConsolidationOutcome {
  /** Why consolidation was not looked for in this run. */
  skipped?: string;
  /** The command the plan chose (before validation). */
  command?: {
    kind: ConsolidationCommand['kind'];
    method: ConsolidationCommand['method'];
    nodes: string[];
    savingsPerHour: number;
    replacement?: string;
    /** The replacement's capacity types after upstream's spot pin. */
    replacementCapacityTypes?: string[];
  };
  /** Why the command was dropped when re-validated, or why starting it failed. */
  dropped?: string;
  /** The command was started: a replacement launched, or (delete) the nodes handed to termination. */
  started: boolean;
  /** Every node looked at and why it was, or was not, consolidated. */
  considered: ConsolidationPlan['considered'];
  /** The last plan's candidates before budgets, by pool and reason. */
  eligible?: ConsolidationPlan['eligible'];
}

/** A NodePool whose nodes consolidation may touch at all. */
function consolidates(deps: DriftDeps): boolean {
  return deps.nodePools.some((p) => consolidateAfterMs(p) !== undefined);
}

/** The budget reason of a command: emptiness deletes for Empty, the other methods for Underutilized. */
export function commandReason(command: Pick<ConsolidationCommand, 'method'>): 'Empty' | 'Underutilized' {
  return command.method === 'empty' ? 'Empty' : 'Underutilized';
}

/** Pods the scheduler gave up on (PodScheduled=False, Unschedulable): the provisioner's pending set. */
export function pendingPods(pods: readonly Pod[]): Pod[] {
  return pods.filter(
    (p) =>
      !p.spec.nodeName &&
      !p.metadata.deletionTimestamp &&
      !(p.metadata.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet') &&
      (p.status?.conditions ?? []).some(
        (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
      ),
  );
}

/** The cluster as it is now; instance types, DaemonSets and the session are the run's. */
async function freshSnapshot(deps: DriftDeps, snap: Snapshot): Promise<Snapshot> {
  const [live, nodes, pods, records, drains, pdbs, claims] = await Promise.all([
    deps.instances.live(),
    deps.kube.listNodes(),
    deps.kube.listPods(),
    deps.state.disruptionRecords(),
    deps.state.drains(),
    deps.kube.listPodDisruptionBudgets(),
    readClaims(deps),
  ]);
  return {
    ...snap,
    live,
    nodes: nodes.items,
    pods: pods.items,
    records,
    drains: new Set(drains.map((d) => d.nodeName)),
    claims,
    pdbs: pdbLimits(pdbs.items),
  };
}

export function consolidationInput(
  deps: DriftDeps,
  snap: Snapshot,
): ConsolidationInput & { ours: ReturnType<typeof clusterNodes>['ours'] } {
  const { ours, others } = clusterNodes(snap);
  const disrupting = disruptingByPool(snap, ours);
  return {
    ours,
    now: deps.clock(),
    nodes: ours,
    otherNodes: others,
    nodePools: deps.nodePools,
    instanceTypes: snap.types.byNodePool,
    daemonSets: snap.daemonSets,
    disrupting,
    pdbs: snap.pdbs,
    isEvictable: deps.isEvictable,
    pendingPods: pendingPods(snap.pods),
    nodePoolUsage: usageOf(snap, disrupting),
    spotToSpot: deps.spotToSpotConsolidation ?? false,
  };
}

/** The consolidation the next run would look at, as `karpless disruption` shows it; changes nothing. */
export async function previewConsolidation(
  deps: DriftDeps,
  snap: Snapshot,
): Promise<{ skipped?: string; plan?: ConsolidationPlan }> {
  if (!consolidates(deps)) return { skipped: NO_CONSOLIDATION };
  return { plan: planConsolidation(consolidationInput(deps, snap)) };
}

/**
 * Moves each claim record's lastPodEventTime on when the pods on its node changed since the last
 * run (binds, completions, deletions). A failed write is retried by the next run.
 */
export async function recordPodEvents(deps: DriftDeps, snap: Snapshot): Promise<NodeClaimRecord[]> {
  const updates = deps.claimUpdates;
  if (!updates) return snap.claims;
  const byNode = podsByNode(snap.pods);
  const nodeOf = new Map(snap.nodes.map((n) => [instanceIdFromProviderID(n.spec?.providerID) ?? '', n.metadata.name]));
  const out: NodeClaimRecord[] = [];
  for (const claim of snap.claims) {
    const node = claim.status.nodeName ?? nodeOf.get(instanceIdFromProviderID(claim.status.providerID) ?? '');
    const next = node ? withPodEvents(claim, byNode.get(node) ?? [], deps.clock()) : undefined;
    if (!next) {
      out.push(claim);
      continue;
    }
    const stored = await updates.updateNodeClaim(next).catch(() => undefined);
    out.push(stored ?? next);
  }
  return out;
}

function summary(command: ConsolidationCommand): NonNullable<ConsolidationOutcome['command']> {
  const capacityTypes = command.replacement?.requirements.find((r) => r.key === 'karpenter.sh/capacity-type')?.values;
  return {
    kind: command.kind,
    method: command.method,
    nodes: command.candidates.map((c) => c.nodeName),
    savingsPerHour: command.savings,
    ...(command.replacement ? { replacement: command.replacement.offering.instanceType } : {}),
    ...(capacityTypes ? { replacementCapacityTypes: capacityTypes } : {}),
  };
}

function sameNodes(a: ConsolidationCommand, b: ConsolidationCommand): boolean {
  const left = a.candidates.map((c) => c.nodeName).sort();
  const right = b.candidates.map((c) => c.nodeName).sort();
  return left.length === right.length && left.every((n, i) => n === right[i]);
}

/** Why the re-validated plan no longer supports the first command, or undefined when it does. */
function invalidated(first: ConsolidationCommand, again: ConsolidationPlan): string | undefined {
  const command = again.command;
  if (command && command.kind === first.kind && sameNodes(command, first)) return undefined;
  if (command) {
    return `the plan now chooses to ${command.kind} ${command.candidates.map((c) => c.nodeName).join(', ')} instead`;
  }
  const node = first.candidates[0]?.nodeName;
  const why = again.considered.find((c) => c.nodeName === node)?.outcome;
  return why ? `no longer a candidate: ${why}` : 'no longer a candidate';
}

function skip(deps: DriftDeps, report: DriftReport): string | undefined {
  if (!consolidates(deps)) return NO_CONSOLIDATION;
  if (report.started.length > 0) {
    return 'a drift or expiration started in this run (the first disruption method that acts ends the run)';
  }
  return undefined;
}

interface Taken {
  record: DisruptionRecord;
}

/** Takes a budget slot and writes a record for every candidate, or none of them. */
async function reserveAll(
  deps: DriftDeps,
  input: ReturnType<typeof consolidationInput>,
  command: ConsolidationCommand,
  names: string[],
  detail: string,
): Promise<Taken[] | string> {
  const counts = budgetCounts(budgetMembers(input.ours, input.disrupting));
  const startedAt = deps.clock();
  const reason = commandReason(command);
  const taken: Taken[] = [];
  for (const c of command.candidates) {
    const pool = deps.nodePools.find((p) => p.metadata.name === c.nodePool);
    const count = counts.get(c.nodePool) ?? { nodes: 0, disrupting: new Set<string>() };
    counts.set(c.nodePool, count);
    if (!pool) return `NodePool ${c.nodePool} is gone`;
    const limit = budgetLimit(pool, reason, { nodes: count.nodes, now: startedAt });
    if (!(await reserveBudgetSlot(deps.state, limit, c.nodeName, count.disrupting))) {
      for (const t of taken) await finish(deps, t.record);
      return `another invocation took the last ${reason} budget slot of NodePool ${c.nodePool}`;
    }
    count.disrupting.add(c.nodeName);
    const record: DisruptionRecord = {
      nodeName: c.nodeName,
      instanceId: c.instanceId,
      nodePool: c.nodePool,
      reason,
      detail,
      replacements: names,
      phase: 'replacing',
      startedAt,
      expiresAt: startedAt + DISRUPTION_RECORD_TTL_MS,
    };
    await deps.state.putDisruption(record);
    taken.push({ record });
  }
  return taken;
}

/** Starts the command: slots and records for all its nodes, taints, the one replacement (or the hand-over). */
async function startCommand(
  deps: DriftDeps,
  snap: Snapshot,
  command: ConsolidationCommand,
  detail: string,
  report: DriftReport,
): Promise<string | undefined> {
  const input = consolidationInput(deps, snap);
  const first = command.candidates[0];
  if (!first) return 'the command has no nodes';
  const startedAt = deps.clock();
  const claim = command.replacement;
  const names = claim ? [nodeClaimName(claim.nodePool, `consolidation/${first.instanceId}/${startedAt}/0`)] : [];
  const taken = await reserveAll(deps, input, command, names, detail);
  if (typeof taken === 'string') return taken;
  try {
    for (const t of taken) await taint(deps, t.record.nodeName, true);
    if (claim) {
      const pool = deps.nodePools.find((p) => p.metadata.name === claim.nodePool);
      if (!pool) throw new Error(`NodePool ${claim.nodePool} of the replacement is not in the configuration`);
      const launched = await snap.session.launcher.launch({ nodeClaimName: names[0] ?? '', nodePool: pool, claim });
      deps.log.info('consolidation replacement launched', {
        nodes: command.candidates.map((c) => c.nodeName),
        nodeclaim: names[0],
        instanceId: launched.instanceId,
        instanceType: launched.instanceType,
        capacityType: launched.capacityType,
      });
    }
  } catch (error) {
    for (const t of taken) {
      await taint(deps, t.record.nodeName, false).catch(() => undefined);
      await finish(deps, t.record);
    }
    throw error;
  }
  for (const t of taken) {
    report.started.push({ node: t.record.nodeName, reason: t.record.reason, detail, replacements: names });
    if (names.length > 0) {
      await disruptionEvent(deps, t.record.nodeName, 'DisruptionLaunching', `Launching NodeClaim: ${t.record.reason}`);
    }
    if (names.length === 0) {
      await handOver(deps, snap, t.record);
      report.draining.push(t.record.nodeName);
    }
  }
  deps.log.info('consolidation started', { method: command.method, kind: command.kind, detail });
  return undefined;
}

/**
 * One consolidation command after drift: plan, wait the validation delay, plan again on a fresh
 * read, and start the command only when it still holds. Failures are reported, never thrown: drift's
 * own work of this run is done and must be reported.
 */
export async function consolidateAfterDrift(
  deps: DriftDeps,
  snap: Snapshot,
  report: DriftReport,
): Promise<ConsolidationOutcome> {
  const skipped = skip(deps, report);
  if (skipped) return { skipped, started: false, considered: [] };
  const outcome: ConsolidationOutcome = { started: false, considered: [] };
  try {
    const firstSnap = await freshSnapshot(deps, snap);
    const first = planConsolidation(consolidationInput(deps, firstSnap));
    outcome.considered = first.considered;
    if (first.eligible) outcome.eligible = first.eligible;
    for (const u of first.unconsolidatable) await disruptionEvent(deps, u.nodeName, 'Unconsolidatable', u.message);
    const command = first.command;
    if (!command) return outcome;
    outcome.command = summary(command);
    if (command.candidates.some((c) => report.abandoned.some((a) => a.node === c.nodeName))) {
      // Its replacement just failed to initialize: starting again at once would only repeat that.
      outcome.dropped = 'its disruption was abandoned in this run; the next run may try again';
      return outcome;
    }
    await deps.sleep?.(CONSOLIDATION_VALIDATION_DELAY_MS);
    const againSnap = await freshSnapshot(deps, snap);
    const again = planConsolidation(consolidationInput(deps, againSnap));
    outcome.considered = again.considered;
    if (again.eligible) outcome.eligible = again.eligible;
    const why = invalidated(command, again);
    const valid = again.command;
    if (why || !valid) {
      outcome.dropped = why ?? 'no longer a candidate';
      deps.log.info('consolidation dropped on validation', { nodes: outcome.command.nodes, why: outcome.dropped });
      return outcome;
    }
    outcome.command = summary(valid);
    const detail = again.considered.find((c) => c.nodeName === valid.candidates[0]?.nodeName)?.outcome ?? '';
    const refused = await startCommand(deps, againSnap, valid, detail, report);
    outcome.started = refused === undefined;
    if (outcome.started) {
      deps.metrics.record(METRIC.disruptionDecisions, 'Count', 1, {
        nodePool: valid.candidates[0]?.nodePool ?? '',
        reason: commandReason(valid),
        decision: valid.kind,
      });
    }
    if (refused) {
      outcome.dropped = refused;
      for (const c of valid.candidates)
        report.blocked.push({ node: c.nodeName, reason: commandReason(valid), message: refused });
    }
  } catch (error) {
    outcome.dropped = errorMessage(error);
    deps.log.error('consolidation failed, will retry', { error: errorMessage(error) });
  }
  return outcome;
}
