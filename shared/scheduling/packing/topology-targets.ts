// Topology targets: the domains (zones, capacity types, …) a pod class could land in, from the NodePools
// and existing nodes its node selection and tolerations allow, and the domain its next batch goes to
// with how many pods it may take there (spread skew, affinity, anti-affinity both ways).

import { allows, LABEL_CAPACITY_TYPE, LABEL_ZONE, LABEL_ZONE_ID } from '../requirements';
import { untoleratedTaint } from '../taints';
import { describeTerm } from '../topology';
import type { TypeCatalog } from './catalog';
import { cmp } from './ordering';
import type { ExistingState, Group, OwnTerm, PoolState, Variant } from './state';

export class TopologyTargets {
  constructor(
    private readonly catalog: TypeCatalog,
    private readonly pools: readonly PoolState[],
    private readonly existing: readonly ExistingState[],
  ) {}

  private readonly domainsMemo = new Map<string, string[]>();

  /** The values of a key the variant could land in, by its node selection and tolerations. */
  domainsFor(v: Variant, key: string): string[] {
    let d = v.domains?.get(key);
    if (d) return d;
    // Variants with the same node selection and tolerations share their domains.
    const shared = `${this.catalog.intern(v.reqs)}|${v.tolerateSoft}|${JSON.stringify(v.cls.spec.tolerations ?? null)}|${key}`;
    d = this.domainsMemo.get(shared);
    if (d) {
      v.domains ??= new Map();
      v.domains.set(key, d);
      return d;
    }
    const values = new Set<string>();
    // Domains follow node selection and taints only, never the pod's size (nodeAffinityPolicy Honor).
    const podId = this.catalog.intern(v.reqs);
    for (const pool of this.pools) {
      if (untoleratedTaint(v.cls.spec.tolerations, pool.taints, v.tolerateSoft)) continue;
      const merged = this.catalog.merge(this.catalog.intern(pool.domain), v.reqs, podId);
      if (merged.conflict) continue;
      for (const value of this.poolDomains(pool, merged.id, key)) values.add(value);
    }
    for (const n of this.existing) {
      const value = n.labels[key];
      if (value === undefined || !v.reqs.matchesLabels(n.labels)) continue;
      if (untoleratedTaint(v.cls.spec.tolerations, n.taints, v.tolerateSoft)) continue;
      values.add(value);
    }
    d = [...values].sort(cmp);
    v.domains ??= new Map();
    v.domains.set(key, d);
    this.domainsMemo.set(shared, d);
    return d;
  }

  private readonly skewMemo = new Map<string, string[]>();

  /**
   * The domains a spread's minimum is taken over, as Karpenter's TopologyGroup registers them: the
   * values of the key every NodePool can give a node (whatever the pod's other requirements; under
   * nodeTaintsPolicy Honor only NodePools whose taints the pod tolerates), and those of the existing
   * nodes the spread's node filter admits (nodeAffinityPolicy Honor, the default: their labels match
   * the pod's required node selection; nodeTaintsPolicy Honor: their taints tolerated), narrowed by
   * the pod's required selection on the key itself. A preferred node affinity never narrows it, and a
   * domain the pod cannot reach still holds the minimum down (kube-scheduler would leave it out).
   */
  skewDomains(v: Variant, o: OwnTerm): string[] {
    let d = v.skewDomains?.get(o);
    if (!d) {
      d = this.computeSkewDomains(v, o);
      v.skewDomains ??= new Map();
      v.skewDomains.set(o, d);
    }
    return d;
  }

  private computeSkewDomains(v: Variant, o: OwnTerm): string[] {
    const key = o.group.key;
    const honorTaints = o.honorTaints === true;
    const honorAffinity = o.ignoreAffinity !== true;
    const memoKey = `${this.catalog.intern(v.strictReqs)}|${key}|${honorTaints ? `${v.tolerateSoft}|${JSON.stringify(v.cls.spec.tolerations ?? null)}` : ''}|${honorAffinity}`;
    let d = this.skewMemo.get(memoKey);
    if (d) return d;
    const values = new Set<string>();
    for (const pool of this.pools) {
      if (honorTaints && untoleratedTaint(v.cls.spec.tolerations, pool.taints, v.tolerateSoft)) continue;
      for (const value of this.poolDomains(pool, this.catalog.intern(pool.domain), key)) values.add(value);
      const own = pool.domain.get(key);
      if (own && !own.complement) for (const value of own.values) values.add(value);
    }
    for (const n of this.existing) {
      const value = n.labels[key];
      if (value === undefined) continue;
      if (honorAffinity && !v.strictReqs.matchesLabels(n.labels)) continue;
      if (honorTaints && untoleratedTaint(v.cls.spec.tolerations, n.taints, v.tolerateSoft)) continue;
      values.add(value);
    }
    const podDomains = v.strictReqs.get(key);
    d = [...values].filter((value) => !podDomains || allows(podDomains, value)).sort(cmp);
    this.skewMemo.set(memoKey, d);
    return d;
  }

  private readonly poolDomainMemo = new Map<string, Set<string>>();

