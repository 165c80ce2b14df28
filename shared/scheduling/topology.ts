// Label selectors and topology groups: every distinct (topology key, selector, namespaces) of a spread
// constraint or (anti-)affinity term becomes one group whose per-domain counts all pods share.

import type { LabelSelector, Pod, PodAffinityTerm, TopologySpreadConstraint } from '../apis/core/v1';

export type GroupKind = 'spread' | 'affinity' | 'antiAffinity';

/** A selector compiled once: labels → matches. `undefined` matches nothing (a nil selector). */
export interface Selector {
  readonly text: string;
  matches(labels: Readonly<Record<string, string>>): boolean;
  /** Label keys it reads, so pods can be grouped by the labels that matter only. */
  readonly keys: readonly string[];
}

export function compileSelector(selector: LabelSelector | undefined, extra: Record<string, string> = {}): Selector {
  if (!selector) return { text: '<none>', matches: () => false, keys: [] };
  const checks: { key: string; test: (v: string | undefined) => boolean; text: string }[] = [];
  const all = { ...(selector.matchLabels ?? {}), ...extra };
  for (const key of Object.keys(all).sort()) {
    const value = all[key]!;
    checks.push({ key, test: (v) => v === value, text: `${key}=${value}` });
  }
  for (const e of selector.matchExpressions ?? []) {
    const values = new Set(e.values ?? []);
    const list = [...values].sort().join(',');
    switch (e.operator) {
      case 'In':
        checks.push({ key: e.key, test: (v) => v !== undefined && values.has(v), text: `${e.key} in (${list})` });
        break;
      case 'NotIn':
        checks.push({ key: e.key, test: (v) => v === undefined || !values.has(v), text: `${e.key} notin (${list})` });
        break;
      case 'Exists':
        checks.push({ key: e.key, test: (v) => v !== undefined, text: e.key });
        break;
      case 'DoesNotExist':
        checks.push({ key: e.key, test: (v) => v === undefined, text: `!${e.key}` });
        break;
    }
  }
  const text = checks.map((c) => c.text).join(',') || '<all>';
  return {
    text,
    keys: checks.map((c) => c.key),
    // A loop rather than every(): no closure per call, as the packer matches every class against every group.
    matches: (labels) => {
      for (const c of checks) if (!c.test(labels[c.key])) return false;
      return true;
    },
  };
}

/** matchLabelKeys copy the owning pod's values into the selector, as the scheduler does. */
function matchLabelValues(pod: Pod, keys: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of keys ?? []) {
    const value = pod.metadata.labels?.[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

export interface TopologyTerm {
  readonly kind: GroupKind;
  readonly topologyKey: string;
  readonly selector: Selector;
  /** null: every namespace. */
  readonly namespaces: ReadonlySet<string> | null;
  readonly key: string;
}

function namespacesOf(pod: Pod, term: PodAffinityTerm): ReadonlySet<string> | null {
  // A namespaceSelector cannot be evaluated without the Namespace objects: treat it as "all".
  if (term.namespaceSelector) return null;
  return new Set(term.namespaces?.length ? term.namespaces : [pod.metadata.namespace ?? 'default']);
}

function termKey(kind: GroupKind, topologyKey: string, selector: Selector, ns: ReadonlySet<string> | null): string {
  return `${kind}|${topologyKey}|${selector.text}|${ns ? [...ns].sort().join(',') : '*'}`;
}

export function affinityTerm(pod: Pod, term: PodAffinityTerm, kind: 'affinity' | 'antiAffinity'): TopologyTerm {
  const selector = compileSelector(term.labelSelector, matchLabelValues(pod, term.matchLabelKeys));
  const namespaces = namespacesOf(pod, term);
  return {
    kind,
    topologyKey: term.topologyKey,
    selector,
    namespaces,
    key: termKey(kind, term.topologyKey, selector, namespaces),
  };
}

export function spreadTerm(pod: Pod, c: TopologySpreadConstraint): TopologyTerm {
  const selector = compileSelector(c.labelSelector, matchLabelValues(pod, c.matchLabelKeys));
  const namespaces = new Set([pod.metadata.namespace ?? 'default']);
  return {
    kind: 'spread',
    topologyKey: c.topologyKey,
    selector,
    namespaces,
    key: termKey('spread', c.topologyKey, selector, namespaces),
  };
}

export function termMatches(term: TopologyTerm, namespace: string, labels: Readonly<Record<string, string>>): boolean {
  return (term.namespaces === null || term.namespaces.has(namespace)) && term.selector.matches(labels);
}

export function describeTerm(term: TopologyTerm): string {
  const what =
    term.kind === 'spread' ? 'topology spread' : term.kind === 'affinity' ? 'pod affinity' : 'pod anti-affinity';
  return `${what} on ${term.topologyKey} (${term.selector.text})`;
}
