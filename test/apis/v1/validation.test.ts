import { describe, expect, it } from 'vitest';
import { V1_VALIDATORS, validateEC2NodeClass, validateNodePool } from '../../../shared/apis/v1/validation';
import { type Json, nodeClaim, nodeClass, nodePool, set, setAll } from './builders';

type Pairs = readonly (readonly [string, unknown])[];

interface Case {
  rule: string;
  base: () => Json;
  /** Changes that keep the object valid while exercising the rule's accepted side. */
  valid: Pairs;
  invalid: Pairs;
  path: string;
  message: string;
}

const c = (rule: string, base: () => Json, valid: Pairs, invalid: Pairs, path: string, message: string): Case => ({
  rule,
  base,
  valid,
  invalid,
  path,
  message,
});

const NP = 'spec.template.spec';
const REQ = `${NP}.requirements[0]`;
const many = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));
const manyTags = (n: number) => Object.fromEntries(many(n, (i) => [`k${i}`, 'v'] as const));

function validate(object: Json) {
  const validator = V1_VALIDATORS[String(object.kind)];
  if (!validator) throw new Error(`no validator for ${String(object.kind)}`);
  return validator.validate(object);
}
const errors = (object: Json) => validate(object).filter((issue) => issue.severity !== 'warning');

const nodePoolCases: Case[] = [
  c('unknown spec field', nodePool, [], [['spec.foo', 1]], 'spec.foo', 'unknown field "foo"'),
  c('unknown nested field', nodePool, [], [[`${REQ}.value`, 'x']], `${REQ}.value`, 'unknown field "value"'),
  c('unknown top-level field', nodePool, [['status', { nodes: 1 }]], [['extra', 1]], 'extra', 'unknown field "extra"'),
  c(
    'apiVersion',
    nodePool,
    [],
    [['apiVersion', 'karpenter.sh/v2']],
    'apiVersion',
    'Unsupported value: "karpenter.sh/v2": supported values: "karpenter.sh/v1"',
  ),
  c('metadata.name required', nodePool, [], [['metadata.name', undefined]], 'metadata.name', 'Required value'),
  c(
    'metadata.name is a DNS subdomain',
    nodePool,
    [['metadata.name', 'gpu.a-1']],
    [['metadata.name', 'Bad_Name']],
    'metadata.name',
    "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  ),
  c('spec.template required', nodePool, [], [['spec.template', undefined]], 'spec.template', 'Required value'),
  c('nodeClassRef required', nodePool, [], [[`${NP}.nodeClassRef`, undefined]], `${NP}.nodeClassRef`, 'Required value'),
  c(
    'requirements required',
    nodePool,
    [[`${NP}.requirements`, []]],
    [[`${NP}.requirements`, undefined]],
    `${NP}.requirements`,
    'Required value',
  ),
  c(
    'weight minimum 1',
    nodePool,
    [['spec.weight', 1]],
    [['spec.weight', 0]],
    'spec.weight',
    'Invalid value: 0: should be greater than or equal to 1',
  ),
  c(
    'weight maximum 100',
    nodePool,
    [['spec.weight', 100]],
    [['spec.weight', 101]],
    'spec.weight',
    'Invalid value: 101: should be less than or equal to 100',
  ),
  c(
    'weight is an integer',
    nodePool,
    [['spec.weight', 50]],
    [['spec.weight', 'high']],
    'spec.weight',
    'Invalid value: "high": must be of type integer, not string',
  ),
  c(
    'requirement operator enum',
    nodePool,
    [[`${REQ}.operator`, 'NotIn']],
    [[`${REQ}.operator`, 'Within']],
    `${REQ}.operator`,
    'Unsupported value: "Within": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"',
  ),
  c('requirement key required', nodePool, [], [[`${REQ}.key`, undefined]], `${REQ}.key`, 'Required value'),
  c(
    'operator In needs values',
    nodePool,
    [[`${REQ}.values`, ['on-demand']]],
    [[`${REQ}.values`, []]],
    REQ,
    "requirements with operator 'In' must have a value defined",
  ),
  c(
    'Gt needs a single positive integer',
    nodePool,
    [[REQ, { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] }]],
    [[REQ, { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['four'] }]],
    REQ,
    "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
  ),
  c(
    'Lte needs exactly one value',
    nodePool,
    [[REQ, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['64'] }]],
    [[REQ, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['8', '16'] }]],
    REQ,
    "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
  ),
  c(
    'Lt rejects a negative value',
    nodePool,
    [[REQ, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lt', values: ['0'] }]],
    [[REQ, { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lt', values: ['-1'] }]],
    REQ,
    "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
  ),
  c(
    'minValues at most the number of values',
    nodePool,
    [[`${REQ}.minValues`, 1]],
    [[`${REQ}.minValues`, 2]],
    REQ,
    "requirements with 'minValues' must have at least that many values specified in the 'values' field",
  ),
  c(
    'minValues minimum 1',
    nodePool,
    [[`${REQ}.minValues`, 1]],
    [[`${REQ}.minValues`, 0]],
    `${REQ}.minValues`,
    'Invalid value: 0: should be greater than or equal to 1',
  ),
  c(
    'minValues maximum 50',
    nodePool,
    [[REQ, { key: 'kubernetes.io/os', operator: 'NotIn', values: ['windows'], minValues: 50 }]],
    [[`${REQ}.minValues`, 51]],
    `${REQ}.minValues`,
    'Invalid value: 51: should be less than or equal to 50',
  ),
  c(
    'requirement key is a qualified name',
    nodePool,
    [[REQ, { key: 'example.com/team', operator: 'Exists' }]],
    [[REQ, { key: 'bad key!', operator: 'Exists' }]],
    `${REQ}.key`,
    "Invalid value: \"bad key!\": must be a qualified name: an optional DNS subdomain and '/', then alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric",
  ),
  c(
    'requirement key at most 316 characters',
    nodePool,
    // The longest qualified name: a 253-character prefix, '/', a 62-character name.
    [[REQ, { key: `${'a'.repeat(253)}/${'b'.repeat(62)}`, operator: 'Exists' }]],
    [[REQ, { key: 'a'.repeat(317), operator: 'Exists' }]],
    `${REQ}.key`,
    'Too long: may not be more than 316 bytes',
  ),
  c(
    'requirement key domain karpenter.sh',
    nodePool,
    [[`${REQ}.key`, 'karpenter.sh/capacity-type']],
    [[REQ, { key: 'karpenter.sh/team', operator: 'Exists' }]],
    `${REQ}.key`,
    'label domain "karpenter.sh" is restricted',
  ),
  c(
    'requirement key karpenter.sh/nodepool',
    nodePool,
    [],
    [[REQ, { key: 'karpenter.sh/nodepool', operator: 'Exists' }]],
    `${REQ}.key`,
    'label "karpenter.sh/nodepool" is restricted',
  ),
  c(
    'requirement key karpenter.sh/nodepool (runtime)',
    nodePool,
    [],
    [[REQ, { key: 'karpenter.sh/nodepool', operator: 'Exists' }]],
    `${REQ}.key`,
    'invalid key: "karpenter.sh/nodepool" in requirements, restricted',
  ),
  c(
    'requirement key domains kubernetes.io and k8s.io are open since Karpenter v1.9',
    nodePool,
    [
      [
        `${NP}.requirements`,
        [
          { key: 'kubernetes.io/team', operator: 'Exists' },
          { key: 'subdomain.k8s.io/key', operator: 'Exists' },
        ],
      ],
    ],
    [[REQ, { key: 'kubernetes.io/hostname', operator: 'Exists' }]],
    `${REQ}.key`,
    'label "kubernetes.io/hostname" is restricted',
  ),
  c(
    'requirement key name at most 63 characters (runtime IsQualifiedName)',
    nodePool,
    [[REQ, { key: `example.com/${'n'.repeat(63)}`, operator: 'Exists' }]],
    [[REQ, { key: `example.com/${'n'.repeat(64)}`, operator: 'Exists' }]],
    `${REQ}.key`,
    `Invalid value: "example.com/${'n'.repeat(64)}": name part must be no more than 63 bytes`,
  ),
  c(
    'requirement key prefix at most 253 characters (runtime IsQualifiedName)',
    nodePool,
    [[REQ, { key: `${'p'.repeat(253)}/n`, operator: 'Exists' }]],
    [[REQ, { key: `${'p'.repeat(254)}/n`, operator: 'Exists' }]],
    `${REQ}.key`,
    `Invalid value: "${'p'.repeat(254)}/n": prefix part must be no more than 253 bytes`,
  ),
  c(
    'requirement key kubernetes.io/hostname',
    nodePool,
    [[REQ, { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }]],
    [[REQ, { key: 'kubernetes.io/hostname', operator: 'Exists' }]],
    `${REQ}.key`,
    'label "kubernetes.io/hostname" is restricted',
  ),
  c(
    'requirement key domain karpenter.k8s.aws (the AWS allowed list)',
    nodePool,
    [[REQ, { key: 'karpenter.k8s.aws/instance-capability-flex', operator: 'Exists' }]],
    [[REQ, { key: 'karpenter.k8s.aws/instance-color', operator: 'Exists' }]],
    `${REQ}.key`,
    'label domain "karpenter.k8s.aws" is restricted',
  ),
  c(
    'capacity-type needs a known value',
    nodePool,
    [[`${REQ}.values`, ['reserved', 'cheap']]],
    [[`${REQ}.values`, ['cheap']]],
    `${REQ}.values`,
    'key karpenter.sh/capacity-type must include at least one of the known values "spot", "on-demand", "reserved"; no node could match ["cheap"]',
  ),
  c(
    'instance-tenancy needs a known value',
    nodePool,
    [[REQ, { key: 'karpenter.k8s.aws/instance-tenancy', operator: 'In', values: ['dedicated'] }]],
    [[REQ, { key: 'karpenter.k8s.aws/instance-tenancy', operator: 'In', values: ['shared'] }]],
    `${REQ}.values`,
    'key karpenter.k8s.aws/instance-tenancy must include at least one of the known values "default", "dedicated"; no node could match ["shared"]',
  ),
  c(
    'requirement value is a label value',
    nodePool,
    [[REQ, { key: 'example.com/team', operator: 'In', values: ['team_a.1'] }]],
    [[REQ, { key: 'example.com/team', operator: 'In', values: ['team a'] }]],
    `${REQ}.values[0]`,
    "Invalid value: \"team a\": must be empty or alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (at most 63 characters)",
  ),
  c(
    'requirement value at most 63 characters',
    nodePool,
    [[REQ, { key: 'example.com/team', operator: 'In', values: ['a'.repeat(63)] }]],
    [[REQ, { key: 'example.com/team', operator: 'In', values: ['a'.repeat(64)] }]],
    `${REQ}.values[0]`,
    'Too long: may not be more than 63 bytes',
  ),
  c(
    'at most 100 requirements',
    nodePool,
    [[`${NP}.requirements`, many(100, (i) => ({ key: `example.com/k${i}`, operator: 'Exists' }))]],
    [[`${NP}.requirements`, many(101, (i) => ({ key: `example.com/k${i}`, operator: 'Exists' }))]],
    `${NP}.requirements`,
    'Too many: 101: must have at most 100 items',
  ),
  c(
    'template label domain karpenter.sh',
    nodePool,
    [['spec.template.metadata.labels', { 'karpenter.sh/capacity-type': 'spot', team: 'web' }]],
    [['spec.template.metadata.labels', { 'karpenter.sh/team': 'web' }]],
    'spec.template.metadata.labels[karpenter.sh/team]',
    'label domain "karpenter.sh" is restricted',
  ),
  c(
    'template label karpenter.sh/nodepool',
    nodePool,
    [],
    [['spec.template.metadata.labels', { 'karpenter.sh/nodepool': 'x' }]],
    'spec.template.metadata.labels[karpenter.sh/nodepool]',
    'label "karpenter.sh/nodepool" is restricted',
  ),
  c(
    'template label domain karpenter.k8s.aws',
    nodePool,
    [['spec.template.metadata.labels', { 'karpenter.k8s.aws/instance-family': 'm5' }]],
    [['spec.template.metadata.labels', { 'karpenter.k8s.aws/owner': 'me' }]],
    'spec.template.metadata.labels[karpenter.k8s.aws/owner]',
    'label domain "karpenter.k8s.aws" is restricted',
  ),
  c(
    'template label domains kubernetes.io and k8s.io are open; kubernetes.io/hostname is not',
    nodePool,
    [['spec.template.metadata.labels', { 'kubernetes.io/team': 'a', 'subdomain.k8s.io/key': 'b' }]],
    [['spec.template.metadata.labels', { 'kubernetes.io/hostname': 'a' }]],
    'spec.template.metadata.labels[kubernetes.io/hostname]',
    'label "kubernetes.io/hostname" is restricted',
  ),
  c(
    'template label key name at most 63 characters (runtime IsQualifiedName)',
    nodePool,
    [['spec.template.metadata.labels', { [`example.com/${'n'.repeat(63)}`]: 'a' }]],
    [['spec.template.metadata.labels', { [`example.com/${'n'.repeat(64)}`]: 'a' }]],
    `spec.template.metadata.labels[example.com/${'n'.repeat(64)}]`,
    `Invalid value: "example.com/${'n'.repeat(64)}": name part must be no more than 63 bytes`,
  ),
  c(
    'template label value pattern',
    nodePool,
    [['spec.template.metadata.labels', { team: '' }]],
    [['spec.template.metadata.labels', { team: '-web' }]],
    'spec.template.metadata.labels[team]',
    "Invalid value: \"-web\": must be empty or alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (at most 63 characters)",
  ),
  c(
    'template labels at most 100',
    nodePool,
    [['spec.template.metadata.labels', manyTags(100)]],
    [['spec.template.metadata.labels', manyTags(101)]],
    'spec.template.metadata.labels',
    'Too many: 101: must have at most 100 items',
  ),
  c(
    'template annotations are strings',
    nodePool,
    [['spec.template.metadata.annotations', { note: 'x' }]],
    [['spec.template.metadata.annotations', { note: 1 }]],
    'spec.template.metadata.annotations[note]',
    'Invalid value: 1: must be of type string, not integer',
  ),
  c(
    'taint key pattern',
    nodePool,
    [[`${NP}.taints`, [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }]]],
    [[`${NP}.taints`, [{ key: 'nvidia gpu', effect: 'NoSchedule' }]]],
    `${NP}.taints[0].key`,
    "Invalid value: \"nvidia gpu\": must be a qualified name: an optional DNS subdomain and '/', then alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric",
  ),
  c(
    'taint key not empty',
    nodePool,
    [[`${NP}.taints`, [{ key: 'a', effect: 'NoSchedule' }]]],
    [[`${NP}.taints`, [{ key: '', effect: 'NoSchedule' }]]],
    `${NP}.taints[0].key`,
    'Invalid value: "": should be at least 1 chars long',
  ),
  c(
    'taint value pattern',
    nodePool,
    [[`${NP}.startupTaints`, [{ key: 'example.com/init', value: 'pending', effect: 'NoExecute' }]]],
    [[`${NP}.startupTaints`, [{ key: 'example.com/init', value: 'not ready', effect: 'NoExecute' }]]],
    `${NP}.startupTaints[0].value`,
    "Invalid value: \"not ready\": must be a qualified name: an optional DNS subdomain and '/', then alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric",
  ),
  c(
    'taint effect enum',
    nodePool,
    [[`${NP}.taints`, [{ key: 'a', effect: 'PreferNoSchedule' }]]],
    [[`${NP}.taints`, [{ key: 'a', effect: 'Sometimes' }]]],
    `${NP}.taints[0].effect`,
    'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
  ),
  c(
    'taint effect required',
    nodePool,
    [],
    [[`${NP}.taints`, [{ key: 'a' }]]],
    `${NP}.taints[0].effect`,
    'Required value',
  ),
  c(
    'no duplicate taint key and effect across taints and startupTaints',
    nodePool,
    [
      [`${NP}.taints`, [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }]],
      [`${NP}.startupTaints`, [{ key: 'nvidia.com/gpu', effect: 'NoExecute' }]],
    ],
    [
      [`${NP}.taints`, [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }]],
      [`${NP}.startupTaints`, [{ key: 'nvidia.com/gpu', value: 'x', effect: 'NoSchedule' }]],
    ],
    `${NP}.startupTaints[0]`,
    'duplicate taint Key/Effect pair nvidia.com/gpu=NoSchedule',
  ),
  c(
    'nodeClassRef group not empty',
    nodePool,
    [],
    [[`${NP}.nodeClassRef.group`, '']],
    `${NP}.nodeClassRef.group`,
    'group may not be empty',
  ),
  c(
    'nodeClassRef kind not empty',
    nodePool,
    [],
    [[`${NP}.nodeClassRef.kind`, '']],
    `${NP}.nodeClassRef.kind`,
    'kind may not be empty',
  ),
  c(
    'nodeClassRef name not empty',
    nodePool,
    [],
    [[`${NP}.nodeClassRef.name`, '']],
    `${NP}.nodeClassRef.name`,
    'name may not be empty',
  ),
  c(
    'nodeClassRef name required',
    nodePool,
    [],
    [[`${NP}.nodeClassRef.name`, undefined]],
    `${NP}.nodeClassRef.name`,
    'Required value',
  ),
  c(
    'nodeClassRef group has no slash',
    nodePool,
    [],
    [[`${NP}.nodeClassRef.group`, 'karpenter.k8s.aws/v1']],
    `${NP}.nodeClassRef.group`,
    'Invalid value: "karpenter.k8s.aws/v1": should match \'^[^/]*$\'',
  ),
  c(
    'expireAfter duration or Never',
    nodePool,
    [[`${NP}.expireAfter`, 'Never']],
    [[`${NP}.expireAfter`, '30d']],
    `${NP}.expireAfter`,
    'Invalid value: "30d": must be a duration of whole hours, minutes or seconds (e.g. 720h, 90m) or Never',
  ),
  c(
    'terminationGracePeriod duration (no Never)',
    nodePool,
    [[`${NP}.terminationGracePeriod`, '48h30m']],
    [[`${NP}.terminationGracePeriod`, 'Never']],
    `${NP}.terminationGracePeriod`,
    'Invalid value: "Never": must be a duration of whole hours, minutes or seconds (e.g. 48h, 30m)',
  ),
  c(
    'consolidateAfter required in disruption',
    nodePool,
    [['spec.disruption', { consolidateAfter: '0s' }]],
    [['spec.disruption', { consolidationPolicy: 'WhenEmpty' }]],
    'spec.disruption.consolidateAfter',
    'Required value',
  ),
  c(
    'consolidateAfter duration or Never',
    nodePool,
    [['spec.disruption', { consolidateAfter: 'Never' }]],
    [['spec.disruption', { consolidateAfter: 'soon' }]],
    'spec.disruption.consolidateAfter',
    'Invalid value: "soon": must be a duration of whole hours, minutes or seconds (e.g. 0s, 30s, 5m) or Never',
  ),
  c(
    'consolidationPolicy enum',
    nodePool,
    [['spec.disruption', { consolidateAfter: '1m', consolidationPolicy: 'WhenEmpty' }]],
    [['spec.disruption', { consolidateAfter: '1m', consolidationPolicy: 'Always' }]],
    'spec.disruption.consolidationPolicy',
    'Unsupported value: "Always": supported values: "WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"',
  ),
  c(
    'consolidationPolicy WhenUnderutilized is v1beta1',
    nodePool,
    [['spec.disruption', { consolidateAfter: '1m', consolidationPolicy: 'WhenEmptyOrUnderutilized' }]],
    [['spec.disruption', { consolidateAfter: '1m', consolidationPolicy: 'WhenUnderutilized' }]],
    'spec.disruption.consolidationPolicy',
    'Unsupported value: "WhenUnderutilized": v1 renamed it to WhenEmptyOrUnderutilized (karpless convert does this for you)',
  ),
  c(
    'at most 50 budgets',
    nodePool,
    [['spec.disruption', { consolidateAfter: '0s', budgets: many(50, () => ({ nodes: '1' })) }]],
    [['spec.disruption', { consolidateAfter: '0s', budgets: many(51, () => ({ nodes: '1' })) }]],
    'spec.disruption.budgets',
    'Too many: 51: must have at most 50 items',
  ),
  c(
    'budget nodes percentage at most 100%',
    nodePool,
    [['spec.disruption', { consolidateAfter: '0s', budgets: [{ nodes: '100%' }, { nodes: '25' }] }]],
    [['spec.disruption', { consolidateAfter: '0s', budgets: [{ nodes: '101%' }] }]],
    'spec.disruption.budgets[0].nodes',
    'Invalid value: "101%": must be a node count (e.g. 5) or a percentage from 0% to 100% (e.g. 10%)',
  ),
  c(
    'budget nodes is a string',
    nodePool,
    [['spec.disruption', { consolidateAfter: '0s', budgets: [{ nodes: '0' }] }]],
    [['spec.disruption', { consolidateAfter: '0s', budgets: [{ nodes: 5 }] }]],
    'spec.disruption.budgets[0].nodes',
    'Invalid value: 5: must be of type string, not integer',
  ),
  c(
    'schedule needs duration',
    nodePool,
    [['spec.disruption', { consolidateAfter: '0s', budgets: [{ nodes: '0', schedule: '@daily', duration: '10m' }] }]],
    [['spec.disruption', { consolidateAfter: '0s', budgets: [{ nodes: '0', schedule: '@daily' }] }]],
    'spec.disruption.budgets[0]',
    "'schedule' must be set with 'duration'",
  ),
  c(
    'duration needs schedule',
    nodePool,
    [],
    [['spec.disruption', { consolidateAfter: '0s', budgets: [{ nodes: '0', duration: '1h' }] }]],
    'spec.disruption.budgets[0]',
    "'schedule' must be set with 'duration'",
  ),
  c(
    'budget duration hours and minutes only',
    nodePool,
    [
      [
        'spec.disruption',
        { consolidateAfter: '0s', budgets: [{ nodes: '0', schedule: '0 9 * * 1', duration: '1h30m' }] },
      ],
    ],
    [
      [
        'spec.disruption',
        { consolidateAfter: '0s', budgets: [{ nodes: '0', schedule: '0 9 * * 1', duration: '90s' }] },
      ],
    ],
    'spec.disruption.budgets[0].duration',
    'Invalid value: "90s": must be whole hours and/or minutes (e.g. 8h, 30m, 1h30m); cron has no seconds',
  ),
  c(
    'budget schedule is cron',
    nodePool,
    [
      [
        'spec.disruption',
        { consolidateAfter: '0s', budgets: [{ nodes: '0', schedule: '0 8 * * mon-fri', duration: '8h' }] },
      ],
    ],
    [
      [
        'spec.disruption',
        { consolidateAfter: '0s', budgets: [{ nodes: '0', schedule: '0 25 * * *', duration: '8h' }] },
      ],
    ],
    'spec.disruption.budgets[0].schedule',
    'Invalid value: "0 25 * * *": invalid cron schedule: hour: 25 is out of range 0-23',
  ),
  c(
    'budget reasons enum',
    nodePool,
    [['spec.disruption', { consolidateAfter: '0s', budgets: [{ nodes: '1', reasons: ['Drifted', 'Empty'] }] }]],
    [['spec.disruption', { consolidateAfter: '0s', budgets: [{ nodes: '1', reasons: ['Expired'] }] }]],
    'spec.disruption.budgets[0].reasons[0]',
    'Unsupported value: "Expired": supported values: "Underutilized", "Empty", "Drifted"',
  ),
  c(
    'limits are quantities',
    nodePool,
    [['spec.limits', { cpu: 1000, memory: '1000Gi', 'nvidia.com/gpu': '8' }]],
    [['spec.limits', { memory: 'lots' }]],
    'spec.limits[memory]',
    'Invalid value: "lots": must be a resource quantity (examples: 500m, 2, 16Gi)',
  ),
  c(
    'static NodePools limit only nodes',
    nodePool,
    [
      ['spec.replicas', 3],
      ['spec.limits', { nodes: '10' }],
    ],
    [
      ['spec.replicas', 3],
      ['spec.limits', { cpu: '10' }],
    ],
    'spec.limits',
    "only 'limits.nodes' is supported on static NodePools",
  ),
  c(
    'static NodePools have no weight',
    nodePool,
    [['spec.replicas', 0]],
    [
      ['spec.replicas', 2],
      ['spec.weight', 10],
    ],
    'spec.weight',
    "'weight' is not supported on static NodePools",
  ),
  c(
    'replicas minimum 0',
    nodePool,
    [['spec.replicas', 0]],
    [['spec.replicas', -1]],
    'spec.replicas',
    'Invalid value: -1: should be greater than or equal to 0',
  ),
];

const ALIAS_FAMILY_CASES: [string, string, string][] = [
  ['al2@v20240807', 'AL2', "if set, amiFamily must be 'AL2' or 'Custom' when using an AL2 alias"],
  ['al2023@v20240807', 'AL2023', "if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias"],
  [
    'bottlerocket@v1.20.4',
    'Bottlerocket',
    "if set, amiFamily must be 'Bottlerocket' or 'Custom' when using a Bottlerocket alias",
  ],
  [
    'windows2019@latest',
    'Windows2019',
    "if set, amiFamily must be 'Windows2019' or 'Custom' when using a Windows2019 alias",
  ],
  [
    'windows2022@latest',
    'Windows2022',
    "if set, amiFamily must be 'Windows2022' or 'Custom' when using a Windows2022 alias",
  ],
  [
    'windows2025@latest',
    'Windows2025',
    "if set, amiFamily must be 'Windows2025' or 'Custom' when using a Windows2025 alias",
  ],
];

const S = 'spec';
const BDM = 'spec.blockDeviceMappings';
const ebs = (e: Json) => [[BDM, [{ deviceName: '/dev/xvda', ebs: e }]]] as const;
const nodeClassCases: Case[] = [
  c('unknown spec field', nodeClass, [], [['spec.amiSelector', []]], 'spec.amiSelector', 'unknown field "amiSelector"'),
  c(
    'exactly one of role and instanceProfile (both)',
    nodeClass,
    [
      ['spec.role', undefined],
      ['spec.instanceProfile', 'KarpenterNodeInstanceProfile'],
    ],
    [['spec.instanceProfile', 'KarpenterNodeInstanceProfile']],
    S,
    "must specify exactly one of ['role', 'instanceProfile']",
  ),
  c(
    'exactly one of role and instanceProfile (neither)',
    nodeClass,
    [],
    [['spec.role', undefined]],
    S,
    "must specify exactly one of ['role', 'instanceProfile']",
  ),
  c('role not empty', nodeClass, [], [['spec.role', '']], 'spec.role', 'role cannot be empty'),
  c(
    'instanceProfile not empty',
    nodeClass,
    [],
    [
      ['spec.role', undefined],
      ['spec.instanceProfile', ''],
    ],
    'spec.instanceProfile',
    'instanceProfile cannot be empty',
  ),
  c(
    'required subnetSelectorTerms',
    nodeClass,
    [],
    [['spec.subnetSelectorTerms', undefined]],
    'spec.subnetSelectorTerms',
    'Required value',
  ),
  c(
    'required amiSelectorTerms',
    nodeClass,
    [],
    [['spec.amiSelectorTerms', undefined]],
    'spec.amiSelectorTerms',
    'Required value',
  ),
  c(
    'alias format family@version',
    nodeClass,
    [['spec.amiSelectorTerms[0].alias', 'al2023@latest']],
    [['spec.amiSelectorTerms[0].alias', 'al2023']],
    'spec.amiSelectorTerms[0].alias',
    "'alias' is improperly formatted, must match the format 'family@version'",
  ),
  c(
    'alias family supported',
    nodeClass,
    [['spec.amiSelectorTerms[0].alias', 'bottlerocket@v1.20.4']],
    [['spec.amiSelectorTerms[0].alias', 'centos@7']],
    'spec.amiSelectorTerms[0].alias',
    "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'",
  ),
  c(
    'windows aliases only latest',
    nodeClass,
    [['spec.amiSelectorTerms[0].alias', 'windows2022@latest']],
    [['spec.amiSelectorTerms[0].alias', 'windows2022@v20240807']],
    'spec.amiSelectorTerms[0].alias',
    "windows families may only specify version 'latest'",
  ),
  c(
    'alias at most 30 characters',
    nodeClass,
    [['spec.amiSelectorTerms[0].alias', `al2023@v${'1'.repeat(22)}`]],
    [['spec.amiSelectorTerms[0].alias', `al2023@v${'1'.repeat(23)}`]],
    'spec.amiSelectorTerms[0].alias',
    'Too long: may not be more than 30 bytes',
  ),
  c(
    'alias alone in amiSelectorTerms',
    nodeClass,
    [],
    [
      ['spec.amiSelectorTerms[1]', { id: 'ami-0123456789abcdef0' }],
      ['spec.amiFamily', 'AL2023'],
    ],
    'spec.amiSelectorTerms',
    "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
  ),
  c(
    'alias alone in its term',
    nodeClass,
    [],
    [['spec.amiSelectorTerms[0].owner', 'amazon']],
    'spec.amiSelectorTerms[0]',
    "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
  ),
  c(
    'ami id alone in its term',
    nodeClass,
    [
      ['spec.amiSelectorTerms', [{ id: 'ami-0123456789abcdef0' }, { name: 'my-ami-*', owner: 'self' }]],
      ['spec.amiFamily', 'AL2023'],
    ],
    [
      ['spec.amiSelectorTerms', [{ id: 'ami-0123456789abcdef0', name: 'x' }]],
      ['spec.amiFamily', 'AL2023'],
    ],
    'spec.amiSelectorTerms[0]',
    "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
  ),
  c(
    'ami term has a selector',
    nodeClass,
    [
      ['spec.amiSelectorTerms', [{ ssmParameter: '/my/ami' }]],
      ['spec.amiFamily', 'Custom'],
    ],
    [
      ['spec.amiSelectorTerms', [{ owner: 'self' }]],
      ['spec.amiFamily', 'Custom'],
    ],
    'spec.amiSelectorTerms[0]',
    "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']",
  ),
  c(
    'ami id pattern',
    nodeClass,
    [
      ['spec.amiSelectorTerms', [{ id: 'ami-0abc' }]],
      ['spec.amiFamily', 'AL2'],
    ],
    [
      ['spec.amiSelectorTerms', [{ id: 'ami_0abc' }]],
      ['spec.amiFamily', 'AL2'],
    ],
    'spec.amiSelectorTerms[0].id',
    'Invalid value: "ami_0abc": should match \'^ami-[0-9a-z]+$\'',
  ),
  c(
    'amiSelectorTerms at least 1',
    nodeClass,
    [],
    [
      ['spec.amiSelectorTerms', []],
      ['spec.amiFamily', 'AL2'],
    ],
    'spec.amiSelectorTerms',
    'Invalid value: 0: must have at least 1 items',
  ),
  c(
    'amiSelectorTerms at most 30',
    nodeClass,
    [
      ['spec.amiSelectorTerms', many(30, (i) => ({ name: `ami-${i}` }))],
      ['spec.amiFamily', 'AL2'],
    ],
    [
      ['spec.amiSelectorTerms', many(31, (i) => ({ name: `ami-${i}` }))],
      ['spec.amiFamily', 'AL2'],
    ],
    'spec.amiSelectorTerms',
    'Too many: 31: must have at most 30 items',
  ),
  c(
    'amiFamily required without alias',
    nodeClass,
    [
      ['spec.amiSelectorTerms', [{ tags: { team: 'x' } }]],
      ['spec.amiFamily', 'Custom'],
    ],
    [['spec.amiSelectorTerms', [{ tags: { team: 'x' } }]]],
    'spec.amiFamily',
    'must specify amiFamily if amiSelectorTerms does not contain an alias',
  ),
  ...ALIAS_FAMILY_CASES.map(([alias, family, message]) =>
    c(
      `amiFamily matches the ${family} alias`,
      nodeClass,
      [
        ['spec.amiSelectorTerms[0].alias', alias],
        ['spec.amiFamily', family],
      ],
      [
        ['spec.amiSelectorTerms[0].alias', alias],
        ['spec.amiFamily', family === 'AL2023' ? 'AL2' : 'AL2023'],
      ],
      'spec.amiFamily',
      message,
    ),
  ),
  c(
    'amiFamily Custom with any alias',
    nodeClass,
    [['spec.amiFamily', 'Custom']],
    [['spec.amiFamily', 'Bottlerocket']],
    'spec.amiFamily',
    "if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias",
  ),
  c(
    'amiFamily enum',
    nodeClass,
    [['spec.amiFamily', 'AL2023']],
    [['spec.amiFamily', 'Fedora']],
    'spec.amiFamily',
    'Unsupported value: "Fedora": supported values: "AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025"',
  ),
  c(
    'amiFamily Ubuntu is gone, with the migration',
    nodeClass,
    [
      ['spec.amiSelectorTerms', [{ id: 'ami-0123' }]],
      ['spec.amiFamily', 'AL2'],
    ],
    [
      ['spec.amiSelectorTerms', [{ id: 'ami-0123' }]],
      ['spec.amiFamily', 'Ubuntu'],
    ],
    'spec.amiFamily',
    'Ubuntu is not supported in Karpenter v1 (removed in v1.0.0). Migrate by pinning the Ubuntu AMI: either amiFamily: Custom with amiSelectorTerms: [{id: ami-...}] and your own userData, or amiFamily: AL2 (its bootstrap.sh userData works with the EKS Ubuntu AMIs) with amiSelectorTerms: [{id: ami-...}]',
  ),
  c(
    'subnetSelectorTerms not empty',
    nodeClass,
    [['spec.subnetSelectorTerms', [{ id: 'subnet-0abc' }]]],
    [['spec.subnetSelectorTerms', []]],
    'spec.subnetSelectorTerms',
    'subnetSelectorTerms cannot be empty',
  ),
  c(
    'subnet term has tags or id',
    nodeClass,
    [],
    [['spec.subnetSelectorTerms', [{}]]],
    'spec.subnetSelectorTerms[0]',
    "expected at least one, got none, ['tags', 'id']",
  ),
  c(
    'subnet id pattern',
    nodeClass,
    [['spec.subnetSelectorTerms', [{ id: 'subnet-0123abc' }]]],
    [['spec.subnetSelectorTerms', [{ id: 'sn-0123abc' }]]],
    'spec.subnetSelectorTerms[0].id',
    'Invalid value: "sn-0123abc": should match \'^subnet-[0-9a-z]+$\'',
  ),
  c(
    "subnet id exclusive (upstream's all() quirk: only when every term combines)",
    nodeClass,
    [['spec.subnetSelectorTerms', [{ id: 'subnet-1', tags: { a: 'b' } }, { tags: { a: 'b' } }]]],
    [['spec.subnetSelectorTerms', [{ id: 'subnet-1', tags: { a: 'b' } }]]],
    'spec.subnetSelectorTerms',
    "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",
  ),
  c(
    'selector tags have no empty keys or values',
    nodeClass,
    [['spec.subnetSelectorTerms', [{ tags: { 'karpenter.sh/discovery': '*' } }]]],
    [['spec.subnetSelectorTerms', [{ tags: { 'karpenter.sh/discovery': '' } }]]],
    'spec.subnetSelectorTerms[0].tags',
    "empty tag keys or values aren't supported",
  ),
  c(
    'selector tags at most 20',
    nodeClass,
    [['spec.subnetSelectorTerms', [{ tags: manyTags(20) }]]],
    [['spec.subnetSelectorTerms', [{ tags: manyTags(21) }]]],
    'spec.subnetSelectorTerms[0].tags',
    'Too many: 21: must have at most 20 items',
  ),
  c(
    'at most 30 subnet terms',
    nodeClass,
    [['spec.subnetSelectorTerms', many(30, (i) => ({ id: `subnet-${i}` }))]],
    [['spec.subnetSelectorTerms', many(31, (i) => ({ id: `subnet-${i}` }))]],
    'spec.subnetSelectorTerms',
    'Too many: 31: must have at most 30 items',
  ),
  c(
    'securityGroupSelectorTerms not empty',
    nodeClass,
    [['spec.securityGroupSelectorTerms', [{ name: 'nodes' }]]],
    [['spec.securityGroupSelectorTerms', []]],
    'spec.securityGroupSelectorTerms',
    'securityGroupSelectorTerms cannot be empty',
  ),
  c(
    'security group term has a selector',
    nodeClass,
    [],
    [['spec.securityGroupSelectorTerms', [{}]]],
    'spec.securityGroupSelectorTerms[0]',
    "expected at least one, got none, ['tags', 'id', 'name']",
  ),
  c(
    'security group id pattern',
    nodeClass,
    [['spec.securityGroupSelectorTerms', [{ id: 'sg-0abc' }]]],
    [['spec.securityGroupSelectorTerms', [{ id: 'sg_0abc' }]]],
    'spec.securityGroupSelectorTerms[0].id',
    'Invalid value: "sg_0abc": should match \'^sg-[0-9a-z]+$\'',
  ),
  c(
    'security group id exclusive (all() quirk)',
    nodeClass,
    [['spec.securityGroupSelectorTerms', [{ id: 'sg-1', tags: { a: 'b' } }, { id: 'sg-2' }]]],
    [['spec.securityGroupSelectorTerms', [{ id: 'sg-1', tags: { a: 'b' } }]]],
    'spec.securityGroupSelectorTerms',
    "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
  ),
  c(
    'security group name exclusive (all() quirk)',
    nodeClass,
    [['spec.securityGroupSelectorTerms', [{ name: 'a', tags: { a: 'b' } }, { name: 'b' }]]],
    [['spec.securityGroupSelectorTerms', [{ name: 'a', tags: { a: 'b' } }]]],
    'spec.securityGroupSelectorTerms',
    "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
  ),
  c(
    'capacity reservation term has a selector',
    nodeClass,
    [['spec.capacityReservationSelectorTerms', [{ instanceMatchCriteria: 'open', ownerID: '123456789012' }]]],
    [['spec.capacityReservationSelectorTerms', [{ ownerID: '123456789012' }]]],
    'spec.capacityReservationSelectorTerms[0]',
    "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']",
  ),
  c(
    'capacity reservation id exclusive',
    nodeClass,
    [['spec.capacityReservationSelectorTerms', [{ id: 'cr-0abc' }, { tags: { a: 'b' } }]]],
    [['spec.capacityReservationSelectorTerms', [{ id: 'cr-0abc', ownerID: '123456789012' }]]],
    'spec.capacityReservationSelectorTerms[0]',
    "'id' is mutually exclusive, cannot be set along with tags, ownerID or instanceMatchCriteria in a capacity reservation selector term",
  ),
  c(
    'capacity reservation id pattern',
    nodeClass,
    [['spec.capacityReservationSelectorTerms', [{ id: 'cr-0abc' }]]],
    [['spec.capacityReservationSelectorTerms', [{ id: 'cr-0ABC' }]]],
    'spec.capacityReservationSelectorTerms[0].id',
    'Invalid value: "cr-0ABC": should match \'^cr-[0-9a-z]+$\'',
  ),
  c(
    'capacity reservation ownerID is 12 digits',
    nodeClass,
    [['spec.capacityReservationSelectorTerms', [{ tags: { a: 'b' }, ownerID: '123456789012' }]]],
    [['spec.capacityReservationSelectorTerms', [{ tags: { a: 'b' }, ownerID: '1234' }]]],
    'spec.capacityReservationSelectorTerms[0].ownerID',
    'Invalid value: "1234": should match \'^[0-9]{12}$\'',
  ),
  c(
    'capacity reservation instanceMatchCriteria enum',
    nodeClass,
    [['spec.capacityReservationSelectorTerms', [{ instanceMatchCriteria: 'targeted' }]]],
    [['spec.capacityReservationSelectorTerms', [{ instanceMatchCriteria: 'any' }]]],
    'spec.capacityReservationSelectorTerms[0].instanceMatchCriteria',
    'Unsupported value: "any": supported values: "open", "targeted"',
  ),
  c(
    'placementGroupSelector exactly one of name and id',
    nodeClass,
    [['spec.placementGroupSelector', { name: 'cluster-pg' }]],
    [['spec.placementGroupSelector', { name: 'cluster-pg', id: 'pg-0abc' }]],
    'spec.placementGroupSelector',
    "must specify exactly one of ['name', 'id']",
  ),
  c(
    'placementGroupSelector id pattern',
    nodeClass,
    [['spec.placementGroupSelector', { id: 'pg-0abc' }]],
    [['spec.placementGroupSelector', { id: 'placement-1' }]],
    'spec.placementGroupSelector.id',
    'Invalid value: "placement-1": should match \'^pg-[0-9a-z]+$\'',
  ),
  c(
    'placementGroupSelector name not empty',
    nodeClass,
    [],
    [['spec.placementGroupSelector', { name: '' }]],
    'spec.placementGroupSelector.name',
    'Invalid value: "": should be at least 1 chars long',
  ),
  c(
    'ipPrefixCount minimum 0',
    nodeClass,
    [['spec.ipPrefixCount', 0]],
    [['spec.ipPrefixCount', -1]],
    'spec.ipPrefixCount',
    'Invalid value: -1: should be greater than or equal to 0',
  ),
  c(
    'associatePublicIPAddress is a boolean',
    nodeClass,
    [['spec.associatePublicIPAddress', false]],
    [['spec.associatePublicIPAddress', 'no']],
    'spec.associatePublicIPAddress',
    'Invalid value: "no": must be of type boolean, not string',
  ),
  ...(
    [
      ['eks:eks-cluster-name', 'eks:eks-cluster-name'],
      ['kubernetes.io/cluster/my-cluster', 'kubernetes.io/cluster/'],
      ['karpenter.sh/nodepool', 'karpenter.sh/nodepool'],
      ['karpenter.sh/nodeclaim', 'karpenter.sh/nodeclaim'],
      ['karpenter.k8s.aws/ec2nodeclass', 'karpenter.k8s.aws/ec2nodeclass'],
    ] as const
  ).map(([key, label]) =>
    c(
      `restricted tag ${label}`,
      nodeClass,
      [['spec.tags', { team: 'web', 'karpenter.sh/discovery': 'x' }]],
      [['spec.tags', { [key]: 'x' }]],
      `spec.tags[${key}]`,
      `tag contains a restricted tag matching ${label}`,
    ),
  ),
  c(
    'tag keys not empty',
    nodeClass,
    [['spec.tags', { a: '' }]],
    [['spec.tags', { '': 'x' }]],
    'spec.tags[]',
    "empty tag keys aren't supported",
  ),
  c(
    'kubelet systemReserved keys',
    nodeClass,
    [['spec.kubelet', { systemReserved: { cpu: '100m', memory: '100Mi', 'ephemeral-storage': '1Gi', pid: '100' } }]],
    [['spec.kubelet', { systemReserved: { gpu: '1' } }]],
    'spec.kubelet.systemReserved[gpu]',
    "valid keys for systemReserved are ['cpu','memory','ephemeral-storage','pid']",
  ),
  c(
    'kubelet kubeReserved keys',
    nodeClass,
    [['spec.kubelet', { kubeReserved: { cpu: '200m' } }]],
    [['spec.kubelet', { kubeReserved: { disk: '1Gi' } }]],
    'spec.kubelet.kubeReserved[disk]',
    "valid keys for kubeReserved are ['cpu','memory','ephemeral-storage','pid']",
  ),
  c(
    'kubelet reserved values not negative',
    nodeClass,
    [['spec.kubelet', { kubeReserved: { memory: '+1Gi' } }]],
    [['spec.kubelet', { kubeReserved: { memory: '-1Gi' } }]],
    'spec.kubelet.kubeReserved[memory]',
    'kubeReserved value cannot be a negative resource quantity',
  ),
  c(
    'kubelet reserved values are quantities',
    nodeClass,
    [['spec.kubelet', { systemReserved: { memory: '1.5Gi' } }]],
    [['spec.kubelet', { systemReserved: { memory: 'lots' } }]],
    'spec.kubelet.systemReserved[memory]',
    'Invalid value: "lots": must be a resource quantity (examples: 500m, 1Gi, 100)',
  ),
  c(
    'kubelet evictionHard keys',
    nodeClass,
    [
      [
        'spec.kubelet',
        { evictionHard: { 'memory.available': '5%', 'nodefs.available': '10%', 'pid.available': '500' } },
      ],
    ],
    [['spec.kubelet', { evictionHard: { 'memory.free': '5%' } }]],
    'spec.kubelet.evictionHard[memory.free]',
    "valid keys for evictionHard are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']",
  ),
  c(
    'kubelet eviction thresholds are percentages or quantities',
    nodeClass,
    [['spec.kubelet', { evictionHard: { 'memory.available': '500Mi', 'imagefs.available': '12.5%' } }]],
    [['spec.kubelet', { evictionHard: { 'memory.available': '101%' } }]],
    'spec.kubelet.evictionHard[memory.available]',
    'Invalid value: "101%": must be a percentage up to 100% with at most 2 decimals (e.g. 10%) or a quantity (e.g. 500Mi)',
  ),
  c(
    'evictionSoft needs a matching evictionSoftGracePeriod',
    nodeClass,
    [
      [
        'spec.kubelet',
        { evictionSoft: { 'memory.available': '10%' }, evictionSoftGracePeriod: { 'memory.available': '1m30s' } },
      ],
    ],
    [['spec.kubelet', { evictionSoft: { 'memory.available': '10%' } }]],
    'spec.kubelet.evictionSoft[memory.available]',
    'evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod',
  ),
  c(
    'evictionSoftGracePeriod needs a matching evictionSoft',
    nodeClass,
    [],
    [['spec.kubelet', { evictionSoft: {}, evictionSoftGracePeriod: { 'nodefs.available': '1m' } }]],
    'spec.kubelet.evictionSoftGracePeriod[nodefs.available]',
    'evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft',
  ),
  c(
    'evictionSoftGracePeriod values are durations',
    nodeClass,
    [
      [
        'spec.kubelet',
        { evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': '90s' } },
      ],
    ],
    [
      [
        'spec.kubelet',
        { evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': 'soon' } },
      ],
    ],
    'spec.kubelet.evictionSoftGracePeriod[memory.available]',
    'must be a duration (e.g. 1m30s, 90s, 2m)',
  ),
  c(
    'imageGC high greater than low',
    nodeClass,
    [['spec.kubelet', { imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80 }]],
    [['spec.kubelet', { imageGCHighThresholdPercent: 80, imageGCLowThresholdPercent: 80 }]],
    'spec.kubelet.imageGCHighThresholdPercent',
    'imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent',
  ),
  c(
    'imageGC percent at most 100',
    nodeClass,
    [['spec.kubelet', { imageGCHighThresholdPercent: 100 }]],
    [['spec.kubelet', { imageGCHighThresholdPercent: 101 }]],
    'spec.kubelet.imageGCHighThresholdPercent',
    'Invalid value: 101: should be less than or equal to 100',
  ),
  c(
    'kubelet maxPods minimum 0',
    nodeClass,
    [['spec.kubelet', { maxPods: 0 }]],
    [['spec.kubelet', { maxPods: -1 }]],
    'spec.kubelet.maxPods',
    'Invalid value: -1: should be greater than or equal to 0',
  ),
  c(
    'kubelet podsPerCore minimum 0',
    nodeClass,
    [['spec.kubelet', { podsPerCore: 10 }]],
    [['spec.kubelet', { podsPerCore: -5 }]],
    'spec.kubelet.podsPerCore',
    'Invalid value: -5: should be greater than or equal to 0',
  ),
  c(
    'kubelet key set is closed',
    nodeClass,
    [['spec.kubelet', { clusterDNS: ['10.100.0.10'], cpuCFSQuota: true, evictionMaxPodGracePeriod: 60 }]],
    [['spec.kubelet', { registryPullQPS: 5 }]],
    'spec.kubelet.registryPullQPS',
    'unknown field "registryPullQPS"',
  ),
  c(
    'one root volume',
    nodeClass,
    [
      [
        BDM,
        [
          { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '50Gi' } },
          { deviceName: '/dev/xvdb', ebs: { volumeSize: '100Gi' } },
        ],
      ],
    ],
    [
      [
        BDM,
        [
          { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '50Gi' } },
          { deviceName: '/dev/xvdb', rootVolume: true, ebs: { volumeSize: '100Gi' } },
        ],
      ],
    ],
    BDM,
    'must have only one blockDeviceMappings with rootVolume',
  ),
  c(
    'at most 50 block devices',
    nodeClass,
    [[BDM, many(50, () => ({ ebs: { volumeSize: '1Gi' } }))]],
    [[BDM, many(51, () => ({ ebs: { volumeSize: '1Gi' } }))]],
    BDM,
    'Too many: 51: must have at most 50 items',
  ),
  c(
    'ebs snapshotID or volumeSize',
    nodeClass,
    [...ebs({ snapshotID: 'snap-0abc' })],
    [...ebs({ encrypted: true })],
    `${BDM}[0].ebs`,
    'snapshotID or volumeSize must be defined',
  ),
  c(
    'volumeInitializationRate needs snapshotID',
    nodeClass,
    [...ebs({ snapshotID: 'snap-0abc', volumeInitializationRate: 300 })],
    [...ebs({ volumeSize: '20Gi', volumeInitializationRate: 200 })],
    `${BDM}[0].ebs.volumeInitializationRate`,
    'snapshotID must be set when volumeInitializationRate is set',
  ),
  c(
    'volumeInitializationRate 100..300',
    nodeClass,
    [...ebs({ snapshotID: 'snap-0abc', volumeInitializationRate: 100 })],
    [...ebs({ snapshotID: 'snap-0abc', volumeInitializationRate: 301 })],
    `${BDM}[0].ebs.volumeInitializationRate`,
    'Invalid value: 301: should be less than or equal to 300',
  ),
  ...(
    [
      ['59000Gi', '59001Gi'],
      ['64000G', '64001G'],
      ['58Ti', '59Ti'],
      ['64T', '65T'],
      ['1Gi', '0Gi'],
      ['20Gi', '20GB'],
    ] as const
  ).map(([valid, invalid]) =>
    c(
      `volumeSize ${valid} valid, ${invalid} not`,
      nodeClass,
      [...ebs({ volumeSize: valid })],
      [...ebs({ volumeSize: invalid })],
      `${BDM}[0].ebs.volumeSize`,
      `Invalid value: "${invalid}": must be a whole number of Gi (1-59000), G (1-64000), Ti (1-58) or T (1-64), e.g. 100Gi`,
    ),
  ),
  c(
    'volumeType enum',
    nodeClass,
    [...ebs({ volumeSize: '20Gi', volumeType: 'st1' })],
    [...ebs({ volumeSize: '20Gi', volumeType: 'gp4' })],
    `${BDM}[0].ebs.volumeType`,
    'Unsupported value: "gp4": supported values: "standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"',
  ),
  c(
    'gp3 iops 3000..16000',
    nodeClass,
    [...ebs({ volumeSize: '20Gi', volumeType: 'gp3', iops: 16000 })],
    [...ebs({ volumeSize: '20Gi', volumeType: 'gp3', iops: 2000 })],
    `${BDM}[0].ebs.iops`,
    'iops for gp3 volumes must be between 3000 and 16000',
  ),
  c(
    'io2 iops 100..64000',
    nodeClass,
    [...ebs({ volumeSize: '20Gi', volumeType: 'io2', iops: 100 })],
    [...ebs({ volumeSize: '20Gi', volumeType: 'io2', iops: 64001 })],
    `${BDM}[0].ebs.iops`,
    'iops for io2 volumes must be between 100 and 64000',
  ),
  c(
    'io1 iops 100..64000',
    nodeClass,
    [...ebs({ volumeSize: '20Gi', volumeType: 'io1', iops: 64000 })],
    [...ebs({ volumeSize: '20Gi', volumeType: 'io1', iops: 99 })],
    `${BDM}[0].ebs.iops`,
    'iops for io1 volumes must be between 100 and 64000',
  ),
  c(
    'iops only for io1, io2 and gp3',
    nodeClass,
    [...ebs({ volumeSize: '20Gi', volumeType: 'gp2' })],
    [...ebs({ volumeSize: '20Gi', volumeType: 'gp2', iops: 3000 })],
    `${BDM}[0].ebs.iops`,
    'iops is only supported for io1, io2 and gp3 volumes, not gp2',
  ),
  c(
    'gp3 throughput 125..1000',
    nodeClass,
    [...ebs({ volumeSize: '20Gi', volumeType: 'gp3', throughput: 125 })],
    [...ebs({ volumeSize: '20Gi', volumeType: 'gp3', throughput: 1001 })],
    `${BDM}[0].ebs.throughput`,
    'throughput for gp3 volumes must be between 125 and 1000',
  ),
  c(
    'throughput only for gp3',
    nodeClass,
    [...ebs({ volumeSize: '20Gi', volumeType: 'gp3', throughput: 1000 })],
    [...ebs({ volumeSize: '20Gi', volumeType: 'io2', throughput: 500 })],
    `${BDM}[0].ebs.throughput`,
    'throughput is only supported for gp3 volumes, not io2',
  ),
  c(
    'instanceStorePolicy enum',
    nodeClass,
    [['spec.instanceStorePolicy', 'RAID0']],
    [['spec.instanceStorePolicy', 'RAID1']],
    'spec.instanceStorePolicy',
    'Unsupported value: "RAID1": supported values: "RAID0"',
  ),
  c(
    'metadataOptions httpEndpoint enum',
    nodeClass,
    [['spec.metadataOptions', { httpEndpoint: 'disabled' }]],
    [['spec.metadataOptions', { httpEndpoint: 'on' }]],
    'spec.metadataOptions.httpEndpoint',
    'Unsupported value: "on": supported values: "enabled", "disabled"',
  ),
  c(
    'metadataOptions httpProtocolIPv6 enum',
    nodeClass,
    [['spec.metadataOptions', { httpProtocolIPv6: 'enabled' }]],
    [['spec.metadataOptions', { httpProtocolIPv6: 'true' }]],
    'spec.metadataOptions.httpProtocolIPv6',
    'Unsupported value: "true": supported values: "enabled", "disabled"',
  ),
  c(
    'metadataOptions httpTokens enum',
    nodeClass,
    [['spec.metadataOptions', { httpTokens: 'optional' }]],
    [['spec.metadataOptions', { httpTokens: 'maybe' }]],
    'spec.metadataOptions.httpTokens',
    'Unsupported value: "maybe": supported values: "required", "optional"',
  ),
  c(
    'metadataOptions hop limit minimum 1',
    nodeClass,
    [['spec.metadataOptions', { httpPutResponseHopLimit: 1 }]],
    [['spec.metadataOptions', { httpPutResponseHopLimit: 0 }]],
    'spec.metadataOptions.httpPutResponseHopLimit',
    'Invalid value: 0: should be greater than or equal to 1',
  ),
  c(
    'metadataOptions hop limit maximum 64',
    nodeClass,
    [['spec.metadataOptions', { httpPutResponseHopLimit: 64 }]],
    [['spec.metadataOptions', { httpPutResponseHopLimit: 65 }]],
    'spec.metadataOptions.httpPutResponseHopLimit',
    'Invalid value: 65: should be less than or equal to 64',
  ),
  c(
    'connectionTracking needs a field',
    nodeClass,
    [['spec.connectionTracking', { udpTimeout: 30 }]],
    [['spec.connectionTracking', {}]],
    'spec.connectionTracking',
    "expected at least one, got none, ['tcpEstablishedTimeout', 'udpStreamTimeout', 'udpTimeout']",
  ),
  c(
    'tcpEstablishedTimeout 60..432000',
    nodeClass,
    [['spec.connectionTracking', { tcpEstablishedTimeout: 432000 }]],
    [['spec.connectionTracking', { tcpEstablishedTimeout: 59 }]],
    'spec.connectionTracking.tcpEstablishedTimeout',
    'Invalid value: 59: should be greater than or equal to 60',
  ),
  c(
    'udpStreamTimeout 60..180',
    nodeClass,
    [['spec.connectionTracking', { udpStreamTimeout: 60 }]],
    [['spec.connectionTracking', { udpStreamTimeout: 181 }]],
    'spec.connectionTracking.udpStreamTimeout',
    'Invalid value: 181: should be less than or equal to 180',
  ),
  c(
    'udpTimeout 30..60',
    nodeClass,
    [['spec.connectionTracking', { udpTimeout: 60 }]],
    [['spec.connectionTracking', { udpTimeout: 61 }]],
    'spec.connectionTracking.udpTimeout',
    'Invalid value: 61: should be less than or equal to 60',
  ),
  c(
    'networkInterfaces may be empty',
    nodeClass,
    [['spec.networkInterfaces', []]],
    [['spec.networkInterfaces', {}]],
    'spec.networkInterfaces',
    'Invalid value: {}: must be of type array, not object',
  ),
  c(
    'networkInterfaces include the primary interface',
    nodeClass,
    [
      [
        'spec.networkInterfaces',
        [
          { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
          { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' },
        ],
      ],
    ],
    [['spec.networkInterfaces', [{ networkCardIndex: 1, deviceIndex: 0, interfaceType: 'interface' }]]],
    'spec.networkInterfaces',
    'networkInterfaces must contain the primary network interface (networkCardIndex 0, deviceIndex 0, interfaceType interface)',
  ),
  c(
    'networkInterfaces card/device pairs unique',
    nodeClass,
    [],
    [
      [
        'spec.networkInterfaces',
        [
          { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
          { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'efa-only' },
        ],
      ],
    ],
    'spec.networkInterfaces[1]',
    'networkCardIndex and deviceIndex pairs must be unique',
  ),
  c(
    'at most one efa-only interface per card',
    nodeClass,
    [],
    [
      [
        'spec.networkInterfaces',
        [
          { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
          { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' },
          { networkCardIndex: 1, deviceIndex: 1, interfaceType: 'efa-only' },
        ],
      ],
    ],
    'spec.networkInterfaces[2]',
    'at most one efa-only interface per networkCardIndex',
  ),
  c(
    'networkInterfaces interfaceType enum',
    nodeClass,
    [],
    [['spec.networkInterfaces', [{ networkCardIndex: 0, deviceIndex: 0, interfaceType: 'efa' }]]],
    'spec.networkInterfaces[0].interfaceType',
    'Unsupported value: "efa": supported values: "interface", "efa-only"',
  ),
  c(
    'networkInterfaces fields required',
    nodeClass,
    [],
    [['spec.networkInterfaces', [{ networkCardIndex: 0, interfaceType: 'interface' }]]],
    'spec.networkInterfaces[0].deviceIndex',
    'Required value',
  ),
  c(
    'networkInterfaces indexes minimum 0',
    nodeClass,
    [],
    [['spec.networkInterfaces', [{ networkCardIndex: -1, deviceIndex: 0, interfaceType: 'interface' }]]],
    'spec.networkInterfaces[0].networkCardIndex',
    'Invalid value: -1: should be greater than or equal to 0',
  ),
  c(
    'cpuOptions nestedVirtualization enum',
    nodeClass,
    [['spec.cpuOptions', { nestedVirtualization: 'enabled' }]],
    [['spec.cpuOptions', { nestedVirtualization: 'yes' }]],
    'spec.cpuOptions.nestedVirtualization',
    'Unsupported value: "yes": supported values: "enabled", "disabled"',
  ),
  c(
    'apiVersion',
    nodeClass,
    [],
    [['apiVersion', 'karpenter.k8s.aws/v1beta1']],
    'apiVersion',
    'Unsupported value: "karpenter.k8s.aws/v1beta1": supported values: "karpenter.k8s.aws/v1"',
  ),
];

const nodeClaimCases: Case[] = [
  c('NodeClaim unknown field', nodeClaim, [], [['spec.kubelet', {}]], 'spec.kubelet', 'unknown field "kubelet"'),
  c(
    'NodeClaim resource requests are quantities',
    nodeClaim,
    [['spec.resources.requests.pods', '3']],
    [['spec.resources.requests.cpu', 'two']],
    'spec.resources.requests[cpu]',
    'Invalid value: "two": must be a resource quantity (examples: 500m, 2, 16Gi)',
  ),
  c(
    'NodeClaim nodeClassRef required',
    nodeClaim,
    [],
    [['spec.nodeClassRef', undefined]],
    'spec.nodeClassRef',
    'Required value',
  ),
  c(
    'NodeClaim requirement rules',
    nodeClaim,
    [['spec.requirements[0].operator', 'NotIn']],
    [['spec.requirements[0].values', []]],
    'spec.requirements[0]',
    "requirements with operator 'In' must have a value defined",
  ),
  c(
    'NodeClaim requirements: no known-values check (a NodePool runtime check only), nodepool key allowed',
    nodeClaim,
    [
      [
        'spec.requirements',
        [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['cheap'] },
          { key: 'karpenter.sh/nodepool', operator: 'In', values: ['default'] },
          { key: 'kubernetes.io/team', operator: 'Exists' },
        ],
      ],
    ],
    [['spec.requirements[0]', { key: 'karpenter.sh/team', operator: 'Exists' }]],
    'spec.requirements[0].key',
    'label domain "karpenter.sh" is restricted',
  ),
  c(
    'NodeClaim duplicate taints',
    nodeClaim,
    [],
    [
      [
        'spec.taints',
        [
          { key: 'a', effect: 'NoSchedule' },
          { key: 'a', effect: 'NoSchedule' },
        ],
      ],
    ],
    'spec.taints[1]',
    'duplicate taint Key/Effect pair a=NoSchedule',
  ),
  c(
    'NodeClaim expireAfter',
    nodeClaim,
    [['spec.expireAfter', '24h']],
    [['spec.expireAfter', '1 day']],
    'spec.expireAfter',
    'Invalid value: "1 day": must be a duration of whole hours, minutes or seconds (e.g. 720h, 90m) or Never',
  ),
];

const allCases = [...nodePoolCases, ...nodeClassCases, ...nodeClaimCases];

describe('v1 validation rules', () => {
  it.each(allCases)('$rule: accepts the valid case', ({ base, valid }) => {
    expect(errors(setAll(base(), valid))).toEqual([]);
  });

  it.each(allCases)('$rule: rejects the invalid case at $path', ({ base, invalid, path, message }) => {
    expect(validate(setAll(base(), invalid))).toContainEqual({ path, message });
  });

  it('covers every rule with one valid and one invalid case', () => {
    // The count reported in the closing note of issue 2.
    expect(new Set(allCases.map((k) => `${String(k.base().kind)}: ${k.rule}`)).size).toBe(allCases.length);
  });
});

describe('validateNodePool', () => {
  it('reports every problem at once, not only the first', () => {
    const object = setAll(nodePool(), [
      ['spec.weight', 0],
      [`${REQ}.operator`, 'Within'],
      ['spec.foo', true],
    ]);
    expect(validateNodePool(object).map((i) => i.path)).toEqual(
      expect.arrayContaining(['spec.weight', `${REQ}.operator`, 'spec.foo']),
    );
  });

  it('treats null fields as absent, as the API server prunes them', () => {
    expect(validateNodePool(set(nodePool(), 'spec.weight', null))).toEqual([]);
  });

  it('rejects a non-object spec with its type', () => {
    expect(validateNodePool(set(nodePool(), 'spec', 'x'))).toEqual([
      { path: 'spec', message: 'Invalid value: "x": must be of type object, not string' },
    ]);
  });
});

describe('validateEC2NodeClass', () => {
  it('warns about a subnet term combining id and tags that upstream accepts because of its all() rule', () => {
    const object = set(nodeClass(), 'spec.subnetSelectorTerms', [
      { id: 'subnet-1', tags: { a: 'b' } },
      { tags: { a: 'b' } },
    ]);
    const issues = validateEC2NodeClass(object);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: 'spec.subnetSelectorTerms[0]', severity: 'warning' });
  });

  it('explains the Ubuntu migration when an ubuntu alias is used', () => {
    const issues = validateEC2NodeClass(set(nodeClass(), 'spec.amiSelectorTerms[0].alias', 'ubuntu@22.04'));
    expect(issues[0]?.message).toMatch(
      /family is not supported.*Ubuntu is not supported in Karpenter v1.*amiFamily: Custom/,
    );
  });

  it('accepts the alias without amiFamily, which v1 infers from the alias', () => {
    expect(validateEC2NodeClass(nodeClass())).toEqual([]);
  });
});
