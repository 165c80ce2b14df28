// `karpless disruption`: the drift function's dry run. It reads the same things the function reads
// (our instances and the node classes from AWS, Nodes and Pods from the cluster, the ledger from the
// state table when given) and prints what the function would do now: which nodes it would disrupt
// and why, the budget that allows or blocks each, and the replacements it would launch, priced.
// Nothing is changed: no taint, no launch, no slot taken.

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { IAMClient } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { requireConfiguration } from '../../shared/apis/config';
import type { ConsolidationPlan } from '../../shared/disruption/consolidation';
import { disruptionGauges, type PoolGauge } from '../../shared/disruption/gauges';
import { budgetMembers, type CandidateDecision, type DisruptionPlan } from '../../shared/disruption/plan';
import type { RepairPlan } from '../../shared/disruption/repair';
import { ClusterEndpointError } from '../../shared/kube/client';
import { clientTimeoutConfig } from '../../shared/providers/aws-client';
import { realSleep, systemClock } from '../../shared/providers/clock';
import { dynamoApi } from '../../shared/providers/dynamo-port';
import { DynamoStateStore } from '../../shared/providers/dynamostate';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import type { DisruptionRecord } from '../../shared/providers/state';
import { driftDeps } from '../../shared/runtime/deps/drift';
import { planFromSnapshot, takeSnapshot } from '../../shared/runtime/drift';
import { previewConsolidation } from '../../shared/runtime/drift-consolidation';
import { type AwsClients, instancesPort, type Runtime } from '../../shared/runtime/environment';
import { awaitedClaims, previewEmptiness } from '../../shared/runtime/gc-emptiness';
import { ClaimInstances } from '../../shared/runtime/instances';
import { repairPlanOf } from '../../shared/runtime/repair';
import { noMetrics, silentLog } from '../../shared/runtime/telemetry';
import { podKey } from '../../shared/scheduling';
import { type Command, flagValue, flagValues, parseArgs, requireFlag, UsageError } from '../command';

const USAGE = `Usage: karpless disruption --manifests FILE|DIR... --cluster-name NAME [flags]

Dry run of the drift function: lists the nodes it would disrupt now (drifted or expired), the reason,
the disruption budget that allows or blocks each, and the replacement NodeClaims it would launch
first, with their price; the empty nodes the gc function would remove; then the consolidation
command it would consider when nothing drifted or expired; the unhealthy nodes node repair would
terminate (with the nodeRepair prop); and per NodePool and reason, the eligible nodes and what the
budgets still allow. Changes nothing.

  --manifests PATH      NodePool and EC2NodeClass manifests (repeatable, or comma-separated)
  --cluster-name NAME   the EKS cluster: whose instances (eks:eks-cluster-name) and API server
  --region R            AWS region (default: AWS_REGION / AWS_DEFAULT_REGION)
  --endpoint-url URL    AWS endpoint override, e.g. a local emulator
  --kube-endpoint URL   API server override (an http:// URL such as 'kubectl proxy' needs no CA)
  --state-table NAME    the karpless state table: disruptions in progress count against budgets
  --json                print {decisions, excluded, inProgress, empty, emptyWaiting, consolidation, repair, budgets}

Exit status: 0 when the dry run was made, 1 when AWS or the cluster could not be read, 2 on bad flags.
`;

/** The --json document. */
export interface DisruptionJSON {
  decisions: {
    node: string;
    nodePool: string;
    instanceType: string;
    reason: string;
    detail: string;
    allowed: boolean;
    budget: string;
    replacement: {
      nodeClaims: {
        nodePool: string;
        instanceType: string;
        zone: string;
        capacityType: string;
        price: number;
        pods: string[];
      }[];
      elsewhere: Record<string, string[]>;
      unschedulable: { pod: string; reasons: string[] }[];
      totalPrice: number;
    };
  }[];
  excluded: { node: string; reason: string }[];
  inProgress: { node: string; reason: string; phase: string; replacements: string[] }[];
  consolidation: ConsolidationJSON;
  /** The gc function's emptiness pass: empty nodes past consolidateAfter, and those still waiting. */
  empty: {
    node: string;
    nodePool: string;
    emptySince: string;
    allowed: boolean;
    budget: string;
  }[];
  emptyWaiting: { node: string; nodePool: string; emptySince?: string }[];
  /** What node repair would do, were the nodeRepair prop on. */
  repair: RepairJSON;
  /** Per NodePool and reason: candidates before budgets, and further disruptions the budgets allow. */
  budgets: PoolGauge[];
}

