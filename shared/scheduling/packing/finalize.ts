// What a planned claim becomes: every compatible instance type that fits what it holds (and its limit
// charge), cheapest first, and the NodeClaim with those types and the cheapest offering.

import type { NodeSelectorRequirementWithMinValues } from '../../apis/v1/types';
import type { InstanceType } from '../../instancetypes/types';
import type { PlannedNodeClaim } from '../index';
import { LABEL_INSTANCE_TYPE } from '../requirements';
import type { TypeCatalog } from './catalog';
import type { ClaimState, PricedType } from './state';

/** Every compatible type that fits what the claim holds (and its limit charge), cheapest first. */
export function finalTypes(catalog: TypeCatalog, node: ClaimState): PricedType[] {
  const fitting: PricedType[] = [];
  scanFitting(catalog, node, (p) => {
    fitting.push(p);
    return true;
  });
  return fitting.length > 0 ? fitting : framedTypes(catalog, node);
}

/** The first of finalTypes, without listing the rest: what the post passes price a claim at. */
export function cheapestFinalType(catalog: TypeCatalog, node: ClaimState): PricedType {
  let first: PricedType | undefined;
  scanFitting(catalog, node, (p) => {
    first = p;
    return false;
  });
  return first ?? framedTypes(catalog, node)[0]!;
}

/** When nothing fits (a claim over-packed by a caller), the types it was framed with. */
function framedTypes(catalog: TypeCatalog, node: ClaimState): PricedType[] {
  return catalog.compatible(node.pool, node.reqsId).filter((p) => node.frontier.includes(p.t));
}

/**
 * Calls `take` with each compatible type that fits the claim's use (and its limit charge), cheapest
 * first, until it returns false. The test runs over the types' vectors laid flat (TypeCatalog.columns):
 * it is made for every type and every claim, millions of times in a solve of thousands of claims.
 */
function scanFitting(catalog: TypeCatalog, node: ClaimState, take: (p: PricedType) => boolean): void {
  const pool = node.pool;
  const { list, alloc, capacity, width } = catalog.columns(pool, node.reqsId);
  const used = node.used;
  const charged = node.charged;
  const limit = pool.limit;
  next: for (let i = 0, o = 0; i < list.length; i++, o += width) {
    for (let r = 0; r < width; r++) if (used[r]! > alloc[o + r]!) continue next;
    if (charged)
      for (let r = 0; r < width; r++)
        if (limit[r] !== Number.POSITIVE_INFINITY && capacity[o + r]! > charged[r]!) continue next;
    if (!take(list[i]!)) return;
  }
}

/** The NodeClaim as planned: its requirements with every type that fits, cheapest first, and its offering. */
export function finalize(catalog: TypeCatalog, node: ClaimState): PlannedNodeClaim {
  const pool = node.pool;
  // One pass lists the types and their names: thousands of claims each list hundreds of types.
  const instanceTypes: InstanceType[] = [];
  const names: string[] = [];
  let first: PricedType | undefined;
  const take = (p: PricedType) => {
    first ??= p;
    instanceTypes.push(p.t.it);
    names.push(p.t.it.name);
    return true;
  };
  scanFitting(catalog, node, take);
  if (!first) for (const p of framedTypes(catalog, node)) take(p);
  // Claims share requirement sets: the API form is made once per set, and each claim gets its own copy.
  const requirements: NodeSelectorRequirementWithMinValues[] = catalog
    .selectorRequirements(node.reqsId)
    .filter((r) => r.key !== LABEL_INSTANCE_TYPE)
    .map((r) => (r.values ? { ...r, values: [...r.values] } : { ...r }));
  requirements.push({ key: LABEL_INSTANCE_TYPE, operator: 'In', values: names });
  const cheapest = first!;
  return {
    nodePool: pool.name,
    requirements,
    instanceTypes,
    offering: { ...cheapest.offering, instanceType: cheapest.t.it.name },
    pods: node.pods,
    requests: catalog.dims.toResources(node.used),
  };
}
