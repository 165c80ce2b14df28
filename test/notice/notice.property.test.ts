import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  mergeNotices,
  type NoticeDaemonSet,
  type NoticePod,
  type PodsUnschedulableDetail,
  splitNotice,
  validateNotice,
} from '../../shared/notice';
import { mutate, mutationArb, randomInput } from '../helpers/mutate';
import { daemonSet, notice, noticePod } from './helpers';

const RUNS = { numRuns: 300 };

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
const labels = fc.dictionary(fc.stringMatching(/^[a-z]{1,10}(\/[a-z]{1,10})?$/), fc.string({ maxLength: 63 }), {
  maxKeys: 4,
});
const quantity = fc.oneof(
  fc.integer({ min: 0, max: 64 }).map(String),
  fc.integer({ min: 1, max: 64_000 }).map((n) => `${n}m`),
  fc.integer({ min: 1, max: 512 }).map((n) => `${n}Gi`),
);
const container = fc.record(
  {
    name,
    resources: fc.record({ requests: fc.dictionary(fc.constantFrom('cpu', 'memory', 'nvidia.com/gpu'), quantity) }),
  },
  { requiredKeys: ['name'] },
);
const toleration = fc.record(
  {
    key: fc.string({ maxLength: 30 }),
    operator: fc.constantFrom('Exists' as const, 'Equal' as const),
    value: fc.string({ maxLength: 20 }),
    effect: fc.constantFrom('NoSchedule' as const, 'PreferNoSchedule' as const, 'NoExecute' as const),
    tolerationSeconds: fc.integer({ min: 0, max: 3600 }),
  },
  { requiredKeys: [] },
);
const spread = fc.record(
  {
    maxSkew: fc.integer({ min: 1, max: 5 }),
    topologyKey: fc.constantFrom('topology.kubernetes.io/zone', 'kubernetes.io/hostname'),
    whenUnsatisfiable: fc.constantFrom('DoNotSchedule' as const, 'ScheduleAnyway' as const),
    labelSelector: fc.record({ matchLabels: labels }),
  },
  { requiredKeys: ['maxSkew', 'topologyKey', 'whenUnsatisfiable'] },
);
const podBody = fc.record(
  {
    labels,
    ownerKind: fc.constantFrom('ReplicaSet', 'StatefulSet', 'Job'),
    containers: fc.array(container, { minLength: 1, maxLength: 3 }),
    nodeSelector: labels,
    tolerations: fc.array(toleration, { maxLength: 3 }),
    topologySpreadConstraints: fc.array(spread, { maxLength: 2 }),
    priority: fc.integer({ min: -1000, max: 1_000_000_000 }),
  },
  { requiredKeys: ['containers'] },
);
const pods = fc
  .uniqueArray(fc.tuple(fc.uuid(), name, name, podBody), { selector: ([uid]) => uid, maxLength: 60 })
  .map((list) =>
    list.map(([uid, namespace, podName, body]): NoticePod => ({ namespace, name: podName, uid, ...body })),
  );
const daemonSets = fc
  .uniqueArray(fc.tuple(name, name, podBody), { selector: ([ns, n]) => `${ns}/${n}`, maxLength: 4 })
  .map((list) => list.map(([namespace, dsName, template]): NoticeDaemonSet => ({ namespace, name: dsName, template })));
const validNotice: fc.Arbitrary<PodsUnschedulableDetail> = fc.record({
  cluster: name,
  observedAt: fc
    .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  pods,
  daemonSets,
});

const SAMPLE = notice(
  [
    noticePod(0, {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['b'] }] }],
          },
        },
      },
    }),
    noticePod(1),
  ],
  [daemonSet('aws-node')],
);

function wellFormed(result: ReturnType<typeof validateNotice>): void {
  if (!result.ok) {
    expect(result.problems.length).toBeGreaterThan(0);
    for (const p of result.problems) expect(p).toMatch(/^(detail|\(stopped)/);
  }
}

describe('validateNotice never throws', () => {
  it('on random values and text', () => {
    fc.assert(
      fc.property(randomInput, (input) => wellFormed(validateNotice(input))),
      RUNS,
    );
  });

  it('on mutated valid notices, and says where', () => {
    fc.assert(
      fc.property(fc.array(mutationArb, { minLength: 1, maxLength: 4 }), (mutations) => {
        const result = validateNotice(mutate(SAMPLE, mutations));
        wellFormed(result);
        // Whatever passes is again a notice the core can read.
        if (result.ok) expect(validateNotice(JSON.parse(JSON.stringify(result.detail))).ok).toBe(true);
      }),
      RUNS,
    );
  });

  it('on truncated notice JSON parsed as far as it goes', () => {
    const text = JSON.stringify(SAMPLE);
    fc.assert(
      fc.property(fc.nat({ max: text.length - 1 }), (n) => {
        let value: unknown;
        try {
          value = JSON.parse(text.slice(0, n));
        } catch {
          value = text.slice(0, n);
        }
        expect(validateNotice(value).ok).toBe(false);
      }),
      RUNS,
    );
  });
});

describe('valid notices', () => {
  it('pass validation', () => {
    fc.assert(
      fc.property(validNotice, (detail) => {
        const result = validateNotice(detail);
        expect(result.ok ? [] : result.problems).toEqual([]);
      }),
      RUNS,
    );
  });

  it('round-trip through split and merge unchanged, every part valid and under the limit', () => {
    fc.assert(
      fc.property(validNotice, fc.integer({ min: 6_000, max: 40_000 }), fc.nat(), (detail, limit, seed) => {
        const parts = splitNotice(detail, limit);
        for (const p of parts) {
          expect(Buffer.byteLength(JSON.stringify(p), 'utf8')).toBeLessThanOrEqual(limit);
          expect(validateNotice(p).ok).toBe(true);
        }
        // Parts arrive in any order.
        const shuffled = parts
          .map((p, i) => ({ p, k: (i * 7919 + seed) % (parts.length + 13) }))
          .sort((a, b) => a.k - b.k);
        expect(mergeNotices(shuffled.map((s) => s.p))).toEqual(detail);
      }),
      RUNS,
    );
  });
});
