// The consolidation pass of the gc function (NodePools with WhenEmptyOrUnderutilized): plan one
// single-node consolidation (shared/disruption/consolidation.ts) over a fresh view of the cluster and
// carry out a delete command through the termination flow, within the Underutilized budgets.
// A replace command (one cheaper node instead) is planned, logged and reported but not carried
// out: launching needs the launch path (SSM, IAM, CreateFleet), which only the provision and drift
// functions hold.

import type { Node, Pod } from '../apis/core/v1';
import { budgetLimit } from '../disruption/budgets';
import { type ConsolidationCommand, planSingleNodeConsolidation } from '../disruption/consolidation';
import type { ClusterNode } from '../disruption/plan';
import type { KubeClient } from '../kube/types';
import { noticeDaemonSetFromDaemonSet, podFromNoticeDaemonSet } from '../notice';
import { disruptWithinBudget, EMPTY_RECORD_TTL_MS, type EmptinessDeps } from './gc-emptiness';
import { instanceIdFromProviderID } from './instances';
import { deletionTimestamp } from './objects';
import type { ResolvedInstanceTypes } from './provision';

export interface ConsolidationDeps extends EmptinessDeps {
  kube: EmptinessDeps['kube'] & Pick<KubeClient, 'listNodes' | 'listDaemonSets' | 'listPodDisruptionBudgets'>;
  /** Instance types per NodePool, priced: what a candidate costs and what its pods could run on. */
  instanceTypes(): Promise<ResolvedInstanceTypes>;
}

export interface ConsolidationReport {
  /** What was decided: `delete <node>` or `replace <node> by <type>`, with the saving. */
  command?: { kind: ConsolidationCommand['kind']; node: string; savingsPerHour: number; replacement?: string };
  /** The delete command was handed to the termination flow. */
  executed: boolean;
  /** Nodes looked at, with why each was left. */
  considered: number;
}

function podsByNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const pod of pods) {
    const name = pod.spec.nodeName;
    if (name) out.set(name, [...(out.get(name) ?? []), pod]);
  }
  return out;
}

function underutilizedPoolsConfigured(deps: ConsolidationDeps): boolean {
  return deps.nodePools.some(
    (p) => (p.spec.disruption?.consolidationPolicy ?? 'WhenEmptyOrUnderutilized') === 'WhenEmptyOrUnderutilized',
  );
}

async function view(deps: ConsolidationDeps) {
  const [nodes, live, pods, daemonSets, pdbs, records, drains, types] = await Promise.all([
    deps.kube.listNodes(),
    deps.instances.live(),
    deps.kube.listPods(),
    deps.kube.listDaemonSets(),
    deps.kube.listPodDisruptionBudgets(),
    deps.state.disruptionRecords(),
    deps.state.drains(),
    deps.instanceTypes(),
  ]);
  const byId = new Map(live.map((i) => [i.instanceId, i]));
  const bound = podsByNode(pods.items);
  const busy = new Set([...records.map((r) => r.nodeName), ...drains.map((d) => d.nodeName)]);
  const ours: ClusterNode[] = [];
  const others: { node: Node; pods: Pod[] }[] = [];
  const disrupting = new Map<string, Set<string>>();
  for (const node of nodes.items) {
    const name = node.metadata.name;
    const instance = byId.get(instanceIdFromProviderID(node.spec?.providerID) ?? '');
    if (!instance) {
      others.push({ node, pods: bound.get(name) ?? [] });
      continue;
    }
    ours.push({ node, instance, pods: bound.get(name) ?? [] });
    if (deletionTimestamp(node) || busy.has(name)) {
      disrupting.set(instance.nodePool, new Set([...(disrupting.get(instance.nodePool) ?? []), name]));
    }
  }
  return {
    ours,
    others,
    disrupting,
    types,
    daemonSets: daemonSets.items.map((d) => podFromNoticeDaemonSet(noticeDaemonSetFromDaemonSet(d))),
    pdbs: pdbs.items.map((b) => ({
      namespace: b.metadata.namespace ?? 'default',
      name: b.metadata.name,
      ...(b.spec?.selector ? { selector: b.spec.selector } : {}),
      disruptionsAllowed: b.status?.disruptionsAllowed ?? 0,
    })),
  };
}

/** One consolidation pass: at most one command, as Karpenter's single-node consolidation. */
export async function runConsolidation(deps: ConsolidationDeps): Promise<ConsolidationReport> {
  if (!underutilizedPoolsConfigured(deps)) return { executed: false, considered: 0 };
  const v = await view(deps);
  const now = deps.clock();
  const plan = planSingleNodeConsolidation({
    now,
    nodes: v.ours,
    otherNodes: v.others,
    nodePools: deps.nodePools,
    instanceTypes: v.types.byNodePool,
    daemonSets: v.daemonSets,
    disrupting: v.disrupting,
    pdbs: v.pdbs,
    isEvictable: deps.isEvictable,
  });
  const report: ConsolidationReport = { executed: false, considered: plan.considered.length };
  const { command } = plan;
  if (!command) return report;
  const { candidate } = command;
  report.command = {
    kind: command.kind,
    node: candidate.nodeName,
    savingsPerHour: command.savings,
    ...(command.kind === 'replace' ? { replacement: command.replacement.offering.instanceType } : {}),
  };
  const why = plan.considered.find((c) => c.nodeName === candidate.nodeName)?.outcome ?? '';
  if (command.kind === 'replace') {
    deps.log.info('consolidation would replace a node (not carried out by the gc function)', {
      node: candidate.nodeName,
      detail: why,
    });
    return report;
  }
  const pool = deps.nodePools.find((p) => p.metadata.name === candidate.nodePool);
  if (!pool) return report;
  const poolNodes = v.ours.filter((n) => n.instance.nodePool === candidate.nodePool).length;
  const limit = budgetLimit(pool, 'Underutilized', { nodes: poolNodes, now });
  const seen = v.disrupting.get(candidate.nodePool) ?? new Set<string>();
  const outcome = await disruptWithinBudget(deps, limit, seen, {
    nodeName: candidate.nodeName,
    instanceId: candidate.instanceId,
    nodePool: candidate.nodePool,
    reason: 'Underutilized',
    detail: why,
    replacements: [],
    phase: 'draining',
    startedAt: now,
    expiresAt: now + EMPTY_RECORD_TTL_MS,
  });
  report.executed = outcome === 'started';
  return report;
}
