// The provision decision's launch port over AWS: resolve the claim's EC2NodeClass (subnets,
// security groups, AMIs, instance profile; cached briefly), shape the claim as Karpenter does
// (shared/launch/claim: labels, userData labels, requirements, capacity type) and launch it through
// InstanceLauncher, which re-finds a claim's existing instance instead of launching twice. The
// claim's NodeClaim record is written before CreateFleet and completed after it, so a retried or
// redelivered launch finds both its record and its instance; a record that cannot be written
// launches nothing (the error sends the batch back).

import type { EC2NodeClass } from '../apis/v1/types';
import { DEFAULT_LAUNCH_CONCURRENCY } from '../contracts';
import { launchClaimFromPlan, launchClaimFromRecord } from '../launch/claim';
import type { LaunchClaim } from '../launch/request';
import { nodeClaimFromPlan } from '../nodeclaim';
import { launchedRecord, launchRecord } from '../nodeclaim/launch-record';
import { isConditionTrue, type NodeClaimRecord } from '../nodeclaim/record';
import { type NodeClassResolverDeps, readyNodeClass, resolveNodeClass } from '../nodeclass';
import { type Clock, TTLCache } from '../providers/clock';
import type { Cluster } from '../providers/cluster';
import {
  type InstanceLauncher,
  InsufficientCapacityError,
  LaunchError,
  type LaunchedInstance,
  type ResolvedNodeClass,
} from '../providers/instance';
import type { BatchingInstanceLauncher, BatchLaunched } from '../providers/instance/batch';
import type { NodeClaimStore } from '../providers/state';
import type { LaunchTokens } from '../providers/throttle';
import { mapLimit } from './concurrency';
import { LAUNCH_BATCH_ANNOTATION, launchBatchId, planLaunchBatches } from './launch-batches';
import type {
  ClaimLauncher,
  ClaimLaunchResult,
  LaunchAllOptions,
  NodeClaimToLaunch,
  RecordedClaimToLaunch,
} from './provision';

/** How long a resolved node class is reused: subnets' free IPs and AMIs change slowly. */
export const NODECLASS_CACHE_TTL_MS = 60_000;

export interface AwsClaimLauncherDeps {
  nodeClasses: EC2NodeClass[];
  cluster: () => Promise<Cluster>;
  resolver: Omit<NodeClassResolverDeps, 'k8sVersion' | 'clock' | 'mode'>;
  /** With launchBatch and tagClaim, identical claims launch together (launchAll). */
  launcher: Pick<InstanceLauncher, 'launch'> & Partial<Pick<BatchingInstanceLauncher, 'launchBatch' | 'tagClaim'>>;
  records: Pick<NodeClaimStore, 'getNodeClaim' | 'createNodeClaim' | 'updateNodeClaim' | 'deleteNodeClaim'>;
  clock: Clock;
  /** Resolves a node class without AWS (the burst benchmark); by default `resolver` against AWS. */
  resolveNodeClass?: (nodeClass: EC2NodeClass) => Promise<ResolvedNodeClass>;
  /**
   * EC2's instance tokens as the paced port sees them: launchAll asks for no more instances than
   * these allow before the invocation's end (without it, as many as the decision has).
   */
  launchTokens?: LaunchTokens;
}

/** Time kept back when the invocation nears its end: a batch started later might not be recorded. */
export const LAUNCH_RESERVE_MS = 20_000;

/** Record writes at once (one DynamoDB round trip each). */
const RECORD_CONCURRENCY = 16;

/** Conditional updates tried when completing a record another function is updating at the same time. */
const RECORD_UPDATE_ATTEMPTS = 3;

/** The claim's record could not be written: nothing was launched, the batch should come back. */
export class NodeClaimRecordError extends Error {
  override readonly name = 'NodeClaimRecordError';
}

export class AwsClaimLauncher implements ClaimLauncher {
  private readonly resolved: TTLCache<Promise<ResolvedNodeClass>>;

  constructor(private readonly deps: AwsClaimLauncherDeps) {
    this.resolved = new TTLCache(deps.clock, NODECLASS_CACHE_TTL_MS);
  }

