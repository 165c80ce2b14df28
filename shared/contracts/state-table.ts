// The state table's definition as data, so the CDK stack, createStateTable() (tests, demo) and the
// store read one description: a rename or a key change cannot split them.

import { STATE_TABLE } from './index';

export const STATE_TABLE_DEFINITION = {
  partitionKey: { name: STATE_TABLE.partitionKey, type: 'S' },
  sortKey: { name: STATE_TABLE.sortKey, type: 'S' },
  /** Epoch seconds; DynamoDB deletes expired items lazily (up to days later), so reads check it too. */
  ttlAttribute: STATE_TABLE.ttlAttribute,
  /** Traffic is a few items per decision; provisioned capacity would only add a throttling risk. */
  billingMode: 'PAY_PER_REQUEST',
} as const;

/**
 * Item kinds by partition key. Kinds that are listed share one partition (a Query, not a Scan, lists
 * them); kinds only read by key get a partition each so conditional writes on them never contend.
 */
export const STATE_ITEM = {
  /** pk `nomination`, sk = NodeClaim name: the claim's pod uids. */
  nominations: 'nomination',
  /** pk `pod#<uid>`, sk `nomination`: the lock that keeps a pod on one claim. */
  podLockPrefix: 'pod#',
  /** pk `once#<key>`, sk `once`: idempotency records (first writer wins). */
  oncePrefix: 'once#',
  /** pk `unavailable`, sk `<capacityType>:<instanceType>:<zone>`: the ICE cache. */
  unavailableOfferings: 'unavailable',
  /** pk `drain`, sk = node name: drain progress. */
  drains: 'drain',
  /** pk `prices`, sk = region: the price snapshot (gzipped JSON, no TTL). */
  prices: 'prices',
  /** pk `disruption`, sk = node name: a node being disrupted (replacements launched, drain pending). */
  disruptions: 'disruption',
  /** pk `registered`, sk = instance id: instances the gc function saw with a registered Node. */
  registered: 'registered',
  /** pk `budget#<nodePool>`, sk = budget key: nodes being disrupted under one disruption budget. */
  budgetPrefix: 'budget#',
  /** pk `nodeclaim`, sk = NodeClaim name: the claim record (JSON), its NodePool and version; no TTL. */
  nodeClaims: 'nodeclaim',
  /** pk `unschedulable`, sk = `<reasons hash>#<decision>#<part>`: pods a decision placed nowhere, and why. */
  unschedulable: 'unschedulable',
  /** pk `noticepart`, sk = `<batchId>#<index>`: a part of a split notice waiting for the others. */
  noticeParts: 'noticepart',
  /**
   * pk `validversion`, sk = `<kind>#<name>`: the last valid version of a NodePool or EC2NodeClass read
   * from the cluster, with its uid and generation (gzipped JSON, one item per object name); it
   * expires once its object is gone for VALID_VERSION_TTL_MS, and the watcher deletes it sooner.
   */
  validVersions: 'validversion',
} as const;
