// Whether a pod class may use a NodePool at all (its taints, its requirements, an instance type the pod
// fits on beside the DaemonSet overhead), and for pods that fit nowhere the reason per NodePool a person
// can act on.

import {
  allows,
  describeRequirement,
  LABEL_CAPACITY_TYPE,
  LABEL_HOSTNAME,
  LABEL_ZONE,
  LABEL_ZONE_ID,
} from '../requirements';
import { PODS } from '../resources';
import { formatTaint, untoleratedTaint } from '../taints';
import type { TypeCatalog } from './catalog';
import { hostPortTerms, labelsWithHostPorts } from './host-ports';
import { cmpNatural } from './ordering';
import { formatAmount } from './reason-text';
import type { PoolState, PricedType, StaticFit, Variant } from './state';
import { fitsOne } from './vectors';

const NO_POOLS_REASON = 'no NodePools: add a NodePool (karpenter.sh/v1) whose requirements and taints allow this pod';

/** Whether the class may use the NodePool at all (taints, requirements, a type it fits on), cached per variant. */
export function staticFit(catalog: TypeCatalog, v: Variant, pool: PoolState): StaticFit {
  let fit = v.staticFits[pool.index];
  if (fit) return fit;
  fit = computeStaticFit(catalog, v, pool);
  v.staticFits[pool.index] = fit;
  return fit;
}

function computeStaticFit(catalog: TypeCatalog, v: Variant, pool: PoolState): StaticFit {
  const prefix = `NodePool ${pool.name}: `;
  const taint = untoleratedTaint(v.cls.spec.tolerations, pool.taints, v.tolerateSoft);
  if (taint) return { reason: `${prefix}taint ${formatTaint(taint)} not tolerated` };
  const port = daemonPortConflict(catalog, v, pool);
  if (port) return { reason: prefix + port };
  const poolId = catalog.intern(pool.domain);
  const merged = catalog.merge(poolId, v.reqs, catalog.intern(v.reqs));
  if (merged.conflict) {
    const r = merged.conflict;
    const own = pool.domain.get(r.key);
    if (r.key === LABEL_HOSTNAME && !own) {
      return {
        reason: `${prefix}requirement ${describeRequirement(r)} names a node, and a new node's hostname is not known before it launches (schedule the pod to that node, or select a label a NodePool sets)`,
      };
    }
    const allowsText = own
      ? `allows ${describeRequirement(own)}`
      : `label ${r.key} is not set by NodePool ${pool.name} or its instance types`;
    return { reason: `${prefix}requirement ${describeRequirement(r)} conflicts with NodePool (${allowsText})` };
  }
  const compat = catalog.compatible(pool, merged.id);
  if (compat.length === 0) return { reason: prefix + explainNoType(catalog, v, pool, poolId) };
  const ds = catalog.daemonOverhead(pool, merged.id);
  const req = v.cls.req;
  if (!compat.some((p) => fitsOne(p.t.alloc, ds, req))) {
    return { reason: prefix + explainNoFit(catalog, v, pool, compat, ds) };
  }
  return { reqs: catalog.reqsById[merged.id]!, reqsId: merged.id };
}

/** A host port of the class that a DaemonSet running on every node of the pool binds already, in words. */
function daemonPortConflict(catalog: TypeCatalog, v: Variant, pool: PoolState): string | undefined {
  const terms = hostPortTerms(v.cls.first);
  if (terms.length === 0) return undefined;
  for (const ds of catalog.daemonHostPortPods(pool)) {
    const labels = labelsWithHostPorts(ds);
    const taken = terms.find((t) => t.selector.matches(labels));
    if (taken) {
      return `${taken.selector.text} is bound by DaemonSet pod ${ds.metadata.namespace ?? 'default'}/${ds.metadata.name} on every node of the pool`;
    }
  }
  return undefined;
}

