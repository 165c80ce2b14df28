import { describe, expect, it } from 'vitest';
import { validatePod, validatePodSpec } from '../../../shared/apis/core/validation';

const container = { name: 'app', resources: { requests: { cpu: '100m', memory: '64Mi' } } };
const pod = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'p' }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata,
  spec: { containers: [container], ...spec },
});
const nodeAffinity = (required: unknown) => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: required },
});
const term = (expression: Record<string, unknown>) => ({
  nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', ...expression }] }],
});
const spread = (constraint: Record<string, unknown>) => ({
  topologySpreadConstraints: [
    { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', ...constraint },
  ],
});

describe('validatePod: each field the scheduler reads, as the API server checks it', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    // Containers, init containers, sidecars, overhead.
    ['a valid pod', {}, []],
    ['no containers', { containers: [] }, ['spec.containers: Required value']],
    ['containers as a map', { containers: container }, ['spec.containers: must be a list, not a map']],
    [
      'a container as a string',
      { containers: ['app'] },
      ['spec.containers[0]: must be a container (a map with name, image, resources …), not a string'],
    ],
    ['a container without a name', { containers: [{ image: 'x' }] }, ['spec.containers[0].name: Required value']],
    [
      'duplicate container names',
      { initContainers: [{ name: 'app' }] },
      ['spec.initContainers[0].name: Duplicate value: "app"'],
    ],
    ['initContainers as a map', { initContainers: { name: 'i' } }, ['spec.initContainers: must be a list, not a map']],
    [
      'resources as a string',
      { containers: [{ name: 'a', resources: 'big' }] },
      ['spec.containers[0].resources: must be a map (an object with named fields), not a string'],
    ],
    [
      'requests as a list',
      { containers: [{ name: 'a', resources: { requests: ['1'] } }] },
      ['spec.containers[0].resources.requests: must be a map (an object with named fields), not a list'],
    ],
    [
      'a negative request',
      { containers: [{ name: 'a', resources: { requests: { cpu: '-1' } } }] },
      ['spec.containers[0].resources.requests.cpu: "-1" must be greater than or equal to 0'],
    ],
    [
      'a request above its limit',
      { containers: [{ name: 'a', resources: { requests: { memory: '2Gi' }, limits: { memory: '1Gi' } } }] },
      [
        'spec.containers[0].resources.requests.memory: Invalid value: "2Gi": must be less than or equal to memory limit of "1Gi"',
      ],
    ],
    [
      'a fractional GPU',
      { containers: [{ name: 'a', resources: { limits: { 'nvidia.com/gpu': '0.5' } } }] },
      [
        'spec.containers[0].resources.limits.nvidia.com/gpu: "0.5" must be an integer: nvidia.com/gpu is counted in whole units',
      ],
    ],
    [
      'a GPU request without a limit',
      { containers: [{ name: 'a', resources: { requests: { 'nvidia.com/gpu': '1' } } }] },
      [
        'spec.containers[0].resources.requests.nvidia.com/gpu: Forbidden: Limit must be set for non overcommitable resources',
      ],
    ],
    [
      'a bad resource name',
      { containers: [{ name: 'a', resources: { requests: { 'bad name': '1' } } }] },
      [
        "spec.containers[0].resources.requests: Invalid value: \"bad name\": resource name name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
      ],
    ],
    [
      'a sidecar with another restartPolicy',
      { initContainers: [{ name: 's', restartPolicy: 'OnFailure' }] },
      ['spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
    ],
    [
      'restartPolicy on an app container',
      { containers: [{ name: 'a', restartPolicy: 'Always' }] },
      ['spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers'],
    ],
    [
      'an overhead in a bad unit',
      { overhead: { memory: '1GB' } },
      [
        'spec.overhead.memory: "1GB" is not a valid resource quantity: digits with an optional sign, fraction and unit (examples: 500m, 2, 16Gi, 1E)',
      ],
    ],
    [
      'pod-level resources as a string',
      { resources: 'big' },
      ['spec.resources: must be a map (an object with named fields), not a string'],
    ],
    [
      'a misspelled container field',
      { containers: [{ name: 'a', resource: {} }] },
      ['spec.containers[0].resource: unknown field: not part of this Kubernetes object (check spelling and nesting)'],
    ],
    // nodeSelector.
    [
      'nodeSelector as a string',
      { nodeSelector: 'zone=a' },
      ['spec.nodeSelector: must be a map (an object with named fields), not a string'],
    ],
    [
      'a nodeSelector value that is a number',
      { nodeSelector: { size: 3 } },
      ['spec.nodeSelector.size: must be a string, not an integer (quote it: "3")'],
    ],
    [
      'a nodeSelector key with spaces',
      { nodeSelector: { 'a b': 'c' } },
      [
        "spec.nodeSelector: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
      ],
    ],
    // Node affinity.
    [
      'nodeSelectorTerms as a map',
      { affinity: nodeAffinity({ nodeSelectorTerms: { matchExpressions: [] } }) },
      [
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: must be a list, not a map',
      ],
    ],
    [
      'no nodeSelectorTerms',
      { affinity: nodeAffinity({}) },
      [
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term',
      ],
    ],
    [
      'values as a string',
      { affinity: nodeAffinity(term({ operator: 'In', values: 'a' })) },
      [
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: must be a list, not a string',
      ],
    ],
    [
      'In without values',
      { affinity: nodeAffinity(term({ operator: 'In' })) },
      [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ],
    ],
    [
      'Exists with values',
      { affinity: nodeAffinity(term({ operator: 'Exists', values: ['a'] })) },
      [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      ],
    ],
    [
      'Gt with a word',
      { affinity: nodeAffinity(term({ operator: 'Gt', values: ['big'] })) },
      [
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "big": must be an integer',
      ],
    ],
    [
      'an unknown operator',
      { affinity: nodeAffinity(term({ operator: 'Gte', values: ['1'] })) },
      [
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Gte": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
      ],
    ],
    [
      'a preferred term with weight 0',
      {
        affinity: {
          nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: {} }] },
        },
      },
      [
        'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be between 1 and 100, inclusive',
      ],
    ],
    // Pod (anti-)affinity.
    [
      'podAffinity as a bare term',
      { affinity: { podAffinity: { topologyKey: 'zone' } } },
      [
        'spec.affinity.podAffinity.topologyKey: unknown field: not part of this Kubernetes object (check spelling and nesting)',
      ],
    ],
    [
      'required podAntiAffinity as a map',
      { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { topologyKey: 'zone' } } } },
      ['spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution: must be a list, not a map'],
    ],
    [
      'an affinity term without topologyKey',
      { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {} }] } } },
      ['spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value'],
    ],
    [
      'matchLabels with a list value',
      {
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: ['web'] } } },
            ],
          },
        },
      },
      [
        'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchLabels.app: must be a string, not a list (quote it: "web")',
      ],
    ],
    // Tolerations.
    ['tolerations as a map', { tolerations: { key: 'a' } }, ['spec.tolerations: must be a list, not a map']],
    ['tolerations as a string', { tolerations: 'all' }, ['spec.tolerations: must be a list, not a string']],
    ['a null toleration (an empty YAML item)', { tolerations: [null] }, ['spec.tolerations[0]: must not be null']],
    [
      'a null spread constraint',
      { topologySpreadConstraints: [null] },
      ['spec.topologySpreadConstraints[0]: must not be null'],
    ],
    [
      'a toleration with a bad effect',
      { tolerations: [{ key: 'a', effect: 'NoRun' }] },
      [
        'spec.tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      ],
    ],
    [
      'Exists with a value',
      { tolerations: [{ key: 'a', operator: 'Exists', value: 'b' }] },
      ['spec.tolerations[0].operator: Invalid value: "Exists": value must be empty when `operator` is \'Exists\''],
    ],
    [
      'Equal without a key',
      { tolerations: [{ value: 'b' }] },
      [
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      ],
    ],
    [
      'tolerationSeconds without NoExecute',
      { tolerations: [{ key: 'a', tolerationSeconds: 5 }] },
      ['spec.tolerations[0].effect: Invalid value: "": effect must be \'NoExecute\' when `tolerationSeconds` is set'],
    ],
    // Topology spread.
    [
      'maxSkew 1.5',
      spread({ maxSkew: 1.5 }),
      ['spec.topologySpreadConstraints[0].maxSkew: Invalid value: 1.5: must be a whole number'],
    ],
    [
      'maxSkew 0',
      spread({ maxSkew: 0 }),
      ['spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than or equal to 1'],
    ],
    [
      'maxSkew -1',
      spread({ maxSkew: -1 }),
      ['spec.topologySpreadConstraints[0].maxSkew: Invalid value: -1: must be greater than or equal to 1'],
    ],
    [
      'maxSkew as a string',
      spread({ maxSkew: '1' }),
      ['spec.topologySpreadConstraints[0].maxSkew: Invalid value: "1": must be a whole number'],
    ],
    [
      'no topologyKey',
      spread({ topologyKey: undefined }),
      ['spec.topologySpreadConstraints[0].topologyKey: Required value'],
    ],
    [
      'a bad whenUnsatisfiable',
      spread({ whenUnsatisfiable: 'Never' }),
      [
        'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"',
      ],
    ],
    [
      'minDomains with ScheduleAnyway',
      spread({ minDomains: 2, whenUnsatisfiable: 'ScheduleAnyway' }),
      [
        'spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule',
      ],
    ],
    [
      'the same key and policy twice',
      { topologySpreadConstraints: [spread({}).topologySpreadConstraints[0], spread({}).topologySpreadConstraints[0]] },
      ['spec.topologySpreadConstraints[1]: Duplicate value: {"topology.kubernetes.io/zone", "DoNotSchedule"}'],
    ],
    [
      'spread constraints as a map',
      { topologySpreadConstraints: { maxSkew: 1 } },
      ['spec.topologySpreadConstraints: must be a list, not a map'],
    ],
    // Priority.
    ['priority as a string', { priority: 'high' }, ['spec.priority: Invalid value: "high": must be a whole number']],
    [
      'priority beyond int32',
      { priority: 2 ** 31 },
      ['spec.priority: Invalid value: 2147483648: must be between -2147483648 and 2147483647, inclusive'],
    ],
    ['priority 1.5', { priority: 1.5 }, ['spec.priority: Invalid value: 1.5: must be a whole number']],
  ])('%s', (_, spec, expected) => {
    expect(validatePod(pod(spec), '')).toEqual(expected);
  });

  it.each<[string, unknown, string[]]>([
    ['no metadata', { spec: { containers: [container] } }, ['metadata.name: Required value']],
    [
      'an upper-case name',
      pod({}, { name: 'Web' }),
      [
        "metadata.name: Invalid value: \"Web\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
      ],
    ],
    [
      'a label value that is a boolean',
      pod({}, { name: 'p', labels: { on: true } }),
      ['metadata.labels.on: must be a string, not a boolean (quote it: "true")'],
    ],
    ['no spec', { metadata: { name: 'p' } }, ['spec: Required value: a pod spec with at least one container']],
    ['a list instead of a pod', [], ['<pod>: must be a Pod object, not a list']],
  ])('metadata and shape: %s', (_, value, expected) => {
    expect(validatePod(value, '')).toEqual(expected);
  });

  it('prefixes every line with the path it was given and reports every problem at once', () => {
    const issues = validatePod(pod({ tolerations: 'x', priority: 'y' }), 'detail.pods[2]');
    expect(issues).toEqual([
      'detail.pods[2].spec.tolerations: must be a list, not a string',
      'detail.pods[2].spec.priority: Invalid value: "y": must be a whole number',
    ]);
  });

  it('validatePodSpec checks pod-spec fields at the top level and leaves the others to the caller', () => {
    const noticePod = { name: 'p', namespace: 'default', uid: 'u', containers: [container], tolerations: {} };
    expect(validatePodSpec(noticePod, 'detail.pods[0]')).toEqual([
      'detail.pods[0].tolerations: must be a list, not a map',
    ]);
  });
});

