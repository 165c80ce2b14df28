// The drift function's run (on an `EC2 AMI State Change` event or a schedule): re-resolve every
// EC2NodeClass, plan what is drifted or expired (shared/disruption planDisruption), and move each
// node one step through its disruption, resuming where the previous invocation stopped:
//
//   candidate ──budget slot (conditional write) + record + karpenter.sh/disrupted taint──►
//   replacing ──replacements launched through the provision launch path, then Initialized──►
//   draining ──drain record + Node deleted: the watcher's termination flow (PDBs, do-not-disrupt)──►
//   done ──Node gone──► slot released, record deleted
//
// Replacements are named after the old instance, so a redelivered event re-finds them instead of
// launching twice; a record makes the next invocation resume instead of starting again.
// After drift and expiration, the same machine carries out at most one consolidation command
// (drift-consolidation.ts: multi-node, else single-node): reason Underutilized, a cheaper
// replacement first or none at all. Each run also dates the claims' last pod events.

import type { Node, Pod } from '../apis/core/v1';
import type { EC2NodeClass, EC2NodeClassStatus, NodePool } from '../apis/v1/types';
import { AMI_STATE_CHANGE, KUBE, METRIC } from '../contracts';
import { budgetLimit } from '../disruption/budgets';
import { type PdbLimits, pdbLimits } from '../disruption/candidates';
import type { NodeClassToday } from '../disruption/drift';
import { claimTerminationGracePeriodMs } from '../disruption/expiration';
import { releaseBudgetSlot, reserveBudgetSlot } from '../disruption/ledger';
import { type CandidateDecision, type ClusterNode, type DisruptionPlan, planDisruption } from '../disruption/plan';
import type { KubeClient } from '../kube/types';
import { nodeClaimName } from '../nodeclaim';
import type { NodeClaimRecord } from '../nodeclaim/record';
import { capacityFromCatalog, type NodePoolUsage, nodePoolUsage } from '../nodeclaim/usage';
import { noticeDaemonSetFromDaemonSet, podFromNoticeDaemonSet } from '../notice';
import { errorMessage } from '../providers/aws-errors';
import type { Sleep } from '../providers/clock';
import type { DisruptionRecord, DisruptionState, NodeClaimStore } from '../providers/state';
import { type ClaimRecordsDeps, readClaims, recordOf } from './claims';
import type { DrainDeps } from './drain';
import { recordDisruptionConditions } from './drift-conditions';
import { type ConsolidationOutcome, consolidateAfterDrift, recordPodEvents } from './drift-consolidation';
import { publishGauges } from './drift-metrics';
import { type NodeClaimObjects, nodeClaimEvent, nodeEvent, recorderFor } from './events';
import { type ClaimInstance, type ClaimInstances, instanceIdFromProviderID } from './instances';
import type { NodeClassStatusWriter } from './nodeclass-status';
import { deletionTimestamp, podsByNode } from './objects';
import type { ClaimLauncher, ResolvedInstanceTypes } from './provision';
import { type RepairOutcome, repairNodes } from './repair';
import { beginTermination } from './termination';

