// Node repair in the drift function's run (opt-in: the Provisioner's `nodeRepair` prop): the nodes
// shared/disruption/repair.ts finds unhealthy past their toleration go through the one termination
// path with a deadline of now (budgets, do-not-disrupt and terminationGracePeriod ignored, as
// upstream's forceful termination). Their pods, drained, are pending and the provision function
// launches their replacement. A pool with too many unhealthy nodes gets NodeRepairBlocked instead.

import type { Node } from '../apis/core/v1';
import { METRIC, TAG } from '../contracts';
import { planRepair, type RepairDecision, type RepairPlan } from '../disruption/repair';
import { errorMessage } from '../providers/aws-errors';
import { clusterNodes, type DriftDeps, disruptionEvent, type Snapshot } from './drift';
import { nodeEvent, recorderFor } from './events';
import { beginTermination } from './termination';

/** The reason of a repair, as upstream's metrics label it. */
export const UNHEALTHY_REASON = 'Unhealthy';

export interface RepairOutcome {
  repaired: { node: string; nodePool?: string; condition: string; since: string }[];
  blocked: { node: string; condition: string; message: string }[];
  waiting: { node: string; condition: string; dueAt: string }[];
  failed: { node: string; why: string }[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** What repair would do with the snapshot now (the CLI shows the same plan). */
export function repairPlanOf(now: number, snap: Pick<Snapshot, 'nodes' | 'live' | 'claims'>): RepairPlan {
  const { ours } = clusterNodes({ ...snap, pods: [] });
  const poolOf = new Map(ours.map((n) => [n.node.metadata.name, n.instance.nodePool]));
  return planRepair({
    now,
    subjects: snap.nodes.map((node) => {
      const name = node.metadata.name;
      const nodePool = node.metadata.labels?.[TAG.nodePool] ?? poolOf.get(name);
      return { node, managed: poolOf.has(name), ...(nodePool !== undefined ? { nodePool } : {}) };
    }),
  });
}

async function repairOne(deps: DriftDeps, snap: Snapshot, decision: RepairDecision): Promise<void> {
  const { ours } = clusterNodes(snap);
  const found = ours.find((n) => n.node.metadata.name === decision.nodeName);
  if (!found) return;
  const live = snap.live.find((i) => i.instanceId === found.instance.instanceId);
  const nodeClaimName = found.record?.metadata.name ?? live?.nodeClaimName;
  await beginTermination(deps, {
    nodeName: decision.nodeName,
    instanceId: found.instance.instanceId,
    ...(nodeClaimName ? { nodeClaimName } : {}),
    reason: UNHEALTHY_REASON,
    forceful: true,
  });
  const message = `Disrupting Node: ${UNHEALTHY_REASON} (${decision.condition} since ${iso(decision.since)})`;
  await disruptionEvent(deps, decision.nodeName, 'DisruptionTerminating', message);
  deps.metrics.record(METRIC.disruptions, 'Count', 1, {
    nodePool: decision.nodePool ?? found.instance.nodePool,
    reason: UNHEALTHY_REASON,
  });
  deps.log.info('deleting unhealthy node', { node: decision.nodeName, condition: decision.condition });
}

/**
 * Repairs what is due (when deps.nodeRepair), and returns the outcome and the snapshot with the
 * repaired nodes marked deleting, so the rest of the run neither picks them nor counts them as capacity.
 */
export async function repairNodes(
  deps: DriftDeps,
  snap: Snapshot,
): Promise<{ outcome?: RepairOutcome; snap: Snapshot }> {
  if (!deps.nodeRepair) return { snap };
  const now = deps.clock();
  const plan = repairPlanOf(now, snap);
  const outcome: RepairOutcome = {
    repaired: [],
    blocked: plan.blocked.map((b) => ({ node: b.nodeName, condition: b.condition, message: b.message })),
    waiting: plan.waiting.map((w) => ({ node: w.nodeName, condition: w.condition, dueAt: iso(w.dueAt) })),
    failed: [],
  };
  const events = deps.kube.createEvent
    ? recorderFor({ createEvent: deps.kube.createEvent.bind(deps.kube) }, deps.clock, deps.log)
    : undefined;
  for (const b of plan.blocked) {
    await events?.publish(nodeEvent(b.nodeName, 'Warning', 'NodeRepairBlocked', b.message));
    deps.log.warn('node repair blocked', { node: b.nodeName, condition: b.condition, why: b.message });
  }
  const repaired = new Set<string>();
  for (const decision of plan.repair) {
    try {
      await repairOne(deps, snap, decision);
      repaired.add(decision.nodeName);
      outcome.repaired.push({
        node: decision.nodeName,
        ...(decision.nodePool !== undefined ? { nodePool: decision.nodePool } : {}),
        condition: decision.condition,
        since: iso(decision.since),
      });
    } catch (error) {
      deps.metrics.record(METRIC.actionFailures, 'Count', 1);
      deps.log.error('repairing an unhealthy node failed, will retry', {
        node: decision.nodeName,
        error: errorMessage(error),
      });
      outcome.failed.push({ node: decision.nodeName, why: errorMessage(error) });
    }
  }
  const deleting = (node: Node): Node =>
    repaired.has(node.metadata.name)
      ? { ...node, metadata: { ...node.metadata, deletionTimestamp: iso(now) } as Node['metadata'] }
      : node;
  const drains = new Set([...snap.drains, ...repaired]);
  return { outcome, snap: { ...snap, nodes: snap.nodes.map(deleting), drains } };
}
