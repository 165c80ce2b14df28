// A plain re-implementation of Karpenter v1's scheduler decisions (reference §7), as the oracle karpless'
// plans are priced against: the floor to beat, kept out of shared/ so nothing ships with it.
//
//  - Pods in queue order: CPU request descending, then memory descending (input order stands in for
//    creation time).
//  - Each pod goes to the first in-flight claim, emptiest first, that still has an instance type that
//    fits it with everything the claim holds; the claim's types narrow to those.
//  - Else a new claim from the first NodePool, by weight then name, whose taints the pod tolerates and
//    whose types fit it: every type of the pool that fits, no cap.
//  - Zone spread pins a claim to the allowed zone with the fewest matching pods; hostname spread lets
//    a claim hold maxSkew matching pods (a new node is always a domain with none); hostname
//    anti-affinity keeps a claim free of pods the pod repels or that repel it; zone and hostname
//    affinity follow the pods they select.
//  - At the end each claim launches the cheapest offering of the types it still lists.
//
// Out of scope, as no caller gives them: existing nodes, DaemonSets, NodePool limits, minValues,
// preferences (treated as --preference-policy=Ignore) and namespace selectors on pod affinity terms.

import type { Pod, PodAffinityTerm } from '../shared/apis/core/v1';
import {
  LABEL_CAPACITY_TYPE,
  LABEL_HOSTNAME,
  LABEL_NODEPOOL,
  LABEL_ZONE,
  LABEL_ZONE_ID,
} from '../shared/apis/v1/labels';
import type { NodePool } from '../shared/apis/v1/types';
import type { InstanceType, Offering, Resources } from '../shared/instancetypes/types';
import type { SchedulingInput } from '../shared/scheduling';
import {
  allows,
  intersect,
  isEmpty,
  type Requirement,
  Requirements,
  requirementFrom,
  requirementIn,
} from '../shared/scheduling/requirements';
import { podRequests } from '../shared/scheduling/resources';
import { untoleratedTaint } from '../shared/scheduling/taints';
import { compileSelector, type Selector } from '../shared/scheduling/topology';

export interface ReferenceClaim {
  nodePool: string;
  instanceType: string;
  zone: string;
  price: number;
  pods: Pod[];
}

export interface ReferencePlan {
  claims: ReferenceClaim[];
  unschedulable: Pod[];
  totalPrice: number;
}

interface Term {
  selector: Selector;
  namespace: string;
  topologyKey: string;
  maxSkew: number;
}

interface PodInfo {
  pod: Pod;
  namespace: string;
  labels: Record<string, string>;
  requests: Resources;
  selections: Requirements[];
  spreads: Term[];
  affinities: Term[];
  antiAffinities: Term[];
}

interface Claim {
  pool: NodePool;
  templateLabels: Record<string, string>;
  reqs: Requirements;
  types: InstanceType[];
  used: Resources;
  pods: PodInfo[];
}

const OFFERING_KEYS = new Set([LABEL_ZONE, LABEL_ZONE_ID, LABEL_CAPACITY_TYPE, LABEL_HOSTNAME]);

function term(pod: Pod, t: PodAffinityTerm, maxSkew = 0): Term {
  return {
    selector: compileSelector(t.labelSelector),
    namespace: pod.metadata.namespace ?? 'default',
    topologyKey: t.topologyKey,
    maxSkew,
  };
}

function podInfo(pod: Pod): PodInfo {
  const base: Requirement[] = Object.entries(pod.spec.nodeSelector ?? {}).map(([k, v]) => requirementIn(k, v));
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const alternatives = terms?.length ? terms.map((t) => (t.matchExpressions ?? []).map(requirementFrom)) : [[]];
  const a = pod.spec.affinity;
  return {
    pod,
    namespace: pod.metadata.namespace ?? 'default',
    labels: pod.metadata.labels ?? {},
    requests: podRequests(pod),
    selections: alternatives.map((extra) => Requirements.from([...base, ...extra])),
    spreads: (pod.spec.topologySpreadConstraints ?? [])
      .filter((c) => c.whenUnsatisfiable === 'DoNotSchedule')
      .map((c) => term(pod, { topologyKey: c.topologyKey, labelSelector: c.labelSelector ?? {} }, c.maxSkew)),
    affinities: (a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => term(pod, t)),
    antiAffinities: (a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => term(pod, t)),
  };
}

