// Host ports as the packer sees them: two pods that bind the same <hostIP, hostPort, protocol> cannot
// share a node (Karpenter's HostPortUsage). Each port a pod binds becomes a required anti-affinity term on
// hostname against pods that bind the same port, read through a label only this module writes, so the
// packer's hostname anti-affinity (one pod per node, claims opened per pod, moves that keep pods apart)
// applies to host ports unchanged.

import type { Pod } from '../../apis/core/v1';
import { LABEL_HOSTNAME } from '../requirements';
import type { Selector, TopologyTerm } from '../topology';

export interface HostPort {
  ip: string;
  port: number;
  protocol: string;
}

/** Not a valid label key, so no pod label can collide with it. */
const KEY_PREFIX = '\u0000hostPort/';

const UNSPECIFIED = new Set(['0.0.0.0', '::']);

/** The host ports the pod binds; an empty hostIP is 0.0.0.0 and an empty protocol TCP, as the API server defaults. */
export function hostPorts(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      out.push({ ip: p.hostIP || '0.0.0.0', port: p.hostPort, protocol: p.protocol || 'TCP' });
    }
  }
  return out;
}

/** Text that tells pod specs with different host ports apart ('' for none), for the packer's class keys. */
export function hostPortsKey(pod: Pod): string {
  const ports = hostPorts(pod);
  return ports.length === 0 ? '' : JSON.stringify(ports);
}

const keyOf = (p: HostPort): string => `${KEY_PREFIX}${p.protocol}/${p.port}`;

/** The pod's labels, plus one per host port it binds (its address as the value). */
export function labelsWithHostPorts(pod: Pod): Record<string, string> {
  const labels = pod.metadata.labels ?? {};
  const ports = hostPorts(pod);
  if (ports.length === 0) return labels;
  const out = { ...labels };
  for (const p of ports) {
    const key = keyOf(p);
    // Of two entries on one port, the unspecified address conflicts with more.
    if (out[key] === undefined || UNSPECIFIED.has(p.ip)) out[key] = p.ip;
  }
  return out;
}

/** Whether a term is one of these synthetic host-port terms (always required, never relaxed). */
export function isHostPortTerm(term: TopologyTerm): boolean {
  return term.selector.keys.length === 1 && term.selector.keys[0]!.startsWith(KEY_PREFIX);
}

/** One required anti-affinity term on hostname per host port: against pods binding it on an overlapping address. */
export function hostPortTerms(pod: Pod): TopologyTerm[] {
  return hostPorts(pod).map((p) => {
    const key = keyOf(p);
    const any = UNSPECIFIED.has(p.ip);
    const text = `hostPort ${p.port}/${p.protocol}${any ? '' : ` on ${p.ip}`}`;
    const selector: Selector = {
      text,
      keys: [key],
      matches: (labels) => {
        const ip = labels[key];
        return ip !== undefined && (any || ip === p.ip || UNSPECIFIED.has(ip));
      },
    };
    return {
      kind: 'antiAffinity',
      topologyKey: LABEL_HOSTNAME,
      selector,
      namespaces: null,
      key: `antiAffinity|${LABEL_HOSTNAME}|${text}|*`,
    } satisfies TopologyTerm;
  });
}
