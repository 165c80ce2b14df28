// What the drift function needs, built once per cold start from the runtime (environment.ts), except
// the AMI lookups: each run gets a fresh AMIProvider, so a release is seen at the next run instead
// of after the 24 h SSM cache, and its replacements launch with the AMI the drift check expects.

import type { EC2NodeClass, EC2NodeClassStatus } from '../../apis/v1/types';
import type { NodeClassToday } from '../../disruption/drift';
import { isEvictable } from '../../kube/client';
import {
  CONDITION_AMIS_READY,
  CONDITION_SECURITY_GROUPS_READY,
  CONDITION_SUBNETS_READY,
  resolveNodeClass,
} from '../../nodeclass';
import { CONDITION_CAPACITY_RESERVATIONS_READY, CONDITION_PLACEMENT_GROUP_READY } from '../../nodeclass/placement';
import type { NodeClassResolution } from '../../nodeclass/readiness';
import { AMIProvider } from '../../providers/ami';
import type { Cluster } from '../../providers/cluster';
import type { DriftDeps, DriftSession } from '../drift';
import { instanceTypeSource, kubeClient, type Runtime } from '../environment';
import { AwsClaimLauncher } from '../launcher';
import { NodeClassStatusWriter } from '../nodeclass-status';
import type { Telemetry } from '../telemetry';
import { launchPath } from './launch-path';

function conditionTrue(resolution: NodeClassResolution, type: string): boolean {
  return resolution.nodeClass.status?.conditions?.some((c) => c.type === type && c.status === 'True') === true;
}

/** The parts of a resolution that resolved; a failed part is left out so it drifts nothing. */
export function nodeClassToday(nodeClass: EC2NodeClass, resolution: NodeClassResolution): NodeClassToday {
  const { spec } = nodeClass;
  // No selector terms resolve to none (a reserved node then drifts, as upstream); failed ones to unknown.
  const reservationsKnown =
    (spec.capacityReservationSelectorTerms ?? []).length === 0 ||
    conditionTrue(resolution, CONDITION_CAPACITY_RESERVATIONS_READY);
  const placementKnown = !spec.placementGroupSelector || conditionTrue(resolution, CONDITION_PLACEMENT_GROUP_READY);
  return {
    ...(reservationsKnown ? { capacityReservationIds: resolution.capacityReservations.map((r) => r.id) } : {}),
    ...(placementKnown ? { placementGroupId: resolution.placementGroup?.id ?? '' } : {}),
    nodeClass,
    ...(conditionTrue(resolution, CONDITION_AMIS_READY) ? { amis: resolution.amis } : {}),
    ...(conditionTrue(resolution, CONDITION_SUBNETS_READY) ? { subnetIds: resolution.subnets.map((s) => s.id) } : {}),
    ...(conditionTrue(resolution, CONDITION_SECURITY_GROUPS_READY)
      ? { securityGroupIds: resolution.securityGroups.map((g) => g.id) }
      : {}),
  };
}

export async function driftDeps(runtime: Runtime, telemetry: Telemetry): Promise<DriftDeps> {
  const { settings, clock } = runtime;
  // Replacements plan and launch onto reservations as provision does, counted by one provider.
  const { ec2, ssm, clusterProvider, reservations, resolver, instanceLauncher } = launchPath(runtime);
  const session = async (): Promise<DriftSession> => {
    const amis = new AMIProvider(ec2, ssm, clock);
    const cluster: Promise<Cluster> = clusterProvider.describe(settings.cluster);
    const { version } = await cluster;
    const nodeClasses = new Map<string, NodeClassToday>();
    const statuses = new Map<string, EC2NodeClassStatus>();
    for (const nodeClass of runtime.config.nodeClasses) {
      const resolution = await resolveNodeClass(nodeClass, {
        ...resolver,
        amis,
        k8sVersion: version,
        clock,
        mode: 'inspect',
      });
      nodeClasses.set(nodeClass.metadata.name, nodeClassToday(nodeClass, resolution));
      if (resolution.nodeClass.status) statuses.set(nodeClass.metadata.name, resolution.nodeClass.status);
    }
    const launcher = new AwsClaimLauncher({
      nodeClasses: runtime.config.nodeClasses,
      cluster: () => cluster,
      resolver: { ...resolver, amis },
      launcher: instanceLauncher,
      records: runtime.state,
      clock,
    });
    return { nodeClasses, launcher, statuses };
  };
  const kube = await kubeClient(runtime);
  return {
    ...telemetry,
    cluster: settings.cluster,
    nodePools: runtime.config.nodePools,
    nodeClasses: runtime.config.nodeClasses,
    session,
    instanceTypes: instanceTypeSource(runtime, telemetry, reservations),
    instances: runtime.instances,
    kube,
    state: runtime.state,
    nodeClaims: runtime.state,
    records: runtime.state,
    claimUpdates: runtime.state,
    isEvictable,
    clock,
    // Consolidation's validation delay (Karpenter's 15 s) is waited out inside the run.
    sleep: runtime.sleep,
    ...(settings.nodeRepair ? { nodeRepair: true } : {}),
    ...(settings.spotToSpotConsolidation ? { spotToSpotConsolidation: true } : {}),
    nodeClaimObjects: kube.karpenterObjects(),
    nodeClassStatus: new NodeClassStatusWriter({ karpenter: kube.karpenterObjects(), log: telemetry.log, clock }),
  };
}