const selects = (t: Term, p: PodInfo) => t.namespace === p.namespace && t.selector.matches(p.labels);

function merge(a: Requirements, b: Requirements): Requirements | undefined {
  const map = new Map(a.byKey);
  for (const r of b.byKey.values()) {
    const existing = map.get(r.key);
    const next = existing ? intersect(existing, r) : r;
    if (isEmpty(next)) return undefined;
    map.set(r.key, next);
  }
  return new Requirements(map);
}

function offeringsOf(type: InstanceType, reqs: Requirements): Offering[] {
  const zone = reqs.get(LABEL_ZONE);
  const ct = reqs.get(LABEL_CAPACITY_TYPE);
  const zoneId = reqs.get(LABEL_ZONE_ID);
  return type.offerings.filter(
    (o) =>
      o.available &&
      (!zone || allows(zone, o.zone)) &&
      (!ct || allows(ct, o.capacityType)) &&
      (!zoneId || allows(zoneId, o.zoneID)),
  );
}

function compatible(type: InstanceType, reqs: Requirements, templateLabels: Record<string, string>): boolean {
  for (const r of reqs.byKey.values()) {
    if (OFFERING_KEYS.has(r.key)) continue;
    if (!allows(r, templateLabels[r.key] ?? type.labels[r.key])) return false;
  }
  return offeringsOf(type, reqs).length > 0;
}

function fits(used: Resources, requests: Resources, type: InstanceType): boolean {
  for (const [name, value] of Object.entries(requests)) {
    if ((used[name] ?? 0) + value > (type.allocatable[name] ?? 0)) return false;
  }
  return true;
}

function byWeight(pools: readonly NodePool[]): NodePool[] {
  return [...pools].sort(
    (a, b) =>
      (b.spec.weight ?? 0) - (a.spec.weight ?? 0) ||
      (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0),
  );
}

interface Change {
  reqs: Requirements;
  types: InstanceType[];
  used: Resources;
}

class ReferenceScheduler {
  /** In-flight claims, emptiest first; equal counts keep creation order. */
  private readonly claims: Claim[] = [];
  private readonly pools: NodePool[];
  /** Per term (namespace and selector): matching pods per zone, and in all (zone or not). */
  private readonly termCounts = new Map<string, { term: Term; zones: Map<string, number>; total: number }>();
  private readonly placed: { info: PodInfo; claim: Claim }[] = [];
  private readonly zoneAntiAffinity: { term: Term; claim: Claim }[] = [];

  constructor(private readonly input: SchedulingInput) {
    this.pools = byWeight(input.nodePools);
  }

  private zoneOf(claim: { reqs: Requirements }): string | undefined {
    const r = claim.reqs.get(LABEL_ZONE);
    return r && !r.complement && r.values.size === 1 ? [...r.values][0] : undefined;
  }

  private counts(t: Term): { zones: Map<string, number>; total: number } {
    const key = `${t.namespace}|${t.selector.text}`;
    let entry = this.termCounts.get(key);
    if (!entry) {
      entry = { term: t, zones: new Map(), total: 0 };
      for (const { info, claim } of this.placed) {
        if (!selects(t, info)) continue;
        entry.total++;
        const z = this.zoneOf(claim);
        if (z !== undefined) entry.zones.set(z, (entry.zones.get(z) ?? 0) + 1);
      }
      this.termCounts.set(key, entry);
    }
    return entry;
  }

  /** Zones any offering of these types in these requirements may land in. */
  private zones(types: InstanceType[], reqs: Requirements): string[] {
    const out = new Set<string>();
    for (const t of types) for (const o of offeringsOf(t, reqs)) out.add(o.zone);
    return [...out].sort();
  }

