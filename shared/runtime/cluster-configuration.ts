// Configuration from the cluster (opt-in: the Provisioner's `configuration: 'cluster'`): each function
// reads the NodePool and EC2NodeClass objects from the API server, at most every CONFIGURATION_TTL_MS,
// validates them as the bundled path does (../apis/cluster-configuration) and serves them in place of
// the bundled document. Without Karpenter's CRDs, or while the API server cannot be read, it serves
// the bundle (or what it read last) and logs once: a function never fails for its configuration.
// Invalid objects are reported on their own status and with an event by the watcher (cluster-status.ts).
// The last valid version of each object is also kept in the state table (by uid and generation), so
// that an instance started after an object went bad serves that version rather than nothing or the
// bundle's; it expires a week after its object is gone (VALID_VERSION_TTL_MS), and the watcher's pass
// deletes it as soon as it sees the object deleted.

import {
  type ClusterObject,
  type InvalidObject,
  type LastValid,
  lastValidOf,
  resolveClusterConfiguration,
} from '../apis/cluster-configuration';
import type { Configuration } from '../apis/configuration';
import { formatProblem } from '../apis/problems';
import type { KarpenterObject, KarpenterObjectsApi } from '../kube/karpenter';
import { errorMessage } from '../providers/aws-errors';
import type { Clock } from '../providers/clock';
import type { ValidVersionKey, ValidVersionRecord, ValidVersionStore } from '../providers/state';
import type { RuntimeLog } from './telemetry';

/**
 * How long the stored last valid version of an object outlives the object: the readers of the cluster
 * move its expiry this far ahead once a day while the object exists (also while it is invalid, when
 * the version serves), so it expires only after its object is gone this long, should the watcher
 * not have deleted it.
 */
export const VALID_VERSION_TTL_MS = 7 * 24 * 3_600_000;
const VALID_VERSION_REFRESH_MS = 24 * 3_600_000;

/** `<kind>#<name>#<uid>`: names and uids have no `#`. */
const versionKey = (key: ValidVersionKey) => `${key.kind}#${key.name}#${key.uid}`;

/** The stored version's identity of each listed object, by its versionKey. */
function listedKeys(lists: ObservedObjects): Map<string, ValidVersionKey> {
  const keys = new Map<string, ValidVersionKey>();
  const add = (kind: Kind, items: ObservedObjects['nodePools']) => {
    for (const { metadata } of items) {
      const key = { kind, name: metadata.name, uid: metadata.uid ?? '' };
      keys.set(versionKey(key), key);
    }
  };
  add('NodePool', lists.nodePools);
  add('EC2NodeClass', lists.nodeClasses);
  return keys;
}

/** How long one read of the objects serves: a `kubectl apply` takes effect within this (and a decision). */
export const CONFIGURATION_TTL_MS = 10_000;
/** How long the answer to "are the CRDs installed?" is trusted. */
const SERVED_TTL_MS = 5 * 60_000;

export interface ClusterConfigurationDeps {
  karpenter: Pick<KarpenterObjectsApi, 'servedResources' | 'list'>;
  /** The deployed configuration: served without the CRDs, and the first last-valid version of each object. */
  bundled: Configuration;
  log: RuntimeLog;
  clock: Clock;
  ttlMs?: number;
  /** Where the last valid versions outlive this instance (the state table); memory only without it. */
  versions?: ValidVersionStore;
}

type Kind = ValidVersionRecord['kind'];

/** NodePool and EC2NodeClass objects as a list of the API server returns them. */
export interface ObservedObjects {
  nodePools: readonly Pick<KarpenterObject, 'metadata'>[];
  nodeClasses: readonly Pick<KarpenterObject, 'metadata'>[];
}

