// What a planned claim becomes: every compatible instance type that fits what it holds (and its limit
// charge), cheapest first, and the NodeClaim with those types and the cheapest offering.

import type { NodeSelectorRequirementWithMinValues } from '../../apis/v1/types';
import type { InstanceType, Offering } from '../../instancetypes/types';
import type { PlannedNodeClaim } from '../index';
import {
  allows,
  LABEL_CAPACITY_TYPE,
  LABEL_INSTANCE_TYPE,
  LABEL_ZONE,
  LABEL_ZONE_ID,
  type Requirements,
} from '../requirements';
import type { TypeCatalog, TypeColumns } from './catalog';
import { preferredOffering } from './offerings';
import { cmp } from './ordering';
import { LABEL_RESERVATION_ID } from './reservations';
import type { ClaimState, PoolState, PricedType } from './state';

/** Every compatible type that fits what the claim holds (and its limit charge), cheapest first. */
export function finalTypes(catalog: TypeCatalog, node: ClaimState): PricedType[] {
  const { list, count } = scanFitting(catalog, node, Number.POSITIVE_INFINITY);
  if (count === 0) return framedTypes(catalog, node);
  const fitting = new Array<PricedType>(count);
  for (let k = 0; k < count; k++) fitting[k] = list[found[k]!]!;
  return fitting;
}

/** The first of finalTypes, without listing the rest: what the post passes price a claim at. */
export function cheapestFinalType(catalog: TypeCatalog, node: ClaimState): PricedType {
  const { list, count } = scanFitting(catalog, node, 1);
  return count > 0 ? list[found[0]!]! : framedTypes(catalog, node)[0]!;
}

/** When nothing fits (a claim over-packed by a caller), the types it was framed with. */
function framedTypes(catalog: TypeCatalog, node: ClaimState): PricedType[] {
  return catalog.compatible(node.pool, node.reqsId).filter((p) => node.frontier.includes(p.t));
}

/** scanFitting's answer, indices into its list; shared, so each caller reads it before the next scan. */
let found = new Int32Array(256);

/**
 * The compatible types that fit the claim's use (and its limit charge), cheapest first, up to `max`:
 * their indices into `list` in `found`. The test runs over the types' vectors laid flat
 * (TypeCatalog.columns): it is made for every type and every claim, millions of times in a solve of
 * thousands of claims, and the indices let finalize make each claim's lists at their final length
 * (grown by push, they were a sixth of a 20,000-pod solve's allocations).
 */
function scanFitting(catalog: TypeCatalog, node: ClaimState, max: number): { list: PricedType[]; count: number } {
  const columns = catalog.columns(node.pool, node.reqsId);
  const { list, alloc, width } = columns;
  if (found.length < list.length) found = new Int32Array(list.length * 2);
  const used = node.used;
  let count = 0;
  if (node.charged) {
    const within = withinCharge(node.pool, columns, node.charged);
    next: for (let k = 0; k < within.length && count < max; k++) {
      const i = within[k]!;
      const o = i * width;
      for (let r = 0; r < width; r++) if (used[r]! > alloc[o + r]!) continue next;
      found[count++] = i;
    }
    return { list, count };
  }
  next: for (let i = 0, o = 0; i < list.length && count < max; i++, o += width) {
    for (let r = 0; r < width; r++) if (used[r]! > alloc[o + r]!) continue next;
    found[count++] = i;
  }
  return { list, count };
}

/** Per charge (claims opened alike share one, never changed) and type list, the types within the charge. */
const withinMemo = new WeakMap<Float64Array, Map<TypeColumns, Int32Array>>();

/**
 * The indices of the types whose capacity is within what the claim was charged (on the limited dims),
 * ascending. A function of the charge and the list alone: in a 20,000-pod solve a fifth of ~850 types
 * pass, and the 12,000 scans of finalize and the post passes test only those for room.
 */
function withinCharge(pool: PoolState, columns: TypeColumns, charged: Float64Array): Int32Array {
  let byList = withinMemo.get(charged);
  if (!byList) {
    byList = new Map();
    withinMemo.set(charged, byList);
  }
  let within = byList.get(columns);
  if (within) return within;
  const { list, capacity, width } = columns;
  const limit = pool.limit;
  const out: number[] = [];
  next: for (let i = 0, o = 0; i < list.length; i++, o += width) {
    for (let r = 0; r < width; r++)
      if (limit[r] !== Number.POSITIVE_INFINITY && capacity[o + r]! > charged[r]!) continue next;
    out.push(i);
  }
  within = Int32Array.from(out);
  byList.set(columns, within);
  return within;
}

/**
 * The NodeClaim as planned: its requirements with every type that fits, cheapest first, and its offering.
 * With reservations counted (`reservations`), a claim holding some launches only into those (Karpenter's
 * FinalizeScheduling pins capacity type and reservation ids), and one holding none into no reservation.
 */
