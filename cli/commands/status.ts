// `karpless status`: the EC2NodeClasses of a configuration resolved against AWS, printed like
// `kubectl get ec2nodeclasses`. Read-only: it creates nothing, so a managed instance profile that
// the first launch will create shows as Unknown.

import { requireConfiguration } from '../../shared/apis/config';
import { parseDurationSeconds } from '../../shared/apis/duration';
import type { Condition, EC2NodeClass } from '../../shared/apis/v1/types';
import { NODECLASS_CONDITIONS, type NodeClassResolution, resolveNodeClass } from '../../shared/nodeclass';
import { AMIProvider } from '../../shared/providers/ami';
import { EndpointError } from '../../shared/providers/aws-client';
import { isMissingCredentials } from '../../shared/providers/aws-errors';
import { CapacityReservationProvider } from '../../shared/providers/capacityreservation';
import { ClusterProvider } from '../../shared/providers/cluster';
import { InstanceProfileProvider } from '../../shared/providers/instanceprofile';
import { PlacementGroupProvider } from '../../shared/providers/placementgroup';
import { awsApis } from '../../shared/providers/ports';
import { SecurityGroupProvider } from '../../shared/providers/securitygroup';
import { SubnetProvider } from '../../shared/providers/subnet';
import { type Command, flagValue, flagValues, type IO, parseArgs, UsageError } from '../command';
import { formatClaims, formatNodePoolLimits, readClaimRecords } from './status-claims';

const USAGE = `Usage: karpless status --manifests FILE|DIR... [--region R] [--endpoint-url URL] [--cluster-name N] [--timeout D] [--state-table T] [-o wide|json]
       karpless status claims --state-table T [--region R] [--endpoint-url URL] [-o json]

Resolves every EC2NodeClass (subnets, security groups, AMIs, instance profile) against AWS and prints
NAME READY AGE ROLE like 'kubectl get ec2nodeclasses'. -o wide adds each condition with its reason and
message; -o json prints the node classes with their status.

  --manifests      Karpenter v1 manifests (repeatable; a directory reads every YAML/JSON file in it)
  --region         AWS region (default: AWS_REGION / AWS_DEFAULT_REGION)
  --endpoint-url   AWS endpoint override, e.g. a local emulator
  --cluster-name   EKS cluster: gives the Kubernetes version for AMI aliases and the managed
                   instance profile name (without it, alias AMIs and role profiles show Unknown)
  --timeout        how long one AWS request may take, e.g. 500ms, 10s, 1m (default 10s); each call
                   is tried up to 3 times, and the first endpoint that does not answer stops the command
  --state-table    karpless's DynamoDB state table: also print, per NodePool with limits, what its
                   NodeClaims use against them (NODEPOOL USED/LIMIT EXHAUSTED)
  claims           list the NodeClaim records of --state-table like 'kubectl get nodeclaims':
                   NAME TYPE CAPACITY ZONE NODE READY AGE (-o json: the records)
  -o wide|json     wide: every condition (SubnetsReady, SecurityGroupsReady, AMIsReady,
                   InstanceProfileReady, Ready, ...) with its reason and message; json: the node
                   classes with their status, as the API server would hold them

AWS credentials come from the usual places (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO,
an instance role); without any, the command stops and says so.

Exit status: 0 when every EC2NodeClass is Ready, 1 otherwise (or when AWS cannot be reached), 2 on bad flags.
`;

const DEFAULT_TIMEOUT_MS = 10_000;

function parseTimeout(text: string | undefined): number {
  if (text === undefined) return DEFAULT_TIMEOUT_MS;
  const seconds = parseDurationSeconds(text);
  if (seconds === undefined || seconds <= 0 || seconds > 3600) {
    throw new UsageError(`--timeout must be a duration between 1ms and 1h such as 500ms, 10s or 1m, not "${text}"`);
  }
  return Math.max(1, Math.round(seconds * 1000));
}

/** Failures every later call would repeat: no endpoint answering, no credentials to sign with. */
function isStopping(error: unknown): error is Error {
  return error instanceof EndpointError || isMissingCredentials(error);
}

/**
 * The same port, but once a call found its endpoint unreachable, or no credentials, every later call
 * fails at once with that error: waiting out the timeout again for each node class and condition
 * tells nothing new.
 */
function stopAfterEndpointFailure<T extends object>(api: T, state: { error?: Error }): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, call] of Object.entries(api)) {
    wrapped[name] = async (...args: unknown[]) => {
      if (state.error) throw state.error;
      try {
        return await (call as (...a: unknown[]) => Promise<unknown>)(...args);
      } catch (error) {
        if (isStopping(error)) state.error ??= error;
        throw error;
      }
    };
  }
  return wrapped as T;
}

/** kubectl's HumanDuration (k8s.io/apimachinery/pkg/util/duration). */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

export function age(nodeClass: EC2NodeClass, now: number): string {
  const created = nodeClass.metadata.creationTimestamp;
  const at = created ? Date.parse(created) : Number.NaN;
  return Number.isNaN(at) ? '<unknown>' : humanDuration(now - at);
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map(
      (r) =>
        `${r
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('   ')
          .trimEnd()}\n`,
    )
    .join('');
}

function condition(nodeClass: EC2NodeClass, type: string): Condition | undefined {
  return nodeClass.status?.conditions?.find((c) => c.type === type);
}

