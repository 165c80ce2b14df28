// Field and label selectors as the API server reads them from a query string, and LabelSelector
// objects (PodDisruptionBudget.spec.selector). Only what karpless sends, plus enough set-based
// syntax that a wrong selector in the client shows up in a test.

export type Matcher = (object: KubeObject) => boolean;

export interface KubeObject {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** The fields each resource answers to (others are a 400, as on a real server). */
export const FIELD_GETTERS: Record<string, Record<string, (o: KubeObject) => string>> = {
  pods: {
    'metadata.name': (o) => o.metadata.name,
    'metadata.namespace': (o) => o.metadata.namespace ?? '',
    'spec.nodeName': (o) => String(o.spec?.nodeName ?? ''),
    'status.phase': (o) => String(o.status?.phase ?? ''),
  },
  nodes: {
    'metadata.name': (o) => o.metadata.name,
    'spec.unschedulable': (o) => String(o.spec?.unschedulable ?? false),
  },
  daemonsets: {
    'metadata.name': (o) => o.metadata.name,
    'metadata.namespace': (o) => o.metadata.namespace ?? '',
  },
  persistentvolumeclaims: {
    'metadata.name': (o) => o.metadata.name,
    'metadata.namespace': (o) => o.metadata.namespace ?? '',
  },
  persistentvolumes: { 'metadata.name': (o) => o.metadata.name },
  storageclasses: { 'metadata.name': (o) => o.metadata.name },
  volumeattachments: { 'metadata.name': (o) => o.metadata.name },
  leases: {
    'metadata.name': (o) => o.metadata.name,
    'metadata.namespace': (o) => o.metadata.namespace ?? '',
  },
  events: {
    'metadata.name': (o) => o.metadata.name,
    'metadata.namespace': (o) => o.metadata.namespace ?? '',
    'involvedObject.kind': (o) => involved(o).kind ?? '',
    'involvedObject.name': (o) => involved(o).name ?? '',
    'involvedObject.namespace': (o) => involved(o).namespace ?? '',
    'involvedObject.uid': (o) => involved(o).uid ?? '',
    reason: (o) => String((o as { reason?: unknown }).reason ?? ''),
    type: (o) => String((o as { type?: unknown }).type ?? ''),
  },
};

/** Every resource, custom ones included, answers to its name and namespace. */
const METADATA_GETTERS: Record<string, (o: KubeObject) => string> = {
  'metadata.name': (o) => o.metadata.name,
  'metadata.namespace': (o) => o.metadata.namespace ?? '',
};

function involved(o: KubeObject): { kind?: string; name?: string; namespace?: string; uid?: string } {
  return (o as { involvedObject?: Record<string, string> }).involvedObject ?? {};
}

export class SelectorError extends Error {}

export function fieldSelector(resource: string, text: string | null): Matcher {
  if (!text) return () => true;
  const getters = FIELD_GETTERS[resource] ?? METADATA_GETTERS;
  const terms = text.split(',').map((term) => {
    const match = /^([^!=]+)(==|=|!=)(.*)$/.exec(term.trim());
    if (!match) throw new SelectorError(`invalid field selector term ${JSON.stringify(term)}`);
    const [, field = '', op, value = ''] = match;
    const get = getters[field];
    if (!get) {
      throw new SelectorError(
        `field label not supported: ${field} (only ${Object.keys(getters).join(', ')} on ${resource})`,
      );
    }
    return op === '!=' ? (o: KubeObject) => get(o) !== value : (o: KubeObject) => get(o) === value;
  });
  return (object) => terms.every((term) => term(object));
}

/** Splits at commas outside parentheses: `a in (x,y),b` is two terms. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

type LabelTest = (labels: Record<string, string>) => boolean;

function labelTerm(term: string): LabelTest {
  let match = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (match) {
    const [, key = '', op, list = ''] = match;
    const values = new Set(list.split(',').map((v) => v.trim()));
    return op === 'in'
      ? (labels) => key in labels && values.has(labels[key] ?? '')
      : (labels) => !(key in labels) || !values.has(labels[key] ?? '');
  }
  match = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (match) {
    const [, key = '', op, value = ''] = match;
    return op === '!=' ? (labels) => labels[key] !== value : (labels) => labels[key] === value;
  }
  match = /^(!?)([^!=\s()]+)$/.exec(term);
  if (match) {
    const [, not, key = ''] = match;
    return not ? (labels) => !(key in labels) : (labels) => key in labels;
  }
  throw new SelectorError(`unable to parse requirement: ${JSON.stringify(term)}`);
}

export function labelSelector(text: string | null): Matcher {
  if (!text) return () => true;
  const tests = splitTerms(text).map(labelTerm);
  return (object) => tests.every((test) => test(object.metadata.labels ?? {}));
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

/** A LabelSelector object; an empty one selects everything (as a PDB's does). */
export function matchesLabelSelector(selector: LabelSelectorObject, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const has = key in labels;
    switch (operator) {
      case 'In':
        return has && values.includes(labels[key] ?? '');
      case 'NotIn':
        return !has || !values.includes(labels[key] ?? '');
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
    }
    return false;
  });
}
