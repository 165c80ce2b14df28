// Node repair (upstream pkg/controllers/node/health with the AWS provider's RepairPolicies), opt-in
// with the Provisioner's `nodeRepair` prop. Pure: the drift function (shared/runtime/repair.ts)
// reads the cluster, asks, and acts.
//
// - A managed node is unhealthy when one of its conditions has a policy's status; it is repaired
//   once that condition has held for the policy's toleration (Ready False/Unknown 30 min, the node
//   monitoring agent's AcceleratedHardwareReady False 10 min, its other conditions 30 min). With
//   several, the one that comes due first decides.
// - At most 20% of a NodePool's nodes (rounded up: 1 of 3 is allowed) may be unhealthy; past that
//   repair of the pool is blocked with a NodeRepairBlocked event, as a zone-wide outage would
//   otherwise replace the whole pool. A node without a pool counts against the whole cluster.
// - Repair is forceful: budgets and do-not-disrupt are ignored and the termination deadline is now.
//   Upstream does not launch a replacement itself either: the drained pods are pending and the
//   provision function launches for them, as for any other deleted node.

import type { Node, NodeCondition } from '../apis/core/v1';

export interface RepairPolicy {
  conditionType: string;
  conditionStatus: NodeCondition['status'];
  tolerationMs: number;
}

const MINUTE = 60_000;

/** The AWS provider's RepairPolicies (aws/karpenter-provider-aws pkg/cloudprovider/cloudprovider.go). */
export const REPAIR_POLICIES: readonly RepairPolicy[] = [
  { conditionType: 'Ready', conditionStatus: 'False', tolerationMs: 30 * MINUTE },
  { conditionType: 'Ready', conditionStatus: 'Unknown', tolerationMs: 30 * MINUTE },
  { conditionType: 'AcceleratedHardwareReady', conditionStatus: 'False', tolerationMs: 10 * MINUTE },
  { conditionType: 'StorageReady', conditionStatus: 'False', tolerationMs: 30 * MINUTE },
  { conditionType: 'NetworkingReady', conditionStatus: 'False', tolerationMs: 30 * MINUTE },
  { conditionType: 'KernelReady', conditionStatus: 'False', tolerationMs: 30 * MINUTE },
  { conditionType: 'ContainerRuntimeReady', conditionStatus: 'False', tolerationMs: 30 * MINUTE },
];

/** Upstream's allowedUnhealthyPercent. */
export const ALLOWED_UNHEALTHY_PERCENT = 20;

export interface Unhealthy {
  /** `Ready=False`. */
  condition: string;
  /** When the condition took its status (epoch ms; 0 when the node does not say). */
  since: number;
  /** When repair comes due: since + the policy's toleration. */
  dueAt: number;
}

function condition(node: Node, type: string): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === type);
}

/**
 * The node's unhealthy condition that comes due first, or undefined when none matches a policy.
 * A condition without a readable lastTransitionTime counts from the epoch, as upstream's zero time
 * does: it is due at once.
 */
export function unhealthyCondition(
  node: Node,
  policies: readonly RepairPolicy[] = REPAIR_POLICIES,
): Unhealthy | undefined {
  let found: Unhealthy | undefined;
  for (const policy of policies) {
    const c = condition(node, policy.conditionType);
    if (c?.status !== policy.conditionStatus) continue;
    const parsed = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : Number.NaN;
    const since = Number.isFinite(parsed) ? parsed : 0;
    const dueAt = since + policy.tolerationMs;
    if (!found || dueAt < found.dueAt) found = { condition: `${c.type}=${c.status}`, since, dueAt };
  }
  return found;
}

/** ceil(20% of total): the unhealthy nodes a pool (or the cluster) may have and still be repaired. */
export function allowedUnhealthy(total: number): number {
  return Math.ceil((total * ALLOWED_UNHEALTHY_PERCENT) / 100);
}

export interface RepairSubject {
  node: Node;
  /** The node's NodePool (its karpenter.sh/nodepool label); undefined for a node of no pool. */
  nodePool?: string;
  /** Launched by karpless (its instance is one of ours): only those are repaired, all are counted. */
  managed: boolean;
}

export interface RepairDecision extends Unhealthy {
  nodeName: string;
  nodePool?: string;
}

export interface RepairPlan {
  /** Unhealthy past their toleration, in a pool healthy enough: terminate now. */
  repair: RepairDecision[];
  /** Unhealthy past their toleration, but too much of their pool (or the cluster) is unhealthy. */
  blocked: (RepairDecision & { message: string })[];
  /** Unhealthy, not yet for long enough. */
  waiting: RepairDecision[];
}

function healthGate(subjects: readonly RepairSubject[], policies: readonly RepairPolicy[]) {
  const counts = new Map<string | undefined, { total: number; unhealthy: number }>();
  const bump = (key: string | undefined, unhealthy: boolean) => {
    const c = counts.get(key) ?? { total: 0, unhealthy: 0 };
    counts.set(key, { total: c.total + 1, unhealthy: c.unhealthy + (unhealthy ? 1 : 0) });
  };
  for (const s of subjects) {
    const unhealthy = unhealthyCondition(s.node, policies) !== undefined;
    if (s.nodePool !== undefined) bump(s.nodePool, unhealthy);
    // Upstream's cluster check (a claim of no pool) lists every node of the cluster.
    bump(undefined, unhealthy);
  }
  return (nodePool: string | undefined): string | undefined => {
    const c = counts.get(nodePool) ?? { total: 0, unhealthy: 0 };
    if (c.unhealthy <= allowedUnhealthy(c.total)) return undefined;
    const where = nodePool === undefined ? 'the cluster' : `the nodepool ${nodePool}`;
    return `more than ${ALLOWED_UNHEALTHY_PERCENT}% nodes are unhealthy in ${where} (${c.unhealthy} of ${c.total})`;
  };
}

/** Which managed nodes to repair now, which wait, and which are blocked by their pool's health. */
export function planRepair(input: {
  now: number;
  subjects: readonly RepairSubject[];
  policies?: readonly RepairPolicy[];
}): RepairPlan {
  const policies = input.policies ?? REPAIR_POLICIES;
  const gate = healthGate(input.subjects, policies);
  const plan: RepairPlan = { repair: [], blocked: [], waiting: [] };
  for (const s of input.subjects) {
    if (!s.managed) continue;
    const unhealthy = unhealthyCondition(s.node, policies);
    if (!unhealthy) continue;
    const decision: RepairDecision = {
      nodeName: s.node.metadata.name,
      ...(s.nodePool !== undefined ? { nodePool: s.nodePool } : {}),
      ...unhealthy,
    };
    if (input.now < unhealthy.dueAt) {
      plan.waiting.push(decision);
      continue;
    }
    const blocked = gate(s.nodePool);
    if (blocked) plan.blocked.push({ ...decision, message: blocked });
    else plan.repair.push(decision);
  }
  return plan;
}
