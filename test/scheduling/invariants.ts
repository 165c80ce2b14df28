// Checks a SchedulingResult against its input, independently of how the packer got there: every hard
// constraint of every placed pod, fit of every listed instance type, limits and accounting.

import type { Pod } from '../../shared/apis/core/v1';
import type { InstanceType } from '../../shared/instancetypes/types';
import { podKey, type SchedulingInput, type SchedulingResult } from '../../shared/scheduling';
import { hostPorts } from '../../shared/scheduling/packing/host-ports';
import {
  allows,
  normalizedKey,
  Requirements,
  requirementFrom,
  requirementIn,
} from '../../shared/scheduling/requirements';
import { addResources, podRequests } from '../../shared/scheduling/resources';
import { schedulingTaints, untoleratedTaint } from '../../shared/scheduling/taints';
import { compileSelector } from '../../shared/scheduling/topology';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

function podMatchesNode(pod: Pod, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(pod.spec.nodeSelector ?? {})) if (labels[normalizedKey(k)] !== v) return false;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return true;
  return terms.some((t) => Requirements.from((t.matchExpressions ?? []).map(requirementFrom)).matchesLabels(labels));
}

/** Whether the pod's own node selection allows the zone (its requirements on other keys aside). */
function zoneAllowed(pod: Pod, zone: string): boolean {
  const selected = pod.spec.nodeSelector?.[ZONE];
  if (selected !== undefined && selected !== zone) return false;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return true;
  return terms.some((t) =>
    Requirements.from((t.matchExpressions ?? []).filter((e) => e.key === ZONE).map(requirementFrom)).matchesLabels({
      [ZONE]: zone,
    }),
  );
}

function matches(selector: Parameters<typeof compileSelector>[0], pod: Pod): boolean {
  return compileSelector(selector).matches(pod.metadata.labels ?? {});
}

