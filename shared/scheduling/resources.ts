// Pod resource requests as the kube-scheduler computes them, in the base units of shared/instancetypes
// (cpu millicores, memory and storage bytes, counts otherwise).

import type { Container, Pod } from '../apis/core/v1';
import { parseQuantity } from '../apis/quantity';
import type { Resources } from '../instancetypes/types';

export const CPU = 'cpu';
export const MEMORY = 'memory';
export const PODS = 'pods';
/** The resources a pod may set at pod level (resourcehelper.IsSupportedPodLevelResource). */
const POD_LEVEL_RESOURCES = [CPU, MEMORY];

/** One quantity in base units; cpu is rounded up to whole millicores as the API server does. */
export function amount(resource: string, quantity: string | number): number {
  const value = parseQuantity(quantity);
  return resource === CPU ? Math.ceil(value * 1000 - 1e-9) : Math.ceil(value - 1e-9);
}

export function resourceList(list: Record<string, string> | undefined): Resources {
  const out: Resources = {};
  if (!list) return out;
  for (const [name, quantity] of Object.entries(list)) out[name] = amount(name, quantity);
  return out;
}

function containerRequests(container: Container): Resources {
  // Limits without requests default the requests (API server defaulting).
  return { ...resourceList(container.resources?.limits), ...resourceList(container.resources?.requests) };
}

function addInto(target: Resources, source: Resources): void {
  for (const [name, value] of Object.entries(source)) target[name] = (target[name] ?? 0) + value;
}

function maxInto(target: Resources, source: Resources): void {
  for (const [name, value] of Object.entries(source)) target[name] = Math.max(target[name] ?? 0, value);
}

/**
 * max(each init container plus the native sidecars started before it, containers + all sidecars)
 * + overhead, plus one `pods` slot (resourcehelper.PodRequests).
 */
export function podRequests(pod: Pod): Resources {
  const total: Resources = {};
  for (const c of pod.spec.containers ?? []) addInto(total, containerRequests(c));
  const sidecars: Resources = {};
  const initPeak: Resources = {};
  for (const c of pod.spec.initContainers ?? []) {
    const requests = containerRequests(c);
    if (c.restartPolicy === 'Always') {
      addInto(sidecars, requests);
      maxInto(initPeak, { ...sidecars });
    } else {
      const peak = { ...sidecars };
      addInto(peak, requests);
      maxInto(initPeak, peak);
    }
  }
  addInto(total, sidecars);
  maxInto(total, initPeak);
  // Pod-level requests (limits default them) stand for the whole pod for the resources they name.
  const podLevel = { ...resourceList(pod.spec.resources?.limits), ...resourceList(pod.spec.resources?.requests) };
  for (const name of POD_LEVEL_RESOURCES) if (podLevel[name] !== undefined) total[name] = podLevel[name];
  addInto(total, resourceList(pod.spec.overhead));
  total[PODS] = (total[PODS] ?? 0) + 1;
  for (const [name, value] of Object.entries(total)) if (value === 0) delete total[name];
  return total;
}

export function addResources(...all: Resources[]): Resources {
  const out: Resources = {};
  for (const r of all) addInto(out, r);
  return out;
}

/** Whether `requests` fit in `allocatable` (a resource the node lacks counts as 0). */
export function fits(requests: Resources, allocatable: Resources): boolean {
  for (const [name, value] of Object.entries(requests)) if (value > (allocatable[name] ?? 0)) return false;
  return true;
}
