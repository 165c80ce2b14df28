// What the gc function needs beyond the common runtime: the Kubernetes client, the cluster's launch
// templates and instance profiles as garbage collection lists and deletes them; and the narrower set
// the stack's uninstall resource needs.

import { IAMClient } from '@aws-sdk/client-iam';
import { isEvictable } from '../../kube/client';
import { ClusterInstanceProfiles } from '../../providers/instanceprofile-gc';
import { ClusterLaunchTemplates } from '../../providers/launchtemplate-gc';
import { ec2Api, iamApi } from '../../providers/ports';
import { clientConfig, kubeClient, type Runtime } from '../environment';
import type { GcDeps } from '../gc';
import type { Telemetry } from '../telemetry';
import type { UninstallDeps } from '../uninstall';

// In an isolated VPC every node class names its own instance profile and karpless creates none, so
// there are none to collect, and IAM is out of reach anyway.
const NO_MANAGED_PROFILES: GcDeps['instanceProfiles'] = { list: async () => [], delete: async () => {} };

/** The cluster's launch templates and managed instance profiles (also what EC2NodeClass deletion deletes). */
export function clusterResources(runtime: Runtime): Pick<GcDeps, 'launchTemplates' | 'instanceProfiles'> {
  const { clients, settings } = runtime;
  const launchTemplates = new ClusterLaunchTemplates(ec2Api(clients.ec2), settings.cluster);
  if (settings.isolatedVPC) return { launchTemplates, instanceProfiles: NO_MANAGED_PROFILES };
  const iam = clients.iam ?? new IAMClient(clientConfig(settings.region));
  return {
    launchTemplates,
    instanceProfiles: new ClusterInstanceProfiles(iamApi(iam), {
      cluster: settings.cluster,
      region: settings.region,
    }),
  };
}

/** The stack's uninstall: EC2 and IAM only, since the cluster may be gone or unreachable by then. */
export function uninstallDeps(runtime: Runtime, telemetry: Telemetry): UninstallDeps {
  return { log: telemetry.log, instances: runtime.instances, ...clusterResources(runtime) };
}

export async function gcDeps(runtime: Runtime, telemetry: Telemetry): Promise<GcDeps> {
  const { settings } = runtime;
  const kube = await kubeClient(runtime);
  return {
    ...telemetry,
    cluster: settings.cluster,
    region: settings.region,
    nodePools: runtime.config.nodePools,
    nodeClasses: runtime.config.nodeClasses,
    instances: runtime.instances,
    kube,
    nodeClaimObjects: kube.karpenterObjects(),
    state: runtime.state,
    nodeClaims: runtime.state,
    records: runtime.state,
    ...clusterResources(runtime),
    isEvictable,
    clock: runtime.clock,
  };
}