  private resolve(nodeClass: EC2NodeClass): Promise<ResolvedNodeClass> {
    const name = nodeClass.metadata.name;
    let pending = this.resolved.get(name);
    if (!pending) {
      const resolveNodeClassWith = this.deps.resolveNodeClass;
      pending = (async () => {
        if (resolveNodeClassWith) return resolveNodeClassWith(nodeClass);
        const cluster = await this.deps.cluster();
        const resolution = await resolveNodeClass(nodeClass, {
          ...this.deps.resolver,
          k8sVersion: cluster.version,
          clock: this.deps.clock,
          mode: 'ensure',
        });
        return readyNodeClass(resolution, cluster);
      })();
      // A failed resolution is not remembered: the next claim tries again.
      pending.catch(() => this.resolved.delete(name));
      this.resolved.set(name, pending);
    }
    return pending;
  }

  async launch({ nodeClaimName, nodePool, claim }: NodeClaimToLaunch): Promise<LaunchedInstance> {
    const ref = nodePool.spec.template.spec.nodeClassRef.name;
    const nodeClass = this.deps.nodeClasses.find((c) => c.metadata.name === ref);
    if (!nodeClass) {
      throw new Error(`NodePool/${nodePool.metadata.name}: EC2NodeClass/${ref} is not in the bundled configuration`);
    }
    const shaped = nodeClaimFromPlan({ claim, nodePool, nodeClass, seed: nodeClaimName });
    // The request carries the claim's own name (the instance's karpenter.sh/nodeclaim tag), so
    // the record and the instance are found under one name.
    const record = await this.ensureRecord(
      launchRecord({ shaped: { ...shaped, name: nodeClaimName }, claim, nodePool, nodeClass, now: this.deps.clock() }),
    );
    const request = launchClaimFromPlan({ nodeClaimName, claim, nodePool, nodeClass });
    let launched: LaunchedInstance;
    try {
      launched = await this.deps.launcher.launch(request, await this.resolve(nodeClass));
    } catch (error) {
      // Karpenter deletes a claim whose launch cannot succeed; its pods are planned again.
      if (error instanceof InsufficientCapacityError || error instanceof LaunchError) {
        await this.deps.records.deleteNodeClaim(nodeClaimName);
      }
      throw error;
    }
    await this.recordLaunch(record, launched, shaped.instanceTypes);
    return launched;
  }

