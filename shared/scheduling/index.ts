// The scheduling core: pending pods + NodePools + instance types → NodeClaims to launch (pure).

import type { NodeSelectorRequirement, Pod } from '../apis/core/v1';
import type { NodePool, NodeSelectorRequirementWithMinValues, Taint } from '../apis/v1/types';
import type { InstanceType, Offering, Resources } from '../instancetypes/types';
import { Packer } from './packer';
import type { ReservedOfferingMode } from './packing/reservations';

/** A real node, or an in-flight NodeClaim not yet registered. */
export interface ExistingNode {
  name: string;
  /** Including zone, capacity-type, instance-type, hostname and nodepool. */
  labels: Record<string, string>;
  taints: Taint[];
  allocatable: Resources;
  /** Pods already bound or nominated there: they count against capacity and topology. */
  pods: Pod[];
  inFlight?: boolean;
  /**
   * Whether a node of ours has initialized (Karpenter's `karpenter.sh/initialized` label: Ready, startup
   * taints gone, extended resources registered). Until it has, its startup taints and the known
   * ephemeral taints (not-ready, unreachable, uninitialized, unregistered) do not keep pods off: they
   * will go, as Karpenter assumes. Absent: initialized, unless `inFlight`. Nodes not ours: leave absent.
   */
  initialized?: boolean;
  /** The claim's startup taints (its NodePool's `spec.template.spec.startupTaints`), ignored until initialized. */
  startupTaints?: Taint[];
}

export interface SchedulingInput {
  /** Pending pods to place. */
  pods: Pod[];
  /** Validated and defaulted. */
  nodePools: NodePool[];
  /** NodePool name → instance types resolved against its EC2NodeClass. */
  instanceTypes: Record<string, InstanceType[]>;
  /** One pod template per DaemonSet: overhead on every claim where it would run. */
  daemonSets?: Pod[];
  existingNodes?: ExistingNode[];
  /** Resources already used per NodePool, counted against its limits. */
  nodePoolUsage?: Record<string, Resources>;
  /**
   * Node requirements a pod's volumes add (volumetopology.ts), by pod: every node it lands on meets
   * them, but, as Karpenter keeps its VolumeRequirements apart from a pod's own, they never narrow the
   * domains its topology spreads count (kubernetes-sigs/karpenter#2777).
   */
  volumeRequirements?: ReadonlyMap<Pod, readonly NodeSelectorRequirement[]>;
  /**
   * A pod that could launch into a reserved offering whose remaining instances the plan's other claims
   * hold: `strict` (default; Karpenter's provisioner) defers it to the next decision, `fallback`
   * (Karpenter's disruption simulations) plans it on what is left. See packing/reservations.ts.
   */
  reservedOfferingMode?: ReservedOfferingMode;
}

export interface PlannedNodeClaim {
  nodePool: string;
  /** NodePool requirements narrowed by the pods. */
  requirements: NodeSelectorRequirementWithMinValues[];
  /** Every one fits every pod; sorted by cheapest available offering. */
  instanceTypes: InstanceType[];
  /** The cheapest available compatible offering. */
  offering: Offering & { instanceType: string };
  pods: Pod[];
  /** Pods + DaemonSet overhead. */
  requests: Resources;
}

export interface UnschedulablePod {
  pod: Pod;
  reasons: string[];
  /**
   * Deferred, not failed: a reserved offering it could use has no instance left that this plan's other
   * claims do not hold (Karpenter's ReservedOfferingError); the next decision plans it again.
   */
  reservedOffering?: true;
}

export interface SchedulingResult {
  nodeClaims: PlannedNodeClaim[];
  /** Pods placed on existing or in-flight capacity. */
  existingNodes: { name: string; pods: Pod[] }[];
  unschedulable: UnschedulablePod[];
  /** Sum of the nodeClaims' offering prices, USD/hour. */
  totalPrice: number;
}

/** "namespace/name", namespace defaulting to "default". */
export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

/**
 * Up to this many pods, the plan is also made in Karpenter's own decision order, and (when the priced
 * plan placed pods that need a node each first) in the priced order without that, and the cheapest is
 * kept: each greedy beats the others on some workloads, and a plan dearer than Karpenter's would be a
 * regression users see on their bill. Above it the extra plans would halve throughput where the priced
 * greedy's lead is largest.
 */
export const KARPENTER_ORDER_MAX_PODS = 1000;

/** Decides which NodeClaims to launch for the pending pods (Karpenter's Scheduler.Solve). Pure. */
export function solve(input: SchedulingInput): SchedulingResult {
  const packer = new Packer(input, 'priced');
  let best = packer.solve();
  if (input.pods.length > KARPENTER_ORDER_MAX_PODS || input.pods.length === 0) return best;
  const karpenter = new Packer(input, 'karpenter').solve();
  if (better(karpenter, best)) best = karpenter;
  if (packer.sharedForcedNodes) {
    const unshared = new Packer(input, 'priced', false).solve();
    if (better(unshared, best)) best = unshared;
  }
  return best;
}

/** Fewer unschedulable pods first, then the lower price (a cent in a million decides nothing). */
function better(a: SchedulingResult, b: SchedulingResult): boolean {
  if (a.unschedulable.length !== b.unschedulable.length) return a.unschedulable.length < b.unschedulable.length;
  return a.totalPrice < b.totalPrice * (1 - 1e-9);
}

export { RESERVED_UNAVAILABLE, type ReservedOfferingMode } from './packing/reservations';
export type { Requirement } from './requirements';
export { Requirements, requirementFrom } from './requirements';
export { podRequests } from './resources';
export { formatTaint, isKnownEphemeralTaint, schedulingTaints, tolerates, untoleratedTaint } from './taints';
