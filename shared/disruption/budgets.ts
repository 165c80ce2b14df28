// NodePool disruption budgets (CORE pkg/apis/v1/nodepool.go GetAllowedDisruptionsByReason): how
// many of a pool's nodes may be disrupted at once for a reason. Pure: the caller passes the pool's
// node count, the nodes already being disrupted and the time.
//
// - `nodes` is a count or a percentage of the pool's nodes, rounded up ("10%" of 5 nodes = 1).
// - A budget with `schedule` (cron, UTC) and `duration` is active in `[hit, hit + duration)` for each
//   cron hit; without both it is always active.
// - A budget with `reasons` governs only those; without the field, all of them; with `reasons: []`,
//   none (upstream tests `budget.Reasons == nil`, so an empty list matches no reason).
// - The pool's size is its initialized nodes of ours that are not terminating; NotReady, deleting
//   and disrupting ones among them use up the budget (BuildDisruptionBudgetMapping).
// - The limit is the minimum over the active budgets that apply; none active means no limit.
// - A budget that cannot be read fails closed (0): a typo must not let a whole pool roll at once.

import { parseDurationSeconds } from '../apis/duration';
import { type CronSchedule, parseCron } from '../apis/v1/cron';
import { DEFAULT_BUDGET_NODES } from '../apis/v1/defaults';
import type { Budget, DisruptionReason, NodePool } from '../apis/v1/types';
import type { BudgetDecision, BudgetEvaluation, BudgetLimit } from './types';
import { UNLIMITED } from './types';

const MINUTE_MS = 60_000;
const NODES_PATTERN = /^((100|[0-9]{1,2})%|[0-9]+)$/;

/** The pool's budgets as the CRD defaults them: `[{nodes: 10%}]` when unset. */
export function budgetsOf(nodePool: NodePool): Budget[] {
  const budgets = nodePool.spec.disruption?.budgets;
  if (!budgets) return [{ nodes: DEFAULT_BUDGET_NODES }];
  return budgets.map((b) => ({ ...b, nodes: b.nodes ?? DEFAULT_BUDGET_NODES }));
}

/** `nodes` against the pool size (percentages rounded up), or undefined when it is not a count or percentage. */
export function resolveBudgetNodes(nodes: string, poolNodes: number): number | undefined {
  if (!NODES_PATTERN.test(nodes)) return undefined;
  if (!nodes.endsWith('%')) return Number(nodes);
  return Math.ceil((Number(nodes.slice(0, -1)) * poolNodes) / 100);
}

function dayMatches(schedule: CronSchedule, date: Date): boolean {
  const dom = schedule.daysOfMonth.has(date.getUTCDate());
  const dow = schedule.daysOfWeek.has(date.getUTCDay());
  // robfig/cron: a starred day field defers to the other; two restricted ones match on either.
  if (!schedule.daysOfMonthRestricted || !schedule.daysOfWeekRestricted) return dom && dow;
  return dom || dow;
}

/**
 * The latest minute in `(after, atOrBefore]` the schedule fires at, or undefined. Walks backwards
 * and skips whole months, days and hours that cannot match, so a 30-day window costs little.
 */
export function lastCronHit(schedule: CronSchedule, atOrBefore: number, after: number): number | undefined {
  let t = Math.floor(atOrBefore / MINUTE_MS) * MINUTE_MS;
  while (t > after) {
    const d = new Date(t);
    if (!schedule.months.has(d.getUTCMonth() + 1)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) - MINUTE_MS;
    } else if (!dayMatches(schedule, d)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - MINUTE_MS;
    } else if (!schedule.hours.has(d.getUTCHours())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours()) - MINUTE_MS;
    } else if (!schedule.minutes.has(d.getUTCMinutes())) {
      t -= MINUTE_MS;
    } else {
      return t;
    }
  }
  return undefined;
}

type Activity = { active: boolean; error?: undefined } | { active: false; error: string };

/** Whether the budget's window is open at `now` (Karpenter: the next hit after now − duration is not after now). */
export function budgetActive(budget: Budget, now: number): Activity {
  if (budget.schedule === undefined && budget.duration === undefined) return { active: true };
  if (budget.schedule === undefined || budget.duration === undefined) {
    return { active: false, error: "'schedule' must be set with 'duration'" };
  }
  const parsed = parseCron(budget.schedule);
  if (!parsed.ok) return { active: false, error: `schedule "${budget.schedule}": ${parsed.error}` };
  const seconds = parseDurationSeconds(budget.duration);
  if (seconds === undefined) return { active: false, error: `duration "${budget.duration}" is not a duration` };
  return { active: lastCronHit(parsed.schedule, now, now - seconds * 1000) !== undefined };
}