  /** Values of `key` that a claim of the pool with these requirements could get. */
  private poolDomains(pool: PoolState, reqsId: number, key: string): Set<string> {
    const memoKey = `${pool.index}:${reqsId}:${key}`;
    let values = this.poolDomainMemo.get(memoKey);
    if (values) return values;
    values = new Set<string>();
    this.poolDomainMemo.set(memoKey, values);
    {
      const own = this.catalog.reqsById[reqsId]!.get(key);
      for (const p of this.catalog.compatible(pool, reqsId)) {
        if (key === LABEL_ZONE || key === LABEL_CAPACITY_TYPE || key === LABEL_ZONE_ID) {
          for (const o of p.t.it.offerings) {
            if (!o.available) continue;
            const value = key === LABEL_ZONE ? o.zone : key === LABEL_CAPACITY_TYPE ? o.capacityType : o.zoneID;
            if (value !== undefined && (!own || allows(own, value))) values.add(value);
          }
        } else if (this.catalog.isTypeKey(key)) {
          const value = p.t.it.labels[key];
          if (value !== undefined) values.add(value);
        } else if (own && !own.complement) {
          for (const value of own.values) values.add(value);
        }
      }
    }
    return values;
  }

  /**
   * Whether a domain the pod's own requirements allow already has a pod the affinity selects. When none
   * has, a pod selecting itself may open a domain of its own (Karpenter's anyCompatiblePodDomain): two
   * self-affine pods pinned to different zones each get one.
   */
  private anyReachableMatch(v: Variant, o: OwnTerm): boolean {
    const own = v.reqs.get(o.group.key);
    for (const [d, n] of o.group.counts) if (n > 0 && (!own || allows(own, d))) return true;
    return false;
  }

  /** The variant's own terms on the key and the anti-affinity groups on it that select the variant's pods. */
  private termsOn(v: Variant, key: string): { own: OwnTerm[]; inverse: Group[] } {
    let terms = v.termsByKey?.get(key);
    if (!terms) {
      terms = { own: v.own.filter((o) => o.group.key === key), inverse: v.cls.inverse.filter((g) => g.key === key) };
      v.termsByKey ??= new Map();
      v.termsByKey.set(key, terms);
    }
    return terms;
  }

  /** The domain of `key` to place the next batch in, and how many pods it may take. */
  chooseTarget(
    v: Variant,
    key: string,
    blocked: Set<string> | undefined,
    allowed?: { value: string; score: number }[],
  ): { value: string; budget: number } | { reason: string } {
    const domains = this.domainsFor(v, key);
    const { own, inverse } = this.termsOn(v, key);
    let best: string | undefined;
    let bestScore = Number.POSITIVE_INFINITY;
    let bestBudget = 0;
    // The first refusal, put in words only when no domain takes the pod: most calls find one that does.
    let refusal: Refusal | undefined;
    for (const d of domains) {
      if (blocked?.has(d)) continue;
      let budget = Number.POSITIVE_INFINITY;
      let score = 0;
      let ok = true;
      for (const o of own) {
        const g = o.group;
        const c = g.counts.get(d) ?? 0;
        if (o.kind === 'antiAffinity') {
          if (c > 0) {
            ok = false;
            refusal ??= { kind: 'antiAffinity', group: g, domain: d, maxSkew: 0 };
            break;
          }
          if (o.self) budget = Math.min(budget, 1);
        } else if (o.kind === 'affinity') {
          if (c === 0 && !(o.self && !this.anyReachableMatch(v, o))) {
            ok = false;
            refusal ??= { kind: 'affinity', group: g, domain: d, maxSkew: 0 };
            break;
          }
          score -= c;
        } else {
          const skewDomains = this.skewDomains(v, o);
          let min = Number.POSITIVE_INFINITY;
          for (const x of skewDomains) min = Math.min(min, g.counts.get(x) ?? 0);
          if (skewDomains.length < o.minDomains || min === Number.POSITIVE_INFINITY) min = 0;
          const allowance = o.self ? min + o.maxSkew - c : c - min <= o.maxSkew ? Number.POSITIVE_INFINITY : 0;
          if (allowance <= 0) {
            ok = false;
            refusal ??= { kind: 'spread', group: g, domain: d, maxSkew: o.maxSkew };
            break;
          }
          budget = Math.min(budget, allowance);
          score += c;
        }
      }
      if (!ok) continue;
      for (const g of inverse) {
        if ((g.owners.get(d) ?? 0) > 0) {
          ok = false;
          refusal ??= { kind: 'inverse', group: g, domain: d, maxSkew: 0 };
          break;
        }
      }
      if (!ok) continue;
      if (own.length === 0) for (const g of v.cls.matched) if (g.key === key) score += g.counts.get(d) ?? 0;
      allowed?.push({ value: d, score });
      if (score < bestScore) {
        best = d;
        bestScore = score;
        bestBudget = budget;
      }
    }
    if (best === undefined) {
      return {
        reason:
          (refusal && refusalText(refusal, key)) ??
          (domains.length === 0
            ? `no ${key} is reachable for this pod`
            : `no ${key} can take it (${domains.join(', ')})`),
      };
    }
    return { value: best, budget: bestBudget };
  }
}

/** Why a domain refused the pod: the term (or the repelling group) and the domain. */
interface Refusal {
  kind: OwnTerm['kind'] | 'inverse';
  group: Group;
  domain: string;
  maxSkew: number;
}

function refusalText(r: Refusal, key: string): string {
  const g = r.group;
  switch (r.kind) {
    case 'antiAffinity':
      return `${describeTerm(g.term)}: every allowed ${key} already has a matching pod (e.g. ${g.example})`;
    case 'affinity':
      return g.total === 0
        ? `${describeTerm(g.term)}: no pod matches the selector`
        : `${describeTerm(g.term)}: the ${key} with matching pods cannot take it`;
    case 'spread':
      return `${describeTerm(g.term)} with maxSkew ${r.maxSkew}: ${key} ${r.domain} would exceed the skew and the other ${key}s cannot take the pod`;
    case 'inverse':
      return `${describeTerm(g.term)} of pod ${g.ownerExample} repels it from ${key} ${r.domain}`;
  }
}