  /**
   * Launches a decision's claims: every record first (the to-do list, each naming its launch batch),
   * then one CreateFleet per batch of identical claims, a few batches at a time, each member's record
   * completed and its instance tagged as its instance comes back. Batches not started when the
   * invocation nears its end come back `deferred`: their records wait for the next invocation.
   */
  async launchAll(
    requests: readonly NodeClaimToLaunch[],
    options: LaunchAllOptions = {},
  ): Promise<ClaimLaunchResult[]> {
    const { launchBatch, tagClaim } = this.deps.launcher;
    const results: ClaimLaunchResult[] = [];
    // Claims earlier invocations recorded go first: their pods have waited longest.
    const byBatch = new Map<string, Member[]>();
    for (const entry of this.recorded(options.recorded ?? [], results)) {
      const id = entry.record.metadata.annotations[LAUNCH_BATCH_ANNOTATION] ?? entry.member.claim.nodeClaimName;
      pushTo(byBatch, id, entry);
    }
    if (!launchBatch || !tagClaim) {
      // Without batching every recorded claim launches alone, then the planned ones one by one.
      const concurrency = options.concurrency ?? 8;
      const earlier = await mapLimit([...byBatch.values()].flat(), concurrency, (m) =>
        this.launchMembers(m.member.claim.nodeClaimName, [m]),
      );
      const planned = await mapLimit(requests, concurrency, (r) => this.settleOne(r, () => this.launch(r)));
      return [...results, ...earlier.flat(), ...planned];
    }
    const prepared: PlannedMember[] = [];
    for (const request of requests) {
      try {
        prepared.push(this.prepare(request));
      } catch (error) {
        results.push({ nodeClaimName: request.nodeClaimName, error });
      }
    }
    const planned = planLaunchBatches(prepared);
    const written = await mapLimit(
      planned.flatMap((b) => b.members.map((member) => ({ member, batch: b.id }))),
      RECORD_CONCURRENCY,
      async ({ member, batch }) => {
        try {
          const record = await this.ensureRecord(withAnnotation(this.recordOf(member), LAUNCH_BATCH_ANNOTATION, batch));
          return { member, record };
        } catch (error) {
          results.push({ nodeClaimName: member.claim.nodeClaimName, error });
          return undefined;
        }
      },
    );
    // A redelivered claim keeps the batch its record names: that is where its instance may be.
    for (const entry of written) {
      if (!entry) continue;
      pushTo(
        byBatch,
        entry.record.metadata.annotations[LAUNCH_BATCH_ANNOTATION] ?? entry.member.claim.nodeClaimName,
        entry,
      );
    }
    const remaining = options.remainingMs ?? (() => Number.POSITIVE_INFINITY);
    const allowance = this.launchAllowance();
    const batches = [...byBatch.entries()];
    const launched = await mapLimit(
      batches,
      options.concurrency ?? DEFAULT_LAUNCH_CONCURRENCY,
      async ([id, members]) => {
        const left = remaining();
        if (left < LAUNCH_RESERVE_MS) return members.map(deferredResult);
        // Taken before the first await, so batches started together never share the same tokens.
        const { now, later } = allowance.take(members, left - LAUNCH_RESERVE_MS);
        const launchedNow = now.length > 0 ? await this.launchMembers(id, now) : [];
        return [...launchedNow, ...later.map(deferredResult)];
      },
    );
    return [...results, ...launched.flat()];
  }

  /**
   * The instances this invocation may still ask EC2 for: what the instance bucket holds and refills
   * before the reserve, counted when the first batch starts (`ms`: the time left then). A batch gets
   * the members it has tokens for, in name order, under its own id (its instances are
   * interchangeable, so a later part adopts what an earlier one left untagged); the rest stay
   * recorded for the next invocation. A token wait never outlasts the invocation that way, and
   * members already launched need no token.
   */
  private launchAllowance(): { take(members: readonly Member[], ms: number): { now: Member[]; later: Member[] } } {
    const tokens = this.deps.launchTokens;
    let left: number | undefined;
    return {
      take(members, ms) {
        left ??= tokens ? tokens.instancesWithin(ms) : Number.POSITIVE_INFINITY;
        const done = members.filter((m) => instanceIdOfRecord(m.record) !== undefined);
        const todo = members
          .filter((m) => instanceIdOfRecord(m.record) === undefined)
          .sort((a, b) => (a.member.claim.nodeClaimName < b.member.claim.nodeClaimName ? -1 : 1));
        const granted = Math.max(0, Math.min(todo.length, Math.floor(left)));
        left -= granted;
        return { now: [...done, ...todo.slice(0, granted)], later: todo.slice(granted) };
      },
    };
  }

  /** Recorded claims as batch members, their launch rebuilt from the record (the ones that cannot be, failed). */
  private recorded(claims: readonly RecordedClaimToLaunch[], results: ClaimLaunchResult[]): Member[] {
    const out: Member[] = [];
    for (const { nodeClaimName, nodePool, record, instanceTypes } of claims) {
      try {
        const nodeClass = this.nodeClassOf(nodePool);
        const claim = launchClaimFromRecord({ record, nodePool, nodeClass, instanceTypes });
        out.push({ member: { nodeClass, claim }, record });
      } catch (error) {
        results.push({ nodeClaimName, error });
      }
    }
    return out;
  }

  private prepare(request: NodeClaimToLaunch): PlannedMember {
    const { nodeClaimName, nodePool, claim } = request;
    const nodeClass = this.nodeClassOf(nodePool);
    return { request, nodeClass, claim: launchClaimFromPlan({ nodeClaimName, claim, nodePool, nodeClass }) };
  }

