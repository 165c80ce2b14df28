// The provision decision's launch port over AWS: resolve the claim's EC2NodeClass (subnets,
// security groups, AMIs, instance profile; cached briefly), shape the claim as Karpenter does
// (shared/launch/claim: labels, userData labels, requirements, capacity type) and launch it through
// InstanceLauncher, which re-finds a claim's existing instance instead of launching twice.

import type { EC2NodeClass } from '../apis/v1/types';
import { launchClaimFromPlan } from '../launch/claim';
import { type NodeClassResolverDeps, readyNodeClass, resolveNodeClass } from '../nodeclass';
import { type Clock, TTLCache } from '../providers/clock';
import type { Cluster } from '../providers/cluster';
import type { InstanceLauncher, LaunchedInstance, ResolvedNodeClass } from '../providers/instance';
import type { ClaimLauncher, NodeClaimToLaunch } from './provision';

/** How long a resolved node class is reused: subnets' free IPs and AMIs change slowly. */
export const NODECLASS_CACHE_TTL_MS = 60_000;

export interface AwsClaimLauncherDeps {
  nodeClasses: EC2NodeClass[];
  cluster: () => Promise<Cluster>;
  resolver: Omit<NodeClassResolverDeps, 'k8sVersion' | 'clock' | 'mode'>;
  launcher: Pick<InstanceLauncher, 'launch'>;
  clock: Clock;
}

export class AwsClaimLauncher implements ClaimLauncher {
  private readonly resolved: TTLCache<Promise<ResolvedNodeClass>>;

  constructor(private readonly deps: AwsClaimLauncherDeps) {
    this.resolved = new TTLCache(deps.clock, NODECLASS_CACHE_TTL_MS);
  }

  private resolve(nodeClass: EC2NodeClass): Promise<ResolvedNodeClass> {
    const name = nodeClass.metadata.name;
    let pending = this.resolved.get(name);
    if (!pending) {
      pending = (async () => {
        const cluster = await this.deps.cluster();
        const resolution = await resolveNodeClass(nodeClass, {
          ...this.deps.resolver,
          k8sVersion: cluster.version,
          clock: this.deps.clock,
          mode: 'ensure',
        });
        return readyNodeClass(resolution, cluster);
      })();
      // A failed resolution is not remembered: the next claim tries again.
      pending.catch(() => this.resolved.delete(name));
      this.resolved.set(name, pending);
    }
    return pending;
  }

  async launch({ nodeClaimName, nodePool, claim }: NodeClaimToLaunch): Promise<LaunchedInstance> {
    const ref = nodePool.spec.template.spec.nodeClassRef.name;
    const nodeClass = this.deps.nodeClasses.find((c) => c.metadata.name === ref);
    if (!nodeClass) {
      throw new Error(`NodePool/${nodePool.metadata.name}: EC2NodeClass/${ref} is not in the bundled configuration`);
    }
    const request = launchClaimFromPlan({ nodeClaimName, claim, nodePool, nodeClass });
    return this.deps.launcher.launch(request, await this.resolve(nodeClass));
  }
}
