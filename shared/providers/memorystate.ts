// The state table in memory, with the semantics of DynamoStateStore (test/providers/state-contract.ts
// runs one suite against both): for unit tests, the CLI and the demo. Every method finishes its
// check-and-write without awaiting in between, so parallel callers see the same first-writer-wins
// outcomes the conditional writes give in DynamoDB.

import type { CapacityType } from '../instancetypes/types';
import { offeringKey } from '../launch/fleet';
import { markForDeletion, type NodeClaimRecord, nodePoolOf } from '../nodeclaim/record';
import { type Clock, systemClock } from './clock';
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

interface Expiring {
  expiresAt: number;
}

export class InMemoryStateStore implements FullStateStore {
  private readonly nominationsByClaim = new Map<string, Nomination>();
  /** pod uid → the claim holding it, until expiresAt. */
  private readonly podLocks = new Map<string, { nodeClaimName: string; expiresAt: number }>();
  private readonly once = new Map<string, Expiring>();
  private readonly unavailable = new Map<string, UnavailableOfferingRecord>();
  private readonly drainsByNode = new Map<string, DrainRecord>();
  private readonly disruptionsByNode = new Map<string, DisruptionRecord>();
  private readonly prices = new Map<string, PriceSnapshot>();
  private readonly valid = new Map<string, ValidVersionRecord>();
  private readonly registered = new Map<string, Expiring>();
  /** "nodePool\u0000budgetKey" → node name → expiresAt. */
  private readonly budgets = new Map<string, Map<string, number>>();
  private readonly claims = new Map<string, NodeClaimRecord>();
  private unschedulableRecords: UnschedulableRecord[] = [];
  private readonly parts = new Map<string, NoticePartRecord>();
  private claimVersion = 0;

  constructor(private readonly clock: Clock = systemClock) {}

  private live<T extends Expiring>(item: T | undefined): item is T {
    return item !== undefined && item.expiresAt > this.clock();
  }

  async putNoticePart(part: NoticePartRecord): Promise<void> {
    this.parts.set(`${part.batchId}#${part.index}`, structuredClone(part));
  }

  async noticeParts(): Promise<NoticePartRecord[]> {
    return [...this.parts.values()].filter((p) => this.live(p)).map((p) => structuredClone(p));
  }

  async deleteNoticeParts(batchId: string, indexes: readonly number[]): Promise<void> {
    for (const index of indexes) this.parts.delete(`${batchId}#${index}`);
  }

  async recordUnschedulable(record: UnschedulableRecord): Promise<void> {
    this.unschedulableRecords = [...this.unschedulableRecords.filter((r) => this.live(r)), structuredClone(record)];
  }

  async unschedulable(): Promise<UnschedulableRecord[]> {
    return this.unschedulableRecords.filter((r) => this.live(r)).map((r) => structuredClone(r));
  }

  async nominate(nomination: Nomination): Promise<boolean> {
    const podUids = [...new Set(nomination.podUids)].sort();
    for (const uid of podUids) {
      const lock = this.podLocks.get(uid);
      if (this.live(lock) && lock.nodeClaimName !== nomination.nodeClaimName) return false;
    }
    for (const uid of podUids) {
      this.podLocks.set(uid, { nodeClaimName: nomination.nodeClaimName, expiresAt: nomination.expiresAt });
    }
    this.nominationsByClaim.set(nomination.nodeClaimName, { ...nomination, podUids });
    return true;
  }

  async nominations(): Promise<Nomination[]> {
    return [...this.nominationsByClaim.values()]
      .filter((n) => this.live(n))
      .sort((a, b) => compare(a.nodeClaimName, b.nodeClaimName))
      .map((n) => structuredClone(n));
  }