  /**
   * The zones the pod's zone topology allows among the candidates, most wanted first (spread: fewest
   * matching pods), or undefined when the pod has no zone topology of its own.
   */
  private allowedZones(info: PodInfo, candidates: string[]): string[] | undefined {
    let allowed: string[] | undefined;
    let order: ((a: string, b: string) => number) | undefined;
    const narrow = (ok: string[]) => {
      allowed = (allowed ?? ok).filter((z) => ok.includes(z));
    };
    for (const t of info.spreads) {
      if (t.topologyKey !== LABEL_ZONE) continue;
      const c = this.counts(t).zones;
      const min = Math.min(...this.universe(info).map((z) => c.get(z) ?? 0));
      const self = selects(t, info) ? 1 : 0;
      narrow(candidates.filter((z) => (c.get(z) ?? 0) + self - min <= t.maxSkew));
      order = (a, b) => (c.get(a) ?? 0) - (c.get(b) ?? 0) || (a < b ? -1 : 1);
    }
    for (const t of info.affinities) {
      if (t.topologyKey !== LABEL_ZONE) continue;
      const c = this.counts(t);
      narrow(c.total > 0 ? candidates.filter((z) => (c.zones.get(z) ?? 0) > 0) : selects(t, info) ? candidates : []);
    }
    for (const t of info.antiAffinities) {
      if (t.topologyKey !== LABEL_ZONE) continue;
      const c = this.counts(t).zones;
      narrow(candidates.filter((z) => (c.get(z) ?? 0) === 0));
    }
    for (const { term, claim } of this.zoneAntiAffinity) {
      const z = this.zoneOf(claim);
      if (z !== undefined && selects(term, info)) narrow(candidates.filter((c) => c !== z));
    }
    if (allowed && order) allowed.sort(order);
    return allowed;
  }

  /** Hostname topology: anti-affinity both ways, spread up to maxSkew, affinity to the matching pods. */
  private hostAllows(info: PodInfo, claim: Claim): boolean {
    const pods = claim.pods;
    for (const t of info.antiAffinities)
      if (t.topologyKey === LABEL_HOSTNAME && pods.some((p) => selects(t, p))) return false;
    for (const p of pods)
      for (const t of p.antiAffinities) if (t.topologyKey === LABEL_HOSTNAME && selects(t, info)) return false;
    for (const t of info.spreads) {
      if (t.topologyKey !== LABEL_HOSTNAME) continue;
      const here = pods.filter((p) => selects(t, p)).length;
      if (here + (selects(t, info) ? 1 : 0) > t.maxSkew) return false;
    }
    for (const t of info.affinities) {
      if (t.topologyKey !== LABEL_HOSTNAME) continue;
      const anyMatch = this.counts(t).total > 0;
      if (anyMatch ? !pods.some((p) => selects(t, p)) : !selects(t, info) || pods.length > 0) return false;
    }
    return true;
  }

  /** How the claim narrows to take the pod, or undefined when it cannot. */
  private tryAdd(claim: Claim, info: PodInfo, selection: Requirements): Change | undefined {
    if (untoleratedTaint(info.pod.spec.tolerations, claim.pool.spec.template.spec.taints ?? [], true)) return undefined;
    if (!this.hostAllows(info, claim)) return undefined;
    let reqs = merge(claim.reqs, selection);
    if (!reqs) return undefined;
    const narrowed = reqs;
    let types = claim.types.filter(
      (t) => fits(claim.used, info.requests, t) && compatible(t, narrowed, claim.templateLabels),
    );
    if (types.length === 0) return undefined;
    const candidates = this.zones(types, reqs);
    const allowed = this.allowedZones(info, candidates);
    if (allowed) {
      const zone = allowed[0];
      if (zone === undefined) return undefined;
      if (allowed.length < candidates.length || info.spreads.some((t) => t.topologyKey === LABEL_ZONE)) {
        const pinned = reqs.add(requirementIn(LABEL_ZONE, zone));
        reqs = pinned;
        types = types.filter((t) => offeringsOf(t, pinned).length > 0);
      }
    }
    const used = { ...claim.used };
    for (const [k, v] of Object.entries(info.requests)) used[k] = (used[k] ?? 0) + v;
    return { reqs, types, used };
  }

  private commit(claim: Claim, info: PodInfo, change: Change): void {
    const before = this.zoneOf(claim);
    claim.reqs = change.reqs;
    claim.types = change.types;
    claim.used = change.used;
    claim.pods.push(info);
    this.placed.push({ info, claim });
    const after = this.zoneOf(claim);
    for (const entry of this.termCounts.values()) {
      // Pods already there count in the zone the claim was just pinned to.
      for (const p of before === undefined && after !== undefined ? claim.pods : [info]) {
        if (!selects(entry.term, p)) continue;
        if (p === info) entry.total++;
        if (after !== undefined) entry.zones.set(after, (entry.zones.get(after) ?? 0) + 1);
      }
    }
    for (const t of info.antiAffinities)
      if (t.topologyKey === LABEL_ZONE) this.zoneAntiAffinity.push({ term: t, claim });
    // Keep the emptiest first: the claim moves past those that now hold fewer pods.
    let i = this.claims.indexOf(claim);
    while (i + 1 < this.claims.length && this.claims[i + 1]!.pods.length <= claim.pods.length) {
      this.claims[i] = this.claims[i + 1]!;
      this.claims[i + 1] = claim;
      i++;
    }
  }

