// EC2NodeClass status on the API server, where Karpenter's v1 CRDs are installed: what the drift
// function resolved this run (subnets, security groups, AMIs, instance profile, capacity reservations,
// placement group, and the conditions InstanceProfileReady, SubnetsReady, SecurityGroupsReady,
// AMIsReady, Ready), so `kubectl get ec2nodeclasses -o wide` prints NAME READY AGE ROLE as with
// Karpenter. The drift function writes it because it already resolves every node class each minute
// for its drift checks: the status shows exactly what drift and launches use, at no extra AWS call.

import { type ClusterObject, clusterObjectProblems } from '../apis/cluster-configuration';
import { formatProblem, type Problem } from '../apis/problems';
import type { Condition, EC2NodeClassStatus } from '../apis/v1/types';
import type { KarpenterObject, KarpenterObjectsApi } from '../kube/karpenter';
import { canonicalJson } from '../launch/canonical';
import { CONDITION_READY } from '../nodeclass/readiness';
import { errorMessage } from '../providers/aws-errors';
import type { Clock } from '../providers/clock';
import type { RuntimeLog } from './telemetry';

/** How long the answer to "is the EC2NodeClass CRD installed?" is trusted. */
const SERVED_TTL_MS = 5 * 60_000;

export interface NodeClassStatusDeps {
  karpenter: Pick<KarpenterObjectsApi, 'servedResources' | 'list' | 'patch'>;
  log: RuntimeLog;
  clock: Clock;
}

export interface NodeClassStatusReport {
  /** False when the EC2NodeClass CRD is not installed (nothing was written). */
  crd: boolean;
  updated: string[];
  /** Objects in the cluster that the deployed configuration does not hold. */
  unknown: string[];
}

export class NodeClassStatusWriter {
  private served: { yes: boolean; at: number } | undefined;

  constructor(private readonly deps: NodeClassStatusDeps) {}

  /** Writes each EC2NodeClass object's status from its resolution (by name); best effort, never throws. */
  async write(resolved: ReadonlyMap<string, EC2NodeClassStatus>): Promise<NodeClassStatusReport> {
    const report: NodeClassStatusReport = { crd: false, updated: [], unknown: [] };
    try {
      if (!(await this.crdServed())) return report;
      report.crd = true;
      const now = new Date(this.deps.clock()).toISOString();
      for (const object of (await this.deps.karpenter.list('ec2nodeclasses')).items) {
        const name = object.metadata.name;
        const fresh = resolved.get(name);
        if (!fresh) report.unknown.push(name);
        const problems = clusterObjectProblems('EC2NodeClass', object as ClusterObject);
        const status = stableStatus(withValidation(fresh ?? notConfigured(name), problems), object, now);
        if (sameJson(object.status ?? {}, status)) continue;
        await this.deps.karpenter.patch(
          'ec2nodeclasses',
          name,
          { status: replacing(object.status, status) },
          { status: true },
        );
        report.updated.push(name);
      }
    } catch (error) {
      // Status is for people reading the cluster; drift goes on without it.
      this.deps.log.warn('writing EC2NodeClass status failed, will retry next run', { error: errorMessage(error) });
    }
    return report;
  }

  private async crdServed(): Promise<boolean> {
    const now = this.deps.clock();
    if (this.served && now - this.served.at < SERVED_TTL_MS) return this.served.yes;
    const yes = (await this.deps.karpenter.servedResources()).has('ec2nodeclasses');
    this.served = { yes, at: now };
    return yes;
  }
}

/** An object karpless was not deployed with: Ready=False saying how to fix it, not a stale Ready. */
function notConfigured(name: string): EC2NodeClassStatus {
  return {
    conditions: [
      {
        type: CONDITION_READY,
        status: 'False',
        reason: 'NotInConfiguration',
        message: `karpless was deployed without EC2NodeClass ${name}; add its manifest to the configuration given to cdk deploy`,
        lastTransitionTime: '',
      },
    ],
  };
}

/**
 * ValidationSucceeded, as Karpenter's EC2NodeClass carries it: False names the field (the same
 * validation the configuration read from the cluster makes), and then Ready is False too.
 */
export function withValidation(status: EC2NodeClassStatus, problems: readonly Problem[]): EC2NodeClassStatus {
  const message = problems.map(formatProblem).join('; ');
  const validation: Condition = message
    ? { type: CONDITION_VALIDATION, status: 'False', reason: 'ValidationFailed', message, lastTransitionTime: '' }
    : { type: CONDITION_VALIDATION, status: 'True', reason: CONDITION_VALIDATION, message: '', lastTransitionTime: '' };
  const others = (status.conditions ?? []).filter((c) => c.type !== CONDITION_VALIDATION);
  const conditions = message
    ? others.map((c) =>
        c.type === CONDITION_READY
          ? { ...c, status: 'False' as const, reason: 'ValidationSucceededNotTrue', message }
          : c,
      )
    : others;
  return { ...status, conditions: [validation, ...conditions] };
}

const CONDITION_VALIDATION = 'ValidationSucceeded';

/**
 * The resolution's conditions keep the object's lastTransitionTime where their status did not change
 * (a resolution stamps every condition with its own time), and carry the object's generation.
 */
export function stableStatus(status: EC2NodeClassStatus, object: KarpenterObject, now: string): EC2NodeClassStatus {
  const before = new Map(
    (((object.status as EC2NodeClassStatus | undefined)?.conditions ?? []) as Condition[]).map((c) => [c.type, c]),
  );
  const conditions = (status.conditions ?? []).map((c): Condition => {
    const previous = before.get(c.type);
    const { observedGeneration: _, ...rest } = c;
    return {
      ...rest,
      lastTransitionTime:
        previous && previous.status === c.status && previous.lastTransitionTime ? previous.lastTransitionTime : now,
      ...(object.metadata.generation !== undefined ? { observedGeneration: object.metadata.generation } : {}),
    };
  });
  return { ...status, conditions };
}

/** A merge patch that leaves no field of the old status behind (null deletes it). */
function replacing(old: unknown, status: EC2NodeClassStatus): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...status };
  for (const key of Object.keys((old as Record<string, unknown> | undefined) ?? {})) {
    if (!(key in patch)) patch[key] = null;
  }
  return patch;
}

function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
