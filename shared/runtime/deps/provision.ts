// What the provision function needs beyond the common runtime: the launch path (subnets, security
// groups, AMIs from SSM, instance profiles through IAM, launch templates, CreateFleet) and live
// instance types. Only this module pulls the userData renderers and the SSM and IAM clients into a
// bundle.

import { DETAIL_TYPE } from '../../contracts';
import { AMIProvider, PROVISION_ALIAS_TTL_MS } from '../../providers/ami';
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
import { instanceTypeSource, type Runtime } from '../environment';
import { AwsClaimLauncher } from '../launcher';
import type { ProvisionDeps } from '../provision';
import type { Telemetry } from '../telemetry';
import { launchClients } from './launch-clients';

export function provisionDeps(runtime: Runtime, telemetry: Telemetry): ProvisionDeps {
  const { clients, settings, clock } = runtime;
  const { ssm, iam } = launchClients(runtime);
  const ec2 = ec2Api(clients.ec2);
  const clusterProvider = new ClusterProvider(eksApi(clients.eks));
  let cluster: Promise<Cluster> | undefined;
  // One provider for planning, readiness and launch, so launches count down what planning offered.
  const reservations = new CapacityReservationProvider(ec2, { clock });
  const launcher = new InstanceLauncher({
    ec2,
    launchTemplates: new LaunchTemplateProvider(ec2, clock),
    unavailable: new StateUnavailableOfferings(runtime.state, clock),
    clusterName: settings.cluster,
    region: settings.region,
    reservations,
  });
  return {
    ...telemetry,
    cluster: settings.cluster,
    nodePools: runtime.config.nodePools,
    instanceTypes: instanceTypeSource(runtime, telemetry, reservations),
    instances: runtime.instances,
    state: runtime.state,
    launcher: new AwsClaimLauncher({
      nodeClasses: runtime.config.nodeClasses,
      cluster: () => {
        cluster ??= clusterProvider.describe(settings.cluster).catch((error: unknown) => {
          cluster = undefined;
          throw error;
        });
        return cluster;
      },
      resolver: {
        subnets: new SubnetProvider(ec2),
        securityGroups: new SecurityGroupProvider(ec2),
        amis: new AMIProvider(ec2, ssmApi(ssm), clock, PROVISION_ALIAS_TTL_MS),
        instanceProfiles: new InstanceProfileProvider(iamApi(iam), {
          clusterName: settings.cluster,
          region: settings.region,
        }),
        capacityReservations: reservations,
        placementGroups: new PlacementGroupProvider(ec2, { clock }),
      },
      launcher,
      clock,
    }),
    events: {
      nodeClaimsLaunched: (detail) => runtime.events.publish([{ detailType: DETAIL_TYPE.nodeClaimsLaunched, detail }]),
    },
    clock,
  };
}
