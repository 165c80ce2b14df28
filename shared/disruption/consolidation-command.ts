// One consolidation command for a set of candidates (CORE disruption/consolidation.go
// computeConsolidation and computeSpotToSpotConsolidation; helpers.go SimulateScheduling). Pure.
//
// The simulation places the pending pods, the candidates' pods and the pods of nodes being deleted
// onto every other active node; every pod that is not pending must find a place, and none may land
// on a node of ours that is not initialized. No new node: delete. One new node: replace, if its
// instance types cheaper than the candidates together still meet minValues; an on-demand candidate's
// replacement that may be spot is pinned to spot (so a spot shortage fails the launch instead of
// buying a dearer on-demand node); all-spot candidates are only replaced spot-to-spot when that is
// enabled, and then (single node) only with 15 cheaper types, launched from the cheapest 15.

import type { Pod } from '../apis/core/v1';
import type { NodePool } from '../apis/v1/types';
import type { InstanceType, Offering } from '../instancetypes/types';
import { type NodePoolUsage, usageWithout } from '../nodeclaim/usage';
import { type ExistingNode, type PlannedNodeClaim, podKey, Requirements, requirementFrom, solve } from '../scheduling';
import { satisfiesMinValues } from '../scheduling/packing/offerings';
import { allows } from '../scheduling/requirements';

/** Upstream's MinInstanceTypesForSpotToSpotConsolidation. */
export const MIN_SPOT_TO_SPOT_TYPES = 15;

const CAPACITY_TYPE = 'karpenter.sh/capacity-type';
const ZONE = 'topology.kubernetes.io/zone';

export interface ConsolidationCandidate {
  nodeName: string;
  instanceId: string;
  nodePool: string;
  instanceType: string;
  zone: string;
  capacityType: string;
  /** USD/hour of the node's offering today. */
  price: number;
  /** The pods that must move. */
  pods: Pod[];
  /** Upstream's DisruptionCost: the pods' eviction costs × the share of the claim's lifetime left. */
  disruptionCost: number;
  /** What the claim holds against its NodePool's limits. */
  capacity: Record<string, number>;
}

/** Upstream's methods in the order a pass tries them: Emptiness, multi-node, single-node consolidation. */
export type ConsolidationMethod = 'empty' | 'multi' | 'single';

export interface ConsolidationCommand {
  kind: 'delete' | 'replace';
  method: ConsolidationMethod;
  candidates: ConsolidationCandidate[];
  /** Replace: the one new node, its instance types cheaper than the candidates together. */
  replacement?: PlannedNodeClaim;
  /** USD/hour saved. */
  savings: number;
  /** Pods that fit on nodes already there: existing node name → pod keys. */
  elsewhere: Record<string, string[]>;
}

export interface SimulationContext {
  nodePools: readonly NodePool[];
  instanceTypes: Record<string, InstanceType[]>;
  daemonSets: Pod[];
  /** Active nodes (not deleting, not disrupting) with their pods; candidates are taken out per command. */
  landing: readonly ExistingNode[];
  /** Pods waiting for a node, and pods of nodes being deleted: they compete for the same room. */
  pendingPods: readonly Pod[];
  deletingPods: readonly Pod[];
  nodePoolUsage?: NodePoolUsage;
  spotToSpot: boolean;
}

function asPending(pod: Pod): Pod {
  const { nodeName: _bound, ...spec } = pod.spec;
  return { ...pod, spec, status: { phase: 'Pending' } };
}

function compatibleOfferings(type: InstanceType, requirements: Requirements): Offering[] {
  const zone = requirements.get(ZONE);
  const capacityType = requirements.get(CAPACITY_TYPE);
  return type.offerings.filter(
    (o) => o.available && (!zone || allows(zone, o.zone)) && (!capacityType || allows(capacityType, o.capacityType)),
  );
}

function cheapestOffering(type: InstanceType, requirements: Requirements): Offering | undefined {
  return compatibleOfferings(type, requirements).sort((a, b) => a.price - b.price)[0];
}

