// Names of the disruption core (Karpenter's pkg/controllers/disruption): why a node would be
// disrupted, and what a NodePool's budgets say about it. Shared by drift and expiration (this
// package), emptiness (the gc function), consolidation (the drift function), and the `karpless disruption` dry run.

import type { Budget, DisruptionReason } from '../apis/v1/types';

export type { DisruptionReason };

/** The reasons budgets govern, in the order Karpenter lists them. */
export const BUDGET_REASONS: readonly DisruptionReason[] = ['Drifted', 'Empty', 'Underutilized'];

/** Expiration is forceful: budgets never block it (nor interruption, repair or manual deletion). */
export type ForcefulReason = 'Expired';

/** Every reason a node may be disrupted for. */
export type DisruptionCause = DisruptionReason | ForcefulReason;

/**
 * Karpenter's answer for an inactive budget (math.MaxInt32): "no limit". A finite number so that it
 * survives JSON and the state table's numeric limits.
 */
export const UNLIMITED = 2_147_483_647;

/**
 * The one ledger key every disruption of a NodePool reserves under (StateLedgers.reserveDisruption):
 * Karpenter counts all nodes being disrupted against each reason's budget, so drift, emptiness and
 * consolidation share one set of holders and only the limit they pass differs.
 */
export const BUDGET_LEDGER_KEY = 'disrupting';

/** What one budget of a NodePool says at one instant, for one reason. */
export interface BudgetEvaluation {
  /** Index in spec.disruption.budgets (the defaulted list: `[{nodes: 10%}]` when unset). */
  index: number;
  budget: Budget;
  /** The budget lists the reason, or lists none (it applies to all). */
  applies: boolean;
  /** No schedule, or now falls in a window `[cron hit, cron hit + duration)`. */
  active: boolean;
  /** Nodes this budget allows disrupted at once: `nodes` resolved against the pool size; UNLIMITED when inactive or not applicable; 0 when invalid. */
  limit: number;
  /** Why the budget fails closed (bad `nodes`, cron or duration). */
  error?: string;
}

/** The budgets of one NodePool for one reason: the minimum over the active, applicable budgets. */
export interface BudgetLimit {
  nodePool: string;
  reason: DisruptionReason;
  /** Nodes of the pool percentages were resolved against. */
  nodes: number;
  /** Nodes allowed disrupted at once (before subtracting those already being disrupted). */
  limit: number;
  /** The budget that sets the limit (the lowest; the first of equals); absent when none is active. */
  binding?: BudgetEvaluation;
  budgets: BudgetEvaluation[];
}

/** The budget decision for one candidate node. */
export interface BudgetDecision {
  allowed: boolean;
  /** Human text naming the budget that allows or blocks, e.g. `budgets[0] (nodes: 10%) allows 1 of 5 nodes, 0 disrupting`. */
  message: string;
  /** Index of the budget that blocks (or binds), when one does. */
  budgetIndex?: number;
}
