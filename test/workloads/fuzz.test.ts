import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validatePod } from '../../shared/apis/core/validation';
import type { LoadedDocument } from '../../shared/apis/load';
import { solve } from '../../shared/scheduling';
import { collectWorkloads } from '../../shared/workloads';
import { nodePool, standardTypes } from '../scheduling/helpers';

// Mutated valid inputs must end in field errors or a plan, never in an exception: pods come from
// files and from notices anyone may send.

const validPod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
  spec: {
    containers: [{ name: 'app', resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '1Gi' } } }],
    initContainers: [
      { name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '50m' } } },
      { name: 'setup', resources: { requests: { cpu: '1' } } },
    ],
    overhead: { cpu: '10m' },
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    priority: 100,
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }],
        },
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 10, preference: { matchExpressions: [{ key: 'x', operator: 'Exists' }] } },
        ],
      },
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } },
        ],
      },
    },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { app: 'web' } },
      },
    ],
  },
};
const validDeployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: { replicas: 3, template: { metadata: { labels: { app: 'web' } }, spec: validPod.spec } },
};

type Json = unknown;

/** Every path to a value inside `value` (object keys and list indexes). */
function paths(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [prefix];
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) out.push(...paths(item, [...prefix, i]));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) out.push(...paths(item, [...prefix, key]));
  }
  return out;
}

function mutate(value: Json, path: (string | number)[], replacement: Json, remove: boolean): Json {
  if (path.length === 0) return replacement;
  const copy = structuredClone(value) as Record<string | number, Json>;
  let parent = copy;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, Json>;
  const last = path[path.length - 1] as string | number;
  if (remove) delete parent[last];
  else parent[last] = replacement;
  return copy;
}

// Values of the wrong type, shape and range, plus the kinds of strings quantities and names take.
const strange = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    '1Ei',
    '1E',
    '-1',
    '0.5',
    '1e400',
    '',
    'no',
    'In',
    'Exists',
    'NoSchedule',
    'Always',
    '∞',
    1.5,
    0,
    -1,
    2 ** 31,
    1e300,
  ),
);

const mutation = (base: Json) =>
  fc.record({
    // Not the root: the loader hands on only documents that are maps.
    path: fc.constantFrom(...paths(base).slice(1)),
    replacement: strange,
    remove: fc.boolean(),
  });

function plan(object: Json) {
  const doc: LoadedDocument = { file: 'fuzz.yaml', line: 1, object: object as Record<string, unknown> };
  const set = collectWorkloads([doc]);
  if (set.problems.length > 0) return { problems: set.problems.length };
  const result = solve({
    pods: set.pending,
    nodePools: [nodePool('general')],
    instanceTypes: { general: standardTypes() },
    daemonSets: set.daemonSets,
  });
  return { claims: result.nodeClaims.length, unschedulable: result.unschedulable.length };
}

describe('fuzzing: mutated valid pods and workloads give field errors or a plan, never an exception', () => {
  it('the unmutated inputs plan cleanly', () => {
    expect(validatePod(validPod, '')).toEqual([]);
    expect(plan(validPod)).not.toHaveProperty('problems');
    expect(plan(validDeployment)).not.toHaveProperty('problems');
  });

  it.each([
    ['a Pod', validPod],
    ['a Deployment', validDeployment],
  ])('%s', (_, base) => {
    fc.assert(
      fc.property(mutation(base), mutation(base), ({ path, replacement, remove }, second) => {
        let object = mutate(base, path, replacement, remove);
        // A second mutation where the first left the path in place reaches combinations of faults.
        try {
          object = mutate(object, second.path, second.replacement, second.remove);
        } catch {
          // The first mutation removed the second's parent: one mutation is enough then.
        }
        const outcome = plan(object);
        expect(Object.keys(outcome).length).toBeGreaterThan(0);
        if (typeof object === 'object' && object !== null && (object as { kind?: unknown }).kind === 'Pod') {
          expect(() => validatePod(object, '')).not.toThrow();
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150) },
    );
  });
});
