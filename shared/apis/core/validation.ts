// Pod validation as the Kubernetes API server does it (pkg/apis/core/validation), for every field the
// scheduling core reads: container, init-container, sidecar and overhead resources, nodeSelector,
// node affinity, pod (anti-)affinity, tolerations, topology spread constraints and priority. Pods come
// from files (`karpless plan`) and from notices anyone may send, so nothing reaches the scheduler
// before it has the type, shape and range the scheduler assumes: a malformed pod gets field errors,
// never a wrong plan or a TypeError.

import { parseQuantityOrUndefined, resourceQuantityProblem } from '../quantity';
import {
  dnsLabelProblem,
  dnsSubdomainProblem,
  eachItem,
  fieldSet,
  INT32_MAX,
  integer,
  isRecord,
  join,
  knownFields,
  labels,
  list,
  oneOf,
  optionalString,
  qualifiedName,
  qualifiedNameProblem,
  type Report,
  record,
  requiredString,
  show,
  strings,
  typed,
  typeName,
} from './fields';

export type { Report } from './fields';

/**
 * Every problem of one Pod object (metadata and spec) as `path: message` lines, e.g.
 * `spec.containers[0].resources.requests.cpu: "-1" must be greater than or equal to 0`. `path` is
 * where the pod sits in its document ('' for a Pod manifest, `detail.pods[3]` in a notice) and
 * prefixes every line. An empty list means the scheduler can read the pod safely.
 */
export function validatePod(pod: unknown, path: string): string[] {
  const issues: string[] = [];
  const report: Report = (at, message) => issues.push(`${at}: ${message}`);
  if (!isRecord(pod)) {
    report(path || '<pod>', `must be a Pod object, not ${typeName(pod)}`);
    return issues;
  }
  knownFields(pod, POD_FIELDS, path, report);
  checkObjectMeta(pod.metadata, join(path, 'metadata'), report, true);
  checkPodSpec(pod.spec, join(path, 'spec'), report);
  return issues;
}

/**
 * Like validatePod for an object holding the pod-spec fields at its top level (a PodSpec, or a
 * PodsUnschedulable notice pod, whose containers, affinity … sit beside its name). Fields at the top
 * level that a PodSpec lacks are left to the caller (a notice has its own); nested objects are strict.
 */
export function validatePodSpec(spec: unknown, path: string): string[] {
  const issues: string[] = [];
  checkPodSpec(spec, path, (at, message) => issues.push(`${at}: ${message}`), false);
  return issues;
}

// The fields of each API type the validator walks (Kubernetes 1.34), for strict decoding.
const POD_FIELDS = fieldSet('apiVersion', 'kind', 'metadata', 'spec', 'status');
const OBJECT_META_FIELDS = fieldSet(
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
);
const POD_SPEC_FIELDS = fieldSet(
  'volumes',
  'initContainers',
  'containers',
  'ephemeralContainers',
  'restartPolicy',
  'terminationGracePeriodSeconds',
  'activeDeadlineSeconds',
  'dnsPolicy',
  'nodeSelector',
  'serviceAccountName',
  'serviceAccount',
  'automountServiceAccountToken',
  'nodeName',
  'hostNetwork',
  'hostPID',
  'hostIPC',
  'shareProcessNamespace',
  'securityContext',
  'imagePullSecrets',
  'hostname',
  'subdomain',
  'affinity',
  'schedulerName',
  'tolerations',
  'hostAliases',
  'priorityClassName',
  'priority',
  'dnsConfig',
  'readinessGates',
  'runtimeClassName',
  'enableServiceLinks',
  'preemptionPolicy',
  'overhead',
  'topologySpreadConstraints',
  'setHostnameAsFQDN',
  'os',
  'hostUsers',
  'schedulingGates',
  'resourceClaims',
  'resources',
  'hostnameOverride',
);
const CONTAINER_FIELDS = fieldSet(
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'envFrom',
  'env',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'restartPolicyRules',
  'volumeMounts',
  'volumeDevices',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
);
const RESOURCES_FIELDS = fieldSet('limits', 'requests', 'claims');
const AFFINITY_FIELDS = fieldSet('nodeAffinity', 'podAffinity', 'podAntiAffinity');
const SCHEDULING_FIELDS = fieldSet(
  'requiredDuringSchedulingIgnoredDuringExecution',
  'preferredDuringSchedulingIgnoredDuringExecution',
);
const NODE_SELECTOR_FIELDS = fieldSet('nodeSelectorTerms');
const NODE_SELECTOR_TERM_FIELDS = fieldSet('matchExpressions', 'matchFields');
const REQUIREMENT_FIELDS = fieldSet('key', 'operator', 'values');
const PREFERRED_TERM_FIELDS = fieldSet('weight', 'preference');
const WEIGHTED_TERM_FIELDS = fieldSet('weight', 'podAffinityTerm');
const POD_AFFINITY_TERM_FIELDS = fieldSet(
  'labelSelector',
  'namespaces',
  'topologyKey',
  'namespaceSelector',
  'matchLabelKeys',
  'mismatchLabelKeys',
);
const LABEL_SELECTOR_FIELDS = fieldSet('matchLabels', 'matchExpressions');
const TOLERATION_FIELDS = fieldSet('key', 'operator', 'value', 'effect', 'tolerationSeconds');
const SPREAD_FIELDS = fieldSet(
  'maxSkew',
  'topologyKey',
  'whenUnsatisfiable',
  'labelSelector',
  'minDomains',
  'nodeAffinityPolicy',
  'nodeTaintsPolicy',
  'matchLabelKeys',
);

