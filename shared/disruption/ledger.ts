// The budget ledger across invocations: a node may start disrupting only after it took a slot of its
// NodePool's ledger (StateLedgers.reserveDisruption, a conditional write), so two invocations that
// both read "one slot left" cannot both act. Nodes disrupted without a slot (being deleted by hand,
// interrupted, or whose slot outlived its TTL) still count: they shrink the limit the slot is taken
// under.

import type { StateLedgers } from '../providers/state';
import { BUDGET_LEDGER_KEY, type BudgetLimit } from './types';

/** A slot outlives the longest replacement we wait for; a node still disrupting after it counts by its record. */
export const BUDGET_SLOT_TTL_MS = 6 * 60 * 60 * 1000;

export type BudgetLedger = Pick<StateLedgers, 'reserveDisruption' | 'releaseDisruption' | 'disruptions'>;

/** The pool's nodes being disrupted now: the ledger's holders plus those the caller saw disrupting. */
export async function disruptingNodes(
  ledger: BudgetLedger,
  nodePool: string,
  seenDisrupting: Iterable<string>,
): Promise<{ holders: Set<string>; all: Set<string> }> {
  const holders = new Set(await ledger.disruptions(nodePool, BUDGET_LEDGER_KEY));
  return { holders, all: new Set([...holders, ...seenDisrupting]) };
}

/**
 * Takes a slot for `nodeName` under the limit; true when the node may start disrupting. The slot's
 * cap is the budget's limit less the nodes disrupting without one, so the two together never
 * exceed the budget.
 */
export async function reserveBudgetSlot(
  ledger: BudgetLedger,
  limit: Pick<BudgetLimit, 'nodePool' | 'limit'>,
  nodeName: string,
  seenDisrupting: Iterable<string>,
  ttlMs = BUDGET_SLOT_TTL_MS,
): Promise<boolean> {
  const { holders, all } = await disruptingNodes(ledger, limit.nodePool, seenDisrupting);
  if (holders.has(nodeName)) return true;
  const withoutSlot = [...all].filter((n) => !holders.has(n) && n !== nodeName).length;
  const cap = limit.limit - withoutSlot;
  if (cap <= 0) return false;
  return ledger.reserveDisruption(limit.nodePool, BUDGET_LEDGER_KEY, cap, nodeName, ttlMs);
}

/** Gives the node's slot back (its drain began the termination flow, or the disruption was abandoned). */
export async function releaseBudgetSlot(ledger: BudgetLedger, nodePool: string, nodeName: string): Promise<void> {
  await ledger.releaseDisruption(nodePool, BUDGET_LEDGER_KEY, nodeName);
}
