// Candidate checks translated from upstream: pkg/utils/pdb/suite_test.go (CanEvictPods,
// IsCurrentlyReschedulable), pkg/utils/pod/suite_test.go (IsDoNotDisruptActive) and the
// NewCandidate rule of pkg/controllers/disruption/types.go (terminationGracePeriod, eventual class).

import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import { KUBE } from '../../shared/contracts';
import {
  checkCandidate,
  doNotDisrupt,
  NO_PDBS,
  pdbBlock,
  pdbLimits,
  stuckInPlace,
} from '../../shared/disruption/candidates';
import type { PodDisruptionBudget } from '../../shared/kube/types';
import { pod } from '../support/kube/builders';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const MINUTE = 60_000;

function running(
  name: string,
  options: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    startedMinutesAgo?: number;
    ready?: boolean;
  } = {},
): Pod {
  const base = pod(name, {
    cpu: '100m',
    owner: { kind: 'ReplicaSet', name: 'web' },
    ...(options.annotations ? { annotations: options.annotations } : {}),
  });
  return {
    ...base,
    metadata: { ...base.metadata, labels: { ...base.metadata.labels, ...options.labels } },
    status: {
      phase: 'Running',
      ...(options.startedMinutesAgo !== undefined
        ? { startTime: new Date(NOW - options.startedMinutesAgo * MINUTE).toISOString() }
        : {}),
      ...(options.ready === false ? { conditions: [{ type: 'Ready', status: 'False' }] } : {}),
    },
  };
}

function pdb(
  name: string,
  labels: Record<string, string>,
  allowed: number,
  spec: Partial<NonNullable<PodDisruptionBudget['spec']>> = {},
): PodDisruptionBudget {
  return {
    metadata: { name, namespace: 'default' },
    spec: { selector: { matchLabels: labels }, ...spec },
    status: { disruptionsAllowed: allowed },
  };
}

const node: Node = {
  metadata: { name: 'n', labels: { [KUBE.registeredLabel]: 'true', [KUBE.initializedLabel]: 'true' } },
};

describe('pkg/utils/pdb CanEvictPods', () => {
  const app = { app: 'web' };

  it('can evict pods when no PDBs match', () => {
    const limits = pdbLimits([pdb('other', { app: 'db' }, 0)]);
    expect(pdbBlock([running('a', { labels: app })], limits, NOW)).toBeUndefined();
  });

  it('cannot evict pods when a PDB allows zero disruptions', () => {
    const limits = pdbLimits([pdb('web', app, 0)]);
    expect(pdbBlock([running('a', { labels: app })], limits, NOW)).toBe(
      'PodDisruptionBudget default/web prevents evicting pod default/a',
    );
  });

  it('cannot evict pods with multiple PDBs on the same pod, even when both allow disruptions', () => {
    const limits = pdbLimits([pdb('web-1', app, 1), pdb('web-2', { app: 'web' }, 3)]);
    const block = pdbBlock([running('a', { labels: app })], limits, NOW);
    expect(block).toContain('default/web-1, default/web-2');
    expect(block).toContain('more than one');
  });

  it('can evict unhealthy pods when UnhealthyPodEvictionPolicy is set to always allow', () => {
    const limits = pdbLimits([pdb('web', app, 0, { unhealthyPodEvictionPolicy: 'AlwaysAllow' })]);
    expect(pdbBlock([running('a', { labels: app, ready: false })], limits, NOW)).toBeUndefined();
  });

  it("can't evict unhealthy pods when UnhealthyPodEvictionPolicy is not set", () => {
    const limits = pdbLimits([pdb('web', app, 0)]);
    expect(pdbBlock([running('a', { labels: app, ready: false })], limits, NOW)).toBeDefined();
  });

  it('ignores pods an eviction would not touch: finished, terminating, mirror, do-not-disrupt', () => {
    const limits = pdbLimits([pdb('web', app, 0)]);
    const done = { ...running('done', { labels: app }), status: { phase: 'Succeeded' } };
    const pinned = running('pinned', { labels: app, annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } });
    expect(pdbBlock([done, pinned], limits, NOW)).toBeUndefined();
  });

  it('reports a PDB with an unreadable selector by name instead of using it', () => {
    const bad: PodDisruptionBudget = {
      metadata: { name: 'broken', namespace: 'shop' },
      spec: { selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } },
    };
    const limits = pdbLimits([bad]);
    expect(limits.budgets).toEqual([]);
    expect(limits.invalid).toEqual([
      'PodDisruptionBudget shop/broken: spec.selector matchExpressions key app: operator In needs values',
    ]);
  });
});

