// CreateLaunchTemplate input (Karpenter's CreateLaunchTemplateInputBuilder) and the grouping of a
// claim's instance types into launch templates. Pure.
// CONTRACT: LaunchTemplateSpec, launchTemplateName, buildCreateLaunchTemplateInput, ResolvedAMI,
// ClusterInfo, resolveLaunchTemplates.

import { createHash } from 'node:crypto';
import type {
  CreateLaunchTemplateCommandInput,
  LaunchTemplateBlockDeviceMappingRequest,
  LaunchTemplateInstanceNetworkInterfaceSpecificationRequest,
  RequestLaunchTemplateData,
  Tag,
} from '@aws-sdk/client-ec2';
import { bottlerocketVersion, defaultBlockDeviceMappings } from '../amifamily/family';
import { renderUserData } from '../amifamily/userdata';
import { parseQuantity } from '../apis/quantity';
import { resolveAMIFamily } from '../apis/v1/amifamily';
import type {
  AMIFamily,
  EC2NodeClass,
  KubeletConfiguration,
  NodePool,
  NodeSelectorRequirementWithMinValues,
  Taint,
} from '../apis/v1/types';
import type { CapacityType, InstanceType } from '../instancetypes/types';
import { canonicalJson, toEC2Tags } from './canonical';
import { launchTags } from './tags';

export { canonicalJson, toEC2Tags } from './canonical';

export const LAUNCH_TEMPLATE_NAME_PREFIX = 'karpenter.k8s.aws/';

export interface LaunchTemplateSpec {
  clusterName: string;
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
  amiId: string;
  /** Decoded userData text. */
  userData: string;
  instanceProfile: string;
  securityGroupIds: string[];
  capacityType: CapacityType;
  /** EFA interfaces to attach (the instance type's maximum) when the claim requests vpc.amazonaws.com/efa. */
  efaCount?: number;
  ipv6?: boolean;
  region?: string;
  /** Resolved family; derived from the node class when absent. */
  family?: AMIFamily;
  /** Reserved launches: the one reservation this template targets (one template per reservation). */
  reservation?: TemplateReservation;
  /** From the claim's karpenter.k8s.aws/instance-tenancy requirement; default preferred. */
  tenancy?: 'default' | 'dedicated';
  /** The node class's resolved placement group, and the partition the claim requires, if any. */
  placementGroupId?: string;
  /** A placement group selected by name only (EC2 accepts the name in the template). */
  placementGroupName?: string;
  placementGroupPartition?: number;
  /** The claim requests eks.amazonaws.com/nip-slots (Nitro Enclaves). */
  enclave?: boolean;
}

export interface TemplateReservation {
  id: string;
  type: 'default' | 'capacity-block';
  interruptible?: boolean;
}

export interface ResolvedAMI {
  id: string;
  name?: string;
  requirements: NodeSelectorRequirementWithMinValues[];
  creationDate?: string;
  deprecated?: boolean;
}

export interface ClusterInfo {
  name: string;
  endpoint: string;
  caBundle: string;
  serviceCIDR?: string;
  version: string;
  dnsIP: string;
  ipv6: boolean;
}

const ISO_REGIONS = new Set([
  'us-iso-east-1',
  'us-iso-west-1',
  'us-isob-east-1',
  'us-isob-west-1',
  'us-isof-south-1',
  'us-isof-east-1',
]);

const GiB = 2 ** 30;

