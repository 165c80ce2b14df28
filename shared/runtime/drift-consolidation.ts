// Single-node consolidation carried out by the drift function, after drift and expiration, through
// the same resumable disruption machine (drift.ts): a budget slot for reason Underutilized on the
// shared ledger, a disruption record and the karpenter.sh/disrupted taint; then either
//   replace: one strictly cheaper node launched through the provision launch path, and the old node
//            handed to the termination flow only once that replacement registered, or
//   delete:  the pods fit on other nodes, so the old node is handed over at once, nothing launched.
// The plan is shared/disruption/consolidation.ts (pure); this file reads the cluster, re-validates
// and starts.
//
// Kept from Karpenter's disruption controller (reference §8): methods run in order and the first that
// acts ends the loop, so nothing is consolidated in a run that started a drift or an expiration; at
// most one consolidation command per run; the command is re-validated after commandValidationDelay
// (15 s) on a fresh read of the cluster and dropped unless the same node still yields the same kind
// of command. Not kept: multi-node consolidation (several nodes replaced by one) is not done.

import type { Pod } from '../apis/core/v1';
import {
  type ConsolidationCommand,
  type ConsolidationPlan,
  type DisruptionBudgetView,
  planSingleNodeConsolidation,
} from '../disruption/consolidation';
import { consolidateAfterMs } from '../disruption/emptiness';
import type { CandidateDecision } from '../disruption/plan';
import type { PodDisruptionBudget } from '../kube/types';
import { errorMessage } from '../providers/aws-errors';
import { readClaims } from './claims';
import {
  clusterNodes,
  type DriftDeps,
  type DriftReport,
  disruptingByPool,
  type Snapshot,
  startDisruption,
  usageOf,
} from './drift';

/** Karpenter's commandValidationDelay: a command must still hold this long after it was computed. */
export const CONSOLIDATION_VALIDATION_DELAY_MS = 15_000;

export interface ConsolidationOutcome {
  /** Why consolidation was not looked for in this run. */
  skipped?: string;
  /** The command the plan chose (before validation). */
  command?: { kind: ConsolidationCommand['kind']; node: string; savingsPerHour: number; replacement?: string };
  /** Why the command was dropped when re-validated, or why starting it failed. */
  dropped?: string;
  /** The command was started: a replacement launched, or (delete) the node handed to termination. */
  started: boolean;
  /** Every node looked at and why it was, or was not, consolidated. */
  considered: ConsolidationPlan['considered'];
}

/** A NodePool whose nodes single-node consolidation may touch at all. */
function consolidates(deps: DriftDeps): boolean {
  return deps.nodePools.some(
    (p) =>
      (p.spec.disruption?.consolidationPolicy ?? 'WhenEmptyOrUnderutilized') === 'WhenEmptyOrUnderutilized' &&
      consolidateAfterMs(p) !== undefined,
  );
}

function budgetView(pdb: PodDisruptionBudget): DisruptionBudgetView {
  return {
    namespace: pdb.metadata.namespace ?? 'default',
    name: pdb.metadata.name,
    ...(pdb.spec?.selector ? { selector: pdb.spec.selector } : {}),
    disruptionsAllowed: pdb.status?.disruptionsAllowed ?? 0,
  };
}

/** The cluster as it is now; instance types, DaemonSets and the session are the run's. */
async function freshSnapshot(deps: DriftDeps, snap: Snapshot) {
  const [live, nodes, pods, records, drains, pdbs, claims] = await Promise.all([
    deps.instances.live(),
    deps.kube.listNodes(),
    deps.kube.listPods(),
    deps.state.disruptionRecords(),
    deps.state.drains(),
    deps.kube.listPodDisruptionBudgets(),
    readClaims(deps),
  ]);
  const fresh: Snapshot = {
    ...snap,
    live,
    nodes: nodes.items,
    pods: pods.items,
    records,
    drains: new Set(drains.map((d) => d.nodeName)),
    claims,
  };
  return { fresh, pdbs: pdbs.items.map(budgetView) };
}

/** The consolidation the next run would look at, as `karpless disruption` shows it; changes nothing. */
export async function previewConsolidation(
  deps: DriftDeps,
  snap: Snapshot,
): Promise<{ skipped?: string; plan?: ConsolidationPlan }> {
  if (!consolidates(deps)) return { skipped: 'no NodePool has consolidationPolicy WhenEmptyOrUnderutilized' };
  // Nothing has changed since the snapshot: only the PDBs are still to read.
  const pdbs = (await deps.kube.listPodDisruptionBudgets()).items.map(budgetView);
  return { plan: planOn(deps, snap, pdbs).result };
}