/** metadata.name (required for a Pod, optional in a template), namespace, labels and annotations. */
export function checkObjectMeta(value: unknown, path: string, report: Report, nameRequired: boolean): void {
  const meta = typed(value, OBJECT_META_FIELDS, path, report);
  if (!meta) {
    if (nameRequired) report(join(path, 'name'), 'Required value');
    return;
  }
  const namePath = join(path, 'name');
  if (nameRequired ? requiredString(meta.name, namePath, report) : optionalString(meta.name, namePath, report)) {
    const problem = dnsSubdomainProblem(meta.name as string);
    if (problem) report(namePath, `Invalid value: ${show(meta.name)}: ${problem}`);
  }
  if (optionalString(meta.namespace, join(path, 'namespace'), report) && meta.namespace !== '') {
    const problem = dnsLabelProblem(meta.namespace as string);
    if (problem) report(join(path, 'namespace'), `Invalid value: ${show(meta.namespace)}: ${problem}`);
  }
  labels(meta.labels, join(path, 'labels'), report);
  const annotations = record(meta.annotations, join(path, 'annotations'), report);
  for (const [key, v] of Object.entries(annotations ?? {})) {
    if (typeof v !== 'string') report(join(join(path, 'annotations'), key), `must be a string, not ${typeName(v)}`);
  }
}

/** The fields of a PodSpec the scheduler reads. */
export function checkPodSpec(value: unknown, path: string, report: Report, strict = true): void {
  if (value === undefined || value === null) {
    report(path, 'Required value: a pod spec with at least one container');
    return;
  }
  const spec = strict ? typed(value, POD_SPEC_FIELDS, path, report) : record(value, path, report);
  if (!spec) return;
  checkResources(spec.resources, join(path, 'resources'), report);
  const names = new Set<string>();
  const containers = list(spec.containers, join(path, 'containers'), report);
  if (containers?.length === 0 || spec.containers === undefined || spec.containers === null) {
    report(join(path, 'containers'), 'Required value');
  }
  for (const [i, c] of (containers ?? []).entries())
    checkContainer(c, join(join(path, 'containers'), i), report, false, names);
  eachItem(spec.initContainers, join(path, 'initContainers'), report, (item, at) =>
    checkContainer(item, at, report, true, names),
  );
  checkResourceList(spec.overhead, join(path, 'overhead'), report);
  labels(spec.nodeSelector, join(path, 'nodeSelector'), report);
  checkAffinity(spec.affinity, join(path, 'affinity'), report);
  eachItem(spec.tolerations, join(path, 'tolerations'), report, (item, at) => checkToleration(item, at, report));
  checkTopologySpread(spec.topologySpreadConstraints, join(path, 'topologySpreadConstraints'), report);
  integer(spec.priority, join(path, 'priority'), report, -INT32_MAX - 1);
  optionalString(spec.priorityClassName, join(path, 'priorityClassName'), report);
  optionalString(spec.nodeName, join(path, 'nodeName'), report);
}

