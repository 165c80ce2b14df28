// The LP lower bound of a whole SchedulingInput, for pods that differ in which instance types they may
// use: each pod may use the types of every NodePool whose taints it tolerates and whose requirements,
// with the pod's node selector and required node affinity, the type's labels satisfy. Zones and
// capacity types are left out (a looser bound stays a valid one). Pods with hostname anti-affinity to
// their own labels form classes of their own, each needing that many instances.

import type { Pod } from '../shared/apis/core/v1';
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_ZONE, LABEL_ZONE_ID } from '../shared/apis/v1/labels';
import type { InstanceType } from '../shared/instancetypes/types';
import type { SchedulingInput } from '../shared/scheduling';
import { classLowerBound, type DemandClass, totalDemand } from '../shared/scheduling/lowerbound';
import {
  allows,
  type Requirement,
  Requirements,
  requirementFrom,
  requirementIn,
} from '../shared/scheduling/requirements';
import { podRequests } from '../shared/scheduling/resources';
import { untoleratedTaint } from '../shared/scheduling/taints';

const OFFERING_KEYS = new Set([LABEL_ZONE, LABEL_ZONE_ID, LABEL_CAPACITY_TYPE]);

/** The pod's node selection as alternatives (one per required node-affinity term), offering keys left out. */
function podSelections(pod: Pod): Requirements[] {
  const base: Requirement[] = Object.entries(pod.spec.nodeSelector ?? {}).map(([k, v]) => requirementIn(k, v));
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const alternatives =
    terms && terms.length > 0 ? terms.map((t) => (t.matchExpressions ?? []).map(requirementFrom)) : [[]];
  return alternatives.map((extra) => Requirements.from([...base, ...extra].filter((r) => !OFFERING_KEYS.has(r.key))));
}

/** The key of the pod's required hostname anti-affinity against its own labels, if any. */
function selfRepellingKey(pod: Pod): string | undefined {
  for (const term of pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
    const match = term.labelSelector?.matchLabels;
    if (term.topologyKey !== LABEL_HOSTNAME || !match || term.labelSelector?.matchExpressions?.length) continue;
    if (Object.entries(match).every(([k, v]) => pod.metadata.labels?.[k] === v))
      return `${pod.metadata.namespace ?? 'default'}/${JSON.stringify(Object.entries(match).sort())}`;
  }
  return undefined;
}

/** Instance types (by name, from any NodePool) each pod may run on. */
function allowedTypes(input: SchedulingInput, pod: Pod): InstanceType[] {
  const out = new Map<string, InstanceType>();
  const selections = podSelections(pod);
  for (const pool of input.nodePools) {
    if (untoleratedTaint(pod.spec.tolerations, pool.spec.template.spec.taints ?? [], true)?.effect === 'NoSchedule')
      continue;
    const poolReqs = Requirements.from(
      pool.spec.template.spec.requirements.map(requirementFrom).filter((r) => !OFFERING_KEYS.has(r.key)),
    );
    const poolLabels = pool.spec.template.metadata?.labels ?? {};
    const capacityType = Requirements.from(pool.spec.template.spec.requirements.map(requirementFrom)).get(
      LABEL_CAPACITY_TYPE,
    );
    for (const type of input.instanceTypes[pool.metadata.name] ?? []) {
      const labels = { ...type.labels, ...poolLabels };
      if (!poolReqs.matchesLabels(labels)) continue;
      if (!selections.some((s) => s.matchesLabels(labels))) continue;
      const offerings = type.offerings.filter(
        (o) => o.available && (!capacityType || allows(capacityType, o.capacityType)),
      );
      if (offerings.length > 0) out.set(type.name, { ...type, offerings });
    }
  }
  return [...out.values()];
}

/** The LP lower bound of the input's pods (USD/hour); Infinity when some pod fits no type. */
export function planLowerBound(input: SchedulingInput): number {
  const classes = new Map<string, { pods: Pod[]; types: InstanceType[]; repelling: boolean }>();
  for (const pod of input.pods) {
    const types = allowedTypes(input, pod);
    const repel = selfRepellingKey(pod);
    const key = `${types
      .map((t) => t.name)
      .sort()
      .join(',')}|${repel ?? ''}`;
    const entry = classes.get(key);
    if (entry) entry.pods.push(pod);
    else classes.set(key, { pods: [pod], types, repelling: repel !== undefined });
  }
  const demandClasses: DemandClass[] = [...classes.values()].map((c) => ({
    demand: totalDemand(c.pods.map(podRequests)),
    instanceTypes: c.types,
    ...(c.repelling ? { minNodes: c.pods.length } : {}),
  }));
  return classLowerBound(demandClasses).price;
}