export interface RepairJSON {
  repair: { node: string; nodePool?: string; condition: string; since: string }[];
  blocked: { node: string; nodePool?: string; condition: string; message: string }[];
  waiting: { node: string; nodePool?: string; condition: string; dueAt: string }[];
}

const iso = (ms: number) => new Date(ms).toISOString();

export function repairToJSON(plan: RepairPlan): RepairJSON {
  const base = (d: RepairPlan['repair'][number]) => ({
    node: d.nodeName,
    ...(d.nodePool !== undefined ? { nodePool: d.nodePool } : {}),
    condition: d.condition,
  });
  return {
    repair: plan.repair.map((d) => ({ ...base(d), since: iso(d.since) })),
    blocked: plan.blocked.map((d) => ({ ...base(d), message: d.message })),
    waiting: plan.waiting.map((d) => ({ ...base(d), dueAt: iso(d.dueAt) })),
  };
}

export function formatRepair(json: RepairJSON): string {
  const pool = (x: { nodePool?: string }) => (x.nodePool ? ` (NodePool ${x.nodePool})` : '');
  const out = [
    ...json.repair.map(
      (r) => `REPAIR  ${r.node}${pool(r)}: ${r.condition} since ${r.since}: terminated forcefully, with nodeRepair`,
    ),
    ...json.blocked.map((b) => `REPAIR BLOCKED  ${b.node}${pool(b)}: ${b.condition}: ${b.message}`),
    ...json.waiting.map(
      (w) => `UNHEALTHY  ${w.node}${pool(w)}: ${w.condition}, repaired from ${w.dueAt} with nodeRepair`,
    ),
  ];
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}

