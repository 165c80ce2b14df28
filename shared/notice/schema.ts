// The PodsUnschedulable detail as a field table: the one source of validateNotice and of
// docs/notice.schema.json (scripts/notice-schema.ts writes it; a test fails when they differ).
// Objects the notice defines are closed (a misspelt field is an error); objects copied from the
// Kubernetes API are open, so a producer on a newer Kubernetes that adds fields is not refused.

import { type Field, toJsonSchema } from './fields';

/** PutEvents refuses entries over 256 KiB; one notice entry can never be larger. */
export const MAX_NOTICE_BYTES = 256 * 1024;
/** Pending pods one notice may carry (also the largest decision the provision function plans). */
export const MAX_NOTICE_PODS = 10_000;
export const MAX_NOTICE_DAEMONSETS = 1_000;

const str = (description?: string, maxLength = 253): Field => ({
  kind: 'string',
  minLength: 1,
  maxLength,
  ...(description !== undefined ? { description } : {}),
});
const anyString = (maxLength: number): Field => ({ kind: 'string', maxLength });
const enumOf = (values: readonly string[], description?: string): Field => ({
  kind: 'string',
  enum: values,
  ...(description !== undefined ? { description } : {}),
});
const int32 = (minimum = -2147483648, maximum = 2147483647): Field => ({ kind: 'integer', minimum, maximum });
const list = (items: Field, maxItems = 1000, minItems?: number): Field => ({
  kind: 'array',
  items,
  maxItems,
  ...(minItems !== undefined ? { minItems } : {}),
});
const open = (properties: Record<string, Field>, required: string[] = []): Field => ({
  kind: 'object',
  properties,
  required,
});

const named = (name: string, properties: Record<string, Field>, required: string[] = []): Field => ({
  ...open(properties, required),
  name,
});

// Label keys are `prefix/name` (prefix ≤ 253, name ≤ 63); values ≤ 63. Only lengths are checked here.
const LABEL_KEY = { kind: 'string', minLength: 1, maxLength: 317 } as const;
const labelMap = (description: string): Field => ({
  kind: 'map',
  description,
  keys: LABEL_KEY,
  values: anyString(63),
  maxProperties: 256,
});

export const QUANTITY_SCHEMA_PATTERN = '^(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$';

const resourceList: Field = {
  kind: 'map',
  description: 'Resource name → quantity (cpu, memory, ephemeral-storage, extended resources).',
  name: 'ResourceList',
  keys: { kind: 'string', minLength: 1, maxLength: 317 },
  values: {
    kind: 'string',
    pattern: QUANTITY_SCHEMA_PATTERN,
    patternHint: 'a non-negative quantity such as "500m", "2" or "16Gi"',
  },
  maxProperties: 64,
};

const resources: Field = named('ResourceRequirements', {
  requests: resourceList,
  limits: resourceList,
});

const container: Field = named('Container', { name: str('Container name.', 63), resources }, ['name']);
const initContainer: Field = named(
  'InitContainer',
  {
    name: str('Container name.', 63),
    resources,
    restartPolicy: enumOf(['Always'], 'Always marks a native sidecar, which runs beside the app containers.'),
  },
  ['name'],
);

const selectorOperators = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

const labelSelector: Field = named('LabelSelector', {
  matchLabels: labelMap('Labels the selected pods carry.'),
  matchExpressions: list(
    open({ key: str(undefined, 317), operator: enumOf(selectorOperators), values: list(anyString(63)) }, [
      'key',
      'operator',
    ]),
    100,
  ),
});

const nodeSelectorRequirement: Field = named(
  'NodeSelectorRequirement',
  {
    key: str(undefined, 317),
    operator: enumOf([...selectorOperators, 'Gt', 'Lt']),
    values: list(anyString(63)),
  },
  ['key', 'operator'],
);

const nodeSelectorTerm: Field = named('NodeSelectorTerm', {
  matchExpressions: list(nodeSelectorRequirement, 100),
  matchFields: list(nodeSelectorRequirement, 100),
});

const podAffinityTerm: Field = named(
  'PodAffinityTerm',
  {
    labelSelector,
    namespaces: list(str(undefined, 63)),
    namespaceSelector: labelSelector,
    topologyKey: str('Node label whose values are the domains, e.g. topology.kubernetes.io/zone.', 317),
    matchLabelKeys: list(str(undefined, 317), 100),
    mismatchLabelKeys: list(str(undefined, 317), 100),
  },
  ['topologyKey'],
);

const weight = int32(1, 100);

const podAffinity: Field = named('PodAffinity', {
  requiredDuringSchedulingIgnoredDuringExecution: list(podAffinityTerm, 100),
  preferredDuringSchedulingIgnoredDuringExecution: list(
    open({ weight, podAffinityTerm }, ['weight', 'podAffinityTerm']),
    100,
  ),
});

