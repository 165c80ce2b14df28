// The per-pool disruption gauges of a drift run (shared/disruption/gauges.ts), put as metrics for
// the dashboard's "Eligible nodes" and "Allowed disruptions" graphs.

import { METRIC } from '../contracts';
import { disruptionGauges } from '../disruption/gauges';
import { budgetMembers } from '../disruption/plan';
import type { DriftDeps, DriftReport, PlannedRun } from './drift';

export function publishGauges(
  deps: Pick<DriftDeps, 'clock' | 'nodePools' | 'metrics'>,
  run: Pick<PlannedRun, 'plan' | 'ours' | 'disrupting'>,
  report: Pick<DriftReport, 'consolidation'>,
): void {
  const gauges = disruptionGauges({
    now: deps.clock(),
    nodePools: deps.nodePools,
    members: budgetMembers(run.ours, run.disrupting),
    eligible: [
      ...run.plan.decisions.map((d) => ({ nodePool: d.candidate.nodePool, reason: d.candidate.reason })),
      ...(report.consolidation?.eligible ?? []),
    ],
  });
  for (const g of gauges) {
    const dimensions = { nodePool: g.nodePool, reason: g.reason };
    deps.metrics.record(METRIC.eligibleNodes, 'Count', g.eligible, dimensions);
    if (g.allowed !== undefined) deps.metrics.record(METRIC.allowedDisruptions, 'Count', g.allowed, dimensions);
  }
}
