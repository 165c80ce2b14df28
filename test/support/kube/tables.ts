// Server-side printing: the meta.k8s.io/v1 Table kubectl get asks for
// (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`). Nodes, pods and events get the columns
// the real API server prints for them; a custom resource gets NAME plus its CRD's printer columns
// (JSONPath, `date` columns as ages), as the apiextensions server does; anything else NAME and AGE.
// Columns with priority > 0 are the ones kubectl shows only with -o wide.

import type { PrinterColumn, ResourceInfo, ResourceRegistry } from './resources';
import type { StoredObject } from './store';

interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

type Cell = string | number | boolean | null;

interface Printer {
  columns: ColumnDefinition[];
  cells(object: StoredObject, now: Date): Cell[];
}

export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => /(^|;)\s*as=Table\b/.test(part) && /g=meta\.k8s\.io/.test(part));
}

/**
 * The Table for a list or one object the server answered with; undefined when the body is neither
 * (a Status) or its kind is not served. `includeObject` is kubectl's query parameter (None, Metadata, Object).
 */
export function toTable(body: unknown, registry: ResourceRegistry, now: Date, includeObject: string | null): unknown {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = body as { kind?: string; items?: StoredObject[]; metadata?: Record<string, unknown> };
  const isList = Array.isArray(value.items) && (value.kind ?? '').endsWith('List');
  const kind = isList ? (value.kind ?? '').slice(0, -'List'.length) : value.kind;
  const info = registry.all().find((r) => r.kind === kind);
  if (!info && kind !== 'PodDisruptionBudget') return undefined;
  const objects = isList ? (value.items ?? []) : [body as StoredObject];
  const printer = printerFor(info);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: isList ? (value.metadata ?? {}) : { resourceVersion: (body as StoredObject).metadata.resourceVersion },
    columnDefinitions: printer.columns,
    rows: objects.map((object) => ({
      cells: printer.cells(object, now),
      object: rowObject(object, info, includeObject),
    })),
  };
}