function checkContainer(value: unknown, path: string, report: Report, init: boolean, names: Set<string>): void {
  if (!isRecord(value)) {
    report(path, `must be a container (a map with name, image, resources …), not ${typeName(value)}`);
    return;
  }
  knownFields(value, CONTAINER_FIELDS, path, report);
  const namePath = join(path, 'name');
  if (requiredString(value.name, namePath, report)) {
    const problem = dnsLabelProblem(value.name);
    if (problem) report(namePath, `Invalid value: ${show(value.name)}: ${problem}`);
    else if (names.has(value.name)) report(namePath, `Duplicate value: ${show(value.name)}`);
    names.add(value.name);
  }
  if (value.restartPolicy !== undefined) {
    const policyPath = join(path, 'restartPolicy');
    if (init) oneOf(value.restartPolicy, ['Always'], policyPath, report);
    else report(policyPath, 'Forbidden: may not be set for non-init containers');
  }
  checkResources(value.resources, join(path, 'resources'), report);
}

/** A container's (or the pod's) resources: valid quantities, requests within limits. */
function checkResources(value: unknown, path: string, report: Report): void {
  const resources = typed(value, RESOURCES_FIELDS, path, report);
  if (!resources) return;
  const requests = checkResourceList(resources.requests, join(path, 'requests'), report);
  const limits = checkResourceList(resources.limits, join(path, 'limits'), report);
  for (const [name, request] of Object.entries(requests)) {
    const limit = limits[name];
    const at = join(join(path, 'requests'), name);
    if (limit !== undefined && request > limit) {
      const shown = (list: unknown) => show((list as Record<string, unknown>)[name]);
      report(
        at,
        `Invalid value: ${shown(resources.requests)}: must be less than or equal to ${name} limit of ${shown(resources.limits)}`,
      );
    }
    if (isExtendedResource(name) && limit === undefined)
      report(at, 'Forbidden: Limit must be set for non overcommitable resources');
    else if (isExtendedResource(name) && limit !== request) report(at, `Invalid value: must be equal to ${name} limit`);
  }
}

// Extended resources (nvidia.com/gpu, vpc.amazonaws.com/efa …) cannot be overcommitted: the API
// server wants their requests equal to their limits.
function isExtendedResource(name: string): boolean {
  if (!name.includes('/') || name.startsWith('requests.')) return false;
  const domain = name.slice(0, name.indexOf('/'));
  return !(domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io'));
}

/** A ResourceList; returns the parsed amounts of its valid entries. */
function checkResourceList(value: unknown, path: string, report: Report): Record<string, number> {
  const amounts: Record<string, number> = {};
  const map = record(value, path, report);
  for (const [name, quantity] of Object.entries(map ?? {})) {
    const nameProblem = qualifiedNameProblem(name);
    if (nameProblem) {
      report(path, `Invalid value: ${show(name)}: resource name ${nameProblem}`);
      continue;
    }
    const problem = resourceQuantityProblem(name, quantity);
    if (problem) report(join(path, name), problem);
    else amounts[name] = parseQuantityOrUndefined(quantity as string | number) ?? 0;
  }
  return amounts;
}

const NODE_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] as const;
const LABEL_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