/** `BUDGETS  NodePool general: Drifted 1 allowed (2 eligible), Empty …`. */
export function formatBudgets(gauges: readonly PoolGauge[]): string {
  const pools = [...new Set(gauges.map((g) => g.nodePool))];
  const lines = pools.map((name) => {
    const parts = gauges
      .filter((g) => g.nodePool === name)
      .map(
        (g) =>
          `${g.reason} ${g.allowed === undefined ? 'not budgeted' : `${g.allowed} allowed`} (${g.eligible} eligible)`,
      );
    return `BUDGETS  NodePool ${name}: ${parts.join(', ')}`;
  });
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

type EmptinessPreview = ReturnType<typeof previewEmptiness>;

export function emptinessToJSON(preview: EmptinessPreview): Pick<DisruptionJSON, 'empty' | 'emptyWaiting'> {
  return {
    empty: preview.decisions.map((d) => ({
      node: d.candidate.nodeName,
      nodePool: d.candidate.nodePool,
      emptySince: new Date(d.candidate.emptySince).toISOString(),
      allowed: d.allowed,
      budget: d.budget.message,
    })),
    emptyWaiting: preview.waiting.map((w) => ({
      node: w.nodeName,
      nodePool: w.nodePool,
      ...(w.emptySince !== undefined ? { emptySince: new Date(w.emptySince).toISOString() } : {}),
    })),
  };
}

export function formatEmptiness(json: Pick<DisruptionJSON, 'empty' | 'emptyWaiting'>): string {
  const out: string[] = [];
  for (const e of json.empty) {
    out.push(
      `${e.allowed ? 'WOULD REMOVE' : 'BLOCKED'}  ${e.node}  (NodePool ${e.nodePool}): Empty since ${e.emptySince}`,
    );
    out.push(`    budget: ${e.budget}`);
  }
  for (const w of json.emptyWaiting) {
    out.push(
      `EMPTY  ${w.node}  (NodePool ${w.nodePool}): ${w.emptySince ? `since ${w.emptySince}` : 'from the next gc run'}, waiting for consolidateAfter`,
    );
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}

export interface ConsolidationJSON {
  /** Why consolidation is not looked at (no pool allows it, or a drift or expiration acts first). */
  skipped?: string;
  command?: {
    kind: 'delete' | 'replace';
    /** Upstream's consolidation method: emptiness, multi-node or single-node. */
    method: 'empty' | 'multi' | 'single';
    nodes: { node: string; nodePool: string; instanceType: string; capacityType: string; price: number }[];
    savingsPerHour: number;
    replacement?: { instanceType: string; zone: string; capacityType: string; capacityTypes: string[]; price: number };
    elsewhere?: Record<string, string[]>;
  };
  considered: { node: string; outcome: string }[];
  /** What upstream publishes as Unconsolidatable events. */
  unconsolidatable: { node: string; message: string }[];
}

export function consolidationToJSON(preview: { skipped?: string; plan?: ConsolidationPlan }): ConsolidationJSON {
  const command = preview.plan?.command;
  const replacement = command?.replacement;
  return {
    ...(preview.skipped ? { skipped: preview.skipped } : {}),
    ...(command
      ? {
          command: {
            kind: command.kind,
            method: command.method,
            nodes: command.candidates.map((c) => ({
              node: c.nodeName,
              nodePool: c.nodePool,
              instanceType: c.instanceType,
              capacityType: c.capacityType,
              price: c.price,
            })),
            savingsPerHour: command.savings,
            ...(replacement
              ? {
                  replacement: {
                    instanceType: replacement.offering.instanceType,
                    zone: replacement.offering.zone,
                    capacityType: replacement.offering.capacityType,
                    capacityTypes:
                      replacement.requirements.find((r) => r.key === 'karpenter.sh/capacity-type')?.values ?? [],
                    price: replacement.offering.price,
                  },
                }
              : { elsewhere: command.elsewhere }),
          },
        }
      : {}),
    considered: (preview.plan?.considered ?? []).map((x) => ({ node: x.nodeName, outcome: x.outcome })),
    unconsolidatable: (preview.plan?.unconsolidatable ?? []).map((x) => ({ node: x.nodeName, message: x.message })),
  };
}

export function formatConsolidation(json: ConsolidationJSON): string {
  const out: string[] = [];
  if (json.skipped) return `CONSOLIDATION  not considered: ${json.skipped}\n`;
  const c = json.command;
  const nodes = (c?.nodes ?? [])
    .map((n) => `${n.node} (NodePool ${n.nodePool}, ${n.instanceType} ${n.capacityType}, $${n.price.toFixed(4)}/hour)`)
    .join(', ');
  if (!c) out.push('CONSOLIDATION  no node would be consolidated now.');
  else if (c.replacement) {
    out.push(
      `CONSOLIDATION  ${c.method}-node: would replace ${nodes} by ${c.replacement.instanceType} ${c.replacement.capacityType} in ${c.replacement.zone} ($${c.replacement.price.toFixed(4)}/hour, capacity types ${c.replacement.capacityTypes.join(',') || 'any'}): saves $${c.savingsPerHour.toFixed(4)}/hour`,
    );
  } else if (c.method === 'empty') {
    out.push(`CONSOLIDATION  emptiness: would delete ${nodes}: empty, saves $${c.savingsPerHour.toFixed(4)}/hour`);
  } else {
    out.push(
      `CONSOLIDATION  ${c.method}-node: would delete ${nodes}: their pods fit on other nodes, saves $${c.savingsPerHour.toFixed(4)}/hour`,
    );
    for (const [target, pods] of Object.entries(c.elsewhere ?? {})) out.push(`    → ${target}: ${pods.join(', ')}`);
  }
  const chosen = new Set((c?.nodes ?? []).map((n) => n.node));
  for (const x of json.considered) if (!chosen.has(x.node)) out.push(`    ${x.node}: ${x.outcome}`);
  return `${out.join('\n')}\n`;
}

export function disruptionToJSON(
  plan: DisruptionPlan,
  records: readonly DisruptionRecord[],
): Omit<DisruptionJSON, 'consolidation' | 'empty' | 'emptyWaiting' | 'repair' | 'budgets'> {
  return {
    decisions: plan.decisions.map((d) => ({
      node: d.candidate.nodeName,
      nodePool: d.candidate.nodePool,
      instanceType: d.candidate.instanceType,
      reason: d.candidate.reason,
      detail: d.candidate.detail,
      allowed: d.allowed,
      budget: d.budget.message,
      replacement: {
        nodeClaims: d.replacement.nodeClaims.map((c) => ({
          nodePool: c.nodePool,
          instanceType: c.offering.instanceType,
          zone: c.offering.zone,
          capacityType: c.offering.capacityType,
          price: c.offering.price,
          pods: c.pods.map(podKey),
        })),
        elsewhere: d.replacement.elsewhere,
        unschedulable: d.replacement.unschedulable.map((u) => ({ pod: podKey(u.pod), reasons: u.reasons })),
        totalPrice: d.replacement.totalPrice,
      },
    })),
    excluded: plan.excluded.map((e) => ({ node: e.nodeName, reason: e.reason })),
    inProgress: records.map((r) => ({
      node: r.nodeName,
      reason: r.reason,
      phase: r.phase,
      replacements: r.replacements,
    })),
  };
}

function replacementLines(decision: CandidateDecision): string[] {
  const { replacement } = decision;
  const lines = replacement.nodeClaims.map(
    (c) =>
      `    replace with ${c.offering.instanceType} ${c.offering.capacityType} in ${c.offering.zone} at $${c.offering.price.toFixed(4)}/h (NodePool ${c.nodePool}; ${c.pods.map(podKey).join(', ')})`,
  );
  for (const [node, pods] of Object.entries(replacement.elsewhere))
    lines.push(`    move to ${node}: ${pods.join(', ')}`);
  for (const u of replacement.unschedulable) lines.push(`    ${podKey(u.pod)} fits nowhere: ${u.reasons.join('; ')}`);
  if (lines.length === 0) lines.push('    no pods to move: terminated without a replacement');
  if (replacement.nodeClaims.length > 0) lines.push(`    replacements total $${replacement.totalPrice.toFixed(4)}/h`);
  return lines;
}

/** The text `karpless disruption` prints. */
export function formatDisruption(plan: DisruptionPlan, records: readonly DisruptionRecord[]): string {
  const out: string[] = [];
  if (plan.decisions.length === 0) out.push('No node would be disrupted now.');
  for (const d of plan.decisions) {
    const verdict = d.allowed ? 'WOULD DISRUPT' : 'BLOCKED';
    out.push(`${verdict}  ${d.candidate.nodeName}  (NodePool ${d.candidate.nodePool}, ${d.candidate.instanceType})`);
    out.push(`    ${d.candidate.reason}: ${d.candidate.detail}`);
    out.push(`    budget: ${d.budget.message}`);
    out.push(...replacementLines(d));
  }
  for (const e of plan.excluded) out.push(`LEFT ALONE  ${e.nodeName}: ${e.reason}`);
  for (const r of records) {
    out.push(
      `IN PROGRESS  ${r.nodeName}: ${r.reason} (${r.phase}; replacements ${r.replacements.join(', ') || 'none'})`,
    );
  }
  return `${out.join('\n')}\n`;
}

const KUBE_ENDPOINT_HINT =
  "pass --kube-endpoint URL to reach the API server another way, e.g. --kube-endpoint http://127.0.0.1:8001 with 'kubectl proxy' running";

function clients(region: string, endpoint: string | undefined): AwsClients {
  const config = { region, ...(endpoint ? { endpoint } : {}), ...clientTimeoutConfig({}), maxAttempts: 3 };
  return {
    ec2: new EC2Client(config),
    eks: new EKSClient(config),
    ssm: new SSMClient(config),
    iam: new IAMClient(config),
    dynamodb: new DynamoDBClient(config),
    eventbridge: new EventBridgeClient(config),
  };
}

export const disruptionCommand: Command = {
  name: 'disruption',
  summary: 'dry run of drift and expiration: what would be disrupted now, which budget decides, the replacements',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseArgs(args, {
      booleans: ['--json'],
      values: ['--manifests', '--cluster-name', '--region', '--endpoint-url', '--kube-endpoint', '--state-table'],
    });
    if (parsed.positional.length > 0) throw new UsageError(`unexpected argument ${parsed.positional[0]}`);
    const manifests = flagValues(parsed, '--manifests').flatMap((v) => v.split(',').filter(Boolean));
    if (manifests.length === 0) throw new UsageError('missing required flag --manifests');
    const cluster = requireFlag(parsed, '--cluster-name');
    const region = flagValue(parsed, '--region') ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    if (!region) throw new UsageError('no region: pass --region or set AWS_REGION');
    const kubeEndpoint = flagValue(parsed, '--kube-endpoint');
    const stateTable = flagValue(parsed, '--state-table');

    const { config } = requireConfiguration(manifests);
    const aws = clients(region, flagValue(parsed, '--endpoint-url'));
    const runtime: Runtime = {
      settings: {
        cluster,
        region,
        stateTable: stateTable ?? '',
        noticeBus: '',
        configFile: '',
        rebalanceAction: 'record',
        ...(kubeEndpoint ? { kubeEndpoint } : {}),
      },
      config,
      clients: aws,
      // Without the table, only what the cluster shows (nodes being deleted) counts as disrupting.
      state: stateTable ? new DynamoStateStore(dynamoApi(aws.dynamodb), stateTable) : new InMemoryStateStore(),
      events: { publish: async () => undefined } as unknown as Runtime['events'],
      instances: new ClaimInstances(instancesPort(aws.ec2), cluster),
      clock: systemClock,
      sleep: realSleep,
    };
    try {
      const deps = await driftDeps(runtime, { log: silentLog, metrics: noMetrics });
      const snap = await takeSnapshot(deps);
      const run = planFromSnapshot(deps, snap);
      const { plan } = run;
      // The drift function consolidates only in a run where no drift or expiration starts.
      const acting = plan.decisions.some((d) => d.allowed);
      const preview = acting
        ? { skipped: 'a drift or expiration would act first in this run' }
        : await previewConsolidation(deps, snap);
      const consolidation = consolidationToJSON(preview);
      const repair = repairToJSON(repairPlanOf(deps.clock(), snap));
      const budgets = disruptionGauges({
        now: deps.clock(),
        nodePools: deps.nodePools,
        members: budgetMembers(run.ours, run.disrupting),
        eligible: [
          ...plan.decisions.map((d) => ({ nodePool: d.candidate.nodePool, reason: d.candidate.reason })),
          ...(('plan' in preview && preview.plan?.eligible) || []),
        ],
      });
      const empty = emptinessToJSON(
        previewEmptiness({
          now: deps.clock(),
          nodes: snap.nodes,
          live: snap.live,
          pods: snap.pods,
          busy: new Set([...snap.drains, ...snap.records.map((r) => r.nodeName)]),
          awaited: awaitedClaims(snap.records, stateTable ? await runtime.state.nominations() : []),
          nodePools: deps.nodePools,
          isEvictable: deps.isEvictable,
        }),
      );
      if (parsed.flags.has('--json')) {
        const json: DisruptionJSON = {
          ...disruptionToJSON(plan, snap.records),
          ...empty,
          consolidation,
          repair,
          budgets,
        };
        io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
      } else {
        io.stdout.write(
          formatDisruption(plan, snap.records) +
            formatEmptiness(empty) +
            formatConsolidation(consolidation) +
            formatRepair(repair) +
            formatBudgets(budgets),
        );
      }
      return 0;
    } catch (error) {
      if (error instanceof ClusterEndpointError) throw new Error(error.forOverride(KUBE_ENDPOINT_HINT));
      throw error;
    } finally {
      for (const client of Object.values(aws)) client.destroy();
    }
  },
};
