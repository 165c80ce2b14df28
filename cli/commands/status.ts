// `karpless status`: the EC2NodeClasses of a configuration resolved against AWS, printed like
// `kubectl get ec2nodeclasses`. Read-only: it creates nothing, so a managed instance profile that
// the first launch will create shows as Unknown.

import { requireConfiguration } from '../../shared/apis/config';
import type { Condition, EC2NodeClass } from '../../shared/apis/v1/types';
import { NODECLASS_CONDITIONS, type NodeClassResolution, resolveNodeClass } from '../../shared/nodeclass';
import { AMIProvider } from '../../shared/providers/ami';
import { ClusterProvider } from '../../shared/providers/cluster';
import { InstanceProfileProvider } from '../../shared/providers/instanceprofile';
import { awsApis } from '../../shared/providers/ports';
import { SecurityGroupProvider } from '../../shared/providers/securitygroup';
import { SubnetProvider } from '../../shared/providers/subnet';
import { type Command, flagValue, flagValues, parseArgs, UsageError } from '../command';

const USAGE = `Usage: karpless status --manifests FILE|DIR... [--region R] [--endpoint-url URL] [--cluster-name N] [-o wide|json]

Resolves every EC2NodeClass (subnets, security groups, AMIs, instance profile) against AWS and prints
NAME READY AGE ROLE like 'kubectl get ec2nodeclasses'. -o wide adds each condition with its reason and
message; -o json prints the node classes with their status.

  --manifests      Karpenter v1 manifests (repeatable; a directory reads every YAML/JSON file in it)
  --region         AWS region (default: AWS_REGION / AWS_DEFAULT_REGION)
  --endpoint-url   AWS endpoint override, e.g. a local emulator
  --cluster-name   EKS cluster: gives the Kubernetes version for AMI aliases and the managed
                   instance profile name (without it, alias AMIs and role profiles show Unknown)

Exit status: 0 when every EC2NodeClass is Ready, 1 otherwise.
`;

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
    const parsed = parseArgs(args, { values: ['--manifests', '--region', '--endpoint-url', '--cluster-name', '-o'] });
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

    const { config } = requireConfiguration(manifests);
    const aws = awsApis({ region, ...(endpoint ? { endpoint } : {}) });
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
        ...(cluster ? { k8sVersion: cluster.version } : {}),
        mode: 'inspect' as const,
      };
      const resolutions: NodeClassResolution[] = [];
      for (const nodeClass of config.nodeClasses) resolutions.push(await resolveNodeClass(nodeClass, deps));
      const nodeClasses = resolutions.map((r) => r.nodeClass);
      if (output === 'json') io.stdout.write(`${JSON.stringify(nodeClasses, null, 2)}\n`);
      else if (nodeClasses.length === 0) io.stderr.write('No EC2NodeClasses found.\n');
      else io.stdout.write(formatStatus(nodeClasses, Date.now(), output === 'wide'));
      return resolutions.every((r) => r.ready) ? 0 : 1;
    } finally {
      aws.destroy();
    }
  },
};