function checkAffinity(value: unknown, path: string, report: Report): void {
  const affinity = typed(value, AFFINITY_FIELDS, path, report);
  if (!affinity) return;
  const nodeAffinity = typed(affinity.nodeAffinity, SCHEDULING_FIELDS, join(path, 'nodeAffinity'), report);
  if (nodeAffinity) {
    const requiredPath = join(path, 'nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution');
    const required = typed(
      nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution,
      NODE_SELECTOR_FIELDS,
      requiredPath,
      report,
    );
    if (required) {
      const termsPath = join(requiredPath, 'nodeSelectorTerms');
      const terms = list(required.nodeSelectorTerms, termsPath, report);
      // A non-list was reported by list(); a missing or empty one is reported here.
      if (terms?.length === 0 || required.nodeSelectorTerms === undefined || required.nodeSelectorTerms === null) {
        report(termsPath, 'Required value: must have at least one node selector term');
      }
      for (const [i, term] of (terms ?? []).entries()) {
        if (term === undefined || term === null) report(join(termsPath, i), 'must not be null');
        else checkNodeSelectorTerm(term, join(termsPath, i), report);
      }
    }
    const preferredPath = join(path, 'nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution');
    eachItem(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution, preferredPath, report, (p, at) => {
      const preferred = typed(p, PREFERRED_TERM_FIELDS, at, report);
      if (!preferred) return;
      checkWeight(preferred.weight, join(at, 'weight'), report);
      if (absent(preferred.preference)) report(join(at, 'preference'), 'Required value');
      else checkNodeSelectorTerm(preferred.preference, join(at, 'preference'), report);
    });
  }
  for (const kind of ['podAffinity', 'podAntiAffinity'] as const) {
    const podAffinity = typed(affinity[kind], SCHEDULING_FIELDS, join(path, kind), report);
    if (!podAffinity) continue;
    const requiredPath = join(path, `${kind}.requiredDuringSchedulingIgnoredDuringExecution`);
    eachItem(podAffinity.requiredDuringSchedulingIgnoredDuringExecution, requiredPath, report, (item, at) =>
      checkPodAffinityTerm(item, at, report),
    );
    const preferredPath = join(path, `${kind}.preferredDuringSchedulingIgnoredDuringExecution`);
    eachItem(podAffinity.preferredDuringSchedulingIgnoredDuringExecution, preferredPath, report, (p, at) => {
      const weighted = typed(p, WEIGHTED_TERM_FIELDS, at, report);
      if (!weighted) return;
      checkWeight(weighted.weight, join(at, 'weight'), report);
      if (absent(weighted.podAffinityTerm)) report(join(at, 'podAffinityTerm'), 'Required value');
      else checkPodAffinityTerm(weighted.podAffinityTerm, join(at, 'podAffinityTerm'), report);
    });
  }
}

/** The API server drops a null of a non-nullable field, so a required field given as null is missing. */
function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

function checkWeight(value: unknown, path: string, report: Report): void {
  if (absent(value)) report(path, 'Required value');
  else integer(value, path, report, 1, 100);
}

function checkNodeSelectorTerm(value: unknown, path: string, report: Report): void {
  const term = typed(value, NODE_SELECTOR_TERM_FIELDS, path, report);
  if (!term) return;
  eachItem(term.matchExpressions, join(path, 'matchExpressions'), report, (item, at) =>
    checkRequirement(item, at, report, NODE_OPERATORS),
  );
  eachItem(term.matchFields, join(path, 'matchFields'), report, (r, at) => {
    if (!checkRequirement(r, at, report, ['In', 'NotIn'])) return;
    const requirement = r as Record<string, unknown>;
    if (requirement.key !== 'metadata.name') {
      report(join(at, 'key'), `Invalid value: ${show(requirement.key)}: the only supported field is metadata.name`);
    }
    if (Array.isArray(requirement.values) && requirement.values.length !== 1) {
      report(
        join(at, 'values'),
        "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
      );
    }
  });
}