function blockDeviceMappings(spec: LaunchTemplateSpec): LaunchTemplateBlockDeviceMappingRequest[] | undefined {
  const configured = spec.nodeClass.spec.blockDeviceMappings ?? [];
  const mappings = configured.length > 0 ? configured : defaultBlockDeviceMappings(familyOf(spec));
  // EC2 rejects an empty list; leaving the field out keeps the AMI's own mappings.
  if (mappings.length === 0) return undefined;
  return mappings.map((m) => {
    const out: LaunchTemplateBlockDeviceMappingRequest = {};
    if (m.deviceName !== undefined) out.DeviceName = m.deviceName;
    const ebs = m.ebs;
    if (ebs) {
      out.Ebs = {};
      if (ebs.deleteOnTermination !== undefined) out.Ebs.DeleteOnTermination = ebs.deleteOnTermination;
      if (ebs.encrypted !== undefined) out.Ebs.Encrypted = ebs.encrypted;
      if (ebs.volumeType !== undefined) out.Ebs.VolumeType = ebs.volumeType;
      if (ebs.iops) out.Ebs.Iops = ebs.iops;
      if (ebs.throughput) out.Ebs.Throughput = ebs.throughput;
      if (ebs.kmsKeyID !== undefined) out.Ebs.KmsKeyId = ebs.kmsKeyID;
      if (ebs.snapshotID !== undefined) out.Ebs.SnapshotId = ebs.snapshotID;
      if (ebs.volumeInitializationRate !== undefined) out.Ebs.VolumeInitializationRate = ebs.volumeInitializationRate;
      if (ebs.volumeSize !== undefined) out.Ebs.VolumeSize = Math.ceil(parseQuantity(ebs.volumeSize) / GiB);
    }
    return out;
  });
}

function familyOf(spec: LaunchTemplateSpec): AMIFamily | undefined {
  return spec.family ?? resolveAMIFamily(spec.nodeClass);
}

function networkInterfaces(spec: LaunchTemplateSpec): LaunchTemplateInstanceNetworkInterfaceSpecificationRequest[] {
  const nc = spec.nodeClass.spec;
  const groups = [...spec.securityGroupIds];
  const trackingFields = nc.connectionTracking && {
    ...(nc.connectionTracking.tcpEstablishedTimeout !== undefined
      ? { TcpEstablishedTimeout: nc.connectionTracking.tcpEstablishedTimeout }
      : {}),
    ...(nc.connectionTracking.udpStreamTimeout !== undefined
      ? { UdpStreamTimeout: nc.connectionTracking.udpStreamTimeout }
      : {}),
    ...(nc.connectionTracking.udpTimeout !== undefined ? { UdpTimeout: nc.connectionTracking.udpTimeout } : {}),
  };
  // `connectionTracking: {}` sets nothing; EC2 gets no empty specification.
  const tracking = trackingFields && Object.keys(trackingFields).length > 0 ? trackingFields : undefined;
  // IPv6 clusters: every addressed interface gets a primary IPv6 address, as upstream's EFA path does.
  const addressing = (ni: LaunchTemplateInstanceNetworkInterfaceSpecificationRequest) => {
    if (spec.ipv6) {
      ni.PrimaryIpv6 = true;
      ni.Ipv6AddressCount = 1;
      if (nc.ipPrefixCount !== undefined) ni.Ipv6PrefixCount = nc.ipPrefixCount;
    } else if (nc.ipPrefixCount !== undefined) ni.Ipv4PrefixCount = nc.ipPrefixCount;
    if (tracking) ni.ConnectionTrackingSpecification = tracking;
  };

  let interfaces: LaunchTemplateInstanceNetworkInterfaceSpecificationRequest[];
  if (nc.networkInterfaces && nc.networkInterfaces.length > 0) {
    interfaces = nc.networkInterfaces.map((entry) => {
      const ni: LaunchTemplateInstanceNetworkInterfaceSpecificationRequest = {
        NetworkCardIndex: entry.networkCardIndex,
        DeviceIndex: entry.deviceIndex,
        InterfaceType: entry.interfaceType,
        Groups: groups,
      };
      // EFA-only interfaces carry no IP addresses, so no counts, public IP or connection tracking.
      if (entry.interfaceType !== 'efa-only') addressing(ni);
      return ni;
    });
  } else if (spec.efaCount && spec.efaCount > 0) {
    interfaces = Array.from({ length: spec.efaCount }, (_, i) => {
      const ni: LaunchTemplateInstanceNetworkInterfaceSpecificationRequest = {
        NetworkCardIndex: i,
        DeviceIndex: i === 0 ? 0 : 1,
        InterfaceType: 'efa',
        Groups: groups,
      };
      addressing(ni);
      return ni;
    });
  } else {
    const ni: LaunchTemplateInstanceNetworkInterfaceSpecificationRequest = { DeviceIndex: 0, Groups: groups };
    addressing(ni);
    interfaces = [ni];
  }
  // Only when the user asked (no subnet introspection). EC2 refuses a public IP on an instance with
  // more than one interface, so with several the most we can say is "no".
  if (nc.associatePublicIPAddress !== undefined) {
    const value = interfaces.length > 1 ? false : nc.associatePublicIPAddress;
    for (const ni of interfaces) {
      if (ni.InterfaceType !== 'efa-only') ni.AssociatePublicIpAddress = value;
    }
  }
  return interfaces;
}