/** The text `karpless status` prints for resolved node classes. */
export function formatStatus(nodeClasses: readonly EC2NodeClass[], now: number, wide: boolean): string {
  const header = ['NAME', 'READY', 'AGE', 'ROLE'];
  if (wide) header.push(...NODECLASS_CONDITIONS.map((t) => t.toUpperCase()));
  const rows = nodeClasses.map((nc) => {
    const row = [nc.metadata.name, condition(nc, 'Ready')?.status ?? 'Unknown', age(nc, now), nc.spec.role ?? ''];
    if (wide) row.push(...NODECLASS_CONDITIONS.map((t) => condition(nc, t)?.status ?? 'Unknown'));
    return row;
  });
  let out = table([header, ...rows]);
  if (!wide) return out;
  for (const nc of nodeClasses) {
    out += `\n${nc.metadata.name}:\n`;
    const lines = (nc.status?.conditions ?? []).map((c) => [
      `  ${c.type}`,
      c.status,
      [c.reason, c.message].filter(Boolean).join(': '),
    ]);
    out += table(lines);
  }
  return out;
}

export const statusCommand: Command = {
  name: 'status',
  summary: 'resolve EC2NodeClasses against AWS and print their readiness',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseArgs(args, {
      values: ['--manifests', '--region', '--endpoint-url', '--cluster-name', '-o', '--timeout', '--state-table'],
    });
    const stateTable = flagValue(parsed, '--state-table');
    if (parsed.positional[0] === 'claims' && parsed.positional.length === 1) {
      return statusClaims(
        io,
        stateTable,
        flagValue(parsed, '-o'),
        flagValue(parsed, '--endpoint-url'),
        flagValue(parsed, '--region'),
      );
    }
    if (parsed.positional.length > 0) throw new UsageError(`unexpected argument ${parsed.positional[0]}`);
    const manifests = flagValues(parsed, '--manifests').flatMap((v) => v.split(',').filter(Boolean));
    if (manifests.length === 0) throw new UsageError('missing required flag --manifests');
    const output = flagValue(parsed, '-o');
    if (output !== undefined && output !== 'wide' && output !== 'json') {
      throw new UsageError(`-o must be wide or json, not "${output}"`);
    }
    const region = flagValue(parsed, '--region') ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    if (!region) throw new UsageError('no region: pass --region or set AWS_REGION');
    const endpoint = flagValue(parsed, '--endpoint-url');
    const clusterName = flagValue(parsed, '--cluster-name');
    const timeoutMs = parseTimeout(flagValue(parsed, '--timeout'));

    const { config } = requireConfiguration(manifests);
    const sdk = awsApis({ region, ...(endpoint ? { endpoint } : {}), requestTimeoutMs: timeoutMs, maxAttempts: 3 });
    const unreachable: { error?: Error } = {};
    const aws = {
      ec2: stopAfterEndpointFailure(sdk.ec2, unreachable),
      ssm: stopAfterEndpointFailure(sdk.ssm, unreachable),
      eks: stopAfterEndpointFailure(sdk.eks, unreachable),
      iam: stopAfterEndpointFailure(sdk.iam, unreachable),
    };
    try {
      const cluster = clusterName ? await new ClusterProvider(aws.eks).describe(clusterName) : undefined;
      const deps = {
        subnets: new SubnetProvider(aws.ec2),
        securityGroups: new SecurityGroupProvider(aws.ec2),
        amis: new AMIProvider(aws.ec2, aws.ssm),
        instanceProfiles: new InstanceProfileProvider(aws.iam, {
          clusterName: clusterName ?? '',
          region,
          ...(cluster?.arn ? { clusterArn: cluster.arn } : {}),
        }),
        capacityReservations: new CapacityReservationProvider(aws.ec2),
        placementGroups: new PlacementGroupProvider(aws.ec2),
        ...(cluster ? { k8sVersion: cluster.version } : {}),
        mode: 'inspect' as const,
      };
      const resolutions: NodeClassResolution[] = [];
      for (const nodeClass of config.nodeClasses) resolutions.push(await resolveNodeClass(nodeClass, deps));
      // Conditions would each repeat the same network or credentials failure; one error says it better.
      if (unreachable.error) throw unreachable.error;
      const nodeClasses = resolutions.map((r) => r.nodeClass);
      if (output === 'json') io.stdout.write(`${JSON.stringify(nodeClasses, null, 2)}\n`);
      else if (nodeClasses.length === 0) io.stderr.write('No EC2NodeClasses found.\n');
      else io.stdout.write(formatStatus(nodeClasses, Date.now(), output === 'wide'));
      if (stateTable !== undefined && output !== 'json') {
        const records = await readClaimRecords({ table: stateTable, region, ...(endpoint ? { endpoint } : {}) });
        const limits = formatNodePoolLimits(config.nodePools, records);
        if (limits) io.stdout.write(`\n${limits}`);
      }
      return resolutions.every((r) => r.ready) ? 0 : 1;
    } finally {
      sdk.destroy();
    }
  },
};

/** `karpless status claims`: the records of the state table, like `kubectl get nodeclaims`. */
async function statusClaims(
  io: IO,
  table: string | undefined,
  output: string | undefined,
  endpoint: string | undefined,
  regionFlag: string | undefined,
): Promise<number> {
  if (!table) throw new UsageError('status claims needs --state-table (the karpless DynamoDB state table)');
  if (output !== undefined && output !== 'json')
    throw new UsageError(`-o must be json for status claims, not "${output}"`);
  const region = regionFlag ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region) throw new UsageError('no region: pass --region or set AWS_REGION');
  const records = await readClaimRecords({ table, region, ...(endpoint ? { endpoint } : {}) });
  io.stdout.write(output === 'json' ? `${JSON.stringify(records, null, 2)}\n` : formatClaims(records, Date.now()));
  return 0;
}
