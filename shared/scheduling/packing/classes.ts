// Pod classes: pods that share a scheduling shape (requests, node selection, tolerations, topology, host
// ports, volume requirements, namespace and the values of the labels some selector reads) are placed as
// one class. The shape texts are interned to small numbers, so the class keys stay short to hash.

import type { NodeSelectorRequirement, Pod } from '../../apis/core/v1';
import type { Resources } from '../../instancetypes/types';
import type { SchedulingInput } from '../index';
import { requirementFrom } from '../requirements';
import { podRequests } from '../resources';
import type { TopologyTerm } from '../topology';
import { hostPortsKey, labelsWithHostPorts } from './host-ports';
import type { PodTerms } from './pod-terms';
import type { PodClass } from './state';
import type { Dims } from './vectors';

/** A pod's shape, shared by the pods of one shape. */
export interface SpecInfo {
  key: string;
  sig: number;
  req: Resources;
  terms: TopologyTerm[];
}

const NO_VOLUME: readonly NodeSelectorRequirement[] = [];

/**
 * Each pod's shape: its requests, and its node selection, tolerations, topology and host ports (the
 * signature), each interned to a small number so the class keys stay short to hash; pods of one shape
 * share one SpecInfo. Also the distinct request sets and the label keys the pods' selectors read.
 */
export function specInfos(
  pods: readonly Pod[],
  podTerms: PodTerms,
): { infos: SpecInfo[]; reqs: Resources[]; selectorKeys: Set<string> } {
  const resIds = new Map<string, number>();
  const reqByRes: Resources[] = [];
  const sigIds = new Map<string, number>();
  const termsBySig: TopologyTerm[][] = [];
  const shared: SpecInfo[][] = [];
  const selectorKeys = new Set<string>();
  const infos: SpecInfo[] = [];
  for (let i = 0; i < pods.length; i++) {
    const pod = pods[i]!;
    const s = pod.spec;
    const resKey = JSON.stringify([
      s.containers.map((c) => c.resources ?? null),
      s.initContainers?.map((c) => [c.resources ?? null, c.restartPolicy ?? null]) ?? null,
      s.overhead ?? null,
    ]);
    const ports = hostPortsKey(pod);
    const sigKey =
      s.nodeSelector || s.affinity || s.tolerations || s.topologySpreadConstraints || ports
        ? JSON.stringify([
            s.nodeSelector ?? null,
            s.affinity ?? null,
            s.tolerations ?? null,
            s.topologySpreadConstraints ?? null,
            ...(ports ? [ports] : []),
          ])
        : '';
    let res = resIds.get(resKey);
    if (res === undefined) {
      res = reqByRes.length;
      resIds.set(resKey, res);
      reqByRes.push(podRequests(pod));
    }
    let sig = sigIds.get(sigKey);
    // matchLabelKeys read the pod's own labels, so such terms cannot be shared between pods.
    const own = sigKey.includes('"matchLabelKeys"');
    const known = sig === undefined || own ? undefined : shared[sig]?.[res];
    if (known) {
      infos.push(known);
      continue;
    }
    let terms = sig === undefined || own ? undefined : termsBySig[sig];
    if (!terms) {
      terms = podTerms.podTerms(pod);
      for (const t of terms) for (const k of t.selector.keys) selectorKeys.add(k);
    }
    if (sig === undefined) {
      sig = termsBySig.length;
      sigIds.set(sigKey, sig);
      termsBySig.push(terms);
    }
    const info: SpecInfo = { key: `${res}:${sig}`, sig, req: reqByRes[res]!, terms };
    if (!own) {
      const bySig = shared[sig] ?? [];
      bySig[res] = info;
      shared[sig] = bySig;
    }
    infos.push(info);
  }
  return { infos, reqs: reqByRes, selectorKeys };
}

/** Pods into classes: one per namespace, shape, volume requirements and value of each label a selector reads. */
export function classify(
  input: SchedulingInput,
  infos: readonly SpecInfo[],
  labelKeys: readonly string[],
  ctx: { dims: Dims; terms: PodTerms; reqIdOf(req: Float64Array): number },
): PodClass[] {
  const { dims } = ctx;
  const byKey = new Map<string, PodClass>();
  for (let i = 0; i < input.pods.length; i++) {
    const pod = input.pods[i]!;
    const info = infos[i]!;
    const volume = input.volumeRequirements?.get(pod) ?? NO_VOLUME;
    const namespace = pod.metadata.namespace ?? 'default';
    const labels = labelsWithHostPorts(pod);
    let labelPart = volume.length > 0 ? `\u0000${JSON.stringify(volume)}` : '';
    for (let k = 0; k < labelKeys.length; k++) {
      const name = labelKeys[k]!;
      if (labels[name] !== undefined) labelPart += `\u0000${name}=${labels[name]}`;
    }
    const key = `${namespace}\u0000${info.key}${labelPart}`;
    let cls = byKey.get(key);
    if (!cls) {
      const req = dims.vector(info.req);
      cls = {
        id: byKey.size,
        pods: [],
        namespace,
        labels,
        spec: pod.spec,
        first: pod,
        req,
        reqId: ctx.reqIdOf(req),
        cpu: req[0]!,
        memory: req[1]!,
        matched: [],
        inverse: [],
        variants: [],
        relax: undefined,
        signature: `${namespace}\u0000${info.sig}${labelPart}`,
        volume: volume.map(requirementFrom),
        // Host ports repel like hostname anti-affinity, which the spec alone does not show.
        ...(hostPortsKey(pod) ? { movable: false } : {}),
      };
      byKey.set(key, cls);
      for (const t of info.terms) ctx.terms.group(t);
    }
    cls.pods.push(pod);
  }
  return [...byKey.values()].sort((a, b) => b.cpu - a.cpu || b.memory - a.memory || a.id - b.id);
}