/** Which objects, at which resourceVersion: any create, change or delete changes it. */
export function configurationFingerprint(objects: ObservedObjects): string {
  const of = (kind: string, items: ObservedObjects['nodePools']) =>
    items.map((o) => `${kind}/${o.metadata.name}@${o.metadata.resourceVersion ?? ''}`);
  return [...of('NodePool', objects.nodePools), ...of('EC2NodeClass', objects.nodeClasses)].sort().join(',');
}

export interface ConfigurationRead {
  source: 'cluster' | 'bundled';
  config: Configuration;
  invalid: InvalidObject[];
}

export class ClusterConfigurationSource {
  private read: { at: number; value: ConfigurationRead; fingerprint: string | undefined } | undefined;
  /** The fingerprint of the objects the last list returned (undefined when it served the bundle). */
  private listed: string | undefined;
  private served: { yes: boolean; at: number } | undefined;
  private lastValid: LastValid;
  private readonly logged = new Set<string>();
  /** `<kind>#<name>` → `<uid>#<generation>` of the valid version this instance stored last. */
  private readonly persisted = new Map<string, string>();
  /** `<kind>#<name>` → the object whose stored version's expiry this instance moved, and when. */
  private readonly refreshed = new Map<string, { uid: string; at: number }>();
  /**
   * The objects the watcher's last pass listed, by `<kind>#<name>#<uid>`; undefined before its first
   * pass in this instance, which compares the stored versions with the cluster instead.
   */
  private observedObjects: Map<string, ValidVersionKey> | undefined;

  private readonly bundled: Configuration;

  constructor(private readonly deps: ClusterConfigurationDeps) {
    // A copy: serveConfiguration refills the runtime's arrays, which may be the bundle's own.
    this.bundled = { nodePools: [...deps.bundled.nodePools], nodeClasses: [...deps.bundled.nodeClasses] };
    this.lastValid = lastValidOf(this.bundled);
  }

  /** The configuration to act on now; never throws. */
  async current(): Promise<ConfigurationRead> {
    const now = this.deps.clock();
    if (this.read && now - this.read.at < (this.deps.ttlMs ?? CONFIGURATION_TTL_MS)) return this.read.value;
    const value = await this.fetch(now);
    this.read = { at: now, value, fingerprint: this.listed };
    return value;
  }

  /**
   * The NodePools and EC2NodeClasses as another reader just listed them (the watcher's status pass,
   * every few seconds): when one changed since the read being served (by resourceVersion), they are
   * served now, without waiting for the TTL and without listing them again. The new read, or
   * undefined when nothing changed; never throws.
   */
  async observe(lists: ObservedObjects): Promise<ConfigurationRead | undefined> {
    await this.forgetDeleted(lists);
    const fingerprint = configurationFingerprint(lists);
    if (this.read?.fingerprint === fingerprint) return undefined;
    try {
      const value = await this.resolve({
        nodePools: lists.nodePools as ClusterObject[],
        nodeClasses: lists.nodeClasses as ClusterObject[],
      });
      this.read = { at: this.deps.clock(), value, fingerprint };
      return value;
    } catch (error) {
      this.deps.log.warn('serving the changed NodePools and EC2NodeClasses failed, the TTL will', {
        error: errorMessage(error),
      });
      return undefined;
    }
  }

  private async fetch(now: number): Promise<ConfigurationRead> {
    const bundled: ConfigurationRead = { source: 'bundled', config: this.bundled, invalid: [] };
    this.listed = undefined;
    try {
      if (!(await this.crdsServed(now))) {
        this.once('crds', () =>
          this.deps.log.warn(
            "configuration is read from the cluster, but Karpenter's v1 NodePool and EC2NodeClass CRDs are not installed: serving the bundled configuration (apply infra/kubernetes/crds/)",
          ),
        );
        return bundled;
      }
      const [nodePools, nodeClasses] = await Promise.all([
        this.deps.karpenter.list('nodepools'),
        this.deps.karpenter.list('ec2nodeclasses'),
      ]);
      const read = await this.resolve({
        nodePools: nodePools.items as ClusterObject[],
        nodeClasses: nodeClasses.items as ClusterObject[],
      });
      this.listed = configurationFingerprint({ nodePools: nodePools.items, nodeClasses: nodeClasses.items });
      return read;
    } catch (error) {
      // The API server is down or refuses: act on what was read last rather than not at all.
      this.deps.log.warn('reading NodePools and EC2NodeClasses failed: serving the configuration read last', {
        error: errorMessage(error),
      });
      return this.read?.value ?? bundled;
    }
  }