/** A node or label selector requirement; true when key and operator are usable. */
function checkRequirement(value: unknown, path: string, report: Report, operators: readonly string[]): boolean {
  const requirement = typed(value, REQUIREMENT_FIELDS, path, report);
  if (!requirement) return false;
  const keyOk = qualifiedName(requirement.key, join(path, 'key'), report);
  const operatorPath = join(path, 'operator');
  if (absent(requirement.operator)) report(operatorPath, 'Required value');
  const operatorOk = oneOf(requirement.operator, operators, operatorPath, report);
  const values = strings(requirement.values, join(path, 'values'), report);
  if (!operatorOk) return false;
  // A non-list was reported already; its count would only add a second, misleading message.
  if (requirement.values !== undefined && requirement.values !== null && !Array.isArray(requirement.values)) {
    return keyOk;
  }
  const count = Array.isArray(requirement.values) ? requirement.values.length : 0;
  switch (requirement.operator) {
    case 'In':
    case 'NotIn':
      if (count === 0)
        report(join(path, 'values'), "Required value: must be specified when `operator` is 'In' or 'NotIn'");
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (count > 0)
        report(join(path, 'values'), "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      break;
    default:
      if (count !== 1)
        report(join(path, 'values'), "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'");
      else if (values && !/^[+-]?[0-9]+$/.test(values[0] ?? '')) {
        report(join(path, 'values[0]'), `Invalid value: ${show(values[0])}: must be an integer`);
      }
  }
  return keyOk;
}

function checkLabelSelector(value: unknown, path: string, report: Report): void {
  const selector = typed(value, LABEL_SELECTOR_FIELDS, path, report);
  if (!selector) return;
  labels(selector.matchLabels, join(path, 'matchLabels'), report);
  eachItem(selector.matchExpressions, join(path, 'matchExpressions'), report, (item, at) =>
    checkRequirement(item, at, report, LABEL_OPERATORS),
  );
}

function checkPodAffinityTerm(value: unknown, path: string, report: Report): void {
  const term = typed(value, POD_AFFINITY_TERM_FIELDS, path, report);
  if (!term) return;
  qualifiedName(term.topologyKey, join(path, 'topologyKey'), report);
  checkLabelSelector(term.labelSelector, join(path, 'labelSelector'), report);
  checkLabelSelector(term.namespaceSelector, join(path, 'namespaceSelector'), report);
  for (const field of ['namespaces', 'matchLabelKeys', 'mismatchLabelKeys'] as const) {
    strings(term[field], join(path, field), report);
  }
}

function checkToleration(value: unknown, path: string, report: Report): void {
  const toleration = typed(value, TOLERATION_FIELDS, path, report);
  if (!toleration) return;
  const key = toleration.key;
  if (optionalString(key, join(path, 'key'), report) && key !== '') qualifiedName(key, join(path, 'key'), report);
  const operator = toleration.operator ?? 'Equal';
  oneOf(operator, ['Exists', 'Equal'], join(path, 'operator'), report);
  if ((key === undefined || key === '') && operator !== 'Exists') {
    report(
      join(path, 'operator'),
      `Invalid value: ${show(operator)}: operator must be Exists when \`key\` is empty, which means "match all values and all keys"`,
    );
  }
  if (
    optionalString(toleration.value, join(path, 'value'), report) &&
    operator === 'Exists' &&
    toleration.value !== ''
  ) {
    report(join(path, 'operator'), 'Invalid value: "Exists": value must be empty when `operator` is \'Exists\'');
  }
  if (toleration.effect !== undefined && toleration.effect !== '') {
    oneOf(toleration.effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute'], join(path, 'effect'), report);
  }
  if (toleration.tolerationSeconds !== undefined && toleration.tolerationSeconds !== null) {
    if (toleration.effect !== 'NoExecute') {
      report(
        join(path, 'effect'),
        `Invalid value: ${show(toleration.effect ?? '')}: effect must be 'NoExecute' when \`tolerationSeconds\` is set`,
      );
    }
    integer(toleration.tolerationSeconds, join(path, 'tolerationSeconds'), report, -(2 ** 53), 2 ** 53);
  }
}

function checkTopologySpread(value: unknown, path: string, report: Report): void {
  const seen = new Set<string>();
  eachItem(value, path, report, (c, at) => {
    const constraint = typed(c, SPREAD_FIELDS, at, report);
    if (!constraint) return;
    if (absent(constraint.maxSkew)) report(join(at, 'maxSkew'), 'Required value');
    else integer(constraint.maxSkew, join(at, 'maxSkew'), report, 1);
    const keyOk = qualifiedName(constraint.topologyKey, join(at, 'topologyKey'), report);
    const whenPath = join(at, 'whenUnsatisfiable');
    if (absent(constraint.whenUnsatisfiable)) report(whenPath, 'Required value');
    const whenOk = oneOf(constraint.whenUnsatisfiable, ['DoNotSchedule', 'ScheduleAnyway'], whenPath, report);
    if (constraint.minDomains !== undefined && constraint.minDomains !== null) {
      integer(constraint.minDomains, join(at, 'minDomains'), report, 1);
      if (constraint.whenUnsatisfiable !== 'DoNotSchedule') {
        report(
          join(at, 'minDomains'),
          `Invalid value: ${show(constraint.minDomains)}: can only use minDomains if whenUnsatisfiable=DoNotSchedule`,
        );
      }
    }
    checkLabelSelector(constraint.labelSelector, join(at, 'labelSelector'), report);
    for (const policy of ['nodeAffinityPolicy', 'nodeTaintsPolicy'] as const) {
      if (constraint[policy] !== undefined) oneOf(constraint[policy], ['Honor', 'Ignore'], join(at, policy), report);
    }
    strings(constraint.matchLabelKeys, join(at, 'matchLabelKeys'), report);
    if (keyOk && whenOk) {
      const pair = `${constraint.topologyKey}\u0000${constraint.whenUnsatisfiable}`;
      if (seen.has(pair))
        report(at, `Duplicate value: {${show(constraint.topologyKey)}, ${show(constraint.whenUnsatisfiable)}}`);
      seen.add(pair);
    }
  });
}
