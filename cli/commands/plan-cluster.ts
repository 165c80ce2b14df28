// `karpless plan --from-cluster`: the dry run on the live cluster. It reads what the watcher and the
// provision function read (the pending pods, nodes, DaemonSets, NodeClaims, and the NodePools and
// EC2NodeClasses, or the bundled manifests) and runs the provision function's own decision
// (shared/runtime/provision.ts `decide`), so it prints what the function would launch now. No AWS
// call: instance types and prices come from the catalog, and the cluster's NodeClaim objects stand for
// the instances. With --state-table (read only) the state table's claim records and nominations count
// as the function counts them: claims in flight that are not mirrored yet, and the pods nominated to
// them; without it they are not seen, and the note says so.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { parse } from 'yaml';
import { lastValidOf, resolveClusterConfiguration } from '../../shared/apis/cluster-configuration';
import { requireConfiguration } from '../../shared/apis/config';
import type { Configuration } from '../../shared/apis/configuration';
import type { Problem } from '../../shared/apis/problems';
import { ConfigurationError, formatProblem } from '../../shared/apis/problems';
import { loadBuiltInCatalog, readCatalogFile } from '../../shared/instancetypes/catalog';
import type { Catalog } from '../../shared/instancetypes/types';
import { HttpKubeClient } from '../../shared/kube/client';
import type { TokenSource } from '../../shared/kube/token';
import { instanceFromNodeClaimObject, recordFromNodeClaimObject } from '../../shared/nodeclaim/from-object';
import type { NodeClaimRecord } from '../../shared/nodeclaim/record';
import {
  noticeDaemonSetFromDaemonSet,
  noticePodFromPod,
  podFromNoticeDaemonSet,
  podFromNoticePod,
} from '../../shared/notice/convert';
import { dynamoApi } from '../../shared/providers/dynamo-port';
import { DynamoStateStore } from '../../shared/providers/dynamostate';
import type { NodeClaimStore, Nomination, StateStore } from '../../shared/providers/state';
import { isProvisionable, UNASSIGNED_PODS } from '../../shared/runtime/pending';
import { type Decision, decide, type ProvisionBatch } from '../../shared/runtime/provision';
import { flagValue, flagValues, type IO, type ParsedArgs, UsageError } from '../command';
import { formatPlan, instanceTypesByNodePool, planToJSON } from './plan';

export interface ClusterConnection {
  endpoint: string;
  ca?: string;
  token: TokenSource;
}

interface Kubeconfig {
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: {
    name: string;
    cluster: { server: string; 'certificate-authority-data'?: string; 'certificate-authority'?: string };
  }[];
  users?: {
    name: string;
    user: {
      token?: string;
      tokenFile?: string;
      exec?: { command: string; args?: string[]; env?: { name: string; value: string }[] | null };
      'client-certificate-data'?: string;
    };
  }[];
}

/** The kubeconfig to read: --kubeconfig, else the first of $KUBECONFIG, else ~/.kube/config. */
export function kubeconfigPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? env.KUBECONFIG?.split(':').find((p) => p !== '') ?? join(homedir(), '.kube', 'config');
}

/**
 * The API server, CA and credentials of a kubeconfig's context, as kubectl uses them: a bearer token,
 * a token file, or an exec plugin (`aws eks get-token`, which `aws eks update-kubeconfig` writes).
 */
