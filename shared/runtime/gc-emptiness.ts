// The emptiness pass of the gc function: stamp nodes that became empty, and hand those empty past
// consolidateAfter to the termination flow within their NodePool's Empty budgets (decisions in
// shared/disruption/emptiness.ts). A node handed over gets a budget slot on the state table's ledger,
// a disruption record (reason Empty) and a drain record, then its Node is deleted: the watcher
// drains it (PDBs and do-not-disrupt respected) and terminates its instance. Once the Node is gone
// a later run gives the slot back.

import type { Node, Pod } from '../apis/core/v1';
import type { NodePool } from '../apis/v1/types';
import { METRIC } from '../contracts';
import { type BudgetMember, budgetCounts, budgetLimit } from '../disruption/budgets';
import {
  decideEmptyDisruptions,
  EMPTY_SINCE_ANNOTATION,
  type EmptinessStep,
  type EmptinessSubject,
  type EmptyDecision,
  findEmptyNodes,
} from '../disruption/emptiness';
import { claimTerminationGracePeriodMs } from '../disruption/expiration';
import { releaseBudgetSlot, reserveBudgetSlot } from '../disruption/ledger';
import { budgetMember } from '../disruption/plan';
import type { BudgetLimit } from '../disruption/types';
import type { KubeClient } from '../kube/types';
import { errorMessage } from '../providers/aws-errors';
import type { DisruptionRecord, DisruptionState, FullStateStore } from '../providers/state';
import { type ClaimRecordsDeps, readClaims, recordOf } from './claims';
import type { DrainDeps } from './drain';
import { type ClaimInstance, type ClaimInstances, instanceIdFromProviderID } from './instances';
import { deletionTimestamp, podsByNode } from './objects';
import { beginTermination } from './termination';

/** Emptiness records live as long as drift's: the drain they start may wait on PDBs for days. */
export const EMPTY_RECORD_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The reasons whose records this pass finishes (drift finishes its own, Underutilized included). */
const OWN_REASONS = new Set(['Empty']);

export interface EmptinessDeps extends DrainDeps, ClaimRecordsDeps {
  nodePools: NodePool[];
  instances: DrainDeps['instances'] & Pick<ClaimInstances, 'live'>;
  kube: DrainDeps['kube'] & Pick<KubeClient, 'listPods' | 'patchNode' | 'deleteNode'>;
  state: DrainDeps['state'] & DisruptionState & Pick<FullStateStore, 'nominations'>;
}

export interface EmptinessReport {
  marked: string[];
  cleared: string[];
  /** Nodes handed to the termination flow as Empty. */
  disrupted: { node: string; nodePool: string; detail: string }[];
  blocked: { node: string; message: string }[];
  /** Empty disruptions whose Node is gone: slot released, record deleted. */
  finished: string[];
}

interface View {
  subjects: EmptinessSubject[];
  disrupting: Map<string, Set<string>>;
  poolSizes: Map<string, number>;
}

/**
 * `awaited`: NodeClaims pods are on their way to (nominated by the provision function, or the
 * replacements of a disruption in progress). Such a node is empty only until its pods bind, and
 * with Karpenter's default consolidateAfter of 0s it would otherwise be removed in that window.
 */
function view(
  nodes: readonly Node[],
  live: readonly ClaimInstance[],
  pods: readonly Pod[],
  busy: ReadonlySet<string>,
  awaited: ReadonlySet<string>,
): View {
  const byId = new Map(live.map((i) => [i.instanceId, i]));
  const bound = podsByNode(pods);
  const subjects: EmptinessSubject[] = [];
  const members: BudgetMember[] = [];
  for (const node of nodes) {
    const instance = byId.get(instanceIdFromProviderID(node.spec?.providerID) ?? '');
    if (!instance) continue;
    const name = node.metadata.name;
    const deleting = deletionTimestamp(node) !== undefined || busy.has(name);
    // Budgets count as drift and consolidation do: the pool's initialized nodes, with the NotReady
    // and deleting ones among them using the budget up.
    members.push(budgetMember(node, instance.nodePool, deleting));
    if (deleting || awaited.has(instance.nodeClaimName)) continue;
    subjects.push({ node, nodePool: instance.nodePool, pods: bound.get(name) ?? [] });
  }
  const counts = budgetCounts(members);
  const poolSizes = new Map([...counts].map(([pool, count]) => [pool, count.nodes]));
  const disrupting = new Map([...counts].map(([pool, count]) => [pool, count.disrupting]));
  return { subjects, disrupting, poolSizes };
}