describe('validatePod: a required field given as null is missing, as the API server reads it', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a node requirement operator', { affinity: nodeAffinity(term({ operator: null, values: ['a'] })) }, 'operator'],
    [
      'a preferred term preference',
      {
        affinity: {
          nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: null }] },
        },
      },
      'preference',
    ],
    [
      'a preferred term weight',
      {
        affinity: {
          nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: null, preference: {} }] },
        },
      },
      'weight',
    ],
    [
      'a weighted pod affinity term',
      {
        affinity: {
          podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: null }] },
        },
      },
      'podAffinityTerm',
    ],
    ['a spread maxSkew', spread({ maxSkew: null }), 'maxSkew'],
    ['a spread whenUnsatisfiable', spread({ whenUnsatisfiable: null }), 'whenUnsatisfiable'],
  ])('%s', (_, spec, field) => {
    const problems = validatePod(pod(spec), '');
    expect(problems.some((p) => p.includes(`${field}: Required value`))).toBe(true);
  });
});

describe('validatePod: values that break String() are reported, not thrown', () => {
  it('reports a nodeSelector value that is a map with a non-function toString', () => {
    const problems = validatePod(pod({ nodeSelector: { 'kubernetes.io/os': { toString: 0 } } }), '');
    expect(problems).toEqual(['spec.nodeSelector.kubernetes.io/os: must be a string, not a map (quote it: "a map")']);
  });
});