/** Returns a list of violations (empty when the result is valid). */
export function violations(input: SchedulingInput, result: SchedulingResult): string[] {
  const out: string[] = [];
  const seen = new Map<string, number>();
  const note = (p: Pod) => seen.set(podKey(p), (seen.get(podKey(p)) ?? 0) + 1);
  for (const c of result.nodeClaims) c.pods.forEach(note);
  for (const e of result.existingNodes) e.pods.forEach(note);
  for (const u of result.unschedulable) {
    note(u.pod);
    if (u.reasons.length === 0) out.push(`${podKey(u.pod)}: unschedulable without a reason`);
  }
  for (const p of input.pods)
    if (seen.get(podKey(p)) !== 1) out.push(`${podKey(p)}: accounted ${seen.get(podKey(p)) ?? 0} times`);

  const pools = new Map(input.nodePools.map((p) => [p.metadata.name, p]));
  const claimsPerPool = new Map<string, number>();
  const chargedPerPool = new Map<string, Record<string, number>>();
  // Domain → pods, per claim, for topology checks.
  const placements: { pod: Pod; zone: string | undefined; host: string; ct?: string | undefined }[] = [];
  let price = 0;
  result.nodeClaims.forEach((claim, index) => {
    const name = `claim ${index} (${claim.nodePool})`;
    const pool = pools.get(claim.nodePool);
    if (!pool) {
      out.push(`${name}: unknown NodePool`);
      return;
    }
    claimsPerPool.set(claim.nodePool, (claimsPerPool.get(claim.nodePool) ?? 0) + 1);
    price += claim.offering.price;
    if (claim.instanceTypes.length === 0) out.push(`${name}: no instance types`);
    if (claim.instanceTypes[0]?.name !== claim.offering.instanceType)
      out.push(`${name}: offering is not the first type`);
    const reqs = Requirements.from(claim.requirements.map(requirementFrom));
    const zoneReq = reqs.get(ZONE);
    const zone = zoneReq && !zoneReq.complement && zoneReq.values.size === 1 ? [...zoneReq.values][0] : undefined;
    const ctReq = reqs.get('karpenter.sh/capacity-type');
    const ct = ctReq && !ctReq.complement && ctReq.values.size === 1 ? [...ctReq.values][0] : undefined;
    const templateLabels = { ...(pool.spec.template.metadata?.labels ?? {}), 'karpenter.sh/nodepool': claim.nodePool };
    // DaemonSets that may run there count against every listed type.
    const daemons = (input.daemonSets ?? []).filter(
      (d) =>
        !untoleratedTaint(d.spec.tolerations, pool.spec.template.spec.taints ?? [], false) &&
        claim.instanceTypes.some((t) =>
          podMatchesNode(d, { ...t.labels, ...templateLabels, ...(zone ? { [ZONE]: zone } : {}) }),
        ),
    );
    const total = addResources(...claim.pods.map(podRequests), ...daemons.map(podRequests));
    delete total.pods;
    total.pods = claim.pods.length + daemons.length;
    // Pods without a node selector or node affinity match every node: only the others are checked.
    const selecting = claim.pods.filter((p) => p.spec.nodeSelector || p.spec.affinity?.nodeAffinity);
    let lastPrice = -1;
    const charged = chargedPerPool.get(claim.nodePool) ?? {};
    const maxCapacity: Record<string, number> = {};
    for (const t of claim.instanceTypes) {
      for (const [r, v] of Object.entries(total)) {
        if (v > (t.allocatable[r] ?? 0)) out.push(`${name}: ${t.name} lacks ${r} (${v} > ${t.allocatable[r] ?? 0})`);
      }
      for (const [r, v] of Object.entries(t.capacity)) maxCapacity[r] = Math.max(maxCapacity[r] ?? 0, v);
      const zoneOk = reqs.get(ZONE);
      const ctOk = reqs.get('karpenter.sh/capacity-type');
      const offerings = t.offerings.filter(
        (o) => o.available && (!zoneOk || allows(zoneOk, o.zone)) && (!ctOk || allows(ctOk, o.capacityType)),
      );
      if (offerings.length === 0) out.push(`${name}: ${t.name} has no compatible offering`);
      const cheapest = Math.min(...offerings.map((o) => o.price));
      if (cheapest < lastPrice - 1e-12) out.push(`${name}: instance types not sorted by price`);
      lastPrice = cheapest;
      for (const o of selecting.length > 0 ? offerings : []) {
        const labels = { ...t.labels, ...templateLabels, [ZONE]: o.zone, 'karpenter.sh/capacity-type': o.capacityType };
        for (const p of selecting) {
          if (!podMatchesNode(p, labels)) out.push(`${name}: ${podKey(p)} does not match ${t.name} in ${o.zone}`);
        }
      }
    }
    for (const [r, v] of Object.entries(maxCapacity)) charged[r] = (charged[r] ?? 0) + v;
    chargedPerPool.set(claim.nodePool, charged);
    for (const p of claim.pods) {
      const taint = untoleratedTaint(p.spec.tolerations, pool.spec.template.spec.taints ?? [], true);
      if (taint && taint.effect !== 'PreferNoSchedule')
        out.push(`${name}: ${podKey(p)} does not tolerate ${taint.key}`);
      placements.push({ pod: p, zone, host: name, ct });
    }
  });
  if (Math.abs(price - result.totalPrice) > 1e-9) out.push(`totalPrice ${result.totalPrice} != ${price}`);

  for (const [poolName, pool] of pools) {
    const usage = input.nodePoolUsage?.[poolName] ?? {};
    for (const [r, q] of Object.entries(pool.spec.limits ?? {})) {
      const limit =
        r === 'nodes'
          ? Number(q)
          : r === 'cpu'
            ? Number(q) * 1000
            : Number.parseFloat(q) * (q.endsWith('Gi') ? 2 ** 30 : 1);
      const added = r === 'nodes' ? (claimsPerPool.get(poolName) ?? 0) : (chargedPerPool.get(poolName)?.[r] ?? 0);
      const used = (usage[r] ?? 0) + added;
      if (added > 0 && used > limit + 1e-6) out.push(`NodePool ${poolName}: limit ${r} exceeded (${used} > ${limit})`);
    }
  }

  const existingByName = new Map((input.existingNodes ?? []).map((n) => [n.name, n]));
  for (const e of result.existingNodes) {
    const node = existingByName.get(e.name);
    if (!node) {
      out.push(`existing node ${e.name} unknown`);
      continue;
    }
    // A finished pod holds nothing on its node.
    const holding = node.pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    const total = addResources(...holding.map(podRequests), ...e.pods.map(podRequests));
    for (const [r, v] of Object.entries(total)) {
      if (v > (node.allocatable[r] ?? (r === 'pods' ? 110 : 0))) out.push(`existing ${e.name}: over ${r}`);
    }
    for (const p of e.pods) {
      if (!podMatchesNode(p, node.labels)) out.push(`existing ${e.name}: ${podKey(p)} does not match its labels`);
      if (untoleratedTaint(p.spec.tolerations, schedulingTaints(node), true)?.effect === 'NoSchedule')
        out.push(`existing ${e.name}: taint`);
      placements.push({
        pod: p,
        zone: node.labels[ZONE],
        host: `existing ${e.name}`,
        ct: node.labels['karpenter.sh/capacity-type'],
      });
    }
  }
  for (const node of input.existingNodes ?? []) {
    // Finished and terminating pods count for no topology (Karpenter's IgnoredForTopology).
    for (const p of node.pods) {
      if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' || p.metadata.deletionTimestamp) continue;
      placements.push({
        pod: p,
        zone: node.labels[ZONE],
        host: `existing ${node.name}`,
        ct: node.labels['karpenter.sh/capacity-type'],
      });
    }
  }

  // Host ports: no two pods on one node bind the same port and protocol on overlapping addresses.
  const portsByHost = new Map<string, { pod: Pod; ip: string; port: number; protocol: string }[]>();
  for (const placed of placements) {
    const list = portsByHost.get(placed.host) ?? [];
    portsByHost.set(placed.host, list);
    for (const hp of hostPorts(placed.pod)) {
      const clash = list.find(
        (o) =>
          o.port === hp.port &&
          o.protocol === hp.protocol &&
          (o.ip === hp.ip || o.ip === '0.0.0.0' || hp.ip === '0.0.0.0'),
      );
      if (clash)
        out.push(
          `${podKey(placed.pod)}: host port ${hp.port}/${hp.protocol} taken by ${podKey(clash.pod)} on ${placed.host}`,
        );
      list.push({ pod: placed.pod, ...hp });
    }
  }

  // Topology: anti-affinity, DoNotSchedule spreads (hostname: at most maxSkew per node; zone: skew).
  const planned = new Set(input.pods.map(podKey));
  const domainsMemo = new Map<string, Set<string>>();
  for (const placed of placements) {
    const p = placed.pod;
    if (!planned.has(podKey(p))) continue;
    for (const term of p.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      for (const other of placements) {
        if (other.pod === p || !matches(term.labelSelector, other.pod)) continue;
        const same =
          term.topologyKey === HOST
            ? other.host === placed.host
            : other.zone !== undefined && other.zone === placed.zone;
        if (term.topologyKey === ZONE && placed.zone === undefined)
          out.push(`${podKey(p)}: zone anti-affinity on an unpinned claim`);
        if (same) out.push(`${podKey(p)}: anti-affinity with ${podKey(other.pod)} on ${term.topologyKey}`);
      }
    }
    for (const term of p.spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      // A pod its own term selects may open a zone while no zone its requirements allow has a match
      // (Karpenter's anyCompatiblePodDomain): the other matches must then all be out of its reach.
      const reachable = (o: (typeof placements)[number]) =>
        term.topologyKey === HOST || o.zone === undefined || zoneAllowed(p, o.zone);
      const others = placements.filter(
        (o) => o.pod !== p && matches(term.labelSelector, o.pod) && !(matches(term.labelSelector, p) && !reachable(o)),
      );
      if (others.length === 0) continue;
      const ok = others.some((o) =>
        term.topologyKey === HOST ? o.host === placed.host : o.zone !== undefined && o.zone === placed.zone,
      );
      if (!ok) out.push(`${podKey(p)}: affinity on ${term.topologyKey} not satisfied`);
    }
    for (const c of p.spec.topologySpreadConstraints ?? []) {
      if (c.whenUnsatisfiable !== 'DoNotSchedule') continue;
      const counts = new Map<string, number>();
      for (const o of placements) {
        if (!matches(c.labelSelector, o.pod)) continue;
        const d = c.topologyKey === HOST ? o.host : c.topologyKey === ZONE ? o.zone : o.ct;
        if (d === undefined) out.push(`${podKey(p)}: spread on ${c.topologyKey} counts a pod on an unpinned claim`);
        else counts.set(d, (counts.get(d) ?? 0) + 1);
      }
      if (c.topologyKey === HOST) {
        if ((counts.get(placed.host) ?? 0) > c.maxSkew)
          out.push(`${podKey(p)}: hostname spread exceeded on ${placed.host}`);
      } else {
        // Domains: where this pod could run at all (its node selection honoured, as nodeAffinityPolicy Honor).
        const domainKey = JSON.stringify([
          c.topologyKey,
          p.spec.tolerations,
          p.spec.nodeSelector,
          p.spec.affinity?.nodeAffinity,
        ]);
        let zones = domainsMemo.get(domainKey);
        if (!zones) {
          zones = new Set<string>();
          domainsMemo.set(domainKey, zones);
          for (const pool of input.nodePools) {
            if (
              untoleratedTaint(p.spec.tolerations, pool.spec.template.spec.taints ?? [], true)?.effect === 'NoSchedule'
            )
              continue;
            const poolReqs = Requirements.from(pool.spec.template.spec.requirements.map(requirementFrom));
            for (const t of input.instanceTypes[pool.metadata.name] ?? []) {
              for (const o of t.offerings) {
                const labels = { ...t.labels, [ZONE]: o.zone, 'karpenter.sh/capacity-type': o.capacityType };
                if (!o.available || !poolReqs.matchesLabels(labels) || !podMatchesNode(p, labels)) continue;
                zones.add(c.topologyKey === ZONE ? o.zone : o.capacityType);
              }
            }
          }
          for (const node of input.existingNodes ?? []) {
            const d = c.topologyKey === ZONE ? node.labels[ZONE] : node.labels['karpenter.sh/capacity-type'];
            if (
              d !== undefined &&
              podMatchesNode(p, node.labels) &&
              !untoleratedTaint(p.spec.tolerations, node.taints, true)
            )
              zones.add(d);
          }
        }
        const values = [...zones].map((z) => counts.get(z) ?? 0);
        const skew = Math.max(...values) - Math.min(...values);
        if (skew > c.maxSkew)
          out.push(`${podKey(p)}: zone skew ${skew} > ${c.maxSkew} (${JSON.stringify([...counts])})`);
      }
    }
  }
  return [...new Set(out)];
}

export function typeNames(types: InstanceType[]): string[] {
  return types.map((t) => t.name);
}

export { allows, requirementIn };