describe('pkg/utils/pdb IsCurrentlyReschedulable', () => {
  it('does not consider a pod behind a fully blocking PDB as currently reschedulable', () => {
    const limits = pdbLimits([pdb('web', { app: 'web' }, 0, { maxUnavailable: 0 })]);
    expect(stuckInPlace(running('a', { labels: { app: 'web' } }), limits, NOW)).toBe(true);
  });

  it('considers unhealthy pod as currently reschedulable when UnhealthyPodEvictionPolicy is set to always allow', () => {
    const limits = pdbLimits([
      pdb('web', { app: 'web' }, 0, { minAvailable: '100%', unhealthyPodEvictionPolicy: 'AlwaysAllow' }),
    ]);
    expect(stuckInPlace(running('a', { labels: { app: 'web' }, ready: false }), limits, NOW)).toBe(false);
  });

  it('does not consider pod with do-not-disrupt annotation as currently reschedulable', () => {
    expect(stuckInPlace(running('a', { annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } }), NO_PDBS, NOW)).toBe(
      true,
    );
  });
});

describe('pkg/utils/pod IsDoNotDisruptActive', () => {
  const annotated = (value: string, startedMinutesAgo?: number) =>
    running('a', {
      annotations: { [KUBE.doNotDisruptAnnotation]: value },
      ...(startedMinutesAgo !== undefined ? { startedMinutesAgo } : {}),
    });

  it('should not be disruptable for active pod with non-expired duration', () => {
    expect(doNotDisrupt(annotated('30m', 10), NOW)).toEqual({ active: true, until: NOW + 20 * MINUTE });
  });

  it('should be disruptable for active pod with expired duration', () => {
    expect(doNotDisrupt(annotated('30m', 45), NOW).active).toBe(false);
  });

  it("should not be disruptable for active pod with 'true' annotation", () => {
    expect(doNotDisrupt(annotated('true', 600), NOW)).toEqual({ active: true });
  });

  it('treats a duration as active while the pod has no start time (fail safe)', () => {
    expect(doNotDisrupt(annotated('5m'), NOW).active).toBe(true);
  });

  it('treats an invalid value as no annotation, and says which pod carries it', () => {
    for (const value of ['yes', '-5m', '0s']) {
      const outcome = doNotDisrupt(annotated(value, 1), NOW);
      expect(outcome.active).toBe(false);
      expect(outcome.invalid).toContain(`pod default/a: karpenter.sh/do-not-disrupt="${value}"`);
    }
  });
});

describe('pkg/controllers/disruption/types.go NewCandidate', () => {
  const blocked = running('a', { labels: { app: 'web' } });
  const limits = pdbLimits([pdb('web', { app: 'web' }, 0)]);

  it('blocks a graceful disruption (consolidation) on a PDB, terminationGracePeriod or not', () => {
    const check = checkCandidate(
      { node, pods: [blocked], terminationGracePeriod: '1h' },
      { limits, now: NOW, disruptionClass: 'graceful' },
    );
    expect(check).toEqual({ ok: false, message: 'PodDisruptionBudget default/web prevents evicting pod default/a' });
  });

  it('lets an eventual disruption (drift) past a pod block when the claim has a terminationGracePeriod', () => {
    const check = checkCandidate(
      { node, pods: [blocked], terminationGracePeriod: '1h' },
      { limits, now: NOW, disruptionClass: 'eventual' },
    );
    expect(check.ok).toBe(true);
    expect(check.ok && check.ignoredBlock).toContain('terminationGracePeriod 1h bounds the drain');
  });

  it('blocks an eventual disruption without a terminationGracePeriod', () => {
    const check = checkCandidate({ node, pods: [blocked] }, { limits, now: NOW, disruptionClass: 'eventual' });
    expect(check.ok).toBe(false);
  });

  it('a DaemonSet pod with do-not-disrupt blocks too (upstream lets mirror and DaemonSet pods block)', () => {
    const daemon = pod('agent', {
      cpu: '10m',
      owner: { kind: 'DaemonSet', name: 'agent' },
      annotations: { [KUBE.doNotDisruptAnnotation]: 'true' },
    });
    const check = checkCandidate(
      { node, pods: [{ ...daemon, status: { phase: 'Running' } }] },
      { limits: NO_PDBS, now: NOW, disruptionClass: 'graceful' },
    );
    expect(check).toEqual({ ok: false, message: 'pod default/agent has the "karpenter.sh/do-not-disrupt" annotation' });
  });

  it('a node annotated do-not-disrupt is never a candidate, whatever its grace period', () => {
    const pinned: Node = {
      ...node,
      metadata: { ...node.metadata, annotations: { [KUBE.doNotDisruptAnnotation]: 'true' } },
    };
    const check = checkCandidate(
      { node: pinned, pods: [], terminationGracePeriod: '1h' },
      { limits: NO_PDBS, now: NOW, disruptionClass: 'eventual' },
    );
    expect(check.ok).toBe(false);
  });
});
