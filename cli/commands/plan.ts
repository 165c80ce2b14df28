// `karpless plan`: the dry run Karpenter lacks. Given NodePools/EC2NodeClasses and the pods (or the
// workloads that make them), print the NodeClaims karpless would launch, at what price, and why each
// pod that fits nowhere does not fit. The decision is the same pure `solve` the provision Lambda runs.

import { requireConfiguration } from '../../shared/apis/config';
import { readManifestFiles } from '../../shared/apis/load';
import { ConfigurationError, formatProblem, type Problem } from '../../shared/apis/problems';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { loadBuiltInCatalog, readCatalogFile } from '../../shared/instancetypes/catalog';
import { type ReservedCapacity, withReservedOfferings } from '../../shared/instancetypes/reserved';
import { resolveInstanceTypes } from '../../shared/instancetypes/resolve';
import type { Catalog, InstanceType } from '../../shared/instancetypes/types';
import {
  capacityFromCatalog,
  formatLimitsUsage,
  limitsUsage,
  type NodePoolLimits,
  nodePoolUsage,
} from '../../shared/nodeclaim/usage';
import { podKey, type SchedulingResult, solve } from '../../shared/scheduling';
import { formatLimit } from '../../shared/scheduling/packing/reason-text';
import { collectWorkloads, toExistingNodes } from '../../shared/workloads';
import { type Command, flagValue, flagValues, type IO, type ParsedArgs, parseArgs, UsageError } from '../command';
import {
  DEFAULT_OFFLINE_CLUSTER,
  parseCapacityReservationFlags,
  parseSubnetFlags,
  planRequests,
  reservationsSelectedBy,
  unlaunchableWarning,
  writePlannedRequests,
} from './plan-requests';

const USAGE = `Usage: karpless plan --manifests FILE|DIR... --pods FILE|DIR... [flags]
       karpless plan --from-cluster [--manifests FILE|DIR...] [--kubeconfig PATH] [--context NAME]
                     [--kube-endpoint URL] [--catalog FILE] [--state-table T [--region R]] [--json]

Prints the NodeClaims karpless would launch for the given pods, their price, and why any pod fits
nowhere. Nothing is launched and no AWS call is made.

Flags (each may repeat, or take comma-separated paths):
  --manifests PATH   NodePool and EC2NodeClass manifests (Karpenter v1)
  --pods PATH        Pods, PodLists, Deployments, StatefulSets, ReplicaSets and Jobs (expanded into
                     their pods); pods with spec.nodeName count on that node (see --nodes)
  --daemonsets PATH  DaemonSets whose pods run on every node they tolerate (overhead)
  --nodes PATH       existing Nodes, filled before any new NodeClaim is planned; a Node labelled
                     karpenter.sh/nodepool counts its capacity against that NodePool's limits
  --catalog FILE     instance-type catalog JSON (default: the built-in us-east-1 snapshot)
  --json             print the plan as JSON: {nodeClaims, unschedulable, totalPrice, …}
  --requests DIR     also write, per planned NodeClaim, the exact CreateLaunchTemplate and
                     CreateFleet requests its launch would send (DIR/<claim>/*.json)
  --subnet ZONE=ID   a subnet for --requests (repeatable; default: a placeholder per catalog zone);
                     claims planned in a zone without one get no requests, and a warning names them
  --security-group ID  a security group for --requests (repeatable; default: a placeholder)
  --cluster-name NAME  the cluster for --requests (tags, instance profile; default: "cluster")
  --kubernetes-version V  the cluster version for --requests AMI aliases (default: 1.33)
  --capacity-reservation ID=ZONE:TYPE[:COUNT]
                     a capacity reservation to plan onto (repeatable; COUNT default 1). EC2NodeClasses
                     whose capacityReservationSelectorTerms could select it offer it as capacity type
                     "reserved" (a term by id must name it); NodePools must allow "reserved"

--from-cluster: the dry run on the live cluster. Reads the pending pods, nodes, DaemonSets and
NodeClaims (kubeconfig: --kubeconfig, $KUBECONFIG or ~/.kube/config; or --kube-endpoint, e.g.
http://127.0.0.1:8001 with 'kubectl proxy') and the NodePools and EC2NodeClasses of the cluster, or
of --manifests for a karpless deployed with its bundled configuration, and prints the provision
function's own decision. Prices come from the catalog. With --state-table NAME [--region R]
[--endpoint-url URL] it also reads (never writes) karpless's state table: the claim records in
flight and the pods nominated to them count as the function counts them; without it they are not
seen, and a note says so.

Exit status: 0 when a plan was made (even with unschedulable pods), 1 on invalid input, 2 on bad flags.
`;