/** The NodeClaims of live nominations and of the replacements of disruptions in progress. */
export function awaitedClaims(
  records: readonly DisruptionRecord[],
  nominations: readonly { nodeClaimName: string; podUids: string[] }[],
): Set<string> {
  return new Set([
    ...records.flatMap((r) => r.replacements),
    ...nominations.filter((n) => n.podUids.length > 0).map((n) => n.nodeClaimName),
  ]);
}

async function finishGone(
  deps: EmptinessDeps,
  records: DisruptionRecord[],
  nodes: readonly Node[],
  drains: Set<string>,
) {
  const present = new Set(nodes.map((n) => n.metadata.name));
  const finished: string[] = [];
  for (const record of records) {
    if (!OWN_REASONS.has(record.reason) || present.has(record.nodeName) || drains.has(record.nodeName)) continue;
    await releaseBudgetSlot(deps.state, record.nodePool, record.nodeName);
    await deps.state.deleteDisruption(record.nodeName);
    finished.push(record.nodeName);
  }
  return finished;
}

async function stamp(deps: EmptinessDeps, nodeName: string, value: string | null): Promise<void> {
  await deps.kube.patchNode(nodeName, { metadata: { annotations: { [EMPTY_SINCE_ANNOTATION]: value } } });
}

/**
 * Hands a node to the termination path: its disruption record, then its claim marked for deletion
 * (the claim's terminationGracePeriod, else the NodePool's, runs from then), a drain record and the
 * Node deleted (the watcher drains it).
 */
export async function handToTermination(deps: EmptinessDeps, record: DisruptionRecord): Promise<void> {
  const pool = deps.nodePools.find((p) => p.metadata.name === record.nodePool);
  const claim = recordOf(await readClaims(deps), { instanceId: record.instanceId });
  const grace = claimTerminationGracePeriodMs(claim, pool);
  await deps.state.putDisruption(record);
  await beginTermination(deps, {
    nodeName: record.nodeName,
    instanceId: record.instanceId,
    ...(claim ? { nodeClaimName: claim.metadata.name } : {}),
    reason: record.reason,
    ...(grace !== undefined ? { fallbackGraceMs: grace } : {}),
  });
  deps.metrics.record(METRIC.disruptions, 'Count', 1, { nodePool: record.nodePool, reason: record.reason });
  deps.log.info('disrupted node handed to termination', {
    node: record.nodeName,
    reason: record.reason,
    detail: record.detail,
  });
}

/**
 * Takes a budget slot for the record's node (the ledger's conditional write), then hands the node
 * to the termination flow. 'no-slot' when another invocation took the last one; a failure gives
 * back what was taken, so the next run starts the node afresh instead of waiting on a record.
 */
export async function disruptWithinBudget(
  deps: EmptinessDeps,
  limit: BudgetLimit,
  seen: Set<string>,
  record: DisruptionRecord,
): Promise<'started' | 'no-slot' | 'failed'> {
  try {
    if (!(await reserveBudgetSlot(deps.state, limit, record.nodeName, seen))) return 'no-slot';
    seen.add(record.nodeName);
    await handToTermination(deps, record);
    return 'started';
  } catch (error) {
    await deps.state.deleteDisruption(record.nodeName).catch(() => undefined);
    await releaseBudgetSlot(deps.state, record.nodePool, record.nodeName).catch(() => undefined);
    deps.log.error('disrupting a node failed, will retry', {
      node: record.nodeName,
      reason: record.reason,
      error: errorMessage(error),
    });
    return 'failed';
  }
}

async function applySteps(deps: EmptinessDeps, steps: readonly EmptinessStep[], report: EmptinessReport) {
  for (const step of steps) {
    try {
      await stamp(deps, step.nodeName, step.kind === 'mark' ? new Date(step.at).toISOString() : null);
      (step.kind === 'mark' ? report.marked : report.cleared).push(step.nodeName);
    } catch (error) {
      deps.log.warn('stamping emptiness failed, will retry', { node: step.nodeName, error: errorMessage(error) });
    }
  }
}

/** One emptiness pass over the listed nodes. */
/**
 * What the next gc run would do about empty nodes, without changing anything: the nodes past their
 * consolidateAfter with the Empty budget's answer, and the empty ones still waiting (by their stamp;
 * a node not stamped yet starts its clock at the next run). For `karpless disruption`.
 */