  /**
   * The watcher's pass deletes the stored version of each object it no longer lists (deleted, or
   * replaced by another of the same name): compared with its previous pass, or on its first pass in
   * an instance with what the state table holds. The table's TTL takes what this misses. Never throws.
   */
  private async forgetDeleted(lists: ObservedObjects): Promise<void> {
    const versions = this.deps.versions;
    if (!versions) return;
    const listed = listedKeys(lists);
    try {
      const gone: ValidVersionKey[] = this.observedObjects
        ? [...this.observedObjects].filter(([k]) => !listed.has(k)).map(([, key]) => key)
        : (await versions.validVersions()).filter((r) => !listed.has(versionKey(r)));
      for (const key of gone) {
        await versions.deleteValidVersion({ kind: key.kind, name: key.name, uid: key.uid });
        this.persisted.delete(`${key.kind}#${key.name}`);
        this.refreshed.delete(`${key.kind}#${key.name}`);
      }
      this.observedObjects = listed;
    } catch (error) {
      this.once('forget', () =>
        this.deps.log.warn('deleting the stored valid versions of deleted objects failed: they expire instead', {
          error: errorMessage(error),
        }),
      );
    }
  }

  /** Validates the objects (with the stored last valid versions where needed) into the read served. */
  private async resolve(objects: {
    nodePools: ClusterObject[];
    nodeClasses: ClusterObject[];
  }): Promise<ConfigurationRead> {
    let result = resolveClusterConfiguration({ ...objects, lastValid: this.lastValid });
    if (result.invalid.length > 0 && this.deps.versions) {
      // Only an invalid object needs a stored version: another instance may have seen a newer valid one.
      const stored = await this.storedVersions(objects);
      if (stored) result = resolveClusterConfiguration({ ...objects, lastValid: stored });
    }
    this.lastValid = result.lastValid;
    await this.storeValidVersions(objects, result.invalid);
    for (const { nodeClass, nodePools } of result.terminating) {
      this.once(`terminating ${nodeClass} ${nodePools.join(',')}`, () =>
        this.deps.log.warn(
          `EC2NodeClass ${nodeClass} is being deleted: nothing is launched for it (Karpenter: NodeClassReady=False, NodeClassTerminating); it goes once no NodeClaim uses it`,
          { nodeClass, refusedNodePools: nodePools },
        ),
      );
    }
    for (const object of result.invalid) {
      const problems = object.problems.map(formatProblem).join('; ');
      this.once(`${object.kind}/${object.name}: ${problems}`, () =>
        this.deps.log.warn('invalid object in the cluster ignored', {
          object: `${object.kind}/${object.name}`,
          problems,
          serving: object.serving,
        }),
      );
    }
    return { source: 'cluster', config: result.config, invalid: result.invalid };
  }

  /**
   * The last valid versions with those stored in the state table laid over them, for the objects now
   * in the cluster with the same uid (a version of a deleted object never serves its successor);
   * undefined when the table holds none or cannot be read (memory then serves, as before).
   */
  private async storedVersions(objects: { nodePools: ClusterObject[]; nodeClasses: ClusterObject[] }) {
    let records: ValidVersionRecord[];
    try {
      records = await (this.deps.versions as ValidVersionStore).validVersions();
    } catch (error) {
      this.deps.log.warn('reading the stored valid versions failed: serving those in memory', {
        error: errorMessage(error),
      });
      return undefined;
    }
    if (records.length === 0) return undefined;
    const merged: LastValid = {
      nodePools: new Map(this.lastValid.nodePools),
      nodeClasses: new Map(this.lastValid.nodeClasses),
    };
    const lay = (kind: Kind, items: ClusterObject[], into: Map<string, unknown>) => {
      for (const item of items) {
        const record = records.find(
          (r) => r.kind === kind && r.name === item.metadata.name && r.uid === item.metadata.uid,
        );
        if (record) into.set(record.name, record.object);
      }
    };
    lay('NodePool', objects.nodePools, merged.nodePools);
    lay('EC2NodeClass', objects.nodeClasses, merged.nodeClasses);
    return merged;
  }