/** The --json document. The first keys are a contract (issue 3); more keys may be added, never removed. */
export interface PlanJSON {
  nodeClaims: {
    nodePool: string;
    instanceTypes: string[];
    offering: { instanceType: string; zone: string; capacityType: string; price: number; reservationId?: string };
    pods: string[];
    requirements: unknown[];
  }[];
  /** `reservedOffering`: deferred, not failed: the reservations it could use are all held by this plan's claims. */
  unschedulable: { pod: string; reasons: string[]; reservedOffering?: true }[];
  totalPrice: number;
  existingNodes: { name: string; pods: string[] }[];
  /** NodePools with limits that the given --nodes already use, before this plan. */
  limits: { nodePool: string; used: Record<string, string>; limits: Record<string, string>; exhausted: boolean }[];
}

export function planToJSON(result: SchedulingResult, limits: readonly NodePoolLimits[] = []): PlanJSON {
  return {
    nodeClaims: result.nodeClaims.map((claim) => ({
      nodePool: claim.nodePool,
      instanceTypes: claim.instanceTypes.map((t) => t.name),
      offering: {
        instanceType: claim.offering.instanceType,
        zone: claim.offering.zone,
        capacityType: claim.offering.capacityType,
        price: claim.offering.price,
        ...(claim.offering.capacityType === 'reserved' && claim.offering.reservationId
          ? { reservationId: claim.offering.reservationId }
          : {}),
      },
      pods: claim.pods.map(podKey),
      requirements: claim.requirements,
    })),
    unschedulable: result.unschedulable.map((u) => ({
      pod: podKey(u.pod),
      reasons: u.reasons,
      ...(u.reservedOffering ? { reservedOffering: true as const } : {}),
    })),
    totalPrice: roundPrice(result.totalPrice),
    existingNodes: result.existingNodes.map((n) => ({ name: n.name, pods: n.pods.map(podKey) })),
    limits: limits.map((l) => ({
      nodePool: l.nodePool,
      used: Object.fromEntries(l.resources.map((r) => [r.resource, formatLimit(r.resource, r.used)])),
      limits: Object.fromEntries(l.resources.map((r) => [r.resource, formatLimit(r.resource, r.limit)])),
      exhausted: l.exhausted,
    })),
  };
}

/** The NodePools with limits whose claims (the given --nodes) already use some of them. */
export function usedLimits(limits: readonly NodePoolLimits[]): NodePoolLimits[] {
  return limits.filter((l) => l.resources.some((r) => r.used > 0));
}

// Sums of float prices pick up noise (0.1 + 0.2); prices are quoted to 1/10000 of a cent at most.
function roundPrice(price: number): number {
  return Math.round(price * 1e6) / 1e6;
}

