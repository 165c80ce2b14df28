// `karpless userdata`: the decoded userData Karpenter would give a node of one NodePool, EC2NodeClass
// and instance type, computed offline from the manifests (no AWS calls).

import { bottlerocketVersion } from '../../shared/amifamily/family';
import { droppedKubernetesSettings, renderUserData, UserDataError } from '../../shared/amifamily/userdata';
import { requireConfiguration } from '../../shared/apis/config';
import { resolveAMIFamily } from '../../shared/apis/v1/amifamily';
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE } from '../../shared/apis/v1/labels';
import type { AMIFamily, EC2NodeClass, NodePool, Taint } from '../../shared/apis/v1/types';
import { loadBuiltInCatalog, readCatalogFile, resolveInstanceTypes } from '../../shared/instancetypes';
import type { CapacityType, InstanceType } from '../../shared/instancetypes/types';
import { isIPv6, kubeDNSIP } from '../../shared/launch/cluster';
import {
  instanceTypeRequirementProblem,
  launchValueProblems,
  userDataSizeProblem,
} from '../../shared/launch/inputchecks';
import { filledKubelet } from '../../shared/launch/launchtemplate';
import { nodeClaimFromPlan } from '../../shared/nodeclaim';
import type { PlannedNodeClaim } from '../../shared/scheduling';
import {
  type Command,
  flagValue,
  flagValues,
  type IO,
  type ParsedArgs,
  parseArgs,
  requireFlag,
  UsageError,
} from '../command';

export const LAUNCH_FLAGS = [
  '--manifests',
  '--nodeclass',
  '--nodepool',
  '--instance-type',
  '--capacity-type',
  '--cluster-name',
  '--cluster-endpoint',
  '--cluster-ca',
  '--cluster-cidr',
  '--cluster-dns',
  '--catalog',
] as const;

export const LAUNCH_FLAGS_USAGE = `  --manifests PATH          NodePool/EC2NodeClass YAML file or directory (repeatable)
  --nodepool NAME           the NodePool the node belongs to
  --nodeclass NAME          the EC2NodeClass (default: the NodePool's nodeClassRef)
  --instance-type TYPE      the instance type (maxPods from the catalog; its labels come at registration)
  --capacity-type TYPE      spot or on-demand
  --cluster-name NAME       the EKS cluster name
  --cluster-endpoint URL    the API server endpoint
  --cluster-ca BASE64       the cluster CA bundle, base64 PEM
  --cluster-cidr CIDR       the service CIDR
  --cluster-dns IP          the kube-dns IP (default: the service CIDR's .10, IPv6 ::a)
  --catalog FILE            instance-type catalog JSON (default: the built-in us-east-1 snapshot)
`;

export const LAUNCH_CLUSTER_VALUES = `Your cluster's values: 'aws eks describe-cluster --name my-cluster' gives cluster.endpoint,
cluster.certificateAuthority.data and cluster.kubernetesNetworkConfig.serviceIpv4Cidr.
`;

export const LAUNCH_EXIT_STATUS = `Exit status: 0 when the output was printed; 1 when the manifests are invalid, the NodePool,
EC2NodeClass or instance type is not found, or the node could not boot as asked (userData too large,
a requirement of the NodePool the instance type does not meet); 2 on bad flags.
`;

/** The flag each checked launch value comes from, for messages. */
export const LAUNCH_VALUE_FLAGS = {
  clusterName: '--cluster-name',
  clusterEndpoint: '--cluster-endpoint',
  caBundle: '--cluster-ca',
  clusterDNS: '--cluster-dns',
  amiId: '--ami-id',
};

/** Everything one offline launch needs, resolved from the flags and manifests. */
export interface OfflineLaunch {
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
  family: AMIFamily;
  instanceType: InstanceType;
  capacityType: CapacityType;
  clusterName: string;
  clusterEndpoint: string;
  caBundle: string;
  clusterCIDR: string;
  dnsIP: string;
  labels: Record<string, string>;
  taints: Taint[];
}

