// What a planned claim becomes: every compatible instance type that fits what it holds (and its limit
// charge), cheapest first, and the NodeClaim with those types and the cheapest offering.

import type { NodeSelectorRequirementWithMinValues } from '../../apis/v1/types';
import type { PlannedNodeClaim } from '../index';
import { LABEL_INSTANCE_TYPE } from '../requirements';
import type { TypeCatalog } from './catalog';
import type { ClaimState, PricedType } from './state';
import { exceedsCharged, fitsUsed } from './vectors';

/** Every compatible type that fits what the claim holds (and its limit charge), cheapest first. */
export function finalTypes(catalog: TypeCatalog, node: ClaimState): PricedType[] {
  const pool = node.pool;
  const fitting = catalog
    .compatible(pool, node.reqsId)
    .filter(
      (p) =>
        fitsUsed(p.t.alloc, node.used) && (!node.charged || exceedsCharged(p.t.capacity, node.charged, pool.limit) < 0),
    );
  return fitting.length > 0
    ? fitting
    : catalog.compatible(pool, node.reqsId).filter((p) => node.frontier.includes(p.t));
}

/** The NodeClaim as planned: its requirements with every type that fits, cheapest first, and its offering. */
export function finalize(catalog: TypeCatalog, node: ClaimState): PlannedNodeClaim {
  const pool = node.pool;
  const list = finalTypes(catalog, node);
  const first = list[0]!;
  const requirements: NodeSelectorRequirementWithMinValues[] = node.reqs
    .toNodeSelectorRequirements()
    .filter((r) => r.key !== LABEL_INSTANCE_TYPE);
  requirements.push({ key: LABEL_INSTANCE_TYPE, operator: 'In', values: list.map((p) => p.t.it.name) });
  return {
    nodePool: pool.name,
    requirements,
    instanceTypes: list.map((p) => p.t.it),
    offering: { ...first.offering, instanceType: first.t.it.name },
    pods: node.pods,
    requests: catalog.dims.toResources(node.used),
  };
}