function withCapacityTypes(claim: PlannedNodeClaim, types: readonly string[]): PlannedNodeClaim {
  const rest = claim.requirements.filter((r) => r.key !== CAPACITY_TYPE);
  return { ...claim, requirements: [...rest, { key: CAPACITY_TYPE, operator: 'In', values: [...types] }] };
}

/** The NodePool's requirements with their minValues (a planned claim's requirements drop them). */
function minValuesOf(ctx: Pick<SimulationContext, 'nodePools'>, claim: PlannedNodeClaim): Requirements {
  const pool = ctx.nodePools.find((p) => p.metadata.name === claim.nodePool);
  return Requirements.from(
    (pool?.spec.template.spec.requirements ?? []).filter((r) => r.minValues !== undefined).map(requirementFrom),
  );
}

/** The claim's instance types cheaper than `price`, cheapest first, with the offering to launch; or why none. */
function cheaperOptions(
  ctx: Pick<SimulationContext, 'nodePools'>,
  claim: PlannedNodeClaim,
  price: number,
): PlannedNodeClaim | string {
  const requirements = Requirements.from(claim.requirements.map(requirementFrom));
  const priced = claim.instanceTypes
    .map((t) => ({ t, o: cheapestOffering(t, requirements) }))
    .filter((x): x is { t: InstanceType; o: Offering } => x.o !== undefined && x.o.price < price)
    .sort((a, b) => a.o.price - b.o.price);
  if (priced.length === 0) return "Can't replace with a cheaper node";
  const types = priced.map((x) => x.t);
  if (!satisfiesMinValues(minValuesOf(ctx, claim), types)) {
    return `Filtering by price: the ${types.length} instance type(s) cheaper than $${price.toFixed(4)}/h do not meet the NodePool's minValues`;
  }
  const first = priced[0] as { t: InstanceType; o: Offering };
  return { ...claim, instanceTypes: types, offering: { ...first.o, instanceType: first.t.name } };
}

function claimAllows(claim: PlannedNodeClaim, capacityType: string): boolean {
  const r = claim.requirements.find((x) => x.key === CAPACITY_TYPE);
  return !r || allows(requirementFrom(r), capacityType);
}

function spotToSpot(
  ctx: SimulationContext,
  candidates: readonly ConsolidationCandidate[],
  claim: PlannedNodeClaim,
  price: number,
): PlannedNodeClaim | string {
  if (!ctx.spotToSpot) return "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node";
  const cheaper = cheaperOptions(ctx, withCapacityTypes(claim, ['spot']), price);
  if (typeof cheaper === 'string' || candidates.length > 1) return cheaper;
  if (cheaper.instanceTypes.length < MIN_SPOT_TO_SPOT_TYPES) {
    return `SpotToSpotConsolidation requires ${MIN_SPOT_TO_SPOT_TYPES} cheaper instance type options than the current candidate to consolidate, got ${cheaper.instanceTypes.length}`;
  }
  // Launch from the cheapest 15 only, so the node launched is one the next pass will not replace again.
  const requirements = Requirements.from(cheaper.requirements.map(requirementFrom));
  let keep = MIN_SPOT_TO_SPOT_TYPES;
  while (keep < cheaper.instanceTypes.length && !satisfiesMinValues(requirements, cheaper.instanceTypes.slice(0, keep)))
    keep++;
  return { ...cheaper, instanceTypes: cheaper.instanceTypes.slice(0, keep) };
}

/** The replacement for the candidates, pinned as upstream pins it, or why there is none. */
function replacementFor(
  ctx: SimulationContext,
  candidates: readonly ConsolidationCandidate[],
  claim: PlannedNodeClaim,
): PlannedNodeClaim | string {
  const price = candidates.reduce((sum, c) => sum + c.price, 0);
  if (candidates.every((c) => c.capacityType === 'spot') && claimAllows(claim, 'spot')) {
    return spotToSpot(ctx, candidates, claim, price);
  }
  const cheaper = cheaperOptions(ctx, claim, price);
  if (typeof cheaper === 'string') return cheaper;
  // Priced as if spot launches: a spot shortage must fail the launch, not buy a dearer on-demand node.
  const offered = new Set(
    cheaper.instanceTypes.flatMap((t) =>
      compatibleOfferings(t, Requirements.from(cheaper.requirements.map(requirementFrom))).map((o) => o.capacityType),
    ),
  );
  if (claimAllows(cheaper, 'spot') && claimAllows(cheaper, 'on-demand') && offered.has('spot')) {
    return cheaperOptions(ctx, withCapacityTypes(cheaper, ['spot']), price);
  }
  return cheaper;
}