function launchTemplateData(spec: LaunchTemplateSpec): RequestLaunchTemplateData {
  const nc = spec.nodeClass.spec;
  const tags = toEC2Tags(
    launchTags({ clusterName: spec.clusterName, nodePool: spec.nodePool.metadata.name, nodeClass: spec.nodeClass }),
  );
  const metadata = nc.metadataOptions ?? {};
  const data: RequestLaunchTemplateData = {
    ImageId: spec.amiId,
    UserData: Buffer.from(spec.userData, 'utf8').toString('base64'),
    IamInstanceProfile: { Name: spec.instanceProfile },
    Monitoring: { Enabled: nc.detailedMonitoring ?? false },
    MetadataOptions: {
      HttpEndpoint: metadata.httpEndpoint ?? 'enabled',
      ...(spec.region !== undefined && ISO_REGIONS.has(spec.region)
        ? {}
        : { HttpProtocolIpv6: metadata.httpProtocolIPv6 ?? 'disabled' }),
      HttpPutResponseHopLimit: metadata.httpPutResponseHopLimit ?? 1,
      HttpTokens: metadata.httpTokens ?? 'required',
      // Karpenter's tag keys contain '/', which instance metadata tags do not allow.
      InstanceMetadataTags: 'disabled',
    },
    NetworkInterfaces: networkInterfaces(spec),
    TagSpecifications: [
      { ResourceType: 'network-interface', Tags: tags },
      ...(spec.capacityType === 'spot' ? [{ ResourceType: 'spot-instances-request' as const, Tags: tags }] : []),
    ],
  };
  const bdms = blockDeviceMappings(spec);
  if (bdms) data.BlockDeviceMappings = bdms;
  Object.assign(data, reservationData(spec), placementData(spec));
  if (spec.enclave) data.EnclaveOptions = { Enabled: true };
  if (nc.cpuOptions?.nestedVirtualization !== undefined) {
    data.CpuOptions = { NestedVirtualization: nc.cpuOptions.nestedVirtualization };
  }
  return data;
}

// Spot and on-demand never consume the account's open reservations ("none"); a reserved launch
// targets exactly its reservation, in the reservation's market.
function reservationData(spec: LaunchTemplateSpec): Partial<RequestLaunchTemplateData> {
  const r = spec.capacityType === 'reserved' ? spec.reservation : undefined;
  if (!r) return { CapacityReservationSpecification: { CapacityReservationPreference: 'none' } };
  const market =
    r.type === 'capacity-block' ? 'capacity-block' : r.interruptible ? 'interruptible-capacity-reservation' : undefined;
  return {
    CapacityReservationSpecification: {
      CapacityReservationPreference: 'capacity-reservations-only',
      CapacityReservationTarget: { CapacityReservationId: r.id },
    },
    ...(market ? { InstanceMarketOptions: { MarketType: market } } : {}),
  };
}

function placementData(spec: LaunchTemplateSpec): Partial<RequestLaunchTemplateData> {
  return {
    Placement: {
      Tenancy: spec.tenancy ?? 'default',
      ...(spec.placementGroupId !== undefined ? { GroupId: spec.placementGroupId } : {}),
      ...(spec.placementGroupId === undefined && spec.placementGroupName !== undefined
        ? { GroupName: spec.placementGroupName }
        : {}),
      ...(spec.placementGroupPartition !== undefined ? { PartitionNumber: spec.placementGroupPartition } : {}),
    },
  };
}

