// What the fake API server answers with when it says no: `Status` objects shaped as the real server
// writes them, and the PodDisruptionBudget arithmetic of the eviction subresource.

import { type LabelSelectorObject, matchesLabelSelector } from './selectors';
import type { StoredObject } from './store';

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; causes?: { reason: string; message: string }[] };
  code: number;
}

export function failure(code: number, reason: string, message: string, details?: StatusBody['details']): StatusBody {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

export function success(code: number): StatusBody {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code };
}

export const REASON_BY_CODE: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export function notFound(resource: string, name: string): StatusBody {
  return failure(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource });
}

export function conflict(resource: string, name: string): StatusBody {
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, kind: resource },
  );
}

export interface PodDisruptionBudget {
  namespace: string;
  name: string;
  selector: LabelSelectorObject;
  /** An integer or a percentage such as "50%" (rounded up, as the disruption controller does). */
  minAvailable?: number | string;
  maxUnavailable?: number | string;
  /**
   * The workload's scale, which the disruption controller reads from the pods' controller. The
   * fake has no controllers, so without it the matching pods are counted: an evicted pod then
   * shrinks the expectation instead of counting as unavailable.
   */
  expectedPods?: number;
}

function scaled(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const percent = /^(\d+)%$/.exec(value);
  if (!percent)
    throw new Error(`PodDisruptionBudget value ${JSON.stringify(value)} is neither a number nor a percentage`);
  return Math.ceil((Number(percent[1]) * total) / 100);
}

function isActive(pod: StoredObject): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && pod.metadata.deletionTimestamp === undefined;
}

function isHealthy(pod: StoredObject): boolean {
  if (pod.status?.phase !== 'Running') return false;
  const conditions = (pod.status?.conditions ?? []) as { type: string; status: string }[];
  return !conditions.some((c) => c.type === 'Ready' && c.status !== 'True');
}

/** What the disruption controller writes into the budget's status: healthy pods, desired, allowed. */
export function budgetStatus(
  budget: PodDisruptionBudget,
  pods: StoredObject[],
): { healthy: number; desiredHealthy: number; disruptionsAllowed: number } {
  const selected = pods.filter(
    (p) =>
      (p.metadata.namespace ?? 'default') === budget.namespace &&
      isActive(p) &&
      matchesLabelSelector(budget.selector, p.metadata.labels ?? {}),
  );
  const expected = budget.expectedPods ?? selected.length;
  const healthy = selected.filter(isHealthy).length;
  const desiredHealthy =
    budget.minAvailable !== undefined
      ? scaled(budget.minAvailable, expected)
      : expected - scaled(budget.maxUnavailable ?? 0, expected);
  return { healthy, desiredHealthy, disruptionsAllowed: Math.max(0, healthy - desiredHealthy) };
}

/**
 * The eviction subresource's decision for one pod: undefined when allowed, else the Status to
 * answer (429 when a budget has no disruption left, 500 when several budgets select the pod).
 */
export function evictionRefusal(
  pod: StoredObject,
  pods: StoredObject[],
  budgets: PodDisruptionBudget[],
): StatusBody | undefined {
  const namespace = pod.metadata.namespace ?? 'default';
  const labels = pod.metadata.labels ?? {};
  const matching = budgets.filter((b) => b.namespace === namespace && matchesLabelSelector(b.selector, labels));
  if (matching.length === 0) return undefined;
  if (matching.length > 1) {
    return failure(
      500,
      'InternalError',
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  }
  const budget = matching[0] as PodDisruptionBudget;
  // An unhealthy pod does not count against the budget, so evicting it is always allowed.
  if (!isHealthy(pod)) return undefined;
  const { healthy, desiredHealthy, disruptionsAllowed } = budgetStatus(budget, pods);
  if (disruptionsAllowed >= 1) return undefined;
  return failure(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
    causes: [
      {
        reason: 'DisruptionBudget',
        message: `The disruption budget ${budget.name} needs ${desiredHealthy} healthy pods and has ${healthy} currently`,
      },
    ],
  });
}