  private recordOf({ request, nodeClass }: PlannedMember): NodeClaimRecord {
    const { nodeClaimName, nodePool, claim } = request;
    const shaped = nodeClaimFromPlan({ claim, nodePool, nodeClass, seed: nodeClaimName });
    return launchRecord({
      shaped: { ...shaped, name: nodeClaimName },
      claim,
      nodePool,
      nodeClass,
      now: this.deps.clock(),
    });
  }

  /** One batch: its launched members recorded and tagged, the others with their error. */
  private async launchMembers(batchId: string, members: readonly Member[]): Promise<ClaimLaunchResult[]> {
    const { launchBatch, tagClaim } = this.deps.launcher;
    const first = members[0];
    if (!first) return [];
    const done: ClaimLaunchResult[] = [];
    const toLaunch = members.filter(({ member, record }) => {
      const id = instanceIdOfRecord(record);
      if (!id) return true;
      // Launched by an earlier attempt: its record says where.
      done.push({ nodeClaimName: member.claim.nodeClaimName, launched: launchedFromRecord(record, id) });
      return false;
    });
    if (toLaunch.length === 0) return done;
    // A batch of one launches with the claim's own tags and token; what is left of a larger batch
    // launches as that batch, which adopts what an earlier attempt launched under the batch's tag.
    const only = toLaunch.length === 1 ? toLaunch[0] : undefined;
    const alone = only !== undefined && batchId === launchBatchId([only.member.claim.nodeClaimName]);
    let outcome: Map<string, BatchLaunched | Error>;
    try {
      const resolved = await this.resolve(first.member.nodeClass);
      if (only && (alone || !launchBatch)) outcome = await this.single(only.member);
      else if (launchBatch) {
        outcome = await launchBatch.call(
          this.deps.launcher,
          toLaunch.map(({ member }) => member.claim),
          resolved,
          batchId,
        );
      } else throw new Error('this launcher cannot launch several claims as one batch');
    } catch (error) {
      return [...done, ...toLaunch.map(({ member }) => ({ nodeClaimName: member.claim.nodeClaimName, error }))];
    }
    const settled = await Promise.all(
      toLaunch.map(async ({ member, record }) => {
        const name = member.claim.nodeClaimName;
        const got = outcome.get(name) ?? new Error(`NodeClaim ${name}: the batch returned nothing for it`);
        if (got instanceof Error) {
          if (got instanceof InsufficientCapacityError || got instanceof LaunchError) {
            await this.deps.records.deleteNodeClaim(name);
          }
          return { nodeClaimName: name, error: got };
        }
        try {
          await this.recordLaunch(record, got, member.claim.instanceTypes);
          if (!got.tagged) {
            if (!tagClaim)
              throw new Error(
                `NodeClaim ${name}: instance ${got.instanceId} needs its tags, and this launcher cannot tag`,
              );
            await tagClaim.call(this.deps.launcher, got.instanceId, name, member.nodeClass);
          }
          const { tagged: _tagged, ...instance } = got;
          return { nodeClaimName: name, launched: instance };
        } catch (error) {
          return { nodeClaimName: name, error };
        }
      }),
    );
    return [...done, ...settled];
  }

  /** A batch of one launches as a single claim: its own tags and token at launch. */
  private async single(member: Prepared): Promise<Map<string, BatchLaunched | Error>> {
    const name = member.claim.nodeClaimName;
    try {
      const launched = await this.deps.launcher.launch(member.claim, await this.resolve(member.nodeClass));
      return new Map([[name, { ...launched, tagged: true }]]);
    } catch (error) {
      return new Map([[name, error instanceof Error ? error : new Error(String(error))]]);
    }
  }

  private nodeClassOf(nodePool: NodeClaimToLaunch['nodePool']): EC2NodeClass {
    const ref = nodePool.spec.template.spec.nodeClassRef.name;
    const nodeClass = this.deps.nodeClasses.find((c) => c.metadata.name === ref);
    if (!nodeClass) {
      throw new Error(`NodePool/${nodePool.metadata.name}: EC2NodeClass/${ref} is not in the bundled configuration`);
    }
    return nodeClass;
  }