function explainNoType(catalog: TypeCatalog, v: Variant, pool: PoolState, poolId: number): string {
  const base = catalog.compatible(pool, poolId);
  if (pool.types.length === 0) return 'has no instance types (check its EC2NodeClass)';
  if (base.length === 0)
    return 'nodepool requirements filtered out all available instance types (none matches them with an available offering)';
  for (const r of v.reqs.byKey.values()) {
    if (!catalog.isTypeKey(r.key) || r.key === LABEL_HOSTNAME) continue;
    const values = new Set<string>();
    for (const p of base) {
      if (r.key === LABEL_ZONE || r.key === LABEL_CAPACITY_TYPE || r.key === LABEL_ZONE_ID) {
        for (const o of p.t.it.offerings) {
          if (!o.available) continue;
          const value = r.key === LABEL_ZONE ? o.zone : r.key === LABEL_CAPACITY_TYPE ? o.capacityType : o.zoneID;
          if (value !== undefined) values.add(value);
        }
      } else {
        const value = p.t.it.labels[r.key];
        if (value !== undefined) values.add(value);
      }
    }
    if (![...values].some((value) => allows(r, value)) && !(r.absent && values.size < base.length)) {
      const shown = [...values].sort(cmpNatural);
      const list = shown.length > 12 ? `${shown.slice(0, 12).join(', ')}, …` : shown.join(', ');
      return `requirement ${describeRequirement(r)} conflicts with NodePool (allows ${list || 'no value'})`;
    }
  }
  return `no instance type satisfies ${[...v.reqs.byKey.values()].map(describeRequirement).join(', ')} together with the NodePool (${pool.describe || 'no requirements'})`;
}

function explainNoFit(
  catalog: TypeCatalog,
  v: Variant,
  pool: PoolState,
  compat: PricedType[],
  ds: Float64Array,
): string {
  const req = v.cls.req;
  const names = catalog.dims.names;
  const withDs = ds.some((x, i) => x > 0 && req[i]! > 0) ? ' plus DaemonSet overhead' : '';
  for (let r = 0; r < req.length; r++) {
    if (req[r]! <= 0) continue;
    let largest = 0;
    for (const p of compat) largest = Math.max(largest, p.t.alloc[r]! - ds[r]!);
    if (largest < req[r]!) {
      const name = names[r]!;
      const scope = pool.describe ? `, ${pool.describe}` : '';
      if (largest <= 0) return `no instance type has ${name}${scope ? ` (${scope.slice(2)})` : ''}`;
      return `no instance type has ${formatAmount(name, req[r]!)} allocatable${withDs} (largest allowed: ${formatAmount(name, largest).replace(` ${name}`, '')}${scope})`;
    }
  }
  const wanted = [];
  for (let r = 0; r < req.length; r++)
    if (req[r]! > 0 && names[r] !== PODS) wanted.push(formatAmount(names[r]!, req[r]!));
  return `no instance type has ${wanted.join(' and ')} allocatable at once${withDs}${pool.describe ? ` (${pool.describe})` : ''}`;
}

/** One reason per NodePool why the variant's pods fit nowhere, each one a person can act on. */
export function unschedulableReasons(
  catalog: TypeCatalog,
  pools: readonly PoolState[],
  hasExisting: boolean,
  v: Variant,
): string[] {
  if (pools.length === 0 && !hasExisting) return [NO_POOLS_REASON];
  const out: string[] = [];
  for (const pool of pools) {
    const fit = staticFit(catalog, v, pool);
    if (fit.reason) out.push(fit.reason);
    else if (v.poolReasons[pool.index]) out.push(v.poolReasons[pool.index]!);
    else if (v.topologyReason) out.push(`NodePool ${pool.name}: ${v.topologyReason}`);
    else out.push(`NodePool ${pool.name}: no capacity left for this pod`);
  }
  if (pools.length === 0) out.push(NO_POOLS_REASON);
  if (v.topologyReason && pools.length === 0) out.push(v.topologyReason);
  return out;
}