/** Disruption records outlive the longest drain we wait for; a stale one is dropped by its TTL. */
export const DISRUPTION_RECORD_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * How long replacements may take to be Initialized before the command is abandoned and the old node
 * un-tainted (upstream's orchestration queue: minRetryDuration, 10 minutes). Expiration drains anyway.
 */
export const REPLACEMENT_TIMEOUT_MS = 10 * 60 * 1000;

export type DriftTrigger = { kind: 'schedule' } | { kind: 'ami'; imageId: string; state: string };

/**
 * The event the function was invoked with: an `EC2 AMI State Change` delivered directly by its rule,
 * or the schedule's event. Any AMI state counts (a deregistered image changes what resolves too);
 * the run re-resolves every node class whatever the image was. Undefined for anything else.
 */
export function parseDriftTrigger(event: unknown): DriftTrigger | undefined {
  const e = event as {
    source?: unknown;
    'detail-type'?: unknown;
    detail?: { ImageId?: unknown; State?: unknown };
  } | null;
  if (!e || typeof e !== 'object') return undefined;
  if (e.source === AMI_STATE_CHANGE.source && e['detail-type'] === AMI_STATE_CHANGE.detailType) {
    return { kind: 'ami', imageId: String(e.detail?.ImageId ?? ''), state: String(e.detail?.State ?? '') };
  }
  if (e.source === 'aws.events' && e['detail-type'] === 'Scheduled Event') return { kind: 'schedule' };
  return undefined;
}

/** What one run resolved: node classes as they are now and a launcher that uses those AMIs. */
export interface DriftSession {
  nodeClasses: Map<string, NodeClassToday>;
  launcher: ClaimLauncher;
  /** Each node class's status as resolved this run, for its EC2NodeClass object. */
  statuses?: Map<string, EC2NodeClassStatus>;
}

export interface DriftDeps extends DrainDeps, ClaimRecordsDeps {
  cluster: string;
  nodePools: NodePool[];
  nodeClasses: EC2NodeClass[];
  /** Resolves every node class now, past any AMI cache: a release must be seen at once. */
  session(): Promise<DriftSession>;
  instanceTypes(): Promise<ResolvedInstanceTypes>;
  instances: Pick<ClaimInstances, 'live' | 'terminate'>;
  kube: DrainDeps['kube'] &
    Pick<KubeClient, 'listNodes' | 'listDaemonSets' | 'listPodDisruptionBudgets'> &
    Partial<Pick<KubeClient, 'createEvent'>>;
  state: DrainDeps['state'] & DisruptionState;
  /** Waits out consolidation's validation delay; absent, the command is re-validated at once. */
  sleep?: Sleep;
  /** Writes lastPodEventTime onto the claim records; absent, consolidateAfter counts from initialization. */
  claimUpdates?: Pick<NodeClaimStore, 'updateNodeClaim'>;
  /** Karpenter's SpotToSpotConsolidation feature gate: off, as upstream's default. */
  spotToSpotConsolidation?: boolean;
  /** Karpenter's NodeRepair feature gate (the Provisioner's nodeRepair prop): off, as upstream's default. */
  nodeRepair?: boolean;
  /** NodeClaim objects, where Karpenter's CRDs are installed: disruption events go on them too. */
  nodeClaimObjects?: NodeClaimObjects;
  /** The NodeClaim of a node, for its events; runDrift sets it from its snapshot. */
  nodeClaimOf?: (nodeName: string) => string | undefined;
  /** Writes the session's node-class statuses onto the cluster's EC2NodeClass objects (nodeclass-status.ts). */
  nodeClassStatus?: Pick<NodeClassStatusWriter, 'write'>;
}

export interface DriftReport {
  trigger: DriftTrigger['kind'];
  candidates: number;
  started: { node: string; reason: string; detail: string; replacements: string[] }[];
  blocked: { node: string; reason: string; message: string }[];
  /** Old nodes handed to the termination flow (their replacements Initialized). */
  draining: string[];
  /** Records waiting for replacements to be Initialized. */
  waiting: string[];
  finished: string[];
  abandoned: { node: string; why: string }[];
  excluded: { nodeName: string; reason: string }[];
  /** Single-node consolidation, looked for after drift and expiration (drift-consolidation.ts). */
  consolidation?: ConsolidationOutcome;
  /** Node repair, first in the run (repair.ts); absent when nodeRepair is off. */
  repair?: RepairOutcome;
}

/**
 * Publishes one of upstream's disruption events on the Node (DisruptionBlocked, Unconsolidatable,
 * DisruptionLaunching, DisruptionWaitingReadiness, DisruptionTerminating), and on its NodeClaim object
 * where Karpenter's CRDs are installed, as upstream publishes both; best effort.
 */
export async function disruptionEvent(
  deps: DriftDeps,
  nodeName: string,
  reason: string,
  message: string,
): Promise<void> {
  const kube = deps.kube;
  if (!kube.createEvent) return;
  // Keyed on the client itself, so repeats are deduplicated across the calls of a warm function.
  const recorder = recorderFor(kube as Pick<KubeClient, 'createEvent'>, deps.clock, deps.log);
  await recorder.publish(nodeEvent(nodeName, 'Normal', reason, message));
  const claim = deps.nodeClaimOf?.(nodeName);
  if (!claim || !deps.nodeClaimObjects) return;
  const event = await nodeClaimEvent(deps.nodeClaimObjects, deps.log, claim, { type: 'Normal', reason, message });
  if (event) await recorder.publish(event);
}

/** Node name → NodeClaim name of our nodes in the snapshot (its record's, else its instance tag's). */
export function nodeClaimNames(snap: Pick<Snapshot, 'live' | 'pods' | 'nodes' | 'claims'>): Map<string, string> {
  const out = new Map<string, string>();
  const tagged = new Map(snap.live.map((i) => [i.instanceId, i.nodeClaimName]));
  for (const n of clusterNodes(snap).ours) {
    const name = n.record?.metadata.name ?? tagged.get(n.instance.instanceId);
    if (name) out.set(n.node.metadata.name, name);
  }
  return out;
}

/** Everything one run decides from, read at its start. */
export interface Snapshot {
  session: DriftSession;
  types: ResolvedInstanceTypes;
  live: ClaimInstance[];
  nodes: Node[];
  pods: Pod[];
  daemonSets: Pod[];
  records: DisruptionRecord[];
  drains: Set<string>;
  /** NodeClaim records. */
  claims: NodeClaimRecord[];
  /** The cluster's PodDisruptionBudgets, compiled. */
  pdbs: PdbLimits;
}

export async function takeSnapshot(deps: DriftDeps): Promise<Snapshot> {
  const [session, types, live, nodes, pods, daemonSets, records, drains, claims, pdbs] = await Promise.all([
    deps.session(),
    deps.instanceTypes(),
    deps.instances.live(),
    deps.kube.listNodes(),
    deps.kube.listPods(),
    deps.kube.listDaemonSets(),
    deps.state.disruptionRecords(),
    deps.state.drains(),
    readClaims(deps),
    deps.kube.listPodDisruptionBudgets(),
  ]);
  return {
    pdbs: pdbLimits(pdbs.items),
    session,
    types,
    live,
    nodes: nodes.items,
    pods: pods.items,
    daemonSets: daemonSets.items.map((d) => podFromNoticeDaemonSet(noticeDaemonSetFromDaemonSet(d))),
    records,
    drains: new Set(drains.map((d) => d.nodeName)),
    claims,
  };
}

/** Our nodes (their instance is one of this cluster's) and everyone else's, each with its pods. */
export function clusterNodes(snap: Pick<Snapshot, 'live' | 'pods' | 'nodes' | 'claims'>): {
  ours: ClusterNode[];
  others: { node: Node; pods: Pod[] }[];
} {
  const byId = new Map(snap.live.map((i) => [i.instanceId, i]));
  const pods = podsByNode(snap.pods);
  const ours: ClusterNode[] = [];
  const others: { node: Node; pods: Pod[] }[] = [];
  for (const node of snap.nodes) {
    const instance = byId.get(instanceIdFromProviderID(node.spec?.providerID) ?? '');
    const bound = pods.get(node.metadata.name) ?? [];
    const record = instance && recordOf(snap.claims, instance);
    if (instance) ours.push({ node, instance, pods: bound, ...(record ? { record } : {}) });
    else others.push({ node, pods: bound });
  }
  return { ours, others };
}

/**
 * Per NodePool, the nodes disrupting now: with a disruption record, or being deleted or drained.
 * A node whose instance is already gone still counts until its Node is: the drain is not over.
 */
export function disruptingByPool(snap: Snapshot, ours: readonly ClusterNode[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (pool: string, name: string) => out.set(pool, new Set([...(out.get(pool) ?? []), name]));
  for (const record of snap.records) add(record.nodePool, record.nodeName);
  const poolOf = new Map(ours.map((n) => [n.node.metadata.name, n.instance.nodePool]));
  for (const node of snap.nodes) {
    const name = node.metadata.name;
    const pool = poolOf.get(name) ?? node.metadata.labels?.['karpenter.sh/nodepool'];
    if (pool && (deletionTimestamp(node) || snap.drains.has(name))) add(pool, name);
  }
  return out;
}

/**
 * What each NodePool's claims hold, counted against its limits by replacements: every live claim but
 * those disrupting now (their replacements, live too, count instead).
 */
export function usageOf(snap: Snapshot, disrupting: ReadonlyMap<string, ReadonlySet<string>>): NodePoolUsage {
  return nodePoolUsage({
    records: snap.claims,
    instances: snap.live,
    nodes: snap.nodes,
    typeCapacity: capacityFromCatalog(snap.types.byNodePool),
    deleting: { nodeNames: new Set([...disrupting.values()].flatMap((names) => [...names])) },
  });
}

export interface PlannedRun {
  plan: DisruptionPlan;
  ours: ClusterNode[];
  /** NodePool → nodes disrupting now (the plan's input; start() adds what it starts). */
  disrupting: Map<string, Set<string>>;
}

export function planFromSnapshot(deps: DriftDeps, snap: Snapshot): PlannedRun {
  const { ours, others } = clusterNodes(snap);
  const disrupting = disruptingByPool(snap, ours);
  const plan = planDisruption({
    now: deps.clock(),
    nodes: ours,
    otherNodes: others,
    nodePools: deps.nodePools,
    nodeClasses: snap.session.nodeClasses,
    instanceTypeLabels: (pool, type) => snap.types.byNodePool[pool]?.find((t) => t.name === type)?.labels,
    isEvictable: deps.isEvictable,
    pdbs: snap.pdbs,
    instanceTypes: snap.types.byNodePool,
    daemonSets: snap.daemonSets,
    disrupting,
    nodePoolUsage: usageOf(snap, disrupting),
  });
  return { plan, ours, disrupting: new Map([...disrupting].map(([pool, set]) => [pool, new Set(set)])) };
}

export async function taint(deps: DriftDeps, name: string, on: boolean): Promise<void> {
  const node = await deps.kube.getNode(name);
  if (!node) return;
  const taints = node.spec?.taints ?? [];
  const has = taints.some((t) => t.key === KUBE.disruptedTaintKey);
  if (has === on) return;
  const next = on
    ? [...taints, { key: KUBE.disruptedTaintKey, effect: 'NoSchedule' as const }]
    : taints.filter((t) => t.key !== KUBE.disruptedTaintKey);
  await deps.kube.patchNode(name, { spec: { taints: next } });
}

/**
 * Hands the old node to the termination path: its claim marked for deletion (the deadline is the
 * claim's own terminationGracePeriod from then), a drain record, then the Node deleted.
 */
export async function handOver(
  deps: DriftDeps,
  snap: Pick<Snapshot, 'claims' | 'live'>,
  record: DisruptionRecord,
): Promise<void> {
  const pool = deps.nodePools.find((p) => p.metadata.name === record.nodePool);
  const instance = snap.live.find((i) => i.instanceId === record.instanceId) ?? { instanceId: record.instanceId };
  const claim = recordOf(snap.claims, instance);
  const grace = claimTerminationGracePeriodMs(claim, pool);
  const nodeClaimName = claim?.metadata.name ?? ('nodeClaimName' in instance ? instance.nodeClaimName : undefined);
  await beginTermination(deps, {
    nodeName: record.nodeName,
    instanceId: record.instanceId,
    ...(nodeClaimName ? { nodeClaimName } : {}),
    reason: record.reason,
    ...(grace !== undefined ? { fallbackGraceMs: grace } : {}),
  });
  await deps.state.putDisruption({ ...record, phase: 'draining' });
  await disruptionEvent(deps, record.nodeName, 'DisruptionTerminating', `Disrupting Node: ${record.reason}`);
  deps.metrics.record(METRIC.disruptions, 'Count', 1, { nodePool: record.nodePool, reason: record.reason });
  deps.log.info('disrupted node handed to termination', {
    node: record.nodeName,
    reason: record.reason,
    detail: record.detail,
  });
}

/**
 * Every replacement is Initialized (upstream waits on the NodeClaim's Initialized condition, not on
 * registration): its Node carries karpenter.sh/initialized, or its claim record says Initialized.
 * A replacement that registered but stays NotReady keeps the old node.
 */
export function replacementsInitialized(
  snap: Pick<Snapshot, 'live' | 'nodes' | 'claims'>,
  record: Pick<DisruptionRecord, 'replacements'>,
): boolean {
  const ids = new Set(snap.live.filter((i) => record.replacements.includes(i.nodeClaimName)).map((i) => i.instanceId));
  const ready = new Set<string>();
  for (const n of snap.nodes) {
    const id = instanceIdFromProviderID(n.spec?.providerID) ?? '';
    if (ids.has(id) && n.metadata.labels?.[KUBE.initializedLabel] === 'true') ready.add(id);
  }
  for (const claim of snap.claims) {
    const id = instanceIdFromProviderID(claim.status.providerID) ?? '';
    const initialized = claim.status.conditions.some((c) => c.type === 'Initialized' && c.status === 'True');
    if (ids.has(id) && initialized) ready.add(id);
  }
  return ready.size >= record.replacements.length;
}

export async function finish(deps: DriftDeps, record: DisruptionRecord): Promise<void> {
  await releaseBudgetSlot(deps.state, record.nodePool, record.nodeName);
  await deps.state.deleteDisruption(record.nodeName);
}

/** Takes each recorded disruption one step further; returns the nodes it moved and why. */
async function progress(deps: DriftDeps, snap: Snapshot, report: DriftReport): Promise<void> {
  const nodes = new Map(snap.nodes.map((n) => [n.metadata.name, n]));
  for (const record of snap.records) {
    const node = nodes.get(record.nodeName);
    try {
      if (!node && !snap.drains.has(record.nodeName)) {
        await finish(deps, record);
        report.finished.push(record.nodeName);
        deps.log.info('disruption finished', { node: record.nodeName, reason: record.reason });
      } else if (record.phase === 'replacing' && replacementsInitialized(snap, record)) {
        await handOver(deps, snap, record);
        report.draining.push(record.nodeName);
      } else if (record.phase === 'replacing' && deps.clock() - record.startedAt > REPLACEMENT_TIMEOUT_MS) {
        if (record.reason === 'Expired') {
          await handOver(deps, snap, record);
          report.draining.push(record.nodeName);
        } else {
          if (node) await taint(deps, node.metadata.name, false);
          await finish(deps, record);
          const why = `replacements ${record.replacements.join(',')} were not Initialized within ${REPLACEMENT_TIMEOUT_MS / 60_000} min; the node is un-tainted and stays`;
          report.abandoned.push({ node: record.nodeName, why });
          deps.log.warn('disruption abandoned', { node: record.nodeName, why });
        }
      } else if (record.phase === 'replacing') {
        report.waiting.push(record.nodeName);
        await disruptionEvent(
          deps,
          record.nodeName,
          'DisruptionWaitingReadiness',
          'Waiting on readiness to continue disruption',
        );
      }
    } catch (error) {
      deps.metrics.record(METRIC.actionFailures, 'Count', 1);
      deps.log.warn('disruption step failed, will retry', { node: record.nodeName, error: errorMessage(error) });
    }
  }
}

/**
 * Named after the old instance and the start, and kept in the record: a resumed run finds the same
 * replacements, while a new start after an abandoned one launches new ones instead of re-finding the
 * replacement that never registered (and its CreateFleet client token).
 */
function replacementNames(decision: CandidateDecision, startedAt: number): string[] {
  const { candidate } = decision;
  return decision.replacement.nodeClaims.map((c, i) =>
    nodeClaimName(c.nodePool, `disruption/${candidate.instanceId}/${startedAt}/${i}`),
  );
}

/** Starts one allowed candidate: slot, record, taint, replacements launched (then drained once registered). */
export async function startDisruption(
  deps: DriftDeps,
  snap: Pick<Snapshot, 'nodes' | 'session' | 'claims' | 'live'>,
  run: Pick<PlannedRun, 'ours' | 'disrupting'>,
  decision: CandidateDecision,
  report: DriftReport,
): Promise<void> {
  const { candidate } = decision;
  const pool = deps.nodePools.find((p) => p.metadata.name === candidate.nodePool);
  const node = snap.nodes.find((n) => n.metadata.name === candidate.nodeName);
  if (!pool || !node) return;
  const seen = run.disrupting.get(candidate.nodePool) ?? new Set<string>();
  run.disrupting.set(candidate.nodePool, seen);
  if (candidate.reason !== 'Expired') {
    const poolNodes = run.ours.filter((n) => n.instance.nodePool === candidate.nodePool).length;
    const limit = budgetLimit(pool, candidate.reason, { nodes: poolNodes, now: deps.clock() });
    if (!(await reserveBudgetSlot(deps.state, limit, candidate.nodeName, seen))) {
      report.blocked.push({
        node: candidate.nodeName,
        reason: candidate.reason,
        message: 'another invocation took the last budget slot',
      });
      return;
    }
  }
  const startedAt = deps.clock();
  const names = replacementNames(decision, startedAt);
  const record: DisruptionRecord = {
    nodeName: candidate.nodeName,
    instanceId: candidate.instanceId,
    nodePool: candidate.nodePool,
    reason: candidate.reason,
    detail: candidate.detail,
    replacements: names,
    phase: 'replacing',
    startedAt,
    expiresAt: startedAt + DISRUPTION_RECORD_TTL_MS,
  };
  await deps.state.putDisruption(record);
  seen.add(candidate.nodeName);
  try {
    await taint(deps, node.metadata.name, true);
    for (const [i, claim] of decision.replacement.nodeClaims.entries()) {
      // The scheduling core may place the pods in another NodePool than the old node's.
      const claimPool = deps.nodePools.find((p) => p.metadata.name === claim.nodePool) ?? pool;
      const launched = await snap.session.launcher.launch({
        nodeClaimName: names[i] ?? '',
        nodePool: claimPool,
        claim,
      });
      deps.log.info('replacement launched', {
        node: candidate.nodeName,
        nodeclaim: names[i],
        instanceId: launched.instanceId,
        instanceType: launched.instanceType,
      });
    }
  } catch (error) {
    await taint(deps, node.metadata.name, false).catch(() => undefined);
    await finish(deps, record);
    throw error;
  }
  deps.metrics.record(METRIC.disruptionDecisions, 'Count', 1, {
    nodePool: candidate.nodePool,
    reason: candidate.reason,
    decision: names.length > 0 ? 'replace' : 'delete',
  });
  report.started.push({
    node: candidate.nodeName,
    reason: candidate.reason,
    detail: candidate.detail,
    replacements: names,
  });
  if (names.length > 0) {
    await disruptionEvent(deps, candidate.nodeName, 'DisruptionLaunching', `Launching NodeClaim: ${candidate.reason}`);
  }
  deps.log.info('disruption started', {
    node: candidate.nodeName,
    reason: candidate.reason,
    detail: candidate.detail,
    replacements: names,
  });
  // Nothing to wait for: its pods fit elsewhere (or it has none).
  if (names.length === 0) {
    await handOver(deps, snap, record);
    report.draining.push(candidate.nodeName);
  }
}

/** One run: resume recorded disruptions, then start the candidates the budgets allow now. */
export async function runDrift(given: DriftDeps, trigger: DriftTrigger): Promise<DriftReport> {
  const taken = await takeSnapshot(given);
  const claimOf = nodeClaimNames(taken);
  const deps: DriftDeps = { ...given, nodeClaimOf: (node) => claimOf.get(node) };
  if (taken.session.statuses) await deps.nodeClassStatus?.write(taken.session.statuses);
  const withEvents = { ...taken, claims: await recordPodEvents(deps, taken) };
  const conditioned = { ...withEvents, claims: await recordDisruptionConditions(deps, withEvents) };
  // Repair first: a node it terminates is deleting for the rest of the run, so nothing else picks it.
  const { outcome: repair, snap } = await repairNodes(deps, conditioned);
  const report: DriftReport = {
    trigger: trigger.kind,
    candidates: 0,
    started: [],
    blocked: [],
    draining: [],
    waiting: [],
    finished: [],
    abandoned: [],
    excluded: [],
    ...(repair ? { repair } : {}),
  };
  await progress(deps, snap, report);
  // What progress() finished no longer disrupts; what it abandoned is not started again this run.
  const finished = new Set(report.finished);
  const run = planFromSnapshot(deps, { ...snap, records: snap.records.filter((r) => !finished.has(r.nodeName)) });
  const { plan } = run;
  report.candidates = plan.decisions.length;
  report.excluded = plan.excluded;
  for (const e of plan.excluded) await disruptionEvent(deps, e.nodeName, 'DisruptionBlocked', e.reason);
  const recorded = new Set([...snap.records.map((r) => r.nodeName), ...report.abandoned.map((a) => a.node)]);
  for (const decision of plan.decisions) {
    const name = decision.candidate.nodeName;
    if (recorded.has(name)) continue;
    if (!decision.allowed) {
      report.blocked.push({ node: name, reason: decision.candidate.reason, message: decision.budget.message });
      await disruptionEvent(deps, name, 'DisruptionBlocked', decision.budget.message);
      continue;
    }
    try {
      await startDisruption(deps, snap, run, decision, report);
    } catch (error) {
      deps.metrics.record(METRIC.actionFailures, 'Count', 1);
      deps.log.error('starting a disruption failed, will retry', { node: name, error: errorMessage(error) });
      report.abandoned.push({ node: name, why: errorMessage(error) });
    }
  }
  // Karpenter's order: drift and expiration first, then at most one consolidation command.
  report.consolidation = await consolidateAfterDrift(deps, snap, report);
  publishGauges(deps, run, report);
  return report;
}
