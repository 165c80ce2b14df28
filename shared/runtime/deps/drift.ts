// What the drift function needs, built once per cold start from the runtime (environment.ts), except
// the AMI lookups: each run gets a fresh AMIProvider, so a release is seen at the next run instead
// of after the 24 h SSM cache, and its replacements launch with the AMI the drift check expects.

import type { EC2NodeClass } from '../../apis/v1/types';
import type { NodeClassToday } from '../../disruption/drift';
import { isEvictable } from '../../kube/client';
import {
  CONDITION_AMIS_READY,
  CONDITION_SECURITY_GROUPS_READY,
  CONDITION_SUBNETS_READY,
  resolveNodeClass,
} from '../../nodeclass';
import type { NodeClassResolution, NodeClassResolverDeps } from '../../nodeclass/readiness';
import { AMIProvider } from '../../providers/ami';
import { CapacityReservationProvider } from '../../providers/capacityreservation';
import { type Cluster, ClusterProvider } from '../../providers/cluster';
import { InstanceLauncher } from '../../providers/instance';
import { InstanceProfileProvider } from '../../providers/instanceprofile';
import { LaunchTemplateProvider } from '../../providers/launchtemplate';
import { PlacementGroupProvider } from '../../providers/placementgroup';
import { ec2Api, eksApi, iamApi, ssmApi } from '../../providers/ports';
import { SecurityGroupProvider } from '../../providers/securitygroup';
import { SubnetProvider } from '../../providers/subnet';
import { StateUnavailableOfferings } from '../../providers/unavailableofferings';
import type { DriftDeps, DriftSession } from '../drift';
import { instanceTypeSource, kubeClient, type Runtime } from '../environment';
import { AwsClaimLauncher } from '../launcher';
import type { Telemetry } from '../telemetry';
import { launchClients } from './launch-clients';

function conditionTrue(resolution: NodeClassResolution, type: string): boolean {
  return resolution.nodeClass.status?.conditions?.some((c) => c.type === type && c.status === 'True') === true;
}

/** The parts of a resolution that resolved; a failed part is left out so it drifts nothing. */
export function nodeClassToday(nodeClass: EC2NodeClass, resolution: NodeClassResolution): NodeClassToday {
  return {
    nodeClass,
    ...(conditionTrue(resolution, CONDITION_AMIS_READY) ? { amis: resolution.amis } : {}),
    ...(conditionTrue(resolution, CONDITION_SUBNETS_READY) ? { subnetIds: resolution.subnets.map((s) => s.id) } : {}),
    ...(conditionTrue(resolution, CONDITION_SECURITY_GROUPS_READY)
      ? { securityGroupIds: resolution.securityGroups.map((g) => g.id) }
      : {}),
  };
}

export async function driftDeps(runtime: Runtime, telemetry: Telemetry): Promise<DriftDeps> {
  const { clients, settings, clock } = runtime;
  const { ssm, iam } = launchClients(runtime);
  const ec2 = ec2Api(clients.ec2);
  const clusterProvider = new ClusterProvider(eksApi(clients.eks));
  // Replacements plan and launch onto reservations as provision does, counted by one provider.
  const reservations = new CapacityReservationProvider(ec2, { clock });
  const resolver: Omit<NodeClassResolverDeps, 'amis' | 'k8sVersion' | 'clock' | 'mode'> = {
    subnets: new SubnetProvider(ec2),
    securityGroups: new SecurityGroupProvider(ec2),
    instanceProfiles: new InstanceProfileProvider(iamApi(iam), {
      clusterName: settings.cluster,
      region: settings.region,
    }),
    capacityReservations: reservations,
    placementGroups: new PlacementGroupProvider(ec2, { clock }),
  };
  const instanceLauncher = new InstanceLauncher({
    ec2,
    launchTemplates: new LaunchTemplateProvider(ec2, clock),
    unavailable: new StateUnavailableOfferings(runtime.state, clock),
    clusterName: settings.cluster,
    region: settings.region,
    reservations,
  });
  const session = async (): Promise<DriftSession> => {
    const amis = new AMIProvider(ec2, ssmApi(ssm), clock);
    const cluster: Promise<Cluster> = clusterProvider.describe(settings.cluster);
    const { version } = await cluster;
    const nodeClasses = new Map<string, NodeClassToday>();
    for (const nodeClass of runtime.config.nodeClasses) {
      const resolution = await resolveNodeClass(nodeClass, {
        ...resolver,
        amis,
        k8sVersion: version,
        clock,
        mode: 'inspect',
      });
      nodeClasses.set(nodeClass.metadata.name, nodeClassToday(nodeClass, resolution));
    }
    const launcher = new AwsClaimLauncher({
      nodeClasses: runtime.config.nodeClasses,
      cluster: () => cluster,
      resolver: { ...resolver, amis },
      launcher: instanceLauncher,
      clock,
    });
    return { nodeClasses, launcher };
  };
  return {
    ...telemetry,
    cluster: settings.cluster,
    nodePools: runtime.config.nodePools,
    nodeClasses: runtime.config.nodeClasses,
    session,
    instanceTypes: instanceTypeSource(runtime, telemetry, reservations),
    instances: runtime.instances,
    kube: await kubeClient(runtime),
    state: runtime.state,
    isEvictable,
    clock,
    // Consolidation's validation delay (Karpenter's 15 s) is waited out inside the run.
    sleep: runtime.sleep,
  };
}