  /**
   * Stores each valid object's version once per uid and generation, and moves the expiry of the
   * stored version of every object in the cluster (valid or not: an invalid one is served by it)
   * later once a day; a failure only costs persistence.
   */
  private async storeValidVersions(
    objects: { nodePools: ClusterObject[]; nodeClasses: ClusterObject[] },
    invalid: readonly InvalidObject[],
  ): Promise<void> {
    const versions = this.deps.versions;
    if (!versions) return;
    const now = this.deps.clock();
    const expiresAt = now + VALID_VERSION_TTL_MS;
    const bad = new Set(invalid.map((i) => `${i.kind}#${i.name}`));
    const candidates: [Kind, ClusterObject, unknown][] = [
      ...objects.nodePools.map((o): [Kind, ClusterObject, unknown] => [
        'NodePool',
        o,
        this.lastValid.nodePools.get(o.metadata.name),
      ]),
      ...objects.nodeClasses.map((o): [Kind, ClusterObject, unknown] => [
        'EC2NodeClass',
        o,
        this.lastValid.nodeClasses.get(o.metadata.name),
      ]),
    ];
    for (const [kind, object, valid] of candidates) {
      const { name, uid, generation, deletionTimestamp } = object.metadata;
      const key = `${kind}#${name}`;
      if (!uid) continue;
      const version = `${uid}#${generation}`;
      const storable = valid !== undefined && !bad.has(key) && !deletionTimestamp && generation !== undefined;
      const refreshed = this.refreshed.get(key);
      const fresh = refreshed?.uid === uid && now - refreshed.at < VALID_VERSION_REFRESH_MS;
      try {
        if (storable && this.persisted.get(key) !== version) {
          await versions.putValidVersion({ kind, name, uid, generation, object: valid, expiresAt });
          this.persisted.set(key, version);
        } else if (!fresh) {
          await versions.refreshValidVersion({ kind, name, uid }, expiresAt);
        } else continue;
        this.refreshed.set(key, { uid, at: now });
      } catch (error) {
        this.once(`persist ${key}`, () =>
          this.deps.log.warn('storing the last valid version failed: it serves from memory only', {
            object: `${kind}/${name}`,
            error: errorMessage(error),
          }),
        );
      }
    }
  }

  private async crdsServed(now: number): Promise<boolean> {
    if (this.served && now - this.served.at < SERVED_TTL_MS) return this.served.yes;
    const resources = await this.deps.karpenter.servedResources();
    const yes = resources.has('nodepools') && resources.has('ec2nodeclasses');
    this.served = { yes, at: now };
    return yes;
  }

  private once(key: string, log: () => void): void {
    if (this.logged.has(key)) return;
    this.logged.add(key);
    log();
  }
}

/**
 * Serves `read` in the configuration every dependency of a function already holds. The deps of a
 * function are built once per cold start and keep the configuration's arrays, so the arrays are
 * refilled in place rather than replaced.
 */
export function serveConfiguration(target: Configuration, read: Configuration): void {
  if (target.nodePools !== read.nodePools) target.nodePools.splice(0, target.nodePools.length, ...read.nodePools);
  if (target.nodeClasses !== read.nodeClasses)
    target.nodeClasses.splice(0, target.nodeClasses.length, ...read.nodeClasses);
}
