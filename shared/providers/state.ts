// The state table as a port. Short-lived state that must outlive one Lambda invocation lives in one
// DynamoDB table with a TTL attribute (see shared/contracts STATE_TABLE); EC2 tags stay the source
// of truth for claims. DynamoStateStore (shared/providers/dynamostate.ts) implements it with
// conditional writes; InMemoryStateStore serves unit tests and the CLI.

import type { CapacityType } from '../instancetypes/types';
import type { NodeClaimRecord } from '../nodeclaim/record';

/** Pods nominated to one in-flight NodeClaim, until its node registers or the TTL passes. */
export interface Nomination {
  nodeClaimName: string;
  nodePool: string;
  podUids: string[];
  /** Epoch ms after which the nomination no longer counts. */
  expiresAt: number;
}

/**
 * Progress of one node's termination (shared/runtime/termination.ts), so the next invocation resumes
 * where this one stopped. Every step re-reads the node, its pods and its instance, so the record
 * only keeps what cannot be read back: why, the deadline, and the eviction backoff.
 */
export interface DrainRecord {
  nodeName: string;
  instanceId: string;
  /** The claim whose record was marked for deletion, when it has one. */
  nodeClaimName?: string;
  /** Why the node is leaving: 'deletion', 'SpotInterruption', 'Drifted', … */
  reason: string;
  /** cordoned: not stepped yet; draining: pods or volumes awaited; terminating: instance going; done: legacy. */
  phase: 'cordoned' | 'draining' | 'terminating' | 'done';
  startedAt: number;
  /**
   * Epoch ms by which every pod is deleted: the claim's deletionTimestamp plus its
   * terminationGracePeriod; NO_DEADLINE (shared/termination/plan.ts) without one.
   */
  deadline: number;
  /** namespace/name → PodDisruptionBudget refusals so far and when to try that pod again. */
  evictionBackoff?: Record<string, { attempts: number; retryAt: number }>;
  expiresAt: number;
}

/**
 * One node being disrupted (drift, expiration, emptiness, consolidation), from the decision until its
 * drain started: the replacements launched first, so a later invocation can wait for them to register
 * before the node drains, and a redelivered event finds the work already begun.
 */
export interface DisruptionRecord {
  nodeName: string;
  instanceId: string;
  nodePool: string;
  /** 'Drifted', 'Expired', 'Empty', 'Underutilized'. */
  reason: string;
  /** What made the node a candidate, for logs and the dry run ("AMIDrift: ami-1 → ami-2"). */
  detail: string;
  /** NodeClaims launched to take the node's pods; empty when the pods fit elsewhere. */
  replacements: string[];
  /** replacing: waiting for the replacements to register; draining: handed to the termination flow. */
  phase: 'replacing' | 'draining';
  startedAt: number;
  expiresAt: number;
}

/**
 * Pods one provision decision could place nowhere, with the reasons it gives (the text `karpless plan`
 * prints), until expiresAt: the watcher records them as FailedScheduling events on the pods.
 */
export interface UnschedulableRecord {
  /** Unique per decision and reason set (the store derives its key from it). */
  decision: string;
  reasons: string[];
  podUids: string[];
  expiresAt: number;
}

export interface UnschedulableState {
  /** Writes the record (pods split over several items where one would be too large). */
  recordUnschedulable(record: UnschedulableRecord): Promise<void>;
  /** Live records (not expired). */
  unschedulable(): Promise<UnschedulableRecord[]>;
}

/**
 * A part of a split PodsUnschedulable notice, kept until the other parts of its observation arrive
 * so the observation is planned whole (shared/runtime/notice-parts.ts).
 */
export interface NoticePartRecord {
  batchId: string;
  index: number;
  count: number;
  /** The part's detail as JSON (a notice entry is at most 256 KiB: it fits one item). */
  detail: string;
  /** Epoch ms the first kept part of its observation arrived: the wait for the others counts from it. */
  receivedAt: number;
  expiresAt: number;
}

export interface NoticePartState {
  putNoticePart(part: NoticePartRecord): Promise<void>;
  /** Live kept parts of every observation (not expired). */
  noticeParts(): Promise<NoticePartRecord[]>;
  deleteNoticeParts(batchId: string, indexes: readonly number[]): Promise<void>;
}