function rowObject(object: StoredObject, info: ResourceInfo | undefined, includeObject: string | null): unknown {
  if (includeObject === 'None') return undefined;
  if (includeObject === 'Object') {
    return { ...object, kind: info?.kind, apiVersion: info ? apiVersion(info) : undefined };
  }
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

function apiVersion(info: ResourceInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

function column(name: string, type = 'string', priority = 0, format = ''): ColumnDefinition {
  return { name, type, format, description: '', priority };
}

const NAME = column('Name', 'string', 0, 'name');

function printerFor(info: ResourceInfo | undefined): Printer {
  if (info?.columns) return customPrinter(info.columns);
  switch (info?.resource) {
    case 'nodes':
      return NODE_PRINTER;
    case 'pods':
      return POD_PRINTER;
    case 'events':
      return EVENT_PRINTER;
    default:
      return {
        columns: [NAME, column('Age')],
        cells: (o, now) => [o.metadata.name, age(o.metadata.creationTimestamp, now)],
      };
  }
}

function customPrinter(printerColumns: PrinterColumn[]): Printer {
  return {
    columns: [
      NAME,
      ...printerColumns.map((c) => ({
        name: c.name,
        type: c.type,
        format: '',
        description: c.description ?? '',
        priority: c.priority ?? 0,
      })),
    ],
    cells: (object, now) => [
      object.metadata.name,
      ...printerColumns.map((c): Cell => {
        const found = evaluateJsonPath(object, c.jsonPath);
        if (found === undefined || found === null) return null;
        if (c.type === 'date') return typeof found === 'string' ? age(found, now) : null;
        if (c.type === 'integer' || c.type === 'number') return typeof found === 'number' ? found : null;
        if (c.type === 'boolean') return typeof found === 'boolean' ? found : null;
        return typeof found === 'object' ? JSON.stringify(found) : String(found);
      }),
    ],
  };
}

interface NodeShape {
  metadata: StoredObject['metadata'];
  spec?: { unschedulable?: boolean };
  status?: {
    conditions?: { type: string; status: string }[];
    addresses?: { type: string; address: string }[];
    nodeInfo?: { kubeletVersion?: string; osImage?: string; kernelVersion?: string; containerRuntimeVersion?: string };
  };
}

const NODE_PRINTER: Printer = {
  columns: [
    NAME,
    column('Status'),
    column('Roles'),
    column('Age'),
    column('Version'),
    column('Internal-IP', 'string', 1),
    column('External-IP', 'string', 1),
    column('OS-Image', 'string', 1),
    column('Kernel-Version', 'string', 1),
    column('Container-Runtime', 'string', 1),
  ],
  cells: (object, now) => {
    const node = object as unknown as NodeShape;
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    const statuses = [ready === 'True' ? 'Ready' : ready === 'False' ? 'NotReady' : 'Unknown'];
    if (node.spec?.unschedulable) statuses.push('SchedulingDisabled');
    const roles = Object.keys(node.metadata.labels ?? {})
      .filter((k) => k.startsWith('node-role.kubernetes.io/'))
      .map((k) => k.slice('node-role.kubernetes.io/'.length));
    const address = (type: string) => node.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>';
    const info = node.status?.nodeInfo ?? {};
    return [
      node.metadata.name,
      statuses.join(','),
      roles.length > 0 ? roles.join(',') : '<none>',
      age(node.metadata.creationTimestamp, now),
      info.kubeletVersion ?? '',
      address('InternalIP'),
      address('ExternalIP'),
      info.osImage ?? '<unknown>',
      info.kernelVersion ?? '<unknown>',
      info.containerRuntimeVersion ?? '<unknown>',
    ];
  },
};

interface PodShape {
  metadata: StoredObject['metadata'];
  spec?: { nodeName?: string; containers?: unknown[]; readinessGates?: unknown[] };
  status?: {
    phase?: string;
    reason?: string;
    podIP?: string;
    nominatedNodeName?: string;
    containerStatuses?: { ready?: boolean; restartCount?: number }[];
    conditions?: { type: string; status: string }[];
  };
}

const POD_PRINTER: Printer = {
  columns: [
    NAME,
    column('Ready'),
    column('Status'),
    column('Restarts', 'string'),
    column('Age'),
    column('IP', 'string', 1),
    column('Node', 'string', 1),
    column('Nominated Node', 'string', 1),
    column('Readiness Gates', 'string', 1),
  ],
  cells: (object, now) => {
    const pod = object as unknown as PodShape;
    const containers = pod.spec?.containers?.length ?? 0;
    const statuses = pod.status?.containerStatuses;
    // Without container statuses (no kubelet) a Running pod with Ready=True counts all its containers ready.
    const podReady = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    const ready = statuses ? statuses.filter((s) => s.ready).length : podReady ? containers : 0;
    const restarts = (statuses ?? []).reduce((sum, s) => sum + (s.restartCount ?? 0), 0);
    const status =
      pod.metadata.deletionTimestamp !== undefined
        ? 'Terminating'
        : (pod.status?.reason ?? pod.status?.phase ?? 'Pending');
    return [
      pod.metadata.name,
      `${ready}/${containers}`,
      status,
      String(restarts),
      age(pod.metadata.creationTimestamp, now),
      pod.status?.podIP ?? '<none>',
      pod.spec?.nodeName ?? '<none>',
      pod.status?.nominatedNodeName ?? '<none>',
      pod.spec?.readinessGates?.length ? `0/${pod.spec.readinessGates.length}` : '<none>',
    ];
  },
};

interface EventShape {
  metadata: StoredObject['metadata'];
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  firstTimestamp?: string;
  eventTime?: string;
  involvedObject?: { kind?: string; name?: string };
  source?: { component?: string };
  reportingComponent?: string;
}

const EVENT_PRINTER: Printer = {
  columns: [column('Last Seen'), column('Type'), column('Reason'), column('Object'), column('Message')],
  cells: (object, now) => {
    const event = object as unknown as EventShape;
    const kind = (event.involvedObject?.kind ?? '').toLowerCase();
    return [
      age(event.lastTimestamp ?? event.eventTime ?? event.metadata.creationTimestamp, now),
      event.type ?? '',
      event.reason ?? '',
      `${kind}/${event.involvedObject?.name ?? ''}`,
      event.message ?? '',
    ];
  },
};

/** apimachinery's duration.HumanDuration, the AGE column's format. */
export function humanDuration(ms: number): string {
  if (ms < -1000) return '<invalid>';
  if (ms < 0) return '0s';
  const seconds = Math.floor(ms / 1000);
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const years = Math.floor(hours / 24 / 365);
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${years}y`;
}

function age(timestamp: string | undefined, now: Date): string {
  if (!timestamp) return '<unknown>';
  return humanDuration(now.getTime() - Date.parse(timestamp));
}

/**
 * The JSONPath subset printer columns use: `.a.b`, escaped dots in keys (`.metadata.labels.node\.kubernetes\.io/zone`),
 * indexes (`[0]`) and equality filters (`[?(@.type=="Ready")]`, first match).
 */
export function evaluateJsonPath(object: unknown, path: string): unknown {
  let current: unknown = object;
  let rest = path.trim().replace(/^\{|\}$/g, '');
  while (rest.length > 0 && current !== undefined) {
    const filter = /^\[\?\(@\.([A-Za-z0-9_]+)\s*==\s*["']([^"']*)["']\)\]/.exec(rest);
    const index = /^\[(\d+)\]/.exec(rest);
    if (filter) {
      const [whole, field = '', value] = filter;
      current = Array.isArray(current)
        ? current.find((item) => (item as Record<string, unknown> | null)?.[field] === value)
        : undefined;
      rest = rest.slice(whole.length);
    } else if (index) {
      current = Array.isArray(current) ? current[Number(index[1])] : undefined;
      rest = rest.slice(index[0].length);
    } else if (rest.startsWith('.')) {
      const key = /^\.((?:\\.|[^.[\\])+)/.exec(rest);
      if (!key) return undefined;
      const name = (key[1] ?? '').replace(/\\(.)/g, '$1');
      current =
        typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[name] : undefined;
      rest = rest.slice(key[0].length);
    } else {
      return undefined;
    }
  }
  return current;
}
