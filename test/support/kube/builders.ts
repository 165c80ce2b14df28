// Small builders for the objects tests put into the fake API server.

import type { Node, OwnerReference, Pod, Workload } from '../../../shared/apis/core/v1';
import type { Taint } from '../../../shared/apis/v1/types';

export interface PodOptions {
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  nodeName?: string;
  owner?: Pick<OwnerReference, 'kind' | 'name'>;
  phase?: string;
  cpu?: string;
}

export function pod(name: string, options: PodOptions = {}): Pod {
  const result: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: options.namespace ?? 'default' },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu: options.cpu ?? '100m' } } }] },
  };
  if (options.labels) result.metadata.labels = options.labels;
  if (options.annotations) result.metadata.annotations = options.annotations;
  if (options.owner) {
    result.metadata.ownerReferences = [{ apiVersion: 'apps/v1', controller: true, ...options.owner }];
  }
  if (options.nodeName) result.spec.nodeName = options.nodeName;
  if (options.phase) result.status = { phase: options.phase };
  return result;
}

export interface NodeOptions {
  labels?: Record<string, string>;
  taints?: Taint[];
  finalizers?: string[];
  providerID?: string;
}

export function node(name: string, options: NodeOptions = {}): Node {
  const result: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...options.labels } },
    spec: {},
  };
  if (options.finalizers) result.metadata.finalizers = options.finalizers;
  if (options.taints) result.spec = { ...result.spec, taints: options.taints };
  if (options.providerID) result.spec = { ...result.spec, providerID: options.providerID };
  return result;
}

export function daemonSet(name: string, namespace = 'kube-system'): Workload {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name, resources: { requests: { cpu: '50m', memory: '64Mi' } } }] },
      },
    },
  };
}