export interface PriceSnapshot {
  /** 'bundled', 'pricing-api', 'spot-price-history', or a combination joined by '+'. */
  source: string;
  fetchedAt: number;
  onDemand: Record<string, number>;
  /** "instanceType:zone" → USD/hour. */
  spot: Record<string, number>;
  /** When a refresh was last tried (epoch ms), successful or not; absent means fetchedAt. */
  attemptedAt?: number;
  /** What failed in the last refresh (the prices it could not fetch were kept from before). */
  errors?: string[];
}

export interface StateStore {
  /**
   * Records the nomination only if none of its pods is nominated to another live claim; returns
   * false (and writes nothing) when another invocation got there first.
   */
  nominate(nomination: Nomination): Promise<boolean>;
  /** Live nominations (not expired). */
  nominations(): Promise<Nomination[]>;
  /** Drops a claim's nomination (its node registered, or its launch failed). */
  releaseNomination(nodeClaimName: string): Promise<void>;

  /**
   * First writer wins: true when `key` was not yet recorded (the caller acts), false on a repeat.
   * The record lives for `ttlMs`.
   */
  claimOnce(key: string, ttlMs: number): Promise<boolean>;

  isOfferingUnavailable(capacityType: CapacityType, instanceType: string, zone: string): Promise<boolean>;
  markOfferingUnavailable(
    capacityType: CapacityType,
    instanceType: string,
    zone: string,
    reason: string,
    ttlMs: number,
  ): Promise<void>;

  getDrain(nodeName: string): Promise<DrainRecord | undefined>;
  putDrain(record: DrainRecord): Promise<void>;
  deleteDrain(nodeName: string): Promise<void>;
  drains(): Promise<DrainRecord[]>;

  getPrices(region: string): Promise<PriceSnapshot | undefined>;
  putPrices(region: string, snapshot: PriceSnapshot): Promise<void>;
}

/** One entry of the unavailable-offerings (ICE) cache. */
export interface UnavailableOfferingRecord {
  /**
   * Set on an entry that covers a whole scope (a capacity type, a subnet, a reservation: see
   * scopeKey in unavailableofferings.ts) instead of one offering; capacityType, instanceType and
   * zone are then empty.
   */
  scope?: string;
  capacityType: CapacityType;
  instanceType: string;
  zone: string;
  reason: string;
  /** Epoch ms. */
  expiresAt: number;
}

/**
 * What DynamoStateStore and InMemoryStateStore offer beyond StateStore. Kept apart so that code (and
 * test fakes) written against StateStore alone keep compiling.
 */
export interface StateLedgers {
  /** Every live entry of the ICE cache, offerings and scopes: one read instead of one per offering. */
  unavailableOfferings(): Promise<UnavailableOfferingRecord[]>;
  /** Marks a whole scope (scopeKey) unavailable for `ttlMs`. */
  markScopeUnavailable(scope: string, reason: string, ttlMs: number): Promise<void>;
  /**
   * Takes one of `limit` slots of a disruption budget (`budgetKey`, e.g. a budget's index or
   * reason) of `nodePool` for `nodeName`, for `ttlMs`; true when the node holds a slot afterwards
   * (also when it held one already), false when the budget is used up. Conditional writes keep two
   * invocations from taking the last slot twice.
   */
  reserveDisruption(
    nodePool: string,
    budgetKey: string,
    limit: number,
    nodeName: string,
    ttlMs: number,
  ): Promise<boolean>;
  /** Gives the node's slot back (its disruption finished or was abandoned). */
  releaseDisruption(nodePool: string, budgetKey: string, nodeName: string): Promise<void>;
  /** Nodes holding a live slot of the budget, sorted. */
  disruptions(nodePool: string, budgetKey: string): Promise<string[]>;

  /** Writes (or overwrites) the node's disruption record. */
  putDisruption(record: DisruptionRecord): Promise<void>;
  /** Live disruption records, sorted by node name. */
  disruptionRecords(): Promise<DisruptionRecord[]>;
  deleteDisruption(nodeName: string): Promise<void>;