  private async settleOne(
    request: NodeClaimToLaunch,
    work: () => Promise<LaunchedInstance>,
  ): Promise<ClaimLaunchResult> {
    try {
      return { nodeClaimName: request.nodeClaimName, launched: await work() };
    } catch (error) {
      return { nodeClaimName: request.nodeClaimName, error };
    }
  }

  /** The claim's record: the one a previous attempt wrote, or a new one (first writer wins). */
  private async ensureRecord(record: NodeClaimRecord): Promise<NodeClaimRecord> {
    const name = record.metadata.name;
    const existing = await this.deps.records.getNodeClaim(name);
    if (existing?.metadata.deletionTimestamp !== undefined) {
      throw new LaunchError(name, [
        { offering: '', code: 'NodeClaimDeleting', message: 'the NodeClaim is marked for deletion; nothing launched' },
      ]);
    }
    if (existing) return existing;
    const created = await this.deps.records.createNodeClaim(record);
    if (!created) {
      throw new NodeClaimRecordError(
        `NodeClaim ${name}: another invocation wrote its record first; nothing launched, the batch is retried`,
      );
    }
    return created;
  }

  /** Completes the record from what EC2 launched (Launched=True), unless it already says so. */
  private async recordLaunch(
    record: NodeClaimRecord,
    launched: LaunchedInstance,
    types: NodeClaimToLaunch['claim']['instanceTypes'],
  ): Promise<void> {
    const providerID = `aws:///${launched.zone}/${launched.instanceId}`;
    let current: NodeClaimRecord | undefined = record;
    for (let attempt = 0; attempt < RECORD_UPDATE_ATTEMPTS && current; attempt++) {
      if (isConditionTrue(current, 'Launched') && current.status.providerID === providerID) return;
      const updated = await this.deps.records.updateNodeClaim(
        launchedRecord(current, launched, types, this.deps.clock()),
      );
      if (updated) return;
      current = await this.deps.records.getNodeClaim(record.metadata.name);
    }
    throw new NodeClaimRecordError(
      `NodeClaim ${record.metadata.name}: instance ${launched.instanceId} launched but its record could not be ` +
        'marked Launched (changed or deleted concurrently); the batch is retried and finds the instance',
    );
  }
}

interface Prepared {
  /** Absent for a claim launched from its record. */
  request?: NodeClaimToLaunch;
  nodeClass: EC2NodeClass;
  claim: LaunchClaim;
}

/** A batch member with its record. */
interface Member {
  member: Prepared;
  record: NodeClaimRecord;
}

type PlannedMember = Prepared & { request: NodeClaimToLaunch };

function deferredResult({ member }: Member): ClaimLaunchResult {
  return { nodeClaimName: member.claim.nodeClaimName, deferred: true };
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function withAnnotation(record: NodeClaimRecord, key: string, value: string): NodeClaimRecord {
  return { ...record, metadata: { ...record.metadata, annotations: { ...record.metadata.annotations, [key]: value } } };
}

function instanceIdOfRecord(record: NodeClaimRecord): string | undefined {
  if (!isConditionTrue(record, 'Launched')) return undefined;
  const id = record.status.providerID?.split('/').pop();
  return id?.startsWith('i-') ? id : undefined;
}

/** A claim an earlier attempt launched, as its record describes it. */
function launchedFromRecord(record: NodeClaimRecord, instanceId: string): LaunchedInstance {
  const labels = record.metadata.labels;
  const capacityType = labels['karpenter.sh/capacity-type'];
  return {
    instanceId,
    instanceType: labels['node.kubernetes.io/instance-type'] ?? '',
    zone: labels['topology.kubernetes.io/zone'] ?? '',
    capacityType: capacityType === 'spot' || capacityType === 'reserved' ? capacityType : 'on-demand',
    ...(record.status.imageID ? { imageId: record.status.imageID } : {}),
    existing: true,
  };
}
