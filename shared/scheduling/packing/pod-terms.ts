// Pod classes' terms and relaxation: the topology terms a pod carries (pod affinity, anti-affinity,
// spread), the topology groups they count in, a pod's node selection per required node-affinity term,
// and the variant of a class at each relaxation level, loosened one step at a time as Karpenter's
// preferences.go does.

import type { Pod } from '../../apis/core/v1';
import { KUBE } from '../../contracts';
import {
  allows,
  LABEL_HOSTNAME,
  type Requirement,
  Requirements,
  requirementFrom,
  requirementIn,
} from '../requirements';
import { affinityTerm, spreadTerm, type TopologyTerm, termMatches } from '../topology';
import { hostPortTerms, isHostPortTerm } from './host-ports';
import { sortByWeight } from './ordering';
import type { Group, OwnTerm, PodClass, RelaxState, Variant } from './state';

/** Labels every node of ours carries once it serves pods, set by registration and initialization. */
const NODE_LIFECYCLE_LABELS: readonly string[] = [KUBE.registeredLabel, KUBE.initializedLabel];

export class PodTerms {
  readonly groups: Group[] = [];
  readonly groupByKey = new Map<string, Group>();
  private variantCount = 0;

  isPreferred(pod: Pod, t: TopologyTerm): boolean {
    if (isHostPortTerm(t)) return false;
    const required = pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    return !required.some((r) => affinityTerm(pod, r, 'antiAffinity').key === t.key);
  }
  podTerms(pod: Pod): TopologyTerm[] {
    const a = pod.spec.affinity;
    const terms: TopologyTerm[] = [];
    for (const t of a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      terms.push(affinityTerm(pod, t, 'affinity'));
    }
    for (const t of a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) {
      terms.push(affinityTerm(pod, t.podAffinityTerm, 'affinity'));
    }
    for (const t of a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      terms.push(affinityTerm(pod, t, 'antiAffinity'));
    }
    for (const t of a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) {
      terms.push(affinityTerm(pod, t.podAffinityTerm, 'antiAffinity'));
    }
    for (const c of pod.spec.topologySpreadConstraints ?? []) terms.push(spreadTerm(pod, c));
    terms.push(...hostPortTerms(pod));
    return terms;
  }
  group(term: TopologyTerm): Group {
    let g = this.groupByKey.get(term.key);
    if (!g) {
      g = {
        id: this.groups.length,
        term,
        key: term.topologyKey,
        host: term.topologyKey === LABEL_HOSTNAME,
        counts: new Map(),
        owners: new Map(),
        nodesWithMatches: [],
        total: 0,
      };
      this.groups.push(g);
      this.groupByKey.set(term.key, g);
    }
    return g;
  }
  podBaseRequirements(pod: Pod, termIndex: number): Requirements {
    const list: Requirement[] = Object.entries(pod.spec.nodeSelector ?? {}).map(([k, v]) => requirementIn(k, v));
    const terms =
      pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    const term = terms[termIndex];
    for (const e of term?.matchExpressions ?? []) list.push(requirementFrom(e));
    return Requirements.from(list);
  }
  /**
   * A DaemonSet pod's node selection, one set per required node-affinity term, as Karpenter simulates
   * it on a NodeClaim: the node will carry `karpenter.sh/registered=true` and `karpenter.sh/initialized=true`
   * (kubernetes-sigs/karpenter#2116), so a requirement on those either holds (and is dropped: the claim
   * itself never gets them) or the term cannot match.
   */
  daemonSetTerms(pod: Pod): Requirements[] {
    const count =
      pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.length;
    const out: Requirements[] = [];
    for (let i = 0; i < Math.max(1, count ?? 0); i++) {
      const reqs = this.podBaseRequirements(pod, i);
      const kept = [...reqs.byKey.values()].filter((r) => !NODE_LIFECYCLE_LABELS.includes(r.key));
      if (kept.length === reqs.size) out.push(reqs);
      else if (NODE_LIFECYCLE_LABELS.every((k) => allows(reqs.get(k) ?? requirementIn(k, 'true'), 'true'))) {
        out.push(Requirements.from(kept));
      }
    }
    return out;
  }
  variant(cls: PodClass, level: number): Variant | undefined {
    if (cls.variants[level]) return cls.variants[level];
    const spec = cls.spec;
    const a = spec.affinity;
    const terms = a?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    const prefNode = sortByWeight(a?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []);
    const prefAff = sortByWeight(a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []);
    const prefAnti = sortByWeight(a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []);
    const spreads = spec.topologySpreadConstraints ?? [];
    const soft = spreads.filter((s) => s.whenUnsatisfiable === 'ScheduleAnyway');
    let relaxation: string | undefined;
    let state: RelaxState;
    if (level === 0) {
      state = { term: 0, prefAffinity: 0, prefAnti: 0, prefNode: 0, softSpread: 0, tolerateSoft: false };
    } else {
      const prev = cls.relax!;
      state = { ...prev };
      if (state.term < terms.length - 1) {
        state.term++;
        relaxation = 'dropped a required node affinity term';
      } else if (state.prefAffinity < prefAff.length) {
        state.prefAffinity++;
        relaxation = 'dropped a preferred pod affinity term';
      } else if (state.prefAnti < prefAnti.length) {
        state.prefAnti++;
        relaxation = 'dropped a preferred pod anti-affinity term';
      } else if (state.prefNode < prefNode.length) {
        state.prefNode++;
        relaxation = 'dropped a preferred node affinity term';
      } else if (state.softSpread < soft.length) {
        state.softSpread++;
        relaxation = 'dropped a ScheduleAnyway topology spread';
      } else if (!state.tolerateSoft) {
        state.tolerateSoft = true;
        relaxation = 'tolerated PreferNoSchedule taints';
      } else return undefined;
    }
    cls.relax = state;
    const strictReqs = this.podBaseRequirements(cls.first, state.term);
    let reqs = strictReqs;
    for (const r of cls.volume) reqs = reqs.add(r);
    const preferred = prefNode[state.prefNode];
    for (const e of preferred?.preference.matchExpressions ?? []) reqs = reqs.add(requirementFrom(e));
    const own: OwnTerm[] = [];
    const ownedAnti: Group[] = [];
    const pod = cls.first;
    const addOwn = (t: TopologyTerm, maxSkew = 0, minDomains = 0, policies: Partial<OwnTerm> = {}) => {
      const group = this.group(t);
      const self = termMatches(t, cls.namespace, cls.labels);
      own.push({ group, kind: t.kind, maxSkew, minDomains, self, ...policies });
      return group;
    };
    for (const t of a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      addOwn(affinityTerm(pod, t, 'affinity'));
    }
    for (const t of prefAff.slice(state.prefAffinity)) addOwn(affinityTerm(pod, t.podAffinityTerm, 'affinity'));
    for (const t of a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      ownedAnti.push(addOwn(affinityTerm(pod, t, 'antiAffinity')));
    }
    for (const t of hostPortTerms(pod)) ownedAnti.push(addOwn(t));
    for (const t of prefAnti.slice(state.prefAnti)) addOwn(affinityTerm(pod, t.podAffinityTerm, 'antiAffinity'));
    const softKept = new Set(soft.slice(state.softSpread));
    for (const c of spreads) {
      if (c.whenUnsatisfiable === 'ScheduleAnyway' && !softKept.has(c)) continue;
      addOwn(spreadTerm(pod, c), c.maxSkew, c.minDomains ?? 0, {
        ...(c.nodeTaintsPolicy === 'Honor' ? { honorTaints: true } : {}),
        ...(c.nodeAffinityPolicy === 'Ignore' ? { ignoreAffinity: true } : {}),
      });
    }
    const pinKeys = new Set<string>();
    for (const o of own) if (!o.group.host) pinKeys.add(o.group.key);
    for (const g of cls.matched) if (!g.host) pinKeys.add(g.key);
    const v: Variant = {
      id: this.variantCount++,
      cls,
      reqs,
      strictReqs,
      tolerateSoft: state.tolerateSoft,
      own,
      ownedAnti,
      pinKeys: [...pinKeys].sort(),
      hostAffinity: own.find((o) => o.kind === 'affinity' && o.group.host),
      staticFits: [],
      // Made on first use: most of a large solve's thousands of variants never use these.
      domains: undefined,
      skewDomains: undefined,
      cursors: new Map(),
      refused: undefined,
      targetReqs: new Map(),
      pins: undefined,
      termsByKey: undefined,
      poolReasons: [],
      reservedError: undefined,
      relaxation,
    };
    cls.variants[level] = v;
    return v;
  }
}