export function finalize(catalog: TypeCatalog, node: ClaimState, reservations = false): PlannedNodeClaim {
  if (reservations) return finalizeReserved(catalog, node);
  const pool = node.pool;
  const { list, count } = scanFitting(catalog, node, Number.POSITIVE_INFINITY);
  const types = count > 0 ? undefined : framedTypes(catalog, node);
  const length = types ? types.length : count;
  const instanceTypes = new Array<InstanceType>(length);
  const names = new Array<string>(length);
  for (let k = 0; k < length; k++) {
    const it = (types ? types[k]! : list[found[k]!]!).t.it;
    instanceTypes[k] = it;
    names[k] = it.name;
  }
  const cheapest = types ? types[0]! : list[found[0]!]!;
  // Claims share requirement sets: the API form is made once per set, and each claim gets its own copy.
  const requirements: NodeSelectorRequirementWithMinValues[] = catalog
    .selectorRequirements(node.reqsId)
    .filter((r) => r.key !== LABEL_INSTANCE_TYPE)
    .map((r) => (r.values ? { ...r, values: [...r.values] } : { ...r }));
  requirements.push({ key: LABEL_INSTANCE_TYPE, operator: 'In', values: names });
  return {
    nodePool: pool.name,
    requirements,
    instanceTypes,
    offering: { ...cheapest.offering, instanceType: cheapest.t.it.name },
    pods: node.pods,
    requests: catalog.dims.toResources(node.used),
  };
}

/**
 * finalize when the plan counts reservations: a claim holding some launches into those reservations only
 * (Karpenter's FinalizeScheduling adds `capacity-reservation-id In [held]`), one holding none into no
 * reservation. Unlike Karpenter, which also pins the capacity type to reserved, the claim keeps its other
 * types and capacity types: when EC2 reports a held reservation full after all, karpless's launch falls
 * back within the same launch instead of failing it.
 */
function finalizeReserved(catalog: TypeCatalog, node: ClaimState): PlannedNodeClaim {
  const held = node.reserved ?? [];
  const reqs = catalog.reqsById[node.reqsId]!;
  const priced: PricedType[] = [];
  let unreserved = false;
  for (const p of finalTypes(catalog, node)) {
    let best: Offering | undefined;
    for (const o of held) if (o.t === p.t && (!best || cheaper(o.offering, best))) best = o.offering;
    // The claim keeps the types it holds nothing of, at their price without a reservation: the launch
    // falls back to them when EC2 reports a held reservation full after all.
    if (!best && p.offering.capacityType !== 'reserved') best = p.offering;
    if (!best) {
      best = cheapestUnreserved(p.t.it, reqs);
      unreserved ||= held.length === 0;
    }
    if (best) priced.push({ t: p.t, price: best.price, offering: best });
  }
  // A claim whose every type is a reservation it does not hold keeps them (launch then says so).
  const list = priced.length > 0 ? priced : finalTypes(catalog, node);
  list.sort((a, b) => a.price - b.price || cmp(a.t.it.name, b.t.it.name));
  const requirements: NodeSelectorRequirementWithMinValues[] = catalog
    .selectorRequirements(node.reqsId)
    .filter((r) => r.key !== LABEL_INSTANCE_TYPE)
    .map((r) => (r.values ? { ...r, values: [...r.values] } : { ...r }));
  requirements.push({ key: LABEL_INSTANCE_TYPE, operator: 'In', values: list.map((p) => p.t.it.name) });
  if (held.length > 0) {
    const ids = [...new Set(held.map((o) => o.offering.reservationId))].sort();
    requirements.push({ key: LABEL_RESERVATION_ID, operator: 'In', values: ids });
  } else if (unreserved && priced.length > 0) {
    // Held by other claims: its launch must not take one of their instances.
    const ct = reqs.get(LABEL_CAPACITY_TYPE);
    const values = ['spot', 'on-demand'].filter((v) => !ct || allows(ct, v));
    const i = requirements.findIndex((r) => r.key === LABEL_CAPACITY_TYPE);
    const narrowed = { key: LABEL_CAPACITY_TYPE, operator: 'In' as const, values };
    if (i >= 0) requirements[i] = narrowed;
    else requirements.push(narrowed);
  }
  const cheapest = list[0]!;
  return {
    nodePool: node.pool.name,
    requirements,
    instanceTypes: list.map((p) => p.t.it),
    offering: { ...cheapest.offering, instanceType: cheapest.t.it.name },
    pods: node.pods,
    requests: catalog.dims.toResources(node.used),
  };
}

function cheaper(a: Offering, b: Offering): boolean {
  return a.price < b.price || (a.price === b.price && preferredOffering(a, b));
}

/** The type's cheapest available offering the requirements allow that is not a reservation. */
function cheapestUnreserved(it: InstanceType, reqs: Requirements): Offering | undefined {
  const zone = reqs.get(LABEL_ZONE);
  const zoneId = reqs.get(LABEL_ZONE_ID);
  const ct = reqs.get(LABEL_CAPACITY_TYPE);
  let best: Offering | undefined;
  for (const o of it.offerings) {
    if (!o.available || o.capacityType === 'reserved') continue;
    if ((zone && !allows(zone, o.zone)) || (zoneId && !allows(zoneId, o.zoneID)) || (ct && !allows(ct, o.capacityType)))
      continue;
    if (!best || cheaper(o, best)) best = o;
  }
  return best;
}
