// Validation of Karpenter v1 objects: the OpenAPI schemas and CEL rules of the upstream CRDs
// (kubernetes-sigs/karpenter and aws/karpenter-provider-aws v1.14.1) plus the webhook-era runtime
// checks, written as schema tables. Messages are upstream's verbatim wherever upstream has one.
// Every issue is returned at once with its field path; unknown fields are errors, as with
// `kubectl apply --validate=strict`.

import { parseDurationSeconds } from '../duration';
import { ALIAS_FAMILIES } from './amifamily';
import { parseCron } from './cron';
import {
  LABEL_NODEPOOL,
  type LabelKeyContext,
  labelRestrictions,
  qualifiedNameMessages,
  WELL_KNOWN_VALUES,
} from './labels';
import {
  any,
  array,
  asObjects,
  asString,
  boolean,
  cel,
  check,
  enumOf,
  type FieldIssue,
  has,
  indexPath,
  integer,
  isObject,
  type JsonObject,
  joinPath,
  keyPath,
  map,
  type ObjectSchema,
  object,
  quantity,
  type Rule,
  rule,
  type Schema,
  string,
} from './schema';
import { NODECLAIM_API_VERSION, NODECLASS_API_VERSION, NODEPOOL_API_VERSION } from './types';

// ---------------------------------------------------------------------------------------------
// Patterns (upstream CRD patterns, anchored where upstream relied on an unanchored match).