  private readonly universeMemo = new Map<string, string[]>();

  /** Every zone the pod could get from any NodePool it may use: the domains its spread counts. */
  private universe(info: PodInfo): string[] {
    const key = JSON.stringify([
      info.pod.spec.nodeSelector ?? null,
      info.pod.spec.affinity?.nodeAffinity ?? null,
      info.pod.spec.tolerations ?? null,
    ]);
    let zones = this.universeMemo.get(key);
    if (zones) return zones;
    const set = new Set<string>();
    for (const pool of this.pools) {
      if (untoleratedTaint(info.pod.spec.tolerations, pool.spec.template.spec.taints ?? [], true)) continue;
      const template = this.template(pool);
      for (const selection of info.selections) {
        const reqs = merge(template.reqs, selection);
        if (!reqs) continue;
        for (const t of this.input.instanceTypes[pool.metadata.name] ?? [])
          if (compatible(t, reqs, template.labels)) for (const o of offeringsOf(t, reqs)) set.add(o.zone);
      }
    }
    zones = [...set].sort();
    this.universeMemo.set(key, zones);
    return zones;
  }

  private readonly templates = new Map<NodePool, { reqs: Requirements; labels: Record<string, string> }>();

  private template(pool: NodePool): { reqs: Requirements; labels: Record<string, string> } {
    let template = this.templates.get(pool);
    if (template) return template;
    const labels = { ...(pool.spec.template.metadata?.labels ?? {}), [LABEL_NODEPOOL]: pool.metadata.name };
    const reqs = Requirements.from([
      ...pool.spec.template.spec.requirements.map(requirementFrom),
      ...Object.entries(labels).map(([k, v]) => requirementIn(k, v)),
    ]);
    template = { reqs, labels };
    this.templates.set(pool, template);
    return template;
  }

  private add(info: PodInfo): boolean {
    for (const selection of info.selections) {
      for (const claim of this.claims) {
        const change = this.tryAdd(claim, info, selection);
        if (change) {
          this.commit(claim, info, change);
          return true;
        }
      }
      for (const pool of this.pools) {
        const template = this.template(pool);
        const claim: Claim = {
          pool,
          templateLabels: template.labels,
          reqs: template.reqs,
          types: this.input.instanceTypes[pool.metadata.name] ?? [],
          used: {},
          pods: [],
        };
        const change = this.tryAdd(claim, info, selection);
        if (change) {
          // A new claim holds one pod: after the other one-pod claims.
          let at = 0;
          while (at < this.claims.length && this.claims[at]!.pods.length <= 1) at++;
          this.claims.splice(at, 0, claim);
          this.commit(claim, info, change);
          return true;
        }
      }
    }
    return false;
  }

  run(): ReferencePlan {
    const infos = this.input.pods.map(podInfo);
    const order = infos
      .map((info, i) => ({ info, i }))
      .sort(
        (a, b) =>
          (b.info.requests.cpu ?? 0) - (a.info.requests.cpu ?? 0) ||
          (b.info.requests.memory ?? 0) - (a.info.requests.memory ?? 0) ||
          a.i - b.i,
      );
    const unschedulable: Pod[] = [];
    for (const { info } of order) if (!this.add(info)) unschedulable.push(info.pod);
    const claims = this.claims.map((claim) => {
      let best: { type: InstanceType; offering: Offering } | undefined;
      for (const type of claim.types)
        for (const o of offeringsOf(type, claim.reqs))
          if (!best || o.price < best.offering.price) best = { type, offering: o };
      return {
        nodePool: claim.pool.metadata.name,
        instanceType: best?.type.name ?? '',
        zone: best?.offering.zone ?? '',
        price: best?.offering.price ?? 0,
        pods: claim.pods.map((p) => p.pod),
      };
    });
    return { claims, unschedulable, totalPrice: claims.reduce((sum, c) => sum + c.price, 0) };
  }
}

/** The plan Karpenter v1's scheduler would make for these pods (see the header for its scope). */
export function referencePlan(input: SchedulingInput): ReferencePlan {
  return new ReferenceScheduler(input).run();
}