/**
 * The labels Karpenter puts in userData for a node of this NodePool: the NodeClaim's labels (template,
 * nodepool, nodeclass, injectable requirement values) plus capacity type, never the instance type's own
 * labels, since one launch template serves every type of a fleet.
 */
export function offlineUserDataLabels(
  nodePool: NodePool,
  nodeClass: EC2NodeClass,
  instanceType: InstanceType,
  capacityType: CapacityType,
): Record<string, string> {
  const claim: PlannedNodeClaim = {
    nodePool: nodePool.metadata.name,
    requirements: [
      ...nodePool.spec.template.spec.requirements,
      { key: LABEL_INSTANCE_TYPE, operator: 'In', values: [instanceType.name] },
      { key: LABEL_CAPACITY_TYPE, operator: 'In', values: [capacityType] },
    ],
    instanceTypes: [instanceType],
    offering: { zone: '', capacityType, price: 0, available: true, instanceType: instanceType.name },
    pods: [],
    requests: {},
  };
  const launch = nodeClaimFromPlan({ claim, nodePool, nodeClass, seed: 'offline' });
  // The flag decides the capacity type even when the offline catalog offers the type otherwise.
  return { ...launch.userDataLabels, [LABEL_CAPACITY_TYPE]: capacityType };
}

export function resolveOfflineLaunch(parsed: ParsedArgs): OfflineLaunch {
  const manifests = flagValues(parsed, '--manifests');
  if (manifests.length === 0) throw new UsageError('missing required flag --manifests');
  const nodePoolName = requireFlag(parsed, '--nodepool');
  const typeName = requireFlag(parsed, '--instance-type');
  const capacityType = requireFlag(parsed, '--capacity-type');
  if (capacityType !== 'spot' && capacityType !== 'on-demand') {
    throw new UsageError(`--capacity-type must be spot or on-demand, got "${capacityType}"`);
  }
  const clusterName = requireFlag(parsed, '--cluster-name');
  const clusterEndpoint = requireFlag(parsed, '--cluster-endpoint');
  const caBundle = requireFlag(parsed, '--cluster-ca');
  const clusterCIDR = requireFlag(parsed, '--cluster-cidr');
  let dnsIP = flagValue(parsed, '--cluster-dns');
  if (dnsIP === undefined) {
    try {
      dnsIP = kubeDNSIP(clusterCIDR);
    } catch (error) {
      throw new UsageError(`--cluster-cidr: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  const flagProblems = launchValueProblems(
    { clusterName, clusterEndpoint, caBundle, clusterDNS: dnsIP },
    LAUNCH_VALUE_FLAGS,
  );
  if (flagProblems.length > 0) throw new UsageError(flagProblems.join('\n'));
  const { config } = requireConfiguration(manifests);
  const nodePool = config.nodePools.find((p) => p.metadata.name === nodePoolName);
  if (!nodePool) {
    throw new Error(
      `NodePool/${nodePoolName} not found in ${manifests.join(', ')} (found: ${config.nodePools.map((p) => p.metadata.name).join(', ') || 'none'})`,
    );
  }
  const nodeClassName = flagValue(parsed, '--nodeclass') ?? nodePool.spec.template.spec.nodeClassRef.name;
  const nodeClass = config.nodeClasses.find((c) => c.metadata.name === nodeClassName);
  if (!nodeClass) {
    throw new Error(
      `EC2NodeClass/${nodeClassName} not found in ${manifests.join(', ')} (found: ${config.nodeClasses.map((c) => c.metadata.name).join(', ') || 'none'})`,
    );
  }
  const family = resolveAMIFamily(nodeClass);
  if (!family) {
    throw new Error(`EC2NodeClass/${nodeClassName}: spec.amiFamily: set amiFamily or an alias in amiSelectorTerms`);
  }
  const catalogPath = flagValue(parsed, '--catalog');
  const catalog = catalogPath ? readCatalogFile(catalogPath) : loadBuiltInCatalog();
  const instanceType = resolveInstanceTypes(catalog, nodeClass, { amiFamily: family }).find((t) => t.name === typeName);
  if (!instanceType) {
    throw new Error(
      `instance type ${typeName} is not in the ${catalogPath ?? 'built-in'} catalog or cannot run ${family} (EC2NodeClass/${nodeClassName})`,
    );
  }
  const requirementProblem = instanceTypeRequirementProblem(nodePool, instanceType);
  if (requirementProblem) throw new Error(requirementProblem);
  const template = nodePool.spec.template.spec;
  return {
    nodePool,
    nodeClass,
    family,
    instanceType,
    capacityType,
    clusterName,
    clusterEndpoint,
    caBundle,
    clusterCIDR,
    dnsIP,
    labels: offlineUserDataLabels(nodePool, nodeClass, instanceType, capacityType),
    taints: [...(template.taints ?? []), ...(template.startupTaints ?? [])],
  };
}

/** Renders the userData, turning a UserDataError into a message that names the EC2NodeClass. */
export function renderOfflineUserData(launch: OfflineLaunch, io: IO): string {
  const { nodeClass } = launch;
  if (launch.family === 'Bottlerocket') {
    for (const key of droppedKubernetesSettings(nodeClass.spec.userData)) {
      io.stderr.write(
        `note: EC2NodeClass/${nodeClass.metadata.name}: spec.userData: settings.kubernetes.${key} is not a known Bottlerocket setting and is dropped\n`,
      );
    }
  }
  const brVersion = launch.family === 'Bottlerocket' ? bottlerocketVersion(nodeClass) : undefined;
  let userData: string;
  try {
    userData = renderUserData({
      family: launch.family,
      clusterName: launch.clusterName,
      clusterEndpoint: launch.clusterEndpoint,
      caBundle: launch.caBundle,
      clusterCIDR: launch.clusterCIDR,
      kubelet: filledKubelet(nodeClass, launch.instanceType, launch.dnsIP),
      taints: launch.taints,
      labels: launch.labels,
      capacityType: launch.capacityType,
      ...(nodeClass.spec.instanceStorePolicy ? { instanceStorePolicy: nodeClass.spec.instanceStorePolicy } : {}),
      ...(nodeClass.spec.userData !== undefined ? { customUserData: nodeClass.spec.userData } : {}),
      ...(brVersion !== undefined ? { bottlerocketVersion: brVersion } : {}),
    });
  } catch (error) {
    if (error instanceof UserDataError) throw new Error(`EC2NodeClass/${nodeClass.metadata.name}: ${error.message}`);
    throw error;
  }
  const sizeProblem = userDataSizeProblem(userData);
  if (sizeProblem) throw new Error(`EC2NodeClass/${nodeClass.metadata.name}: ${sizeProblem}`);
  return userData;
}

export function clusterIsIPv6(launch: OfflineLaunch): boolean {
  return isIPv6(launch.dnsIP);
}

export const userDataCommand: Command = {
  name: 'userdata',
  summary: 'print the userData a node would boot with (offline)',
  usage: `Usage: karpless userdata --manifests PATH --nodepool NAME --instance-type TYPE --capacity-type spot|on-demand
         --cluster-name NAME --cluster-endpoint URL --cluster-ca BASE64 --cluster-cidr CIDR [flags]

Prints the decoded userData Karpenter v1 would generate for one node, without calling AWS.

${LAUNCH_FLAGS_USAGE}
Example:
  karpless userdata --manifests examples/manifests --nodepool general --instance-type m7g.large \\
    --capacity-type spot --cluster-name my-cluster \\
    --cluster-endpoint https://EXAMPLE.gr7.us-east-1.eks.amazonaws.com --cluster-ca Q0EgQlVORExF \\
    --cluster-cidr 10.100.0.0/16

${LAUNCH_CLUSTER_VALUES}
${LAUNCH_EXIT_STATUS}`,
  async run(args, io) {
    const parsed = parseArgs(args, { values: LAUNCH_FLAGS });
    if (parsed.positional.length > 0) throw new UsageError(`unexpected argument ${parsed.positional[0]}`);
    const launch = resolveOfflineLaunch(parsed);
    const userData = renderOfflineUserData(launch, io);
    io.stdout.write(userData.endsWith('\n') || userData === '' ? userData : `${userData}\n`);
    return 0;
  },
};