const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_MESSAGE =
  "must be a qualified name: an optional DNS subdomain and '/', then alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric";
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_VALUE_MESSAGE =
  "must be empty or alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (at most 63 characters)";
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const EXPIRE_AFTER_PATTERN = /^(([0-9]+(s|m|h))+|Never)$/;
export const TERMINATION_GRACE_PERIOD_PATTERN = /^([0-9]+(s|m|h))+$/;
export const BUDGET_DURATION_PATTERN = /^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$/;
export const BUDGET_NODES_PATTERN = /^((100|[0-9]{1,2})%|[0-9]+)$/;
const EVICTION_THRESHOLD =
  /^((\d{1,2}(\.\d{1,2})?|100(\.0{1,2})?)%||[+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$/;
const INT32_MAX = 2 ** 31 - 1;

// ---------------------------------------------------------------------------------------------
// Shared pieces

const metadataSchema = object(
  {
    name: string({
      maxLength: 253,
      pattern: DNS_SUBDOMAIN,
      patternMessage:
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
    }),
    labels: map(string()),
    annotations: map(string()),
    // Fields a copy from `kubectl get -o yaml` carries; the API server owns them, so they are not checked.
    namespace: any(),
    uid: any(),
    generation: any(),
    resourceVersion: any(),
    creationTimestamp: any(),
    deletionTimestamp: any(),
    deletionGracePeriodSeconds: any(),
    finalizers: any(),
    ownerReferences: any(),
    managedFields: any(),
    generateName: any(),
    selfLink: any(),
  },
  { required: ['name'] },
);

function topLevel(apiVersion: string, kind: string, spec: Schema): ObjectSchema {
  return object(
    {
      apiVersion: enumOf([apiVersion]),
      kind: enumOf([kind]),
      metadata: metadataSchema,
      spec,
      // Status is written by controllers; a pasted status is ignored, not judged.
      status: any(),
    },
    { required: ['apiVersion', 'kind', 'metadata', 'spec'] },
  );
}

/** A requirement key's label-domain rules, each with its CEL twin on the key (`self`). */
const labelKeyRules = (context: LabelKeyContext): Rule<string>[] =>
  labelRestrictions(context).map((r) => {
    const check = rule(r.message, (key: string) => !r.restricts(key));
    return cel(check, { rule: r.cel('self'), message: r.message });
  });

/**
 * A labels map's label-domain rules, on the map (OpenAPI has no schema for map keys): each key that
 * fails is reported at `path[key]`; the CEL twin is `self.all(x, …)` over the keys.
 */
const labelMapRules = (context: LabelKeyContext): Rule<JsonObject>[] =>
  labelRestrictions(context).map((r) => {
    const check: Rule<JsonObject> = (labels, path) =>
      Object.keys(labels)
        .filter((key) => r.restricts(key))
        .map((key) => ({ path: keyPath(path, key), message: r.message }));
    return cel(check, { rule: `self.all(x, ${r.cel('x')})`, message: r.message });
  });

/**
 * Karpenter's runtime validation (NodePool.RuntimeValidate) runs IsQualifiedName on label, taint and
 * requirement keys: the CRD pattern alone admits a prefix past 253 or a name past 63 characters.
 */
const qualifiedNameRule: Rule<string> = (key, path) =>
  // A key the pattern refuses is already reported; what remains are the length limits.
  QUALIFIED_NAME.test(key)
    ? qualifiedNameMessages(key).map((message) => ({
        path,
        message: `Invalid value: ${JSON.stringify(key)}: ${message}`,
      }))
    : [];

function taintSchema(runtime: boolean): Schema {
  return object(
    {
      key: string({
        minLength: 1,
        pattern: QUALIFIED_NAME,
        patternMessage: QUALIFIED_NAME_MESSAGE,
        rules: runtime ? [qualifiedNameRule] : [],
      }),
      value: string({
        pattern: QUALIFIED_NAME,
        patternMessage: QUALIFIED_NAME_MESSAGE,
        rules: runtime ? [(value, path) => (value === '' ? [] : qualifiedNameRule(value, path))] : [],
      }),
      effect: enumOf(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
      timeAdded: string(),
    },
    { required: ['key', 'effect'] },
  );
}

const COMPARISON_OPERATORS = ['Gt', 'Lt', 'Gte', 'Lte'];

/** CEL: the requirement's operator is one of these. */
const operatorIn = (operators: readonly string[]) => operators.map((o) => `self.operator == '${o}'`).join(' || ');

// Upstream writes these on the requirements list (`self.all(x, …)`); here they sit on each requirement
// (`self` is the requirement), which refuses the same objects with the same messages.
const requirementRules: Rule<JsonObject>[] = [
  // Upstream's `x.values.size() != 0`; `has()` first, as the Go client leaves an empty list out.
  cel(
    rule("requirements with operator 'In' must have a value defined", (r) =>
      r.operator === 'In' ? Array.isArray(r.values) && r.values.length > 0 : true,
    ),
    {
      rule: "self.operator == 'In' ? (has(self.values) && self.values.size() != 0) : true",
      message: "requirements with operator 'In' must have a value defined",
    },
  ),
  cel(
    rule("requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value", (r) => {
      if (!COMPARISON_OPERATORS.includes(String(r.operator))) return true;
      return Array.isArray(r.values) && r.values.length === 1 && /^[0-9]+$/.test(String(r.values[0]));
    }),
    {
      rule: `(${operatorIn(COMPARISON_OPERATORS)}) ? (has(self.values) && self.values.size() == 1 && self.values[0].matches('^[0-9]+$')) : true`,
      message: "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
    },
  ),
  cel(
    rule("requirements with 'minValues' must have at least that many values specified in the 'values' field", (r) => {
      if (r.operator !== 'In' || typeof r.minValues !== 'number') return true;
      return Array.isArray(r.values) && r.values.length >= r.minValues;
    }),
    {
      rule: "(self.operator == 'In' && has(self.minValues)) ? (has(self.values) && self.values.size() >= self.minValues) : true",
      message: "requirements with 'minValues' must have at least that many values specified in the 'values' field",
    },
  ),
];

/**
 * NodePool runtime checks (nodepool_validation.go, validateWellKnownValues): the NodePool label is
 * Karpenter's to set, and a key with known values must name enough of them for some node to match.
 * Karpenter applies neither to NodeClaims.
 */
const nodePoolRequirementRules: Rule<JsonObject>[] = [
  rule(`invalid key: "${LABEL_NODEPOOL}" in requirements, restricted`, (r) => r.key !== LABEL_NODEPOOL, 'key'),
  (r, path) => {
    const known = WELL_KNOWN_VALUES[String(r.key)];
    if (!known || r.operator !== 'In' || !Array.isArray(r.values) || r.values.length === 0) return [];
    const valid = r.values.filter((v) => known.includes(String(v)));
    const quoted = known.map((v) => `"${v}"`).join(', ');
    if (valid.length === 0) {
      return [
        {
          path: joinPath(path, 'values'),
          message: `key ${String(r.key)} must include at least one of the known values ${quoted}; no node could match ${JSON.stringify(r.values)}`,
        },
      ];
    }
    if (typeof r.minValues === 'number' && valid.length < r.minValues) {
      return [
        {
          path: joinPath(path, 'values'),
          message: `key ${String(r.key)} has ${valid.length} known value(s) among ${JSON.stringify(r.values)}, fewer than minValues ${r.minValues}; known values are ${quoted}`,
        },
      ];
    }
    return [];
  },
];

function requirementSchema(nodePool: boolean): Schema {
  return object(
    {
      key: string({
        maxLength: 316,
        pattern: QUALIFIED_NAME,
        patternMessage: QUALIFIED_NAME_MESSAGE,
        rules: [...labelKeyRules({ nodePool }), ...(nodePool ? [qualifiedNameRule] : [])],
      }),
      operator: enumOf(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte']),
      values: array(string({ maxLength: 63, pattern: LABEL_VALUE, patternMessage: LABEL_VALUE_MESSAGE })),
      minValues: integer({ minimum: 1, maximum: 50 }),
    },
    {
      required: ['key', 'operator'],
      rules: nodePool ? [...requirementRules, ...nodePoolRequirementRules] : requirementRules,
    },
  );
}

const notEmpty = (field: string): Rule<string> =>
  cel(
    rule(`${field} may not be empty`, (v: string) => v !== ''),
    { rule: "self != ''", message: `${field} may not be empty` },
  );
const nonEmpty = (field: string): Schema => string({ rules: [notEmpty(field)] });

const nodeClassRefSchema = object(
  {
    group: string({ pattern: /^[^/]*$/, rules: [notEmpty('group')] }),
    kind: nonEmpty('kind'),
    name: nonEmpty('name'),
  },
  { required: ['group', 'kind', 'name'] },
);

/** Runtime rule: a key+effect pair may appear once across taints and startupTaints. */
const uniqueTaints: Rule<JsonObject> = (spec, path) => {
  const seen = new Set<string>();
  const issues: FieldIssue[] = [];
  for (const field of ['taints', 'startupTaints']) {
    asObjects(spec[field]).forEach((taint, index) => {
      const id = `${String(taint.key)}=${String(taint.effect)}`;
      if (seen.has(id)) {
        issues.push({
          path: indexPath(joinPath(path, field), index),
          message: `duplicate taint Key/Effect pair ${id}`,
        });
      }
      seen.add(id);
    });
  }
  return issues;
};

/** The claim spec fields; `nodePool` adds the checks Karpenter's NodePool runtime validation makes. */
function claimSpecProperties(nodePool: boolean): Record<string, Schema> {
  return {
    taints: array(taintSchema(nodePool)),
    startupTaints: array(taintSchema(nodePool)),
    requirements: array(requirementSchema(nodePool), { maxItems: 100 }),
    nodeClassRef: nodeClassRefSchema,
    expireAfter: string({
      pattern: EXPIRE_AFTER_PATTERN,
      patternMessage: 'must be a duration of whole hours, minutes or seconds (e.g. 720h, 90m) or Never',
    }),
    terminationGracePeriod: string({
      pattern: TERMINATION_GRACE_PERIOD_PATTERN,
      patternMessage: 'must be a duration of whole hours, minutes or seconds (e.g. 48h, 30m)',
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// NodePool

const budgetSchema = object(
  {
    nodes: string({
      pattern: BUDGET_NODES_PATTERN,
      patternMessage: 'must be a node count (e.g. 5) or a percentage from 0% to 100% (e.g. 10%)',
    }),
    schedule: string({
      rules: [
        (schedule, path) => {
          const parsed = parseCron(schedule);
          return parsed.ok
            ? []
            : [{ path, message: `Invalid value: "${schedule}": invalid cron schedule: ${parsed.error}` }];
        },
      ],
    }),
    duration: string({
      pattern: BUDGET_DURATION_PATTERN,
      patternMessage: 'must be whole hours and/or minutes (e.g. 8h, 30m, 1h30m); cron has no seconds',
    }),
    reasons: array(enumOf(['Underutilized', 'Empty', 'Drifted'])),
  },
  {
    rules: [
      cel(
        rule<JsonObject>("'schedule' must be set with 'duration'", (b) => has(b, 'schedule') === has(b, 'duration')),
        { rule: 'has(self.schedule) == has(self.duration)', message: "'schedule' must be set with 'duration'" },
      ),
    ],
  },
);

const nodePoolSpecSchema = object(
  {
    template: object(
      {
        metadata: object({
          labels: map(string({ maxLength: 63, pattern: LABEL_VALUE, patternMessage: LABEL_VALUE_MESSAGE }), {
            maxProperties: 100,
            keys: string({
              pattern: QUALIFIED_NAME,
              patternMessage: QUALIFIED_NAME_MESSAGE,
              rules: [qualifiedNameRule],
            }),
            rules: labelMapRules({ nodePool: true }),
          }),
          annotations: map(string()),
        }),
        spec: object(claimSpecProperties(true), { required: ['nodeClassRef', 'requirements'], rules: [uniqueTaints] }),
      },
      { required: ['spec'] },
    ),
    disruption: object(
      {
        consolidateAfter: string({
          pattern: EXPIRE_AFTER_PATTERN,
          patternMessage: 'must be a duration of whole hours, minutes or seconds (e.g. 0s, 30s, 5m) or Never',
        }),
        consolidationPolicy: enumOf(['WhenEmpty', 'WhenEmptyOrUnderutilized', 'Balanced'], {
          removed: {
            WhenUnderutilized:
              'Unsupported value: "WhenUnderutilized": v1 renamed it to WhenEmptyOrUnderutilized (karpless convert does this for you)',
          },
        }),
        budgets: array(budgetSchema, { maxItems: 50 }),
      },
      { required: ['consolidateAfter'] },
    ),
    limits: map(quantity()),
    weight: integer({ minimum: 1, maximum: 100 }),
    replicas: integer({ minimum: 0 }),
  },
  {
    required: ['template'],
    rules: [
      rule(
        "only 'limits.nodes' is supported on static NodePools",
        (s) => !has(s, 'replicas') || !isObject(s.limits) || Object.keys(s.limits).every((k) => k === 'nodes'),
        'limits',
      ),
      rule("'weight' is not supported on static NodePools", (s) => !has(s, 'replicas') || !has(s, 'weight'), 'weight'),
    ],
  },
);

const nodePoolSchema = topLevel(NODEPOOL_API_VERSION, 'NodePool', nodePoolSpecSchema);

// ---------------------------------------------------------------------------------------------
// NodeClaim

const nodeClaimSchema = topLevel(
  NODECLAIM_API_VERSION,
  'NodeClaim',
  object(
    { ...claimSpecProperties(false), resources: object({ requests: map(quantity()) }) },
    { required: ['nodeClassRef', 'requirements'], rules: [uniqueTaints] },
  ),
);

// ---------------------------------------------------------------------------------------------
// EC2NodeClass

const selectorTags = map(string(), {
  maxProperties: 20,
  rules: [
    cel(
      rule<JsonObject>("empty tag keys or values aren't supported", (tags) =>
        Object.entries(tags).every(([k, v]) => k !== '' && v !== ''),
      ),
      { rule: "self.all(k, k != '' && self[k] != '')", message: "empty tag keys or values aren't supported" },
    ),
  ],
});

/**
 * "At least one of" for each term. Upstream states it on the list (`self.all(...)`); reporting it on the
 * term says which one.
 */
function eachTermHasOneOf(fields: readonly string[]): Rule<unknown[]> {
  const message = `expected at least one, got none, [${fields.map((f) => `'${f}'`).join(', ')}]`;
  return cel(
    (terms, path) =>
      terms.flatMap((term, index) =>
        isObject(term) && !fields.some((f) => has(term, f)) ? [{ path: indexPath(path, index), message }] : [],
      ),
    { rule: `self.all(x, ${hasAny(fields)})`, message },
  );
}

/** CEL: `has(x.a) || has(x.b)`, over the term `x`. */
function hasAny(fields: readonly string[]): string {
  return fields.map((f) => `has(x.${f})`).join(' || ');
}

/**
 * Upstream's subnet and security-group exclusivity rules are written `!self.all(x, ...)`, so they fail
 * only when *every* term combines the field with others. We keep that (valid upstream input stays
 * valid) and warn about each combining term, because the other fields of such a term are ignored.
 */
function exclusiveWithAllQuirk(field: string, others: readonly string[], message: string): Rule<unknown[]> {
  return cel(exclusiveWithAllQuirkCheck(field, others, message), {
    rule: `!self.all(x, has(x.${field}) && (${hasAny(others)}))`,
    message,
  });
}

function exclusiveWithAllQuirkCheck(field: string, others: readonly string[], message: string): Rule<unknown[]> {
  return (terms, path) => {
    const combines = (term: unknown) => isObject(term) && has(term, field) && others.some((o) => has(term, o));
    if (terms.length > 0 && terms.every(combines)) return [{ path, message }];
    return terms.flatMap((term, index) =>
      combines(term)
        ? [
            {
              path: indexPath(path, index),
              severity: 'warning' as const,
              message: `${message} (upstream accepts this term only because its rule fails when every term combines '${field}'; the other fields are ignored when '${field}' is set)`,
            },
          ]
        : [],
    );
  };
}

/** Per-term exclusivity (upstream `!self.exists(...)`): a term with `field` may hold nothing of `others`. */
function exclusivePerTerm(field: string, others: readonly string[], message: string): Rule<unknown[]> {
  return cel(
    (terms, path) =>
      terms.flatMap((term, index) =>
        isObject(term) && has(term, field) && others.some((o) => has(term, o))
          ? [{ path: indexPath(path, index), message }]
          : [],
      ),
    { rule: `!self.exists(x, has(x.${field}) && (${hasAny(others)}))`, message },
  );
}

const UBUNTU_MIGRATION =
  'Ubuntu is not supported in Karpenter v1 (removed in v1.0.0). Migrate by pinning the Ubuntu AMI: either amiFamily: Custom with amiSelectorTerms: [{id: ami-...}] and your own userData, or amiFamily: AL2 (its bootstrap.sh userData works with the EKS Ubuntu AMIs) with amiSelectorTerms: [{id: ami-...}]';

/** The family part of an alias (text before the first `@`), as upstream's `find('^[^@]+')`. */
export function aliasFamily(alias: string): string {
  return alias.split('@')[0] ?? '';
}

const aliasSchema = string({
  maxLength: 30,
  rules: [
    cel(
      rule("'alias' is improperly formatted, must match the format 'family@version'", (alias: string) =>
        /^[a-zA-Z0-9]+@.+$/.test(alias),
      ),
      {
        rule: "self.matches('^[a-zA-Z0-9]+@.+$')",
        message: "'alias' is improperly formatted, must match the format 'family@version'",
      },
    ),
    (alias, path) => {
      const family = aliasFamily(alias);
      if (!/^[a-zA-Z0-9]+@.+$/.test(alias) || family in ALIAS_FAMILIES) return [];
      const message =
        "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'";
      return [{ path, message: family.toLowerCase() === 'ubuntu' ? `${message}. ${UBUNTU_MIGRATION}` : message }];
    },
    rule("windows families may only specify version 'latest'", (alias: string) => {
      const [family = '', version] = alias.split('@');
      return !family.startsWith('windows') || version === 'latest';
    }),
  ],
});

const amiSelectorTermsSchema = array(
  object({
    alias: aliasSchema,
    tags: selectorTags,
    id: string({ pattern: /^ami-[0-9a-z]+$/ }),
    name: string(),
    owner: string(),
    ssmParameter: string(),
  }),
  {
    minItems: 1,
    maxItems: 30,
    rules: [
      eachTermHasOneOf(['tags', 'id', 'name', 'alias', 'ssmParameter']),
      exclusivePerTerm(
        'id',
        ['alias', 'tags', 'name', 'owner'],
        "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
      ),
      exclusivePerTerm(
        'alias',
        ['id', 'tags', 'name', 'owner'],
        "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
      ),
      cel(
        rule(
          "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
          (terms) => !(terms.some((t) => isObject(t) && has(t, 'alias')) && terms.length !== 1),
        ),
        {
          rule: '!(self.exists(x, has(x.alias)) && self.size() != 1)',
          message: "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
        },
      ),
    ],
  },
);

const RESERVED_KEYS = ['cpu', 'memory', 'ephemeral-storage', 'pid'];
const EVICTION_SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
];
const quoteList = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(',')}]`;

function reservedMap(field: string): Schema {
  return map(
    string({
      pattern:
        /^[+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/,
      patternMessage: 'must be a resource quantity (examples: 500m, 1Gi, 100)',
      rules: [rule(`${field} value cannot be a negative resource quantity`, (v: string) => !v.startsWith('-'))],
    }),
    {
      keys: string({
        rules: [
          rule(`valid keys for ${field} are ${quoteList(RESERVED_KEYS)}`, (k: string) => RESERVED_KEYS.includes(k)),
        ],
      }),
    },
  );
}

function evictionMap(field: string, value: Schema): Schema {
  return map(value, {
    keys: string({
      rules: [
        rule(`valid keys for ${field} are ${quoteList(EVICTION_SIGNALS)}`, (k: string) => EVICTION_SIGNALS.includes(k)),
      ],
    }),
  });
}

const evictionThreshold = string({
  pattern: EVICTION_THRESHOLD,
  patternMessage: 'must be a percentage up to 100% with at most 2 decimals (e.g. 10%) or a quantity (e.g. 500Mi)',
});

/** evictionSoft and evictionSoftGracePeriod must name the same signals, reported per key. */
function matchingKeys(from: string, to: string, message: string): Rule<JsonObject> {
  return (kubelet, path) => {
    const source = kubelet[from];
    if (!isObject(source)) return [];
    const target = isObject(kubelet[to]) ? (kubelet[to] as JsonObject) : {};
    return Object.keys(source)
      .filter((key) => !(key in target))
      .map((key) => ({ path: keyPath(joinPath(path, from), key), message }));
  };
}

const kubeletSchema = object(
  {
    clusterDNS: array(string()),
    maxPods: integer({ minimum: 0, maximum: INT32_MAX }),
    podsPerCore: integer({ minimum: 0, maximum: INT32_MAX }),
    systemReserved: reservedMap('systemReserved'),
    kubeReserved: reservedMap('kubeReserved'),
    evictionHard: evictionMap('evictionHard', evictionThreshold),
    evictionSoft: evictionMap('evictionSoft', evictionThreshold),
    evictionSoftGracePeriod: evictionMap(
      'evictionSoftGracePeriod',
      string({
        rules: [
          rule('must be a duration (e.g. 1m30s, 90s, 2m)', (v: string) => {
            const seconds = parseDurationSeconds(v);
            return seconds !== undefined && seconds >= 0;
          }),
        ],
      }),
    ),
    evictionMaxPodGracePeriod: integer({ minimum: -(2 ** 31), maximum: INT32_MAX }),
    imageGCHighThresholdPercent: integer({ minimum: 0, maximum: 100 }),
    imageGCLowThresholdPercent: integer({ minimum: 0, maximum: 100 }),
    cpuCFSQuota: boolean(),
  },
  {
    rules: [
      rule(
        'imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent',
        (k) =>
          typeof k.imageGCHighThresholdPercent !== 'number' ||
          typeof k.imageGCLowThresholdPercent !== 'number' ||
          k.imageGCHighThresholdPercent > k.imageGCLowThresholdPercent,
        'imageGCHighThresholdPercent',
      ),
      matchingKeys(
        'evictionSoft',
        'evictionSoftGracePeriod',
        'evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod',
      ),
      matchingKeys(
        'evictionSoftGracePeriod',
        'evictionSoft',
        'evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft',
      ),
    ],
  },
);

const VOLUME_SIZE_LIMITS: Readonly<Record<string, number>> = { Gi: 59000, G: 64000, Ti: 58, T: 64 };
const IOPS_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  gp3: [3000, 16000],
  io1: [100, 64000],
  io2: [100, 64000],
};

const ebsSchema = object(
  {
    deleteOnTermination: boolean(),
    encrypted: boolean(),
    iops: integer({ minimum: 0 }),
    kmsKeyID: string(),
    snapshotID: string(),
    throughput: integer({ minimum: 0 }),
    volumeInitializationRate: integer({ minimum: 100, maximum: 300 }),
    volumeSize: string({
      rules: [
        (size, path) => {
          const match = /^([1-9][0-9]*)(Gi|G|Ti|T)$/.exec(size);
          if (match !== null && Number(match[1]) <= (VOLUME_SIZE_LIMITS[match[2] ?? ''] ?? 0)) return [];
          const message = `Invalid value: "${size}": must be a whole number of Gi (1-59000), G (1-64000), Ti (1-58) or T (1-64), e.g. 100Gi`;
          return [{ path, message }];
        },
      ],
    }),
    volumeType: enumOf(['standard', 'io1', 'io2', 'gp2', 'sc1', 'st1', 'gp3']),
  },
  {
    rules: [
      rule('snapshotID or volumeSize must be defined', (e) => has(e, 'snapshotID') || has(e, 'volumeSize')),
      rule(
        'snapshotID must be set when volumeInitializationRate is set',
        (e) => !has(e, 'volumeInitializationRate') || has(e, 'snapshotID'),
        'volumeInitializationRate',
      ),
      (e, path) => {
        // EC2 ranges per volume type; only checked when the type is explicit (EC2's own default differs).
        const type = asString(e.volumeType);
        if (type === undefined || typeof e.iops !== 'number') return [];
        const range = IOPS_RANGES[type];
        const message = range
          ? e.iops < range[0] || e.iops > range[1]
            ? `iops for ${type} volumes must be between ${range[0]} and ${range[1]}`
            : undefined
          : `iops is only supported for io1, io2 and gp3 volumes, not ${type}`;
        return message ? [{ path: joinPath(path, 'iops'), message }] : [];
      },
      (e, path) => {
        const type = asString(e.volumeType);
        if (type === undefined || typeof e.throughput !== 'number') return [];
        if (type !== 'gp3')
          return [
            {
              path: joinPath(path, 'throughput'),
              message: `throughput is only supported for gp3 volumes, not ${type}`,
            },
          ];
        if (e.throughput < 125 || e.throughput > 1000) {
          return [
            { path: joinPath(path, 'throughput'), message: 'throughput for gp3 volumes must be between 125 and 1000' },
          ];
        }
        return [];
      },
    ],
  },
);

const networkInterfacesRules: Rule<unknown[]>[] = [
  // The CRD rule admits an empty list (EC2 then attaches its default primary interface).
  rule(
    'networkInterfaces must contain the primary network interface (networkCardIndex 0, deviceIndex 0, interfaceType interface)',
    (nics) =>
      nics.length === 0 ||
      asObjects(nics).some((n) => n.networkCardIndex === 0 && n.deviceIndex === 0 && n.interfaceType === 'interface'),
  ),
  (nics, path) => {
    const seen = new Set<string>();
    const efaCards = new Set<unknown>();
    const issues: FieldIssue[] = [];
    nics.forEach((nic, index) => {
      if (!isObject(nic)) return;
      const pair = `${String(nic.networkCardIndex)}/${String(nic.deviceIndex)}`;
      if (seen.has(pair)) {
        issues.push({ path: indexPath(path, index), message: 'networkCardIndex and deviceIndex pairs must be unique' });
      }
      seen.add(pair);
      if (nic.interfaceType === 'efa-only') {
        if (efaCards.has(nic.networkCardIndex)) {
          issues.push({ path: indexPath(path, index), message: 'at most one efa-only interface per networkCardIndex' });
        }
        efaCards.add(nic.networkCardIndex);
      }
    });
    return issues;
  },
];

export const RESTRICTED_TAGS: readonly { matches: (key: string) => boolean; label: string }[] = [
  { matches: (k) => k === 'eks:eks-cluster-name', label: 'eks:eks-cluster-name' },
  { matches: (k) => k.startsWith('kubernetes.io/cluster'), label: 'kubernetes.io/cluster/' },
  { matches: (k) => k === 'karpenter.sh/nodepool', label: 'karpenter.sh/nodepool' },
  { matches: (k) => k === 'karpenter.sh/nodeclaim', label: 'karpenter.sh/nodeclaim' },
  { matches: (k) => k === 'karpenter.k8s.aws/ec2nodeclass', label: 'karpenter.k8s.aws/ec2nodeclass' },
];

const nodeClassTags = map(string(), {
  keys: string({
    rules: [
      rule("empty tag keys aren't supported", (k: string) => k !== ''),
      (key, path) =>
        RESTRICTED_TAGS.filter((t) => t.matches(key)).map((t) => ({
          path,
          message: `tag contains a restricted tag matching ${t.label}`,
        })),
    ],
  }),
});

/** One CEL rule per alias family: amiFamily, when set, must be that family or Custom. */
const aliasFamilyRules: Rule<JsonObject>[] = Object.entries(ALIAS_FAMILIES).map(([alias, family]) => {
  const article = family === 'AL2' || family === 'AL2023' ? 'an' : 'a';
  return rule(
    `if set, amiFamily must be '${family}' or 'Custom' when using ${article} ${family} alias`,
    (spec) =>
      !has(spec, 'amiFamily') ||
      !asObjects(spec.amiSelectorTerms).some((t) => typeof t.alias === 'string' && aliasFamily(t.alias) === alias) ||
      spec.amiFamily === 'Custom' ||
      spec.amiFamily === family,
    'amiFamily',
  );
});

const ec2NodeClassSpecSchema = object(
  {
    subnetSelectorTerms: array(object({ tags: selectorTags, id: string({ pattern: /^subnet-[0-9a-z]+$/ }) }), {
      maxItems: 30,
      rules: [
        rule('subnetSelectorTerms cannot be empty', (terms) => terms.length !== 0),
        eachTermHasOneOf(['tags', 'id']),
        exclusiveWithAllQuirk(
          'id',
          ['tags'],
          "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",
        ),
      ],
    }),
    securityGroupSelectorTerms: array(
      object({ tags: selectorTags, id: string({ pattern: /^sg-[0-9a-z]+$/ }), name: string() }),
      {
        maxItems: 30,
        rules: [
          rule('securityGroupSelectorTerms cannot be empty', (terms) => terms.length !== 0),
          eachTermHasOneOf(['tags', 'id', 'name']),
          exclusiveWithAllQuirk(
            'id',
            ['tags', 'name'],
            "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
          ),
          exclusiveWithAllQuirk(
            'name',
            ['tags', 'id'],
            "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
          ),
        ],
      },
    ),
    capacityReservationSelectorTerms: array(
      object({
        tags: selectorTags,
        id: string({ pattern: /^cr-[0-9a-z]+$/ }),
        ownerID: string({ pattern: /^[0-9]{12}$/ }),
        instanceMatchCriteria: enumOf(['open', 'targeted']),
      }),
      {
        maxItems: 30,
        rules: [
          eachTermHasOneOf(['tags', 'id', 'instanceMatchCriteria']),
          exclusivePerTerm(
            'id',
            ['tags', 'ownerID', 'instanceMatchCriteria'],
            "'id' is mutually exclusive, cannot be set along with tags, ownerID or instanceMatchCriteria in a capacity reservation selector term",
          ),
        ],
      },
    ),
    placementGroupSelector: object(
      { name: string({ minLength: 1 }), id: string({ pattern: /^pg-[0-9a-z]+$/ }) },
      { rules: [rule("must specify exactly one of ['name', 'id']", (p) => has(p, 'name') !== has(p, 'id'))] },
    ),
    associatePublicIPAddress: boolean(),
    ipPrefixCount: integer({ minimum: 0 }),
    amiSelectorTerms: amiSelectorTermsSchema,
    amiFamily: enumOf(['AL2', 'AL2023', 'Bottlerocket', 'Custom', 'Windows2019', 'Windows2022', 'Windows2025'], {
      removed: { Ubuntu: UBUNTU_MIGRATION },
    }),
    userData: string(),
    role: string({ rules: [rule('role cannot be empty', (v: string) => v !== '')] }),
    instanceProfile: string({ rules: [rule('instanceProfile cannot be empty', (v: string) => v !== '')] }),
    tags: nodeClassTags,
    kubelet: kubeletSchema,
    blockDeviceMappings: array(object({ deviceName: string(), ebs: ebsSchema, rootVolume: boolean() }), {
      maxItems: 50,
      rules: [
        rule(
          'must have only one blockDeviceMappings with rootVolume',
          (bdms) => asObjects(bdms).filter((b) => b.rootVolume === true).length <= 1,
        ),
      ],
    }),
    instanceStorePolicy: enumOf(['RAID0']),
    networkInterfaces: array(
      object(
        {
          networkCardIndex: integer({ minimum: 0 }),
          deviceIndex: integer({ minimum: 0 }),
          interfaceType: enumOf(['interface', 'efa-only']),
        },
        { required: ['networkCardIndex', 'deviceIndex', 'interfaceType'] },
      ),
      { maxItems: 150, rules: networkInterfacesRules },
    ),
    detailedMonitoring: boolean(),
    metadataOptions: object({
      httpEndpoint: enumOf(['enabled', 'disabled']),
      httpProtocolIPv6: enumOf(['enabled', 'disabled']),
      httpPutResponseHopLimit: integer({ minimum: 1, maximum: 64 }),
      httpTokens: enumOf(['required', 'optional']),
    }),
    connectionTracking: object(
      {
        tcpEstablishedTimeout: integer({ minimum: 60, maximum: 432000 }),
        udpStreamTimeout: integer({ minimum: 60, maximum: 180 }),
        udpTimeout: integer({ minimum: 30, maximum: 60 }),
      },
      {
        rules: [
          rule(
            "expected at least one, got none, ['tcpEstablishedTimeout', 'udpStreamTimeout', 'udpTimeout']",
            (c) => has(c, 'tcpEstablishedTimeout') || has(c, 'udpStreamTimeout') || has(c, 'udpTimeout'),
          ),
        ],
      },
    ),
    context: string(),
    cpuOptions: object({ nestedVirtualization: enumOf(['enabled', 'disabled']) }),
  },
  {
    required: ['subnetSelectorTerms', 'securityGroupSelectorTerms', 'amiSelectorTerms'],
    rules: [
      rule(
        "must specify exactly one of ['role', 'instanceProfile']",
        (s) => has(s, 'role') !== has(s, 'instanceProfile'),
      ),
      ...aliasFamilyRules,
      rule(
        'must specify amiFamily if amiSelectorTerms does not contain an alias',
        (s) => asObjects(s.amiSelectorTerms).some((t) => has(t, 'alias')) || has(s, 'amiFamily'),
        'amiFamily',
      ),
    ],
  },
);

const ec2NodeClassSchema = topLevel(NODECLASS_API_VERSION, 'EC2NodeClass', ec2NodeClassSpecSchema);

// ---------------------------------------------------------------------------------------------
// Entry points

/** Every issue of a karpenter.sh/v1 NodePool, paths from the object root (`spec.weight`). */
export function validateNodePool(object: unknown): FieldIssue[] {
  return check(nodePoolSchema, object, '');
}

/** Every issue of a karpenter.sh/v1 NodeClaim. */
export function validateNodeClaim(object: unknown): FieldIssue[] {
  return check(nodeClaimSchema, object, '');
}

/** Every issue of a karpenter.k8s.aws/v1 EC2NodeClass. */
export function validateEC2NodeClass(object: unknown): FieldIssue[] {
  return check(ec2NodeClassSchema, object, '');
}

export const V1_VALIDATORS: Readonly<Record<string, { apiVersion: string; validate: (o: unknown) => FieldIssue[] }>> = {
  NodePool: { apiVersion: NODEPOOL_API_VERSION, validate: validateNodePool },
  NodeClaim: { apiVersion: NODECLAIM_API_VERSION, validate: validateNodeClaim },
  EC2NodeClass: { apiVersion: NODECLASS_API_VERSION, validate: validateEC2NodeClass },
};

/** The schema tables themselves, for the CRDs generated from them (crds.ts). */
export const V1_SCHEMAS: Readonly<Record<'NodePool' | 'NodeClaim' | 'EC2NodeClass', ObjectSchema>> = {
  NodePool: nodePoolSchema,
  NodeClaim: nodeClaimSchema,
  EC2NodeClass: ec2NodeClassSchema,
};
