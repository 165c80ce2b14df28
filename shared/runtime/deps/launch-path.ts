// The launch path both launching functions (provision, drift) build: the SSM and IAM clients only
// they use (AMI aliases resolve through SSM parameters, instance profiles through IAM), the node-class
// resolvers except AMIs (each function keeps its own AMI cache), and the instance launcher. One
// capacity-reservation provider serves planning, readiness and launch, so launches count down what
// planning offered. Tests give their own SSM and IAM clients in AwsClients.

import { IAMClient } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { NodeClassResolverDeps } from '../../nodeclass/readiness';
import { CapacityReservationProvider } from '../../providers/capacityreservation';
import { realSleep } from '../../providers/clock';
import { ClusterProvider } from '../../providers/cluster';
import { BatchingInstanceLauncher } from '../../providers/instance/batch';
import { InstanceProfileProvider } from '../../providers/instanceprofile';
import { LaunchTemplateProvider } from '../../providers/launchtemplate';
import { PlacementGroupProvider } from '../../providers/placementgroup';
import { type EC2Api, ec2Api, eksApi, iamApi, type SSMApi, ssmApi } from '../../providers/ports';
import { SecurityGroupProvider } from '../../providers/securitygroup';
import { SubnetProvider } from '../../providers/subnet';
import { type LaunchTokens, pacedEc2 } from '../../providers/throttle';
import { StateUnavailableOfferings } from '../../providers/unavailableofferings';
import { clientConfig, type Runtime } from '../environment';

export interface LaunchPath {
  ec2: EC2Api;
  ssm: SSMApi;
  clusterProvider: ClusterProvider;
  reservations: CapacityReservationProvider;
  resolver: Omit<NodeClassResolverDeps, 'amis' | 'k8sVersion' | 'clock' | 'mode'>;
  instanceLauncher: BatchingInstanceLauncher;
  /** The paced port's instance tokens (paced only): the claim launcher sizes its batches by them. */
  launchTokens?: LaunchTokens;
}

/**
 * `paced`: the launch calls wait for EC2's tokens (the provision function, which launches bursts);
 * drift replaces a node or two at a time and keeps the plain port.
 */
export function launchPath(runtime: Runtime, options: { paced?: boolean } = {}): LaunchPath {
  const { clients, settings, clock } = runtime;
  const ec2 = ec2Api(clients.ec2);
  const iam = clients.iam ?? new IAMClient(clientConfig(settings.region));
  const reservations = new CapacityReservationProvider(ec2, { clock });
  const paced = options.paced ? pacedEc2(ec2, clock, realSleep) : undefined;
  return {
    ec2,
    ssm: ssmApi(clients.ssm ?? new SSMClient(clientConfig(settings.region))),
    clusterProvider: new ClusterProvider(eksApi(clients.eks)),
    reservations,
    resolver: {
      subnets: new SubnetProvider(ec2),
      securityGroups: new SecurityGroupProvider(ec2),
      instanceProfiles: new InstanceProfileProvider(iamApi(iam), {
        clusterName: settings.cluster,
        region: settings.region,
      }),
      capacityReservations: reservations,
      placementGroups: new PlacementGroupProvider(ec2, { clock }),
    },
    instanceLauncher: new BatchingInstanceLauncher({
      // Launch-path calls wait for EC2's request and instance tokens (shared/providers/throttle.ts).
      ec2: paced ?? ec2,
      // Pacing keeps throttling rare; what still comes back is retried longer rather than dropped.
      throttleRetries: 8,
      launchTemplates: new LaunchTemplateProvider(ec2, clock),
      unavailable: new StateUnavailableOfferings(runtime.state, clock),
      clusterName: settings.cluster,
      region: settings.region,
      reservations,
    }),
    ...(paced ? { launchTokens: paced } : {}),
  };
}