function formatPrice(price: number): string {
  return `$${price.toFixed(4)}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** The human-readable plan: claims, pods on existing nodes, unschedulable pods with reasons, limits in use, total. */
export function formatPlan(result: SchedulingResult, limits: readonly NodePoolLimits[] = []): string {
  let out = '';
  if (result.nodeClaims.length > 0) {
    const rows = [['NODEPOOL', 'INSTANCE TYPE', 'CAPACITY', 'ZONE', 'PODS', '$/HOUR']];
    for (const claim of result.nodeClaims) {
      const alternatives = claim.instanceTypes.length - 1;
      const type =
        alternatives > 0 ? `${claim.offering.instanceType} +${alternatives} alternatives` : claim.offering.instanceType;
      rows.push([
        claim.nodePool,
        type,
        claim.offering.capacityType === 'reserved' && claim.offering.reservationId
          ? `reserved (${claim.offering.reservationId})`
          : claim.offering.capacityType,
        claim.offering.zone,
        String(claim.pods.length),
        claim.offering.price.toFixed(4),
      ]);
    }
    out += table(rows);
  }
  const used = result.existingNodes.filter((n) => n.pods.length > 0);
  if (result.nodeClaims.length === 0 && result.unschedulable.length === 0 && used.length === 0) {
    return 'Nothing to launch: no pending pods.\n';
  }
  if (result.nodeClaims.length === 0) out += 'No new NodeClaims needed.\n';
  if (used.length > 0) {
    out += `\nPods placed on existing nodes:\n`;
    for (const node of used) out += `  ${node.name}: ${node.pods.length} pod${node.pods.length === 1 ? '' : 's'}\n`;
  }
  if (result.unschedulable.length > 0) {
    out += `\nUnschedulable pods (${result.unschedulable.length}):\n`;
    for (const { pod, reasons } of result.unschedulable) {
      out += `  ${podKey(pod)}\n`;
      for (const reason of reasons.length > 0 ? reasons : ['no reason given']) out += `    ${reason}\n`;
    }
  }
  if (limits.length > 0) {
    out += `\nNodePool limits used by the given nodes (used/limit):\n`;
    for (const l of limits) {
      out += `  ${l.nodePool}: ${formatLimitsUsage(l)}${l.exhausted ? ' (used up: no new NodeClaim for this NodePool)' : ''}\n`;
    }
  }
  const placed = result.nodeClaims.reduce((sum, claim) => sum + claim.pods.length, 0);
  const claims = result.nodeClaims.length;
  out += `\nTotal: ${claims} NodeClaim${claims === 1 ? '' : 's'} for ${placed} pod${placed === 1 ? '' : 's'}, ${formatPrice(result.totalPrice)}/hour`;
  if (result.unschedulable.length > 0) out += ` (${result.unschedulable.length} unschedulable)`;
  return `${out}\n`;
}

/** Why a --capacity-reservation cannot be planned onto: nothing selects it, or the catalog lacks its type or zone. */
export function reservationNotes(
  reservations: readonly ReservedCapacity[],
  catalog: Catalog,
  nodeClasses: readonly EC2NodeClass[],
): string[] {
  const notes: string[] = [];
  for (const r of reservations) {
    const type = catalog.instanceTypes.find((t) => t.name === r.instanceType);
    if (!type)
      notes.push(`--capacity-reservation ${r.id}: the catalog has no instance type ${r.instanceType}; ignored`);
    else if (!type.offerings.some((o) => o.zone === r.availabilityZone)) {
      notes.push(`--capacity-reservation ${r.id}: ${r.instanceType} is not offered in ${r.availabilityZone}; ignored`);
    }
    if (!nodeClasses.some((c) => reservationsSelectedBy(c, [r]).length > 0)) {
      notes.push(
        `--capacity-reservation ${r.id}: no EC2NodeClass has capacityReservationSelectorTerms that select it; ignored`,
      );
    }
  }
  return notes;
}

/** Paths of a repeatable flag, each occurrence possibly comma-separated. */
function paths(parsed: ParsedArgs, name: string): string[] {
  return flagValues(parsed, name)
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

function writeProblems(io: IO, problems: readonly Problem[]): void {
  for (const problem of problems) io.stderr.write(`${formatProblem(problem)}\n`);
}

/** NodePool name → its EC2NodeClass's instance types; problems for NodePools whose class is missing. */
export function instanceTypesByNodePool(
  catalog: Catalog,
  nodePools: readonly NodePool[],
  nodeClasses: readonly EC2NodeClass[],
  reservations: readonly ReservedCapacity[] = [],
): { instanceTypes: Record<string, InstanceType[]>; problems: Problem[] } {
  const instanceTypes: Record<string, InstanceType[]> = {};
  const problems: Problem[] = [];
  const resolved = new Map<string, InstanceType[]>();
  for (const nodePool of nodePools) {
    const name = nodePool.spec.template.spec.nodeClassRef.name;
    const nodeClass = nodeClasses.find((c) => c.metadata.name === name);
    if (!nodeClass) {
      problems.push({
        severity: 'error',
        object: `NodePool/${nodePool.metadata.name}`,
        path: 'spec.template.spec.nodeClassRef.name',
        message: `EC2NodeClass "${name}" is not among the given manifests: add it to --manifests or fix the name`,
      });
      continue;
    }
    // NodePools sharing a class share its resolved types: resolving is the costly part of a plan.
    let types = resolved.get(name);
    if (!types) {
      types = withReservedOfferings(
        resolveInstanceTypes(catalog, nodeClass),
        reservationsSelectedBy(nodeClass, reservations),
      );
      resolved.set(name, types);
    }
    instanceTypes[nodePool.metadata.name] = types;
  }
  return { instanceTypes, problems };
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'show the NodeClaims karpless would launch for given pods, their price, and why pods do not fit',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseArgs(args, {
      booleans: ['--json', '--from-cluster'],
      values: [
        '--kube-endpoint',
        '--kubeconfig',
        '--context',
        '--manifests',
        '--pods',
        '--daemonsets',
        '--nodes',
        '--catalog',
        '--requests',
        '--subnet',
        '--security-group',
        '--cluster-name',
        '--kubernetes-version',
        '--capacity-reservation',
        '--state-table',
        '--region',
        '--endpoint-url',
      ],
    });
    if (parsed.positional.length > 0) {
      throw new UsageError(`unexpected argument "${parsed.positional[0]}" (give paths with --manifests or --pods)`);
    }
    // The dry run on the live cluster runs the provision function's own decision (plan-cluster.ts).
    if (parsed.flags.has('--from-cluster')) return (await import('./plan-cluster')).runPlanFromCluster(parsed, io);
    const onlyFromCluster = ['--state-table', '--kube-endpoint', '--kubeconfig', '--context'].find((f) =>
      parsed.flags.has(f),
    );
    if (onlyFromCluster) throw new UsageError(`${onlyFromCluster} goes with --from-cluster`);
    const manifestPaths = paths(parsed, '--manifests');
    const podPaths = paths(parsed, '--pods');
    if (manifestPaths.length === 0) throw new UsageError('missing required flag --manifests');
    if (podPaths.length === 0) throw new UsageError('missing required flag --pods');
    const json = flagValue(parsed, '--json') !== undefined;
    const requestSubnets = parseSubnetFlags(flagValues(parsed, '--subnet'));
    const reservations = parseCapacityReservationFlags(flagValues(parsed, '--capacity-reservation'));

    let configuration: ReturnType<typeof requireConfiguration>;
    try {
      configuration = requireConfiguration(manifestPaths);
    } catch (error) {
      if (!(error instanceof ConfigurationError)) throw error;
      writeProblems(io, error.problems);
      return 1;
    }
    writeProblems(io, configuration.problems);
    for (const note of configuration.notes) io.stderr.write(`note: ${note}\n`);
    const { nodePools, nodeClasses } = configuration.config;
    if (nodePools.length === 0) {
      io.stderr.write(`karpless plan: no NodePool found in ${manifestPaths.join(', ')}: nothing could be launched\n`);
      return 1;
    }

    const read = readManifestFiles([...podPaths, ...paths(parsed, '--daemonsets'), ...paths(parsed, '--nodes')]);
    const workloads = collectWorkloads(read.documents);
    const inputProblems = [...read.problems, ...workloads.problems];
    if (inputProblems.length > 0) {
      writeProblems(io, inputProblems);
      return 1;
    }
    if (workloads.workloads === 0) {
      io.stderr.write(`karpless plan: no Pods or workloads found in ${podPaths.join(', ')}: nothing to plan\n`);
      return 1;
    }
    for (const warning of workloads.warnings) io.stderr.write(`warning: ${warning}\n`);
    for (const note of workloads.notes) io.stderr.write(`note: ${note}\n`);
    const existing = toExistingNodes(workloads.nodes, workloads.bound, nodePools);
    for (const note of existing.notes) io.stderr.write(`note: ${note}\n`);

    const catalogPath = flagValue(parsed, '--catalog');
    const catalog = catalogPath === undefined ? loadBuiltInCatalog() : readCatalogFile(catalogPath);
    const resolved = instanceTypesByNodePool(catalog, nodePools, nodeClasses, reservations);
    if (resolved.problems.length > 0) {
      writeProblems(io, resolved.problems);
      return 1;
    }
    for (const note of reservationNotes(reservations, catalog, nodeClasses)) io.stderr.write(`note: ${note}\n`);

    // Given nodes of a NodePool count against its limits, as its live claims do in the cluster.
    const usage = nodePoolUsage({ nodes: workloads.nodes, typeCapacity: capacityFromCatalog(resolved.instanceTypes) });
    const limits = usedLimits(limitsUsage(nodePools, usage));
    // Counts each reservation's instances across the plan: a pod whose reservation the plan's other
    // claims hold is listed unschedulable, deferred to the next decision, as the provision function does.
    const result = solve({
      pods: workloads.pending,
      nodePools,
      instanceTypes: resolved.instanceTypes,
      daemonSets: workloads.daemonSets,
      existingNodes: existing.existingNodes,
      nodePoolUsage: usage,
    });
    // Only the price caveats matter for reading a plan (spot estimated, another region's prices
    // standing in); where the catalog came from does not.
    for (const note of (catalog.notes ?? []).filter((n) => /spot|standing in/i.test(n))) {
      io.stderr.write(`note: ${note}\n`);
    }
    io.stdout.write(json ? `${JSON.stringify(planToJSON(result, limits), null, 2)}\n` : formatPlan(result, limits));
    const requestsDir = flagValue(parsed, '--requests');
    if (requestsDir !== undefined) {
      const requests = planRequests({
        nodeClaims: result.nodeClaims,
        nodePools,
        nodeClasses,
        catalog,
        cluster: {
          ...DEFAULT_OFFLINE_CLUSTER,
          name: flagValue(parsed, '--cluster-name') ?? DEFAULT_OFFLINE_CLUSTER.name,
          version: flagValue(parsed, '--kubernetes-version') ?? DEFAULT_OFFLINE_CLUSTER.version,
          region: catalog.region,
        },
        subnets: requestSubnets,
        securityGroups: flagValues(parsed, '--security-group'),
        reservations,
      });
      const warning = unlaunchableWarning(requests.unlaunchable);
      if (warning) io.stderr.write(`warning: ${warning}\n`);
      const written = writePlannedRequests(requestsDir, requests.planned);
      io.stderr.write(`wrote ${written.length} request file${written.length === 1 ? '' : 's'} to ${requestsDir}\n`);
    }
    return 0;
  },
};