export function previewEmptiness(input: {
  now: number;
  /** NodeClaims pods are on their way to (see view). */
  awaited: ReadonlySet<string>;
  nodes: readonly Node[];
  live: readonly ClaimInstance[];
  pods: readonly Pod[];
  /** Nodes with a disruption or drain record. */
  busy: ReadonlySet<string>;
  nodePools: readonly NodePool[];
  isEvictable(pod: Pod): boolean;
}): { decisions: EmptyDecision[]; waiting: { nodeName: string; nodePool: string; emptySince?: number }[] } {
  const { subjects, disrupting, poolSizes } = view(input.nodes, input.live, input.pods, input.busy, input.awaited);
  const { steps, candidates } = findEmptyNodes({ ...input, subjects });
  const due = new Set(candidates.map((c) => c.nodeName));
  const marked = new Map(steps.flatMap((s) => (s.kind === 'mark' ? [[s.nodeName, s.at] as const] : [])));
  const waiting = subjects.flatMap((s) => {
    const name = s.node.metadata.name;
    const stamp = Date.parse(s.node.metadata.annotations?.[EMPTY_SINCE_ANNOTATION] ?? '');
    const cleared = steps.some((step) => step.kind === 'clear' && step.nodeName === name);
    if (due.has(name) || cleared || (!marked.has(name) && !Number.isFinite(stamp))) return [];
    return [{ nodeName: name, nodePool: s.nodePool, ...(Number.isFinite(stamp) ? { emptySince: stamp } : {}) }];
  });
  const decisions = decideEmptyDisruptions({
    now: input.now,
    candidates,
    nodePools: input.nodePools,
    poolSizes,
    disrupting,
  });
  return { decisions, waiting };
}

export async function runEmptiness(deps: EmptinessDeps, nodes: readonly Node[]): Promise<EmptinessReport> {
  const report: EmptinessReport = { marked: [], cleared: [], disrupted: [], blocked: [], finished: [] };
  const [live, pods, records, drains, nominations] = await Promise.all([
    deps.instances.live(),
    deps.kube.listPods(),
    deps.state.disruptionRecords(),
    deps.state.drains(),
    deps.state.nominations(),
  ]);
  const drainNames = new Set(drains.map((d) => d.nodeName));
  report.finished = await finishGone(deps, records, nodes, drainNames);
  const busy = new Set([...drainNames, ...records.map((r) => r.nodeName)]);
  const { subjects, disrupting, poolSizes } = view(nodes, live, pods.items, busy, awaitedClaims(records, nominations));
  const now = deps.clock();
  const { steps, candidates } = findEmptyNodes({
    now,
    subjects,
    nodePools: deps.nodePools,
    isEvictable: deps.isEvictable,
  });
  await applySteps(deps, steps, report);
  const decisions = decideEmptyDisruptions({ now, candidates, nodePools: deps.nodePools, poolSizes, disrupting });
  const instanceOf = new Map(
    subjects.map((s) => [s.node.metadata.name, instanceIdFromProviderID(s.node.spec?.providerID) ?? '']),
  );
  for (const { candidate, allowed, budget } of decisions) {
    const pool = deps.nodePools.find((p) => p.metadata.name === candidate.nodePool);
    if (!allowed || !pool) {
      report.blocked.push({ node: candidate.nodeName, message: budget.message });
      continue;
    }
    const seen = disrupting.get(candidate.nodePool) ?? new Set<string>();
    disrupting.set(candidate.nodePool, seen);
    const limit = budgetLimit(pool, 'Empty', { nodes: poolSizes.get(candidate.nodePool) ?? 0, now });
    const outcome = await disruptWithinBudget(deps, limit, seen, {
      nodeName: candidate.nodeName,
      instanceId: instanceOf.get(candidate.nodeName) ?? '',
      nodePool: candidate.nodePool,
      reason: 'Empty',
      detail: candidate.detail,
      replacements: [],
      phase: 'draining',
      startedAt: now,
      expiresAt: now + EMPTY_RECORD_TTL_MS,
    });
    if (outcome === 'started') {
      report.disrupted.push({ node: candidate.nodeName, nodePool: candidate.nodePool, detail: candidate.detail });
    } else if (outcome === 'no-slot') {
      report.blocked.push({ node: candidate.nodeName, message: 'another invocation took the last budget slot' });
    }
  }
  return report;
}