/** One budget's answer for one reason at `now`. */
export function evaluateBudget(
  budget: Budget,
  index: number,
  reason: DisruptionReason,
  poolNodes: number,
  now: number,
): BudgetEvaluation {
  const applies = budget.reasons === undefined || budget.reasons.includes(reason);
  const base = { index, budget, applies };
  const nodes = resolveBudgetNodes(budget.nodes, poolNodes);
  const activity = budgetActive(budget, now);
  const error =
    nodes === undefined ? `nodes "${budget.nodes}" is neither a count nor a percentage (e.g. 1, 10%)` : activity.error;
  if (error !== undefined) return { ...base, active: false, limit: applies ? 0 : UNLIMITED, error };
  if (!applies || !activity.active) return { ...base, active: activity.active, limit: UNLIMITED };
  return { ...base, active: true, limit: nodes ?? 0 };
}

/** The budgets of a pool for a reason: the lowest limit among the active ones that apply. */
export function budgetLimit(
  nodePool: NodePool,
  reason: DisruptionReason,
  at: { nodes: number; now: number },
): BudgetLimit {
  const budgets = budgetsOf(nodePool).map((b, i) => evaluateBudget(b, i, reason, at.nodes, at.now));
  let binding: BudgetEvaluation | undefined;
  for (const evaluation of budgets) {
    if (evaluation.limit === UNLIMITED) continue;
    if (!binding || evaluation.limit < binding.limit) binding = evaluation;
  }
  return {
    nodePool: nodePool.metadata.name,
    reason,
    nodes: at.nodes,
    limit: binding?.limit ?? UNLIMITED,
    ...(binding ? { binding } : {}),
    budgets,
  };
}

/** One node of a pool as the budgets count it. */
export interface BudgetMember {
  name: string;
  nodePool: string;
  /** Registered and initialized (karpenter.sh/initialized): uninitialized nodes are neither counted nor counted against. */
  initialized: boolean;
  /** The Node's Ready condition is False or Unknown. */
  notReady: boolean;
  /** Being deleted, or held by a disruption (record, drain, ledger slot). */
  disrupting: boolean;
}

export interface PoolBudgetCount {
  /** What percentages resolve against: the initialized nodes. */
  nodes: number;
  /** Initialized nodes that use up the budget: NotReady, deleting or disrupting. */
  disrupting: Set<string>;
}

/** Per NodePool, the size budgets resolve against and the nodes using them up now. */
export function budgetCounts(members: Iterable<BudgetMember>): Map<string, PoolBudgetCount> {
  const out = new Map<string, PoolBudgetCount>();
  for (const m of members) {
    if (!m.initialized) continue;
    const count = out.get(m.nodePool) ?? { nodes: 0, disrupting: new Set<string>() };
    out.set(m.nodePool, count);
    count.nodes++;
    if (m.notReady || m.disrupting) count.disrupting.add(m.name);
  }
  return out;
}

/** Further nodes that may start disrupting: the limit minus those already being disrupted, never negative. */
export function allowedDisruptions(limit: BudgetLimit, disrupting: number): number {
  return Math.max(0, limit.limit - disrupting);
}

/** `budgets[1] (nodes: 0, schedule "0 9 * * mon-fri" for 8h, reasons Drifted)`. */
export function describeBudget(evaluation: Pick<BudgetEvaluation, 'index' | 'budget'>): string {
  const { budget } = evaluation;
  const parts = [`nodes: ${budget.nodes}`];
  if (budget.schedule !== undefined) parts.push(`schedule "${budget.schedule}" for ${budget.duration ?? '?'}`);
  if (budget.reasons) parts.push(budget.reasons.length > 0 ? `reasons ${budget.reasons.join(',')}` : 'reasons none');
  return `budgets[${evaluation.index}] (${parts.join(', ')})`;
}

/**
 * May one more node start disrupting? The message names the budget that decides and the numbers it
 * decided with, so a user can tell which budget holds a rollout back.
 */
export function budgetDecision(limit: BudgetLimit, disrupting: number): BudgetDecision {
  const pool = `NodePool/${limit.nodePool}`;
  const binding = limit.binding;
  if (!binding) {
    return { allowed: true, message: `${pool}: no active budget limits ${limit.reason} disruptions` };
  }
  const name = describeBudget(binding);
  if (binding.error !== undefined) {
    return {
      allowed: false,
      budgetIndex: binding.index,
      message: `${pool} ${name} is invalid (${binding.error}) and blocks every ${limit.reason} disruption until fixed`,
    };
  }
  const allowed = allowedDisruptions(limit, disrupting) > 0;
  const counts = `${binding.limit} of ${limit.nodes} node(s) at once, ${disrupting} already disrupting`;
  return {
    allowed,
    budgetIndex: binding.index,
    message: `${pool} ${name} ${allowed ? 'allows' : 'blocks'}: ${counts}`,
  };
}
