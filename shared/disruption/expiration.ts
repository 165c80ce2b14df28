// Expiration and the drain deadline (CORE nodeclaim/expiration, node/termination): a node older than
// its NodePool's expireAfter is replaced whatever the budgets say, and terminationGracePeriod bounds
// how long its drain may wait on PodDisruptionBudgets and do-not-disrupt pods.
//
// Karpenter reads both from the NodeClaim, fixed when it was created; karpless has no NodeClaim
// objects, so it reads today's NodePool: shortening expireAfter applies to running nodes too.

import { parseDurationSeconds } from '../apis/duration';
import { DEFAULT_EXPIRE_AFTER } from '../apis/v1/defaults';
import type { NodePool } from '../apis/v1/types';

/** Epoch ms at which a node launched at `launchTime` expires; undefined for `Never` or an unreadable value. */
export function expiresAt(nodePool: NodePool, launchTime: number): number | undefined {
  const expireAfter = nodePool.spec.template.spec.expireAfter ?? DEFAULT_EXPIRE_AFTER;
  if (expireAfter === 'Never') return undefined;
  const seconds = parseDurationSeconds(expireAfter);
  return seconds === undefined ? undefined : launchTime + seconds * 1000;
}

export function isExpired(nodePool: NodePool, launchTime: number | undefined, now: number): boolean {
  if (launchTime === undefined) return false;
  const at = expiresAt(nodePool, launchTime);
  return at !== undefined && now >= at;
}

/** The pool's terminationGracePeriod in ms; undefined means the drain waits as long as it takes. */
export function terminationGracePeriodMs(nodePool: NodePool): number | undefined {
  const grace = nodePool.spec.template.spec.terminationGracePeriod;
  const seconds = grace === undefined ? undefined : parseDurationSeconds(grace);
  return seconds === undefined ? undefined : seconds * 1000;
}
