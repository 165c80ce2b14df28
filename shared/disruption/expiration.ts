// Expiration and the drain deadline (CORE nodeclaim/expiration, node/termination): a node older than
// its expireAfter is replaced whatever the budgets say, and terminationGracePeriod bounds how long its
// drain may wait on PodDisruptionBudgets and do-not-disrupt pods.
//
// Both are read from the NodeClaim record, fixed when the claim was created, never from today's
// NodePool: shortening expireAfter does not expire every older node at once. It changes the
// NodePool's hash, so those nodes drift and roll within the disruption budgets, as upstream.
// A node without a record (launched before records existed, not yet backfilled) falls back to
// today's NodePool only while its launch-time NodePool hash says the template is unchanged.

import { parseDurationSeconds } from '../apis/duration';
import { DEFAULT_EXPIRE_AFTER } from '../apis/v1/defaults';
import type { NodePool } from '../apis/v1/types';
import { NODEPOOL_HASH_TAG, NODEPOOL_HASH_VERSION, NODEPOOL_HASH_VERSION_TAG, nodePoolHash } from './hash';

/** What expiration reads of a NodeClaim record (shared/nodeclaim/record.ts NodeClaimRecord fits it). */
export interface ExpiringClaim {
  metadata: { creationTimestamp: string };
  spec: { expireAfter: string; terminationGracePeriod?: string };
}

/** When a node expires, and from what. */
export interface Expiry {
  /** Epoch ms. */
  at: number;
  expireAfter: string;
  /** Epoch ms the duration counts from: the claim's creation, or the instance's launch. */
  since: number;
  source: 'NodeClaim' | 'NodePool';
}

function durationMs(value: string | undefined): number | undefined {
  if (value === undefined || value === 'Never') return undefined;
  const seconds = parseDurationSeconds(value);
  return seconds === undefined ? undefined : seconds * 1000;
}

/** Epoch ms at which a node launched at `launchTime` expires by its NodePool; undefined for `Never` or an unreadable value. */
export function expiresAt(nodePool: NodePool, launchTime: number): number | undefined {
  const ms = durationMs(nodePool.spec.template.spec.expireAfter ?? DEFAULT_EXPIRE_AFTER);
  return ms === undefined ? undefined : launchTime + ms;
}

/** The NodePool's template changed since the node launched (its hash tag, compared at today's hash version). */
function templateChanged(nodePool: NodePool, hashTags: Record<string, string> | undefined): boolean {
  const launched = hashTags?.[NODEPOOL_HASH_TAG];
  if (launched === undefined || hashTags?.[NODEPOOL_HASH_VERSION_TAG] !== NODEPOOL_HASH_VERSION) return false;
  return launched !== nodePoolHash(nodePool);
}

export interface ExpiryInput {
  /** The node's NodeClaim record, when it has one. */
  claim?: ExpiringClaim;
  /** Today's NodePool: the fallback for a node without a record. */
  nodePool: NodePool;
  /** Epoch ms the instance launched. */
  launchTime?: number;
  /** The hash tags the instance was launched with. */
  hashTags?: Record<string, string>;
}

/**
 * When the node expires: the record's creation + its expireAfter. Without a record, today's
 * NodePool's expireAfter from the launch, unless the template changed since (its expireAfter then
 * is not the one the node launched with; the NodePool drift replaces the node within budget).
 */
export function expiryOf(input: ExpiryInput): Expiry | undefined {
  if (input.claim) {
    const since = Date.parse(input.claim.metadata.creationTimestamp);
    const ms = durationMs(input.claim.spec.expireAfter);
    if (ms === undefined || !Number.isFinite(since)) return undefined;
    return { at: since + ms, expireAfter: input.claim.spec.expireAfter, since, source: 'NodeClaim' };
  }
  if (input.launchTime === undefined || templateChanged(input.nodePool, input.hashTags)) return undefined;
  const at = expiresAt(input.nodePool, input.launchTime);
  if (at === undefined) return undefined;
  const expireAfter = input.nodePool.spec.template.spec.expireAfter ?? DEFAULT_EXPIRE_AFTER;
  return { at, expireAfter, since: input.launchTime, source: 'NodePool' };
}

export function isExpired(nodePool: NodePool, launchTime: number | undefined, now: number): boolean {
  if (launchTime === undefined) return false;
  const at = expiresAt(nodePool, launchTime);
  return at !== undefined && now >= at;
}

/** The pool's terminationGracePeriod in ms; undefined means the drain waits as long as it takes. */
export function terminationGracePeriodMs(nodePool: NodePool): number | undefined {
  return durationMs(nodePool.spec.template.spec.terminationGracePeriod);
}

/** The claim's terminationGracePeriod as it was launched with; today's NodePool's for a node without a record. */
export function claimTerminationGracePeriodMs(
  claim: ExpiringClaim | undefined,
  nodePool: NodePool | undefined,
): number | undefined {
  if (claim) return durationMs(claim.spec.terminationGracePeriod);
  return nodePool ? terminationGracePeriodMs(nodePool) : undefined;
}
