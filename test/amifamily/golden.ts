// Helpers for the upstream golden files reconstructed in testdata/ (see karpenter-v1.md §3.6).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UserDataInput } from '../../shared/amifamily/userdata';

export const NODE_CLASS = 'default';
export const NODE_POOL = 'default-pool';

export function testdata(name: string): string {
  return readFileSync(join(import.meta.dirname, 'testdata', name), 'utf8');
}

/** Fills Go's %s placeholders in order (node class, nodepool label key, nodepool) and unescapes %%. */
export function fill(text: string, values: string[] = [NODE_CLASS, 'karpenter.sh/nodepool', NODE_POOL]): string {
  let i = 0;
  return text.replace(/%%|%s/g, (m) => (m === '%%' ? '%' : (values[i++] ?? '')));
}

/** Upstream compares after removing every newline. */
export function flat(text: string): string {
  return text.replaceAll('\n', '');
}

/** The upstream test environment (pkg/test/environment.go). */
export function testInput(overrides: Partial<UserDataInput> = {}): UserDataInput {
  return {
    family: 'AL2',
    clusterName: 'test-cluster',
    clusterEndpoint: 'https://test-cluster',
    caBundle: 'Y2EtYnVuZGxlCg==',
    clusterCIDR: '10.100.0.0/16',
    kubelet: { maxPods: 110, clusterDNS: ['10.0.100.10'] },
    taints: [],
    labels: {
      'testing/cluster': 'unspecified',
      'karpenter.sh/nodepool': NODE_POOL,
      'karpenter.k8s.aws/ec2nodeclass': NODE_CLASS,
      'node.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/zone': 'test-zone-1a',
    },
    capacityType: 'on-demand',
    ...overrides,
  };
}