const affinity: Field = named('Affinity', {
  nodeAffinity: open({
    requiredDuringSchedulingIgnoredDuringExecution: open({ nodeSelectorTerms: list(nodeSelectorTerm, 100) }, [
      'nodeSelectorTerms',
    ]),
    preferredDuringSchedulingIgnoredDuringExecution: list(
      open({ weight, preference: nodeSelectorTerm }, ['weight', 'preference']),
      100,
    ),
  }),
  podAffinity,
  podAntiAffinity: podAffinity,
});

const toleration: Field = named('Toleration', {
  key: anyString(317),
  operator: enumOf(['Exists', 'Equal']),
  value: anyString(63),
  effect: enumOf(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
  tolerationSeconds: { kind: 'integer' },
});

const topologySpreadConstraint: Field = named(
  'TopologySpreadConstraint',
  {
    maxSkew: int32(1),
    topologyKey: str(undefined, 317),
    whenUnsatisfiable: enumOf(['DoNotSchedule', 'ScheduleAnyway']),
    labelSelector,
    minDomains: int32(1),
    nodeAffinityPolicy: enumOf(['Honor', 'Ignore']),
    nodeTaintsPolicy: enumOf(['Honor', 'Ignore']),
    matchLabelKeys: list(str(undefined, 317), 100),
  },
  ['maxSkew', 'topologyKey', 'whenUnsatisfiable'],
);

/** What scheduling needs of a pod, beside its identity (shared by pods and DaemonSet templates). */
const podFields: Record<string, Field> = {
  labels: labelMap('The pod labels (selectors of spread and affinity terms match them).'),
  ownerKind: str('Kind of the controlling owner: ReplicaSet, StatefulSet, Job, DaemonSet …', 63),
  containers: list(container, 100, 1),
  initContainers: list(initContainer, 100),
  overhead: resourceList,
  nodeSelector: labelMap('Node labels the pod requires.'),
  affinity,
  tolerations: list(toleration, 100),
  topologySpreadConstraints: list(topologySpreadConstraint, 100),
  priority: int32(-2147483648, 2000001000),
};

export const NOTICE_POD: Field = {
  kind: 'object',
  name: 'NoticePod',
  description: 'A pending pod: identity plus what the scheduling core reads.',
  closed: true,
  properties: {
    namespace: str('Namespace.', 63),
    name: str('Pod name.'),
    uid: str('metadata.uid; pods are deduplicated by it across notices.', 128),
    ...podFields,
  },
  required: ['namespace', 'name', 'uid', 'containers'],
};

export const NOTICE_DAEMONSET: Field = {
  kind: 'object',
  name: 'NoticeDaemonSet',
  description: 'A DaemonSet whose pod would run on every new node (its requests are overhead on each).',
  closed: true,
  properties: {
    namespace: str('Namespace.', 63),
    name: str('DaemonSet name.'),
    template: { kind: 'object', closed: true, properties: podFields, required: ['containers'] },
  },
  required: ['namespace', 'name', 'template'],
};

export const NOTICE_DETAIL: Field = {
  kind: 'object',
  description: 'detail of a karpless PodsUnschedulable event.',
  closed: true,
  properties: {
    cluster: str('EKS cluster name the pods belong to.', 100),
    observedAt: { kind: 'string', format: 'date-time', description: 'RFC 3339 time the pending set was observed.' },
    pods: list(NOTICE_POD, MAX_NOTICE_PODS),
    daemonSets: list(NOTICE_DAEMONSET, MAX_NOTICE_DAEMONSETS),
    part: {
      kind: 'object',
      description: 'Set when one observation is split across entries: part index of count, sharing batchId.',
      closed: true,
      properties: { index: int32(0, MAX_NOTICE_PODS), count: int32(1, MAX_NOTICE_PODS), batchId: str(undefined, 128) },
      required: ['index', 'count', 'batchId'],
    },
  },
  required: ['cluster', 'observedAt', 'pods', 'daemonSets'],
};

/** docs/notice.schema.json: the detail's JSON Schema, generated from the table above. */
export function noticeJsonSchema(): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  const root = toJsonSchema(NOTICE_DETAIL, defs);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'urn:karpless:event:PodsUnschedulable:detail',
    title: 'karpless PodsUnschedulable detail',
    $comment: `Generated by scripts/notice-schema.ts from shared/notice/schema.ts; do not edit. One entry is at most ${MAX_NOTICE_BYTES} bytes.`,
    ...root,
    $defs: defs,
  };
}

/** The schema file's exact text (2-space JSON and a final newline). */
export function noticeJsonSchemaText(): string {
  return `${JSON.stringify(noticeJsonSchema(), null, 2)}\n`;
}
