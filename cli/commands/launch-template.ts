// `karpless launch-template`: the CreateLaunchTemplate request karpless would send for one node,
// computed offline from the manifests (no AWS calls).

import { launchValueProblems } from '../../shared/launch/inputchecks';
import { buildCreateLaunchTemplateInput, type LaunchTemplateSpec } from '../../shared/launch/launchtemplate';
import { type Command, flagValue, flagValues, parseArgs, requireFlag, UsageError } from '../command';
import {
  clusterIsIPv6,
  LAUNCH_CLUSTER_VALUES,
  LAUNCH_EXIT_STATUS,
  LAUNCH_FLAGS,
  LAUNCH_FLAGS_USAGE,
  LAUNCH_VALUE_FLAGS,
  renderOfflineUserData,
  resolveOfflineLaunch,
} from './userdata';

export const launchTemplateCommand: Command = {
  name: 'launch-template',
  summary: 'print the CreateLaunchTemplate request for a node (offline)',
  usage: `Usage: karpless launch-template --ami-id ID --manifests PATH --nodepool NAME --instance-type TYPE
         --capacity-type spot|on-demand --cluster-name NAME --cluster-endpoint URL --cluster-ca BASE64
         --cluster-cidr CIDR [flags]

Prints the CreateLaunchTemplate request (JSON, AWS SDK field names) without calling AWS.

  --ami-id ID               the AMI the template launches
  --instance-profile NAME   the instance profile (default: spec.instanceProfile, else a placeholder)
  --security-group-id ID    a security group (repeatable; default: the id terms of the node class)
${LAUNCH_FLAGS_USAGE}
Example:
  karpless launch-template --ami-id ami-0123456789abcdef0 --manifests examples/manifests \\
    --nodepool general --instance-type m7g.large --capacity-type on-demand --cluster-name my-cluster \\
    --cluster-endpoint https://EXAMPLE.gr7.us-east-1.eks.amazonaws.com --cluster-ca Q0EgQlVORExF \\
    --cluster-cidr 10.100.0.0/16 --security-group-id sg-0123456789abcdef0

${LAUNCH_CLUSTER_VALUES}
${LAUNCH_EXIT_STATUS}`,
  async run(args, io) {
    const parsed = parseArgs(args, {
      values: [...LAUNCH_FLAGS, '--ami-id', '--instance-profile', '--security-group-id'],
    });
    if (parsed.positional.length > 0) throw new UsageError(`unexpected argument ${parsed.positional[0]}`);
    const amiId = requireFlag(parsed, '--ami-id');
    const amiProblems = launchValueProblems({ amiId }, LAUNCH_VALUE_FLAGS);
    if (amiProblems.length > 0) throw new UsageError(amiProblems.join('\n'));
    const launch = resolveOfflineLaunch(parsed);
    const userData = renderOfflineUserData(launch, io);
    const { nodeClass } = launch;
    let instanceProfile = flagValue(parsed, '--instance-profile') ?? nodeClass.spec.instanceProfile;
    if (instanceProfile === undefined) {
      instanceProfile = `<instance profile of role ${nodeClass.spec.role ?? '?'}>`;
      io.stderr.write(
        `note: EC2NodeClass/${nodeClass.metadata.name} uses spec.role; its instance profile is created at launch, pass --instance-profile to fill it in\n`,
      );
    }
    let securityGroupIds = flagValues(parsed, '--security-group-id');
    if (securityGroupIds.length === 0) {
      securityGroupIds = nodeClass.spec.securityGroupSelectorTerms.flatMap((t) => (t.id ? [t.id] : []));
      if (securityGroupIds.length < nodeClass.spec.securityGroupSelectorTerms.length) {
        io.stderr.write(
          `note: EC2NodeClass/${nodeClass.metadata.name}: security groups selected by tags or name are resolved at launch; pass --security-group-id to fill them in\n`,
        );
      }
    }
    const spec: LaunchTemplateSpec = {
      clusterName: launch.clusterName,
      nodePool: launch.nodePool,
      nodeClass,
      amiId,
      userData,
      instanceProfile,
      securityGroupIds,
      capacityType: launch.capacityType,
      ipv6: clusterIsIPv6(launch),
      family: launch.family,
    };
    io.stdout.write(`${JSON.stringify(buildCreateLaunchTemplateInput(spec), null, 2)}\n`);
    return 0;
  },
};