  /**
   * Remembers instances seen with a registered Node (garbage collection), for `ttlMs`: an instance
   * among them that has no Node any more lost it, instead of never having registered.
   */
  rememberRegistered(instanceIds: readonly string[], ttlMs: number): Promise<void>;
  /** The remembered instance ids (live records only), sorted. */
  registeredInstances(): Promise<string[]>;
  forgetRegistered(instanceIds: readonly string[]): Promise<void>;
}

/**
 * The NodeClaim records (shared/nodeclaim/record.ts), one per claim, durable (no TTL): written before
 * CreateFleet, deleted once the claim's instance is gone. Writes are conditional: a create only lands
 * when no record of that name exists, an update only when the record still has the resourceVersion
 * the caller read, so two invocations acting on one claim never overwrite each other.
 */
export interface NodeClaimStore {
  getNodeClaim(name: string): Promise<NodeClaimRecord | undefined>;
  /** Every record, or those of one NodePool (`karpenter.sh/nodepool` label), sorted by name. */
  nodeClaims(filter?: { nodePool?: string }): Promise<NodeClaimRecord[]>;
  /**
   * First writer wins: the stored record (with its resourceVersion) when none of that name existed,
   * undefined when one did (read it with getNodeClaim).
   */
  createNodeClaim(record: NodeClaimRecord): Promise<NodeClaimRecord | undefined>;
  /**
   * Writes the record if the stored one still carries `record.metadata.resourceVersion`: the stored
   * record with its new resourceVersion, or undefined when it changed or is gone since it was read.
   */
  updateNodeClaim(record: NodeClaimRecord): Promise<NodeClaimRecord | undefined>;
  /**
   * Sets deletionTimestamp (kept when already set), retrying over concurrent updates; the stored
   * record, or undefined when there is none.
   */
  markNodeClaimForDeletion(name: string): Promise<NodeClaimRecord | undefined>;
  deleteNodeClaim(name: string): Promise<void>;
}

/**
 * The last valid version of a NodePool or EC2NodeClass read from the cluster (configuration from the
 * cluster): what serves in its place while the object in the cluster fails validation, also in a
 * function instance started after the object went bad. One item per object (kind and name); the uid
 * and generation say which object and which of its versions it is.
 */
export interface ValidVersionRecord {
  kind: 'NodePool' | 'EC2NodeClass';
  name: string;
  uid: string;
  generation: number;
  /** The validated object, defaults applied: what serves. */
  object: unknown;
  /**
   * Epoch ms after which the version is gone (the table's TTL): the readers of the cluster move it
   * later while the object exists, so it expires only once the object is gone for that long.
   */
  expiresAt: number;
}

export interface ValidVersionStore {
  /**
   * Stores the version unless the stored one is of the same object (uid) and as new or newer
   * (generation): an instance that read the cluster earlier never overwrites a newer valid version.
   * A stored version of the same object kept instead gets the later expiry.
   */
  putValidVersion(record: ValidVersionRecord): Promise<void>;
  /** Moves the expiry of the stored version of that object (uid) later; nothing when none is stored. */
  refreshValidVersion(key: ValidVersionKey, expiresAt: number): Promise<void>;
  /** Deletes the stored version of that object (uid); another object's of the same name stays. */
  deleteValidVersion(key: ValidVersionKey): Promise<void>;
  /** The versions not expired. */
  validVersions(): Promise<ValidVersionRecord[]>;
}

export type ValidVersionKey = Pick<ValidVersionRecord, 'kind' | 'name' | 'uid'>;

export type FullStateStore = StateStore &
  StateLedgers &
  NodeClaimStore &
  UnschedulableState &
  NoticePartState &
  ValidVersionStore;

/** What a disruption (drift, expiration, emptiness, consolidation) reads and writes: its record, the budget ledger, drains. */
export type DisruptionState = Pick<
  FullStateStore,
  | 'putDisruption'
  | 'disruptionRecords'
  | 'deleteDisruption'
  | 'drains'
  | 'reserveDisruption'
  | 'releaseDisruption'
  | 'disruptions'
>;
