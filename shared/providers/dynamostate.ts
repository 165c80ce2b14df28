// The state table in DynamoDB (layout: STATE_ITEM in shared/contracts/state-table.ts). Every item
// that expires carries `expiresAtMs` (what reads and conditions compare, to the millisecond) and the
// TTL attribute `expiresAt` in epoch seconds (what DynamoDB deletes by, lazily: reads never trust
// an item to be gone). Conditions do the arbitration between invocations: a pod lock, an
// idempotency record or a budget slot is only written when absent, expired, or already ours.

import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { AttributeValue, TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { STATE_TABLE } from '../contracts';
import { STATE_ITEM } from '../contracts/state-table';
import type { CapacityType } from '../instancetypes/types';
import { offeringKey } from '../launch/fleet';
import { markForDeletion, type NodeClaimRecord, nodePoolOf } from '../nodeclaim/record';
import { errorCode, errorMessage } from './aws-errors';
import { type Clock, systemClock } from './clock';
import type { DynamoApi } from './dynamo-port';
import { liveHolders } from './memorystate';
import type {
  DisruptionRecord,
  DrainRecord,
  FullStateStore,
  Nomination,
  NoticePartRecord,
  PriceSnapshot,
  UnavailableOfferingRecord,
  UnschedulableRecord,
  ValidVersionKey,
  ValidVersionRecord,
} from './state';

type Item = Record<string, AttributeValue>;
type Key = { pk: string; sk: string };

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** TransactWriteItems takes at most 100 actions. */
export const TRANSACTION_LIMIT = 100;
/** Concurrent single-item calls when releasing many pod locks. */
const RELEASE_CONCURRENCY = 16;
/** Read-modify-write attempts on a contended budget item before answering "no slot". */
const BUDGET_ATTEMPTS = 5;
/** Read-modify-write attempts when marking a contended NodeClaim record for deletion. */
const MARK_ATTEMPTS = 5;
/** About 200 KB of pod uids: an item stays well inside DynamoDB's 400 KB. */
const UNSCHEDULABLE_PODS_PER_ITEM = 5_000;

const FREE_OR_OURS = 'attribute_not_exists(pk) OR expiresAtMs <= :now OR nodeClaimName = :claim';
const FREE = 'attribute_not_exists(pk) OR expiresAtMs <= :now';

/** A state-table call failed for a reason other than losing a conditional write. */
export class StateTableError extends Error {
  constructor(
    readonly tableName: string,
    readonly operation: string,
    readonly key: string,
    cause: unknown,
  ) {
    super(
      `state table ${tableName}: ${operation} of item ${key} failed: ${errorCode(cause) ?? 'Error'}: ${errorMessage(cause)} ` +
        '(check that the table exists in this region and that the function may read and write it)',
      { cause },
    );
    this.name = 'StateTableError';
  }
}

/**
 * True for the answers that mean "another writer got there first": a failed condition, or a
 * transaction cancelled only by failed conditions or by a concurrent transaction on the same item.
 */
export function lostConditionalWrite(error: unknown): boolean {
  const code = errorCode(error);
  if (code === 'ConditionalCheckFailedException') return true;
  if (code !== 'TransactionCanceledException') return false;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  if (!reasons || reasons.length === 0) return true;
  return reasons.every(
    (r) => r.Code === undefined || ['None', 'ConditionalCheckFailed', 'TransactionConflict'].includes(r.Code),
  );
}

const s = (value: string): AttributeValue => ({ S: value });
const n = (value: number): AttributeValue => ({ N: String(value) });
const keyOf = (key: Key): Item => ({ [STATE_TABLE.partitionKey]: s(key.pk), [STATE_TABLE.sortKey]: s(key.sk) });
const describeKey = (key: Key) => `${key.pk}/${key.sk}`;

function expiry(expiresAtMs: number): Item {
  return { expiresAtMs: n(expiresAtMs), [STATE_TABLE.ttlAttribute]: n(Math.ceil(expiresAtMs / 1000)) };
}

function str(item: Item, name: string): string {
  return item[name]?.S ?? '';
}

function num(item: Item, name: string): number {
  return Number(item[name]?.N ?? Number.NaN);
}

function podLockKey(uid: string): Key {
  return { pk: `${STATE_ITEM.podLockPrefix}${uid}`, sk: 'nomination' };
}

function noticePartKey(batchId: string, index: number): Key {
  return { pk: STATE_ITEM.noticeParts, sk: `${batchId}#${String(index).padStart(5, '0')}` };
}

export interface DynamoStateStoreOptions {
  clock?: Clock;
  /** Actions per TransactWriteItems call (tests lower it: moto copies the table for each action). */
  transactionSize?: number;
}

export class DynamoStateStore implements FullStateStore {
  private readonly clock: Clock;
  private readonly transactionSize: number;

  constructor(
    private readonly dynamo: DynamoApi,
    readonly tableName: string,
    options: DynamoStateStoreOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.transactionSize = Math.min(TRANSACTION_LIMIT, Math.max(2, options.transactionSize ?? TRANSACTION_LIMIT));
  }

  // --- nominations -------------------------------------------------------------------------------

  async nominate(nomination: Nomination): Promise<boolean> {
    const claim = nomination.nodeClaimName;
    const podUids = [...new Set(nomination.podUids)].sort();
    const now = this.clock();
    const values = { ':now': n(now), ':claim': s(claim) };
    const locks: TransactWriteItem[] = podUids.map((uid) => ({
      Put: {
        TableName: this.tableName,
        Item: { ...keyOf(podLockKey(uid)), nodeClaimName: s(claim), ...expiry(nomination.expiresAt) },
        ConditionExpression: FREE_OR_OURS,
        ExpressionAttributeValues: values,
      },
    }));
    const record: TransactWriteItem = {
      Put: {
        TableName: this.tableName,
        Item: {
          ...keyOf({ pk: STATE_ITEM.nominations, sk: claim }),
          nodePool: s(nomination.nodePool),
          podUids: { L: podUids.map(s) },
          ...expiry(nomination.expiresAt),
        },
      },
    };
    // Locks are taken in uid order and the record written last, so of two overlapping nominations
    // split over several transactions one always gets through, and nominations() never lists a
    // claim whose locks are incomplete.
    const size = this.transactionSize;
    const chunks = chunk([...locks, record], size);
    const written: string[] = [];
    for (const [i, actions] of chunks.entries()) {
      try {
        await this.dynamo.transactWriteItems({ TransactItems: actions });
      } catch (error) {
        await this.releaseLocks(claim, written);
        if (lostConditionalWrite(error)) return false;
        throw new StateTableError(this.tableName, 'nominating', `nomination/${claim}`, error);
      }
      written.push(...podUids.slice(i * size, (i + 1) * size));
    }
    return true;
  }

  async nominations(): Promise<Nomination[]> {
    const items = await this.queryPartition(STATE_ITEM.nominations);
    const now = this.clock();
    return items
      .filter((item) => num(item, 'expiresAtMs') > now)
      .map((item) => ({
        nodeClaimName: str(item, 'sk'),
        nodePool: str(item, 'nodePool'),
        podUids: (item.podUids?.L ?? []).map((v) => v.S ?? ''),
        expiresAt: num(item, 'expiresAtMs'),
      }));
  }

  async releaseNomination(nodeClaimName: string): Promise<void> {
    const key = { pk: STATE_ITEM.nominations, sk: nodeClaimName };
    const item = await this.get(key);
    if (!item) return;
    await this.call('releasing', key, () => this.dynamo.deleteItem({ TableName: this.tableName, Key: keyOf(key) }));
    await this.releaseLocks(
      nodeClaimName,
      (item.podUids?.L ?? []).map((v) => v.S ?? ''),
    );
  }

  /** Deletes the pod locks `claim` holds (a lock another claim took over is left alone). */
  private async releaseLocks(claim: string, podUids: readonly string[]): Promise<void> {
    for (const group of chunk(podUids, RELEASE_CONCURRENCY)) {
      await Promise.all(
        group.map((uid) =>
          this.conditional('releasing', podLockKey(uid), () =>
            this.dynamo.deleteItem({
              TableName: this.tableName,
              Key: keyOf(podLockKey(uid)),
              ConditionExpression: 'nodeClaimName = :claim',
              ExpressionAttributeValues: { ':claim': s(claim) },
            }),
          ),
        ),
      );
    }
  }

  // --- idempotency -------------------------------------------------------------------------------

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    const itemKey = { pk: `${STATE_ITEM.oncePrefix}${key}`, sk: 'once' };
    const now = this.clock();
    return this.conditional('claiming', itemKey, () =>
      this.dynamo.putItem({
        TableName: this.tableName,
        Item: { ...keyOf(itemKey), ...expiry(now + ttlMs) },
        ConditionExpression: FREE,
        ExpressionAttributeValues: { ':now': n(now) },
      }),
    );
  }

  // --- unavailable offerings ---------------------------------------------------------------------

  async isOfferingUnavailable(capacityType: CapacityType, instanceType: string, zone: string): Promise<boolean> {
    const item = await this.get({
      pk: STATE_ITEM.unavailableOfferings,
      sk: offeringKey(capacityType, instanceType, zone),
    });
    return item !== undefined && num(item, 'expiresAtMs') > this.clock();
  }

  async markOfferingUnavailable(
    capacityType: CapacityType,
    instanceType: string,
    zone: string,
    reason: string,
    ttlMs: number,
  ): Promise<void> {
    const key = { pk: STATE_ITEM.unavailableOfferings, sk: offeringKey(capacityType, instanceType, zone) };
    const item: Item = {
      ...keyOf(key),
      capacityType: s(capacityType),
      instanceType: s(instanceType),
      zone: s(zone),
      reason: s(reason),
      ...expiry(this.clock() + ttlMs),
    };
    await this.call('marking', key, () => this.dynamo.putItem({ TableName: this.tableName, Item: item }));
  }

  async markScopeUnavailable(scope: string, reason: string, ttlMs: number): Promise<void> {
    const key = { pk: STATE_ITEM.unavailableOfferings, sk: `scope#${scope}` };
    const item: Item = { ...keyOf(key), scope: s(scope), reason: s(reason), ...expiry(this.clock() + ttlMs) };
    await this.call('marking', key, () => this.dynamo.putItem({ TableName: this.tableName, Item: item }));
  }

  async unavailableOfferings(): Promise<UnavailableOfferingRecord[]> {
    const now = this.clock();
    return (await this.queryPartition(STATE_ITEM.unavailableOfferings))
      .filter((item) => num(item, 'expiresAtMs') > now)
      .map((item) => ({
        ...(item.scope ? { scope: str(item, 'scope') } : {}),
        capacityType: str(item, 'capacityType') as CapacityType,
        instanceType: str(item, 'instanceType'),
        zone: str(item, 'zone'),
        reason: str(item, 'reason'),
        expiresAt: num(item, 'expiresAtMs'),
      }));
  }

  // --- drains ------------------------------------------------------------------------------------

  async getDrain(nodeName: string): Promise<DrainRecord | undefined> {
    const item = await this.get({ pk: STATE_ITEM.drains, sk: nodeName });
    return item && num(item, 'expiresAtMs') > this.clock() ? this.drainOf(item) : undefined;
  }

  async putDrain(record: DrainRecord): Promise<void> {
    const key = { pk: STATE_ITEM.drains, sk: record.nodeName };
    // The record as JSON, so fields added to DrainRecord later need no change here.
    const item: Item = { ...keyOf(key), record: s(JSON.stringify(record)), ...expiry(record.expiresAt) };
    await this.call('writing', key, () => this.dynamo.putItem({ TableName: this.tableName, Item: item }));
  }

  async deleteDrain(nodeName: string): Promise<void> {
    const key = { pk: STATE_ITEM.drains, sk: nodeName };
    await this.call('deleting', key, () => this.dynamo.deleteItem({ TableName: this.tableName, Key: keyOf(key) }));
  }

  async drains(): Promise<DrainRecord[]> {
    const now = this.clock();
    return (await this.queryPartition(STATE_ITEM.drains))
      .filter((item) => num(item, 'expiresAtMs') > now)
      .map((item) => this.drainOf(item));
  }

  private drainOf(item: Item): DrainRecord {
    return this.recordOf<DrainRecord>(item, 'drain');
  }

  private recordOf<T>(item: Item, kind: string): T {
    try {
      return JSON.parse(str(item, 'record')) as T;
    } catch (error) {
      throw new StateTableError(this.tableName, 'reading the record attribute', `${kind}/${str(item, 'sk')}`, error);
    }
  }

  // --- disruptions -------------------------------------------------------------------------------

  async putDisruption(record: DisruptionRecord): Promise<void> {
    const key = { pk: STATE_ITEM.disruptions, sk: record.nodeName };
    const item: Item = { ...keyOf(key), record: s(JSON.stringify(record)), ...expiry(record.expiresAt) };
    await this.call('writing', key, () => this.dynamo.putItem({ TableName: this.tableName, Item: item }));
  }

  async disruptionRecords(): Promise<DisruptionRecord[]> {
    const now = this.clock();
    return (await this.queryPartition(STATE_ITEM.disruptions))
      .filter((item) => num(item, 'expiresAtMs') > now)
      .map((item) => this.recordOf<DisruptionRecord>(item, 'disruption'));
  }

  async deleteDisruption(nodeName: string): Promise<void> {
    const key = { pk: STATE_ITEM.disruptions, sk: nodeName };
    await this.call('deleting', key, () => this.dynamo.deleteItem({ TableName: this.tableName, Key: keyOf(key) }));
  }

  // --- registered instances (garbage collection) -------------------------------------------------

  async rememberRegistered(instanceIds: readonly string[], ttlMs: number): Promise<void> {
    const expiresAt = this.clock() + ttlMs;
    for (const id of instanceIds) {
      const key = { pk: STATE_ITEM.registered, sk: id };
      const item: Item = { ...keyOf(key), ...expiry(expiresAt) };
      await this.call('writing', key, () => this.dynamo.putItem({ TableName: this.tableName, Item: item }));
    }
  }

  async registeredInstances(): Promise<string[]> {
    const now = this.clock();
    return (await this.queryPartition(STATE_ITEM.registered))
      .filter((item) => num(item, 'expiresAtMs') > now)
      .map((item) => str(item, 'sk'))
      .sort();
  }

  async forgetRegistered(instanceIds: readonly string[]): Promise<void> {
    for (const id of instanceIds) {
      const key = { pk: STATE_ITEM.registered, sk: id };
      await this.call('deleting', key, () => this.dynamo.deleteItem({ TableName: this.tableName, Key: keyOf(key) }));
    }
  }

  // --- prices ------------------------------------------------------------------------------------

  async getPrices(region: string): Promise<PriceSnapshot | undefined> {
    const key = { pk: STATE_ITEM.prices, sk: region };
    const item = await this.get(key);
    const data = item?.data?.B;
    if (!data) return undefined;
    try {
      return JSON.parse((await gunzipAsync(data)).toString('utf8')) as PriceSnapshot;
    } catch (error) {
      throw new StateTableError(this.tableName, 'decoding the data attribute', describeKey(key), error);
    }
  }

  async putPrices(region: string, snapshot: PriceSnapshot): Promise<void> {
    const key = { pk: STATE_ITEM.prices, sk: region };
    // Gzipped: a region's spot prices alone come near DynamoDB's 400 KB item limit as plain JSON.
    const data = await gzipAsync(Buffer.from(JSON.stringify(snapshot)));
    const item: Item = {
      ...keyOf(key),
      source: s(snapshot.source),
      fetchedAt: n(snapshot.fetchedAt),
      data: { B: data },
    };
    await this.call('writing', key, () => this.dynamo.putItem({ TableName: this.tableName, Item: item }));
  }

  // --- last valid versions of the cluster's NodePools and EC2NodeClasses ---------------------------

  async putValidVersion(record: ValidVersionRecord): Promise<void> {
    const key = validVersionKey(record);
    // Gzipped: an EC2NodeClass with its userData can be tens of KB of JSON.
    const data = await gzipAsync(Buffer.from(JSON.stringify(record.object)));
    const item: Item = {
      ...keyOf(key),
      kind: s(record.kind),
      name: s(record.name),
      uid: s(record.uid),
      generation: n(record.generation),
      data: { B: data },
      ...expiry(record.expiresAt),
    };
    // Another object of that name, or an older version of this one, is replaced; a newer one stays,
    // with the later expiry.
    const stored = await this.conditional('writing', key, () =>
      this.dynamo.putItem({
        TableName: this.tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(pk) OR uid <> :uid OR generation < :generation',
        ExpressionAttributeValues: { ':uid': s(record.uid), ':generation': n(record.generation) },
      }),
    );
    if (!stored) await this.refreshValidVersion(record, record.expiresAt);
  }

  async refreshValidVersion(version: ValidVersionKey, expiresAt: number): Promise<void> {
    const key = validVersionKey(version);
    // Only later, only the same object's; items written before the expiry existed get one.
    await this.conditional('refreshing', key, () =>
      this.dynamo.updateItem({
        TableName: this.tableName,
        Key: keyOf(key),
        UpdateExpression: 'SET expiresAtMs = :expiresAtMs, #ttl = :ttl',
        ConditionExpression: 'uid = :uid AND (attribute_not_exists(expiresAtMs) OR expiresAtMs < :expiresAtMs)',
        ExpressionAttributeNames: { '#ttl': STATE_TABLE.ttlAttribute },
        ExpressionAttributeValues: {
          ':uid': s(version.uid),
          ':expiresAtMs': n(expiresAt),
          ':ttl': n(Math.ceil(expiresAt / 1000)),
        },
      }),
    );
  }

  async deleteValidVersion(version: ValidVersionKey): Promise<void> {
    const key = validVersionKey(version);
    await this.conditional('deleting', key, () =>
      this.dynamo.deleteItem({
        TableName: this.tableName,
        Key: keyOf(key),
        ConditionExpression: 'uid = :uid',
        ExpressionAttributeValues: { ':uid': s(version.uid) },
      }),
    );
  }

  async validVersions(): Promise<ValidVersionRecord[]> {
    const records: ValidVersionRecord[] = [];
    const now = this.clock();
    for (const item of await this.queryPartition(STATE_ITEM.validVersions)) {
      const data = item.data?.B;
      // DynamoDB deletes expired items up to days late. One written before the expiry existed serves
      // until a reader of the cluster gives it one, or the watcher deletes it with its object.
      const expiresAt = item.expiresAtMs ? num(item, 'expiresAtMs') : Number.POSITIVE_INFINITY;
      if (!data || expiresAt <= now) continue;
      const kind = str(item, 'kind');
      if (kind !== 'NodePool' && kind !== 'EC2NodeClass') continue;
      let object: unknown;
      try {
        object = JSON.parse((await gunzipAsync(data)).toString('utf8'));
      } catch (error) {
        const key = { pk: STATE_ITEM.validVersions, sk: `${kind}#${str(item, 'name')}` };
        throw new StateTableError(this.tableName, 'decoding the data attribute', describeKey(key), error);
      }
      records.push({
        kind,
        name: str(item, 'name'),
        uid: str(item, 'uid'),
        generation: num(item, 'generation'),
        object,
        expiresAt,
      });
    }
    return records;
  }

  // --- disruption budgets ------------------------------------------------------------------------

  async reserveDisruption(
    nodePool: string,
    budgetKey: string,
    limit: number,
    nodeName: string,
    ttlMs: number,
  ): Promise<boolean> {
    return this.updateBudget(nodePool, budgetKey, (holders, now) => {
      if (holders.has(nodeName)) return 'unchanged';
      if (holders.size >= limit) return 'refused';
      holders.set(nodeName, now + ttlMs);
      return 'changed';
    });
  }

  async releaseDisruption(nodePool: string, budgetKey: string, nodeName: string): Promise<void> {
    await this.updateBudget(nodePool, budgetKey, (holders) => (holders.delete(nodeName) ? 'changed' : 'unchanged'));
  }

  async disruptions(nodePool: string, budgetKey: string): Promise<string[]> {
    const item = await this.get(budgetItemKey(nodePool, budgetKey));
    return [...liveHolders(holdersOf(item), this.clock()).keys()].sort();
  }

  /**
   * Optimistic read-modify-write of one budget item: the put only lands if the item's version is
   * still the one read, so two invocations cannot both take the last slot.
   */
  private async updateBudget(
    nodePool: string,
    budgetKey: string,
    change: (holders: Map<string, number>, now: number) => 'changed' | 'unchanged' | 'refused',
  ): Promise<boolean> {
    const key = budgetItemKey(nodePool, budgetKey);
    for (let attempt = 0; attempt < BUDGET_ATTEMPTS; attempt++) {
      const item = await this.get(key);
      const now = this.clock();
      const holders = liveHolders(holdersOf(item), now);
      const outcome = change(holders, now);
      if (outcome !== 'changed') return outcome === 'unchanged';
      const version = item ? num(item, 'version') : 0;
      const next: Item = {
        ...keyOf(key),
        holders: { M: Object.fromEntries([...holders].map(([node, until]) => [node, n(until)])) },
        version: n(version + 1),
        ...expiry(Math.max(now, ...holders.values())),
      };
      const written = await this.conditional('updating', key, () =>
        this.dynamo.putItem({
          TableName: this.tableName,
          Item: next,
          ConditionExpression: item ? 'version = :version' : 'attribute_not_exists(pk)',
          ...(item ? { ExpressionAttributeValues: { ':version': n(version) } } : {}),
        }),
      );
      if (written) return true;
    }
    return false;
  }

  // --- NodeClaim records -------------------------------------------------------------------------

  async getNodeClaim(name: string): Promise<NodeClaimRecord | undefined> {
    const item = await this.get(nodeClaimKey(name));
    return item ? this.nodeClaimOf(item) : undefined;
  }

  async nodeClaims(filter: { nodePool?: string } = {}): Promise<NodeClaimRecord[]> {
    return (await this.queryPartition(STATE_ITEM.nodeClaims))
      .filter((item) => filter.nodePool === undefined || str(item, 'nodePool') === filter.nodePool)
      .map((item) => this.nodeClaimOf(item));
  }

  async createNodeClaim(record: NodeClaimRecord): Promise<NodeClaimRecord | undefined> {
    const stored = withVersion(record, 1);
    const key = nodeClaimKey(record.metadata.name);
    const written = await this.conditional('creating', key, () =>
      this.dynamo.putItem({
        TableName: this.tableName,
        Item: nodeClaimItem(stored, 1),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return written ? stored : undefined;
  }

  async updateNodeClaim(record: NodeClaimRecord): Promise<NodeClaimRecord | undefined> {
    const version = Number(record.metadata.resourceVersion);
    if (!Number.isInteger(version)) return undefined;
    const stored = withVersion(record, version + 1);
    const key = nodeClaimKey(record.metadata.name);
    const written = await this.conditional('updating', key, () =>
      this.dynamo.putItem({
        TableName: this.tableName,
        Item: nodeClaimItem(stored, version + 1),
        ConditionExpression: 'version = :version',
        ExpressionAttributeValues: { ':version': n(version) },
      }),
    );
    return written ? stored : undefined;
  }

  async markNodeClaimForDeletion(name: string): Promise<NodeClaimRecord | undefined> {
    for (let attempt = 0; attempt < MARK_ATTEMPTS; attempt++) {
      const current = await this.getNodeClaim(name);
      if (!current || current.metadata.deletionTimestamp !== undefined) return current;
      const updated = await this.updateNodeClaim(markForDeletion(current, this.clock()));
      if (updated) return updated;
    }
    throw new StateTableError(
      this.tableName,
      'marking for deletion',
      describeKey(nodeClaimKey(name)),
      new Error(`the record changed under ${MARK_ATTEMPTS} attempts in a row; retry the invocation`),
    );
  }

  async deleteNodeClaim(name: string): Promise<void> {
    const key = nodeClaimKey(name);
    await this.call('deleting', key, () => this.dynamo.deleteItem({ TableName: this.tableName, Key: keyOf(key) }));
  }

  private nodeClaimOf(item: Item): NodeClaimRecord {
    return withVersion(this.recordOf<NodeClaimRecord>(item, STATE_ITEM.nodeClaims), num(item, 'version'));
  }

  // --- plumbing ----------------------------------------------------------------------------------

  private async get(key: Key): Promise<Item | undefined> {
    const out = await this.call('reading', key, () =>
      this.dynamo.getItem({ TableName: this.tableName, Key: keyOf(key), ConsistentRead: true }),
    );
    return out.Item;
  }

  /** Every item of one partition, read consistently (the previous invocation's writes count). */
  // --- parts of split notices --------------------------------------------------------------------

  async putNoticePart(part: NoticePartRecord): Promise<void> {
    const key = noticePartKey(part.batchId, part.index);
    // Gzipped: a part is up to 256 KiB of JSON, and a write costs a capacity unit per KiB.
    const item: Item = {
      ...keyOf(key),
      batchId: s(part.batchId),
      index: n(part.index),
      count: n(part.count),
      receivedAt: n(part.receivedAt),
      data: { B: await gzipAsync(Buffer.from(part.detail)) },
      ...expiry(part.expiresAt),
    };
    await this.call('writing', key, () => this.dynamo.putItem({ TableName: this.tableName, Item: item }));
  }

  async noticeParts(): Promise<NoticePartRecord[]> {
    const now = this.clock();
    const items = (await this.queryPartition(STATE_ITEM.noticeParts)).filter((item) => num(item, 'expiresAtMs') > now);
    return Promise.all(
      items.map(async (item) => {
        const key = noticePartKey(str(item, 'batchId'), num(item, 'index'));
        let detail: string;
        try {
          detail = (await gunzipAsync(item.data?.B ?? new Uint8Array())).toString('utf8');
        } catch (error) {
          throw new StateTableError(this.tableName, 'decoding the data attribute', describeKey(key), error);
        }
        return {
          batchId: str(item, 'batchId'),
          index: num(item, 'index'),
          count: num(item, 'count'),
          detail,
          receivedAt: num(item, 'receivedAt'),
          expiresAt: num(item, 'expiresAtMs'),
        };
      }),
    );
  }

  async deleteNoticeParts(batchId: string, indexes: readonly number[]): Promise<void> {
    await Promise.all(
      indexes.map((index) => {
        const key = noticePartKey(batchId, index);
        return this.call('deleting', key, () => this.dynamo.deleteItem({ TableName: this.tableName, Key: keyOf(key) }));
      }),
    );
  }

  async recordUnschedulable(record: UnschedulableRecord): Promise<void> {
    const reasonsKey = createHash('sha256').update(JSON.stringify(record.reasons)).digest('hex').slice(0, 16);
    for (const [part, podUids] of chunk(record.podUids, UNSCHEDULABLE_PODS_PER_ITEM).entries()) {
      const key = { pk: STATE_ITEM.unschedulable, sk: `${reasonsKey}#${record.decision}#${part}` };
      const item: Item = {
        ...keyOf(key),
        decision: s(record.decision),
        reasons: { L: record.reasons.map(s) },
        podUids: { L: podUids.map(s) },
        ...expiry(record.expiresAt),
      };
      await this.call('writing', key, () => this.dynamo.putItem({ TableName: this.tableName, Item: item }));
    }
  }

  async unschedulable(): Promise<UnschedulableRecord[]> {
    const now = this.clock();
    return (await this.queryPartition(STATE_ITEM.unschedulable))
      .filter((item) => num(item, 'expiresAtMs') > now)
      .map((item) => ({
        decision: str(item, 'decision'),
        reasons: (item.reasons?.L ?? []).map((v) => v.S ?? ''),
        podUids: (item.podUids?.L ?? []).map((v) => v.S ?? ''),
        expiresAt: num(item, 'expiresAtMs'),
      }));
  }

  private async queryPartition(pk: string): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await this.call('querying', { pk, sk: '*' }, () =>
        this.dynamo.query({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': s(pk) },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  private async call<T>(operation: string, key: Key, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new StateTableError(this.tableName, operation, describeKey(key), error);
    }
  }

  /** Runs a conditional write: true when it landed, false when the condition failed. */
  private async conditional(operation: string, key: Key, run: () => Promise<unknown>): Promise<boolean> {
    try {
      await run();
      return true;
    } catch (error) {
      if (lostConditionalWrite(error)) return false;
      throw new StateTableError(this.tableName, operation, describeKey(key), error);
    }
  }
}

function validVersionKey(version: Pick<ValidVersionKey, 'kind' | 'name'>): Key {
  return { pk: STATE_ITEM.validVersions, sk: `${version.kind}#${version.name}` };
}

function nodeClaimKey(name: string): Key {
  return { pk: STATE_ITEM.nodeClaims, sk: name };
}

/** The record with the store's version as its resourceVersion (the JSON never carries a stale one). */
function withVersion(record: NodeClaimRecord, version: number): NodeClaimRecord {
  return { ...record, metadata: { ...record.metadata, resourceVersion: String(version) } };
}

// The record as JSON (fields added later need no change here), with the NodePool beside it for
// listing one pool and the version as a number for the conditions. No TTL: a record lives until gc
// or termination deletes it with its instance.
function nodeClaimItem(record: NodeClaimRecord, version: number): Item {
  const { resourceVersion: _, ...metadata } = record.metadata;
  return {
    ...keyOf(nodeClaimKey(record.metadata.name)),
    record: s(JSON.stringify({ ...record, metadata })),
    nodePool: s(nodePoolOf(record) ?? ''),
    version: n(version),
  };
}

function budgetItemKey(nodePool: string, budgetKey: string): Key {
  return { pk: `${STATE_ITEM.budgetPrefix}${nodePool}`, sk: budgetKey };
}

function holdersOf(item: Item | undefined): Map<string, number> {
  return new Map(Object.entries(item?.holders?.M ?? {}).map(([node, until]) => [node, Number(until.N ?? 0)]));
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