/** The run acted since its snapshot: consolidation plans on a fresh read of the cluster. */
async function plan(deps: DriftDeps, snap: Snapshot) {
  const { fresh, pdbs } = await freshSnapshot(deps, snap);
  return planOn(deps, fresh, pdbs);
}

function planOn(deps: DriftDeps, fresh: Snapshot, pdbs: DisruptionBudgetView[]) {
  const { ours, others } = clusterNodes(fresh);
  const disrupting = disruptingByPool(fresh, ours);
  const result = planSingleNodeConsolidation({
    now: deps.clock(),
    nodes: ours,
    otherNodes: others,
    nodePools: deps.nodePools,
    instanceTypes: fresh.types.byNodePool,
    daemonSets: fresh.daemonSets,
    disrupting,
    pdbs,
    isEvictable: deps.isEvictable,
    nodePoolUsage: usageOf(fresh, disrupting),
  });
  return { fresh, ours, disrupting, result };
}

function summary(command: ConsolidationCommand): NonNullable<ConsolidationOutcome['command']> {
  return {
    kind: command.kind,
    node: command.candidate.nodeName,
    savingsPerHour: command.savings,
    ...(command.kind === 'replace' ? { replacement: command.replacement.offering.instanceType } : {}),
  };
}

/** Why the re-validated plan no longer supports the first command, or undefined when it does. */
function invalidated(first: ConsolidationCommand, again: ConsolidationPlan): string | undefined {
  const node = first.candidate.nodeName;
  const command = again.command;
  if (command?.candidate.nodeName === node && command.kind === first.kind) return undefined;
  if (command) return `the plan now chooses to ${command.kind} ${command.candidate.nodeName} instead`;
  const why = again.considered.find((c) => c.nodeName === node)?.outcome;
  return why ? `no longer a candidate: ${why}` : 'no longer a candidate';
}

/** The command as the drift machine's decision: reason Underutilized, the replacement or none. */
function asDecision(command: ConsolidationCommand, detail: string, pods: Pod[]): CandidateDecision {
  const { candidate } = command;
  const nodeClaims = command.kind === 'replace' ? [command.replacement] : [];
  return {
    candidate: {
      nodeName: candidate.nodeName,
      instanceId: candidate.instanceId,
      nodePool: candidate.nodePool,
      instanceType: candidate.instanceType,
      zone: candidate.zone,
      capacityType: candidate.capacityType,
      reason: 'Underutilized',
      detail,
      pods,
    },
    allowed: true,
    budget: { allowed: true, message: 'within the Underutilized budgets (slot taken when it starts)' },
    replacement: {
      nodeClaims,
      elsewhere: command.kind === 'delete' ? command.elsewhere : {},
      unschedulable: [],
      totalPrice: nodeClaims.reduce((sum, c) => sum + c.offering.price, 0),
    },
  };
}

function skip(deps: DriftDeps, report: DriftReport): string | undefined {
  if (!consolidates(deps)) return 'no NodePool has consolidationPolicy WhenEmptyOrUnderutilized';
  if (report.started.length > 0) {
    return 'a drift or expiration started in this run (the first disruption method that acts ends the run)';
  }
  return undefined;
}

/**
 * One single-node consolidation after drift: plan, wait the validation delay, plan again on a fresh
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
    const first = await plan(deps, snap);
    outcome.considered = first.result.considered;
    const command = first.result.command;
    if (!command) return outcome;
    outcome.command = summary(command);
    if (report.abandoned.some((a) => a.node === command.candidate.nodeName)) {
      // Its replacement just failed to register: starting again at once would only repeat that.
      outcome.dropped = 'its disruption was abandoned in this run; the next run may try again';
      return outcome;
    }
    await deps.sleep?.(CONSOLIDATION_VALIDATION_DELAY_MS);
    const again = await plan(deps, snap);
    outcome.considered = again.result.considered;
    const why = invalidated(command, again.result);
    const valid = again.result.command;
    if (why || !valid) {
      outcome.dropped = why ?? 'no longer a candidate';
      deps.log.info('consolidation dropped on validation', { node: command.candidate.nodeName, why: outcome.dropped });
      return outcome;
    }
    outcome.command = summary(valid);
    const detail = again.result.considered.find((c) => c.nodeName === valid.candidate.nodeName)?.outcome ?? '';
    await startDisruption(deps, again.fresh, again, asDecision(valid, detail, valid.candidate.pods), report);
    outcome.started = report.started.some((s) => s.node === valid.candidate.nodeName);
    if (!outcome.started) {
      outcome.dropped =
        report.blocked.find((b) => b.node === valid.candidate.nodeName)?.message ?? 'its node or NodePool is gone';
    }
  } catch (error) {
    outcome.dropped = errorMessage(error);
    deps.log.error('consolidation failed, will retry', { error: errorMessage(error) });
  }
  return outcome;
}