// Lists that are sets to EC2: their order must not change the template name.
function asSets(data: RequestLaunchTemplateData): RequestLaunchTemplateData {
  const byKey = (a: Tag, b: Tag) => ((a.Key ?? '') < (b.Key ?? '') ? -1 : (a.Key ?? '') > (b.Key ?? '') ? 1 : 0);
  return {
    ...data,
    NetworkInterfaces: data.NetworkInterfaces?.map((ni) => ({ ...ni, Groups: [...(ni.Groups ?? [])].sort() })),
    TagSpecifications: data.TagSpecifications?.map((ts) => ({ ...ts, Tags: [...(ts.Tags ?? [])].sort(byKey) })),
    ...(data.BlockDeviceMappings
      ? {
          BlockDeviceMappings: [...data.BlockDeviceMappings].sort((a, b) =>
            canonicalJson(a) < canonicalJson(b) ? -1 : 1,
          ),
        }
      : {}),
  };
}

/**
 * "karpenter.k8s.aws/<hash>": a digest of everything that goes into the template (AMI, userData,
 * network, storage, metadata options, tags — sets sorted), printed as a decimal uint64 like
 * upstream's hashstructure names. Equal inputs share one template; any change makes a new one.
 */
export function launchTemplateName(spec: LaunchTemplateSpec): string {
  const digest = createHash('sha256')
    .update(canonicalJson({ cluster: spec.clusterName, data: asSets(launchTemplateData(spec)) }))
    .digest();
  return `${LAUNCH_TEMPLATE_NAME_PREFIX}${digest.readBigUInt64BE(0).toString()}`;
}

export function buildCreateLaunchTemplateInput(spec: LaunchTemplateSpec): CreateLaunchTemplateCommandInput {
  const tags = launchTags({
    clusterName: spec.clusterName,
    nodePool: spec.nodePool.metadata.name,
    nodeClass: spec.nodeClass,
  });
  return {
    LaunchTemplateName: launchTemplateName(spec),
    LaunchTemplateData: launchTemplateData(spec),
    TagSpecifications: [{ ResourceType: 'launch-template', Tags: toEC2Tags(tags) }],
  };
}

/** Whether an instance type's labels satisfy every requirement (an AMI's arch/accelerator/os terms). */
export function requirementsMatch(
  requirements: readonly NodeSelectorRequirementWithMinValues[],
  labels: Record<string, string>,
): boolean {
  return requirements.every((r) => {
    const value = labels[r.key];
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        return value !== undefined && values.includes(value);
      case 'NotIn':
        return value === undefined || !values.includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
      case 'Gt':
      case 'Gte':
      case 'Lt':
      case 'Lte': {
        const n = Number(value);
        const bound = Number(values[0]);
        if (value === undefined || !Number.isFinite(n) || !Number.isFinite(bound)) return false;
        return r.operator === 'Gt'
          ? n > bound
          : r.operator === 'Gte'
            ? n >= bound
            : r.operator === 'Lt'
              ? n < bound
              : n <= bound;
      }
      default:
        return false;
    }
  });
}

export interface ResolveLaunchTemplatesArgs {
  clusterName: string;
  cluster: ClusterInfo;
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
  instanceTypes: InstanceType[];
  /** Newest first; each instance type takes the first AMI compatible with it. */
  amis: ResolvedAMI[];
  capacityType: CapacityType;
  instanceProfile: string;
  securityGroupIds: string[];
  /**
   * The NodeClaim's userData labels: nodeClaimFromPlan(...).userDataLabels (shared/nodeclaim). Never
   * one instance type's labels, since the template serves every type of the fleet; the renderer adds
   * capacity-type and drops restricted domains.
   */
  labels: Record<string, string>;
  /** The NodeClaim's taints then startupTaints; defaults to the NodePool template's. */
  taints?: Taint[];
  /** The claim requests vpc.amazonaws.com/efa. */
  efa?: boolean;
  region?: string;
  /** Template fields that come from the claim or its offering rather than the instance type. */
  reservation?: TemplateReservation;
  tenancy?: 'default' | 'dedicated';
  placementGroupId?: string;
  placementGroupName?: string;
  placementGroupPartition?: number;
  enclave?: boolean;
}