  async releaseNomination(nodeClaimName: string): Promise<void> {
    const nomination = this.nominationsByClaim.get(nodeClaimName);
    if (!nomination) return;
    this.nominationsByClaim.delete(nodeClaimName);
    for (const uid of nomination.podUids) {
      if (this.podLocks.get(uid)?.nodeClaimName === nodeClaimName) this.podLocks.delete(uid);
    }
  }

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    if (this.live(this.once.get(key))) return false;
    this.once.set(key, { expiresAt: this.clock() + ttlMs });
    return true;
  }

  async isOfferingUnavailable(capacityType: CapacityType, instanceType: string, zone: string): Promise<boolean> {
    return this.live(this.unavailable.get(offeringKey(capacityType, instanceType, zone)));
  }

  async markOfferingUnavailable(
    capacityType: CapacityType,
    instanceType: string,
    zone: string,
    reason: string,
    ttlMs: number,
  ): Promise<void> {
    this.unavailable.set(offeringKey(capacityType, instanceType, zone), {
      capacityType,
      instanceType,
      zone,
      reason,
      expiresAt: this.clock() + ttlMs,
    });
  }

  async markScopeUnavailable(scope: string, reason: string, ttlMs: number): Promise<void> {
    this.unavailable.set(`scope#${scope}`, {
      scope,
      capacityType: '' as CapacityType,
      instanceType: '',
      zone: '',
      reason,
      expiresAt: this.clock() + ttlMs,
    });
  }

  async unavailableOfferings(): Promise<UnavailableOfferingRecord[]> {
    return [...this.unavailable.entries()]
      .filter(([, record]) => this.live(record))
      .sort(([a], [b]) => compare(a, b))
      .map(([, record]) => ({ ...record }));
  }

  async getDrain(nodeName: string): Promise<DrainRecord | undefined> {
    const record = this.drainsByNode.get(nodeName);
    return this.live(record) ? structuredClone(record) : undefined;
  }

  async putDrain(record: DrainRecord): Promise<void> {
    this.drainsByNode.set(record.nodeName, structuredClone(record));
  }

  async deleteDrain(nodeName: string): Promise<void> {
    this.drainsByNode.delete(nodeName);
  }

  async drains(): Promise<DrainRecord[]> {
    return [...this.drainsByNode.values()]
      .filter((d) => this.live(d))
      .sort((a, b) => compare(a.nodeName, b.nodeName))
      .map((d) => structuredClone(d));
  }

  async putDisruption(record: DisruptionRecord): Promise<void> {
    this.disruptionsByNode.set(record.nodeName, structuredClone(record));
  }

  async disruptionRecords(): Promise<DisruptionRecord[]> {
    return [...this.disruptionsByNode.values()]
      .filter((d) => this.live(d))
      .sort((a, b) => compare(a.nodeName, b.nodeName))
      .map((d) => structuredClone(d));
  }

  async deleteDisruption(nodeName: string): Promise<void> {
    this.disruptionsByNode.delete(nodeName);
  }

  async rememberRegistered(instanceIds: readonly string[], ttlMs: number): Promise<void> {
    for (const id of instanceIds) this.registered.set(id, { expiresAt: this.clock() + ttlMs });
  }

  async registeredInstances(): Promise<string[]> {
    return [...this.registered.entries()]
      .filter(([, record]) => this.live(record))
      .map(([id]) => id)
      .sort(compare);
  }

  async forgetRegistered(instanceIds: readonly string[]): Promise<void> {
    for (const id of instanceIds) this.registered.delete(id);
  }

  async getPrices(region: string): Promise<PriceSnapshot | undefined> {
    const snapshot = this.prices.get(region);
    return snapshot ? structuredClone(snapshot) : undefined;
  }

  async putPrices(region: string, snapshot: PriceSnapshot): Promise<void> {
    this.prices.set(region, structuredClone(snapshot));
  }

  async putValidVersion(record: ValidVersionRecord): Promise<void> {
    const key = `${record.kind}#${record.name}`;
    const stored = this.valid.get(key);
    if (stored && stored.uid === record.uid && stored.generation >= record.generation) {
      await this.refreshValidVersion(record, record.expiresAt);
      return;
    }
    this.valid.set(key, structuredClone(record));
  }

  async refreshValidVersion(key: ValidVersionKey, expiresAt: number): Promise<void> {
    const stored = this.valid.get(`${key.kind}#${key.name}`);
    if (stored && stored.uid === key.uid && stored.expiresAt < expiresAt) stored.expiresAt = expiresAt;
  }

  async deleteValidVersion(key: ValidVersionKey): Promise<void> {
    const name = `${key.kind}#${key.name}`;
    if (this.valid.get(name)?.uid === key.uid) this.valid.delete(name);
  }

  async validVersions(): Promise<ValidVersionRecord[]> {
    const now = this.clock();
    return [...this.valid.values()].filter((r) => r.expiresAt > now).map((r) => structuredClone(r));
  }

  async reserveDisruption(
    nodePool: string,
    budgetKey: string,
    limit: number,
    nodeName: string,
    ttlMs: number,
  ): Promise<boolean> {
    const key = budgetMapKey(nodePool, budgetKey);
    const holders = liveHolders(this.budgets.get(key), this.clock());
    if (holders.has(nodeName)) return true;
    if (holders.size >= limit) return false;
    holders.set(nodeName, this.clock() + ttlMs);
    this.budgets.set(key, holders);
    return true;
  }

  async releaseDisruption(nodePool: string, budgetKey: string, nodeName: string): Promise<void> {
    this.budgets.get(budgetMapKey(nodePool, budgetKey))?.delete(nodeName);
  }

  async disruptions(nodePool: string, budgetKey: string): Promise<string[]> {
    return [...liveHolders(this.budgets.get(budgetMapKey(nodePool, budgetKey)), this.clock()).keys()].sort(compare);
  }

  async getNodeClaim(name: string): Promise<NodeClaimRecord | undefined> {
    const record = this.claims.get(name);
    return record ? structuredClone(record) : undefined;
  }

  async nodeClaims(filter: { nodePool?: string } = {}): Promise<NodeClaimRecord[]> {
    return [...this.claims.values()]
      .filter((r) => filter.nodePool === undefined || nodePoolOf(r) === filter.nodePool)
      .sort((a, b) => compare(a.metadata.name, b.metadata.name))
      .map((r) => structuredClone(r));
  }

  async createNodeClaim(record: NodeClaimRecord): Promise<NodeClaimRecord | undefined> {
    if (this.claims.has(record.metadata.name)) return undefined;
    return this.storeClaim(record);
  }

  async updateNodeClaim(record: NodeClaimRecord): Promise<NodeClaimRecord | undefined> {
    const stored = this.claims.get(record.metadata.name);
    if (!stored || stored.metadata.resourceVersion !== record.metadata.resourceVersion) return undefined;
    return this.storeClaim(record);
  }

  async markNodeClaimForDeletion(name: string): Promise<NodeClaimRecord | undefined> {
    const stored = this.claims.get(name);
    if (!stored) return undefined;
    if (stored.metadata.deletionTimestamp !== undefined) return structuredClone(stored);
    return this.storeClaim(markForDeletion(stored, this.clock()));
  }

  async deleteNodeClaim(name: string): Promise<void> {
    this.claims.delete(name);
  }

  private storeClaim(record: NodeClaimRecord): NodeClaimRecord {
    const stored = structuredClone(record);
    stored.metadata.resourceVersion = String(++this.claimVersion);
    this.claims.set(stored.metadata.name, stored);
    return structuredClone(stored);
  }
}

function budgetMapKey(nodePool: string, budgetKey: string): string {
  return `${nodePool}\u0000${budgetKey}`;
}

/** A copy of the budget's holders without the expired ones. */
export function liveHolders(holders: ReadonlyMap<string, number> | undefined, now: number): Map<string, number> {
  return new Map([...(holders ?? [])].filter(([, expiresAt]) => expiresAt > now));
}

// Code-unit order, which is also the order DynamoDB sorts string sort keys in (for ASCII names).
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