/**
 * Upstream's filterOutSameType for multi-node commands: replacing several nodes by one of a type
 * being removed is only worth it below the cheapest such node's price (else delete the others).
 */
function filterOutSameType(
  ctx: SimulationContext,
  claim: PlannedNodeClaim,
  candidates: readonly ConsolidationCandidate[],
): PlannedNodeClaim | string {
  const removed = new Map<string, number>();
  for (const c of candidates) removed.set(c.instanceType, Math.min(removed.get(c.instanceType) ?? Infinity, c.price));
  let max = Infinity;
  for (const t of claim.instanceTypes) {
    const p = removed.get(t.name);
    if (p !== undefined) max = Math.min(max, p);
  }
  return max === Infinity ? claim : cheaperOptions(ctx, claim, max);
}

/** Simulates removing the candidates: the command, or why there is none. */
export function computeConsolidation(
  ctx: SimulationContext,
  candidates: readonly ConsolidationCandidate[],
  method: ConsolidationMethod,
): ConsolidationCommand | string {
  const names = new Set(candidates.map((c) => c.nodeName));
  const moving = candidates.flatMap((c) => c.pods).map(asPending);
  const pending = new Set(ctx.pendingPods.map(podKey));
  let usage = ctx.nodePoolUsage;
  for (const c of candidates) usage = usageWithout(usage, c.nodePool, c.capacity);
  const result = solve({
    pods: [...ctx.pendingPods.map(asPending), ...moving, ...ctx.deletingPods.map(asPending)],
    nodePools: [...ctx.nodePools],
    instanceTypes: ctx.instanceTypes,
    daemonSets: ctx.daemonSets,
    existingNodes: ctx.landing.filter((n) => !names.has(n.name)).map((n) => ({ ...n, pods: [...n.pods] })),
    ...(usage ? { nodePoolUsage: usage } : {}),
    // Karpenter's disruption simulations schedule with reserved-capacity fallback: a replacement is
    // planned on what is left rather than wait for a reservation the simulation's other claims hold.
    reservedOfferingMode: 'fallback',
  });
  const stranded = result.unschedulable.filter((u) => !pending.has(podKey(u.pod)));
  if (stranded.length > 0) {
    return `${stranded.length} pod(s) would not schedule again (${stranded[0]?.reasons[0] ?? 'no reason given'})`;
  }
  const movingKeys = new Set(moving.map(podKey));
  const uninitialized = new Set(ctx.landing.filter((n) => n.initialized === false).map((n) => n.name));
  const onUninitialized = result.existingNodes.find(
    (p) => uninitialized.has(p.name) && p.pods.some((x) => movingKeys.has(podKey(x))),
  );
  if (onUninitialized) return `its pods would schedule to node ${onUninitialized.name}, which is not initialized yet`;
  const elsewhere = Object.fromEntries(
    result.existingNodes.filter((p) => p.pods.length > 0).map((p) => [p.name, p.pods.map(podKey)]),
  );
  const price = candidates.reduce((sum, c) => sum + c.price, 0);
  if (result.nodeClaims.length === 0) {
    return { kind: 'delete', method, candidates: [...candidates], savings: price, elsewhere };
  }
  if (result.nodeClaims.length > 1) return `Can't remove without creating ${result.nodeClaims.length} candidates`;
  const [claim] = result.nodeClaims as [PlannedNodeClaim];
  let replacement = replacementFor(ctx, candidates, claim);
  if (typeof replacement !== 'string' && method === 'multi')
    replacement = filterOutSameType(ctx, replacement, candidates);
  if (typeof replacement === 'string') return replacement;
  return {
    kind: 'replace',
    method,
    candidates: [...candidates],
    replacement,
    savings: price - replacement.offering.price,
    elsewhere,
  };
}