export function kubeconfigConnection(path: string, contextName?: string): ClusterConnection {
  let config: Kubeconfig;
  try {
    config = parse(readFileSync(path, 'utf8')) as Kubeconfig;
  } catch (error) {
    throw new Error(`kubeconfig ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const name = contextName ?? config['current-context'];
  const context = config.contexts?.find((c) => c.name === name)?.context;
  if (!context) throw new Error(`kubeconfig ${path}: no context ${JSON.stringify(name ?? '')} (pass --context NAME)`);
  const cluster = config.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster?.server) throw new Error(`kubeconfig ${path}: context ${name} names no cluster with a server`);
  const user = config.users?.find((u) => u.name === context.user)?.user ?? {};
  const resolve = (file: string) => (isAbsolute(file) ? file : join(dirname(path), file));
  const ca = cluster['certificate-authority-data']
    ? Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8')
    : cluster['certificate-authority']
      ? readFileSync(resolve(cluster['certificate-authority']), 'utf8')
      : undefined;
  return { endpoint: cluster.server, ...(ca ? { ca } : {}), token: userToken(user, resolve, path) };
}

function userToken(
  user: NonNullable<Kubeconfig['users']>[number]['user'],
  resolve: (file: string) => string,
  path: string,
): TokenSource {
  if (user.token) {
    const token = user.token;
    return async () => token;
  }
  if (user.tokenFile) {
    const file = resolve(user.tokenFile);
    return async () => readFileSync(file, 'utf8').trim();
  }
  const exec = user.exec;
  if (exec) {
    return async () => {
      const env = { ...process.env, ...Object.fromEntries((exec.env ?? []).map((e) => [e.name, e.value])) };
      const out = execFileSync(exec.command, exec.args ?? [], { encoding: 'utf8', env });
      const token = (JSON.parse(out) as { status?: { token?: string } }).status?.token;
      if (!token) throw new Error(`kubeconfig ${path}: ${exec.command} printed no status.token`);
      return token;
    };
  }
  if (user['client-certificate-data']) {
    throw new Error(
      `kubeconfig ${path}: client certificates are not supported; use a token, an exec plugin, or --kube-endpoint with 'kubectl proxy'`,
    );
  }
  // No credentials: an http endpoint such as 'kubectl proxy' needs none.
  return async () => '';
}

export interface ClusterPlan {
  decision: Decision;
  /** Where the NodePools came from. */
  configuration: 'cluster' | 'manifests';
  /** Objects in the cluster that fail validation (ignored, as the functions ignore them). */
  problems: Problem[];
  read: {
    pending: number;
    nodeClaims: number;
    nodePools: number;
    stateTable?: { records: number; nominations: number };
  };
}

/** What the dry run reads of the state table: never a write. */
export type PlanState = Pick<StateStore, 'nominations'> & Pick<NodeClaimStore, 'nodeClaims'>;

/**
 * The provision function's decision on the cluster now. `manifests` is the bundled configuration
 * (a deployment with the default `configuration: bundled`); without it, the cluster's objects are
 * the configuration, validated as the functions validate them.
 */
export async function planFromCluster(input: {
  kube: HttpKubeClient;
  catalog: Catalog;
  manifests?: Configuration;
  now: number;
  /** The state table, read only: its records and nominations, as the provision function reads them. */
  state?: PlanState;
}): Promise<ClusterPlan> {
  const { kube } = input;
  const karpenter = kube.karpenterObjects();
  const served = await karpenter.servedResources();
  const problems: Problem[] = [];
  let config: Configuration;
  if (input.manifests) config = input.manifests;
  else {
    if (!served.has('nodepools') || !served.has('ec2nodeclasses')) {
      throw new Error(
        'the cluster has no NodePool and EC2NodeClass CRDs (karpenter.sh/v1, karpenter.k8s.aws/v1): pass --manifests with the configuration karpless was deployed with',
      );
    }
    const [nodePools, nodeClasses] = await Promise.all([karpenter.list('nodepools'), karpenter.list('ec2nodeclasses')]);
    const resolved = resolveClusterConfiguration({
      nodePools: nodePools.items,
      nodeClasses: nodeClasses.items,
      lastValid: lastValidOf({ nodePools: [], nodeClasses: [] }),
    });
    for (const invalid of resolved.invalid) {
      for (const p of invalid.problems) problems.push({ ...p, object: `${invalid.kind}/${invalid.name}` });
    }
    config = resolved.config;
  }
  const resolvedTypes = instanceTypesByNodePool(input.catalog, config.nodePools, config.nodeClasses);
  problems.push(...resolvedTypes.problems);
  const claims = served.has('nodeclaims') ? (await karpenter.list('nodeclaims')).items : [];
  const table = input.state ? await readState(input.state, input.now) : undefined;
  // The table's records are the function's own; the objects mirror them (or are Karpenter's).
  const records = table?.records ?? claims.map(recordFromNodeClaimObject);
  const instances = [...claims, ...(table?.records ?? [])].flatMap((c) => instanceFromNodeClaimObject(c) ?? []);
  const unique = [...new Map(instances.map((i) => [i.instanceId, i])).values()];
  const batch = await pendingBatch(kube, input.now);
  const decision = await decide(
    {
      nodePools: config.nodePools,
      instanceTypes: async () => ({ byNodePool: resolvedTypes.instanceTypes, priceSource: 'catalog' }),
      instances: { live: async () => unique },
      kube,
      // Read only: a dry run nominates nothing.
      state: {
        nominations: async () => table?.nominations ?? [],
        nominate: async () => false,
        releaseNomination: async () => undefined,
      },
      records: { nodeClaims: async () => records },
      clock: () => input.now,
    },
    batch,
  );
  return {
    decision,
    configuration: input.manifests ? 'manifests' : 'cluster',
    problems,
    read: {
      pending: batch.pods.length,
      nodeClaims: claims.length,
      nodePools: config.nodePools.length,
      ...(table ? { stateTable: { records: table.records.length, nominations: table.nominations.length } } : {}),
    },
  };
}

async function readState(
  state: PlanState,
  now: number,
): Promise<{ records: NodeClaimRecord[]; nominations: Nomination[] }> {
  const [records, nominations] = await Promise.all([state.nodeClaims(), state.nominations()]);
  return { records, nominations: nominations.filter((n) => n.expiresAt > now) };
}

/** What the watcher would put in a notice now: the provisionable pods and the DaemonSets, as the notice carries them. */
async function pendingBatch(kube: HttpKubeClient, now: number): Promise<ProvisionBatch> {
  const [pods, daemonSets] = await Promise.all([
    kube.listPods({ fieldSelector: UNASSIGNED_PODS }),
    kube.listDaemonSets(),
  ]);
  return {
    pods: pods.items.filter(isProvisionable).map((p) => podFromNoticePod(noticePodFromPod(p))),
    daemonSets: daemonSets.items.map((d) => podFromNoticeDaemonSet(noticeDaemonSetFromDaemonSet(d))),
    observedAt: new Date(now).toISOString(),
  };
}

const FROM_CLUSTER_ONLY_WITHOUT = ['--pods', '--daemonsets', '--nodes', '--requests', '--capacity-reservation'];

/** `karpless plan --from-cluster [--manifests PATH] [--kubeconfig PATH] [--context NAME] [--kube-endpoint URL]`. */
export async function runPlanFromCluster(parsed: ParsedArgs, io: IO, now: number = Date.now()): Promise<number> {
  const clash = FROM_CLUSTER_ONLY_WITHOUT.find((flag) => parsed.flags.has(flag));
  if (clash)
    throw new UsageError(`${clash} cannot be combined with --from-cluster: the cluster gives the pods and nodes`);
  const manifestPaths = flagValues(parsed, '--manifests').flatMap((v) => v.split(',').filter(Boolean));
  let manifests: Configuration | undefined;
  if (manifestPaths.length > 0) {
    try {
      manifests = requireConfiguration(manifestPaths).config;
    } catch (error) {
      if (!(error instanceof ConfigurationError)) throw error;
      for (const problem of error.problems) io.stderr.write(`${formatProblem(problem)}\n`);
      return 1;
    }
  }
  const endpoint = flagValue(parsed, '--kube-endpoint');
  const connection: ClusterConnection = endpoint
    ? { endpoint, token: async () => '' }
    : kubeconfigConnection(kubeconfigPath(flagValue(parsed, '--kubeconfig')), flagValue(parsed, '--context'));
  const catalogPath = flagValue(parsed, '--catalog');
  const catalog = catalogPath === undefined ? loadBuiltInCatalog() : readCatalogFile(catalogPath);
  const kube = new HttpKubeClient({ ...connection, now: () => now });
  const table = stateTableFlags(parsed);
  try {
    const plan = await planFromCluster({
      kube,
      catalog,
      now,
      ...(manifests ? { manifests } : {}),
      ...(table ? { state: new DynamoStateStore(dynamoApi(table.client), table.name) } : {}),
    });
    for (const problem of plan.problems)
      io.stderr.write(`${formatProblem(problem)} (ignored, as the functions ignore it)\n`);
    io.stderr.write(
      `note: ${plan.read.pending} pending pod${plan.read.pending === 1 ? '' : 's'}, ${plan.read.nodeClaims} NodeClaim${plan.read.nodeClaims === 1 ? '' : 's'}, ${plan.read.nodePools} NodePool${plan.read.nodePools === 1 ? '' : 's'} (${plan.configuration === 'cluster' ? 'from the cluster' : 'from --manifests'}); prices from the catalog\n`,
    );
    io.stderr.write(`note: ${stateNote(plan.read.stateTable, table?.name)}\n`);
    const result = plan.decision.result;
    io.stdout.write(
      parsed.flags.has('--json') ? `${JSON.stringify(planToJSON(result), null, 2)}\n` : formatPlan(result),
    );
    return 0;
  } finally {
    kube.close();
    table?.client.destroy();
  }
}

function stateNote(read: ClusterPlan['read']['stateTable'], name: string | undefined): string {
  if (!read || name === undefined) {
    return 'the state table is not read: claims in flight not yet mirrored as NodeClaims, and the pods nominated to them, are not seen (pass --state-table NAME [--region R] to count them as the function does)';
  }
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `state table ${name}: ${plural(read.records, 'claim record')}, ${plural(read.nominations, 'nomination')} counted as the function counts them`;
}

function stateTableFlags(parsed: ParsedArgs): { name: string; client: DynamoDBClient } | undefined {
  const name = flagValue(parsed, '--state-table');
  if (name === undefined) return undefined;
  const region = flagValue(parsed, '--region') ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region) throw new UsageError('--state-table needs a region: pass --region or set AWS_REGION');
  const endpoint = flagValue(parsed, '--endpoint-url');
  return { name, client: new DynamoDBClient({ region, ...(endpoint ? { endpoint } : {}) }) };
}
