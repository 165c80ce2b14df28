import { describe, expect, it } from 'vitest';
import { MAX_NOTICE_BYTES, MAX_NOTICE_PODS, MAX_PROBLEMS, validateNotice } from '../../shared/notice';
import { daemonSet, notice, noticePod } from './helpers';

function problemsOf(detail: unknown): string[] {
  const result = validateNotice(detail);
  if (result.ok) throw new Error('expected problems');
  return result.problems;
}

/** A valid notice with one field of pod 0 (or the detail) replaced. */
function withPod(patch: Record<string, unknown>): unknown {
  return notice([noticePod(0), { ...noticePod(1), ...patch } as never]);
}

describe('validateNotice', () => {
  it('accepts a full notice and returns it typed', () => {
    const detail = notice([
      noticePod(0, {
        initContainers: [{ name: 'sidecar', restartPolicy: 'Always', resources: { requests: { cpu: '50m' } } }],
        overhead: { cpu: '10m' },
        nodeSelector: { 'kubernetes.io/arch': 'arm64' },
        priority: 1000,
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }] },
              ],
            },
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 50, preference: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] } },
            ],
          },
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                topologyKey: 'kubernetes.io/hostname',
                labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
              },
            ],
          },
        },
      }),
      noticePod(1),
    ]);
    expect(validateNotice(detail)).toEqual({ ok: true, detail });
  });

  it('accepts a notice with no pods and a part', () => {
    const detail = { ...notice([]), part: { index: 1, count: 2, batchId: 'b' } };
    expect(validateNotice(detail).ok).toBe(true);
  });

  it('ignores fields Kubernetes adds inside its own objects (a newer API server)', () => {
    const detail = withPod({
      containers: [{ name: 'app', resources: { requests: { cpu: '1' }, claims: [{ name: 'gpu' }] } }],
    });
    expect(validateNotice(detail).ok).toBe(true);
  });

  it.each<[string, unknown, string]>([
    [
      'a toleration effect outside the enum',
      withPod({ tolerations: [{ key: 'a', effect: 'NoScheduel' }] }),
      'detail.pods[1].tolerations[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute, got "NoScheduel"',
    ],
    ['a missing uid', withPod({ uid: undefined }), 'detail.pods[1].uid: required'],
    ['an empty name', withPod({ name: '' }), 'detail.pods[1].name: must not be empty'],
    ['a number for a string', withPod({ namespace: 7 }), 'detail.pods[1].namespace: must be a string, got integer'],
    ['no containers', withPod({ containers: [] }), 'detail.pods[1].containers: must have at least 1 item'],
    [
      'a quantity that is not one',
      withPod({ containers: [{ name: 'app', resources: { requests: { cpu: 'lots' } } }] }),
      'detail.pods[1].containers[0].resources.requests["cpu"]: "lots" is not a non-negative quantity such as "500m", "2" or "16Gi"',
    ],
    [
      'a numeric quantity',
      withPod({ containers: [{ name: 'app', resources: { requests: { memory: 1024 } } }] }),
      'detail.pods[1].containers[0].resources.requests["memory"]: must be a string, got integer',
    ],
    [
      'a label value that is not a string',
      withPod({ labels: { app: true } }),
      'detail.pods[1].labels["app"]: must be a string, got boolean',
    ],
    ['a fractional priority', withPod({ priority: 1.5 }), 'detail.pods[1].priority: must be an integer, got 1.5'],
    [
      'maxSkew below 1',
      withPod({ topologySpreadConstraints: [{ maxSkew: 0, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }] }),
      'detail.pods[1].topologySpreadConstraints[0].maxSkew: must be at least 1, got 0',
    ],
    [
      'a spread constraint without whenUnsatisfiable',
      withPod({ topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone' }] }),
      'detail.pods[1].topologySpreadConstraints[0].whenUnsatisfiable: required',
    ],
    [
      'a preferred weight above 100',
      withPod({
        affinity: {
          nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 101, preference: {} }] },
        },
      }),
      'detail.pods[1].affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be at most 100, got 101',
    ],
    [
      'a node selector operator Kubernetes lacks',
      withPod({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'Gte', values: ['1'] }] }],
            },
          },
        },
      }),
      'detail.pods[1].affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt, got "Gte"',
    ],
    ['a misspelt notice field', withPod({ tolerationz: [] }), 'detail.pods[1]: unknown field "tolerationz"'],
    ['a pod that is not an object', notice([null as never]), 'detail.pods[0]: must be an object, got null'],
    ['pods that are not an array', { ...notice([]), pods: {} }, 'detail.pods: must be an array, got object'],
    ['a missing cluster', { ...notice([]), cluster: undefined }, 'detail.cluster: required'],
    [
      'a time that is not RFC 3339',
      { ...notice([]), observedAt: 'noon' },
      'detail.observedAt: "noon" is not an RFC 3339 time',
    ],
    [
      'a part index beyond its count',
      { ...notice([]), part: { index: 2, count: 2, batchId: 'b' } },
      'detail.part.index: must be below part.count (2), got 2',
    ],
    [
      'a DaemonSet template with a uid',
      { ...notice([]), daemonSets: [{ ...daemonSet('x'), template: { ...daemonSet('x').template, uid: 'u' } }] },
      'detail.daemonSets[0].template: unknown field "uid"',
    ],
    ['a detail that is an array', [], 'detail: must be an object, got array'],
    ['a detail that is a string', 'notice', 'detail: must be an object, got string'],
    ['no detail at all', undefined, 'detail: missing'],
  ])('names the field: %s', (_name, detail, problem) => {
    expect(problemsOf(detail)).toContainEqual(expect.stringContaining(problem));
  });

  it('refuses more pods than the stated bound, with both numbers', () => {
    const pods = Array.from({ length: MAX_NOTICE_PODS + 1 }, () => ({}));
    expect(problemsOf({ ...notice([]), pods })).toContain(
      `detail.pods: must have at most ${MAX_NOTICE_PODS} items, got ${MAX_NOTICE_PODS + 1}`,
    );
  });

  it('refuses a notice over one PutEvents entry, with its size', () => {
    const detail = notice([noticePod(0, { labels: { big: 'x'.repeat(MAX_NOTICE_BYTES) } })]);
    const [problem] = problemsOf(detail);
    expect(problem).toMatch(new RegExp(`^detail: \\d+ bytes, over the ${MAX_NOTICE_BYTES}-byte limit`));
  });

  it('stops after a bounded number of problems', () => {
    const pods = Array.from({ length: 500 }, (_, i) => ({ ...noticePod(i), uid: 5 }));
    const problems = problemsOf(notice(pods as never));
    expect(problems).toHaveLength(MAX_PROBLEMS + 1);
    expect(problems.at(-1)).toBe(`(stopped after ${MAX_PROBLEMS} problems)`);
  });

  it('runs the injected pod validator on every pod and DaemonSet template once the shape is right', () => {
    const seen: string[] = [];
    const result = validateNotice(notice([noticePod(0), noticePod(1)]), {
      validatePod: (pod, path) => {
        seen.push(path);
        return pod.containers.length > 0 && path.endsWith('[1]') ? [`${path}.containers[0].image: required`] : [];
      },
    });
    expect(seen).toEqual(['detail.pods[0]', 'detail.pods[1]', 'detail.daemonSets[0].template']);
    expect(result).toEqual({ ok: false, problems: ['detail.pods[1].containers[0].image: required'] });
  });

  it('does not call the pod validator on a malformed notice, and survives one that throws', () => {
    let calls = 0;
    validateNotice(withPod({ uid: 3 }), {
      validatePod: () => {
        calls++;
        return [];
      },
    });
    expect(calls).toBe(0);
    const result = validateNotice(notice([noticePod(0)]), {
      validatePod: () => {
        throw new Error('boom');
      },
    });
    expect(result).toEqual({
      ok: false,
      problems: expect.arrayContaining(['detail.pods[0]: the pod validator failed (boom)']),
    });
  });
});