/** The kubelet settings a template's userData gets: maxPods always set, clusterDNS defaulted. */
export function filledKubelet(
  nodeClass: EC2NodeClass,
  instanceType: InstanceType,
  dnsIP: string,
): KubeletConfiguration {
  const kubelet = { ...(nodeClass.spec.kubelet ?? {}) };
  // Upstream always passes max-pods, so templates differ per pod density.
  kubelet.maxPods ??= instanceType.capacity.pods ?? 110;
  if (!kubelet.clusterDNS || kubelet.clusterDNS.length === 0) kubelet.clusterDNS = [dnsIP];
  return kubelet;
}

/** Groups the claim's instance types by (first compatible AMI, maxPods[, efa]) into template specs. */
export function resolveLaunchTemplates(
  args: ResolveLaunchTemplatesArgs,
): { spec: LaunchTemplateSpec; instanceTypes: InstanceType[] }[] {
  const family = resolveAMIFamily(args.nodeClass);
  const template = args.nodePool.spec.template.spec;
  const taints = args.taints ?? [...(template.taints ?? []), ...(template.startupTaints ?? [])];
  const groups = new Map<string, { spec: LaunchTemplateSpec; instanceTypes: InstanceType[] }>();
  for (const instanceType of args.instanceTypes) {
    const ami = args.amis.find((a) => requirementsMatch(a.requirements, instanceType.labels));
    if (!ami) continue;
    const efaCount = args.efa
      ? (instanceType.info.efaMaxInterfaces ?? instanceType.capacity['vpc.amazonaws.com/efa'] ?? 0)
      : 0;
    const brVersion = family === 'Bottlerocket' ? bottlerocketVersion(args.nodeClass, ami.name) : undefined;
    const userData = renderUserData({
      family: family ?? 'Custom',
      clusterName: args.clusterName,
      clusterEndpoint: args.cluster.endpoint,
      caBundle: args.cluster.caBundle,
      ...(args.cluster.serviceCIDR !== undefined ? { clusterCIDR: args.cluster.serviceCIDR } : {}),
      kubelet: filledKubelet(args.nodeClass, instanceType, args.cluster.dnsIP),
      taints,
      labels: args.labels,
      capacityType: args.capacityType,
      ...(args.nodeClass.spec.instanceStorePolicy
        ? { instanceStorePolicy: args.nodeClass.spec.instanceStorePolicy }
        : {}),
      ...(args.nodeClass.spec.userData !== undefined ? { customUserData: args.nodeClass.spec.userData } : {}),
      ...(brVersion !== undefined ? { bottlerocketVersion: brVersion } : {}),
    });
    // One template per distinct (AMI, userData, EFA) — maxPods is inside the userData.
    const key = JSON.stringify([ami.id, userData, efaCount]);
    let group = groups.get(key);
    if (!group) {
      const spec: LaunchTemplateSpec = {
        clusterName: args.clusterName,
        nodePool: args.nodePool,
        nodeClass: args.nodeClass,
        amiId: ami.id,
        userData,
        instanceProfile: args.instanceProfile,
        securityGroupIds: args.securityGroupIds,
        capacityType: args.capacityType,
        ipv6: args.cluster.ipv6,
        ...(efaCount > 0 ? { efaCount } : {}),
        ...(args.region !== undefined ? { region: args.region } : {}),
        ...(family !== undefined ? { family } : {}),
        ...(args.reservation !== undefined ? { reservation: args.reservation } : {}),
        ...(args.tenancy !== undefined ? { tenancy: args.tenancy } : {}),
        ...(args.placementGroupId !== undefined ? { placementGroupId: args.placementGroupId } : {}),
        ...(args.placementGroupName !== undefined ? { placementGroupName: args.placementGroupName } : {}),
        ...(args.placementGroupPartition !== undefined
          ? { placementGroupPartition: args.placementGroupPartition }
          : {}),
        ...(args.enclave ? { enclave: true } : {}),
      };
      group = { spec, instanceTypes: [] };
      groups.set(key, group);
    }
    group.instanceTypes.push(instanceType);
  }
  return [...groups.values()];
}
