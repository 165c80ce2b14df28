// What the watcher function needs beyond the common runtime: the Kubernetes client, the notice
// publisher and what registration must know of NodePools and launched instance types (their labels,
// described per type when a node registers: the watcher's role has DescribeInstanceTypes, not the
// offerings, spot prices and Pricing API the launching functions read); with the configuration read
// from the cluster, the launch templates and instance profiles an EC2NodeClass's deletion deletes.

import { isEvictable } from '../../kube/client';
import type { ObservedObjects } from '../cluster-configuration';
import { ClusterStatusWriter } from '../cluster-status';
import { claimKnowledge, kubeClient, noticePublisher, type Runtime } from '../environment';
import { NodeClassTermination } from '../nodeclass-termination';
import { PodEvents } from '../pod-events';
import type { Telemetry } from '../telemetry';
import type { WatcherDeps } from '../watcher';
import { observeConfiguration } from './configuration';
import { clusterResources } from './gc';

export async function watcherDeps(runtime: Runtime, telemetry: Telemetry): Promise<WatcherDeps> {
  const kube = await kubeClient(runtime);
  // Registration describes the launched types as it meets them: no catalog, no prices at cold start.
  const claims = claimKnowledge(runtime);
  return {
    ...telemetry,
    kube,
    nodeClaimObjects: kube.karpenterObjects(),
    instances: runtime.instances,
    state: runtime.state,
    records: runtime.state,
    notices: noticePublisher(runtime),
    claims,
    isEvictable,
    clock: runtime.clock,
    sleep: runtime.sleep,
    clusterStatus: new ClusterStatusWriter({
      karpenter: kube.karpenterObjects(),
      records: runtime.state,
      kube,
      log: telemetry.log,
      clock: runtime.clock,
      recorder: kube.eventRecorder(runtime.clock),
      ...(runtime.settings.configurationSource === 'cluster'
        ? {
            observeConfiguration: (lists: ObservedObjects) => observeConfiguration(runtime, telemetry, lists),
            nodeClassTermination: new NodeClassTermination({
              karpenter: kube.karpenterObjects(),
              resources: {
                cluster: runtime.settings.cluster,
                region: runtime.settings.region,
                ...clusterResources(runtime),
              },
              recorder: kube.eventRecorder(runtime.clock),
              log: telemetry.log,
              clock: runtime.clock,
            }),
          }
        : {}),
    }),
    podEvents: new PodEvents({
      recorder: kube.eventRecorder(runtime.clock),
      state: runtime.state,
      log: telemetry.log,
    }),
  };
}
