// What the drift function's run publishes per NodePool and reason after deciding (upstream's
// karpenter_voluntary_disruption_eligible_nodes and karpenter_nodepools_allowed_disruptions gauges),
// so the dashboard shows why a pool is or is not rolling. Pure: the run hands in what it planned.

import type { NodePool } from '../apis/v1/types';
import { allowedDisruptions, type BudgetMember, budgetCounts, budgetLimit } from './budgets';
import { BUDGET_REASONS, type DisruptionCause } from './types';

export interface PoolGauge {
  nodePool: string;
  reason: DisruptionCause;
  /** Candidates for the reason this run (before budgets). */
  eligible: number;
  /**
   * Further nodes the budgets let start disrupting for the reason now; never more than the pool's
   * initialized nodes (no active budget is upstream's MaxInt32, which would flatten the graph).
   * Absent for Expired, which no budget limits.
   */
  allowed?: number;
}

export function disruptionGauges(input: {
  now: number;
  nodePools: readonly NodePool[];
  members: readonly BudgetMember[];
  eligible: readonly { nodePool: string; reason: DisruptionCause }[];
}): PoolGauge[] {
  const counts = budgetCounts(input.members);
  const out: PoolGauge[] = [];
  for (const pool of input.nodePools) {
    const name = pool.metadata.name;
    const count = counts.get(name) ?? { nodes: 0, disrupting: new Set<string>() };
    const eligible = (reason: DisruptionCause) =>
      input.eligible.filter((e) => e.nodePool === name && e.reason === reason).length;
    for (const reason of BUDGET_REASONS) {
      const limit = budgetLimit(pool, reason, { nodes: count.nodes, now: input.now });
      const allowed = Math.min(allowedDisruptions(limit, count.disrupting.size), count.nodes);
      out.push({ nodePool: name, reason, eligible: eligible(reason), allowed });
    }
    out.push({ nodePool: name, reason: 'Expired', eligible: eligible('Expired') });
  }
  return out;
}
