// A real kubectl against the fake API server: discovery finds the built-in resources and, once
// Karpenter's CRDs are installed, the karpenter.sh and karpenter.k8s.aws groups; `kubectl get` prints
// the server-side Tables (nodes, pods, the CRDs' printer columns, -o wide) and `kubectl describe pod`
// the pod's events. The server's clock is fixed, so every AGE is known.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { karpenterCrds } from '../../shared/apis/v1/crds';
import { node, pod } from '../support/kube/builders';
import { FakeApiServer, testTls } from '../support/kube/fake-apiserver';
import { findKubectl, Kubectl, writeKubeconfig } from '../support/kube/kubectl';

const NOW = new Date('2026-12-03T12:00:00Z');
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();
const binary = findKubectl();

/** Splits kubectl's column output into rows of cells (columns are separated by 2+ spaces). */
function table(text: string): string[][] {
  return text
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));
}

describe('kubectl against the fake API server', () => {
  let server: FakeApiServer;
  let kubectl: Kubectl;

  beforeAll(async () => {
    if (!binary) throw new Error('no kubectl: set $KUBECTL or install Debian kubernetes-client (.ci/run does)');
    // https with the test CA: kubectl sends a bearer token only over TLS.
    server = await FakeApiServer.start({ now: () => NOW, token: 'kubectl-token', tls: testTls() });
    kubectl = new Kubectl(binary, writeKubeconfig(server.url, { token: 'kubectl-token', ca: server.ca ?? '' }));
    server.addNode({
      ...node('ip-10-0-1-17.us-west-2.compute.internal', { labels: { 'karpenter.sh/nodepool': 'general' } }),
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        nodeInfo: { kubeletVersion: 'v1.32.3-eks-1a2b3c' },
        addresses: [{ type: 'InternalIP', address: '10.0.1.17' }],
      },
    } as never);
    server.updateNode('ip-10-0-1-17.us-west-2.compute.internal', (n) => {
      n.metadata.creationTimestamp = minutesAgo(42);
    });
    const web = server.addPod({
      ...pod('web-1'),
      metadata: { ...pod('web-1').metadata, creationTimestamp: minutesAgo(3) },
    });
    server.putObject('events', {
      metadata: { name: 'web-1.nominated', namespace: 'default', creationTimestamp: minutesAgo(2) },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: web.metadata.uid, apiVersion: 'v1' },
      reason: 'Nominated',
      message: 'Pod should schedule on: nodeclaim/general-x2k9p',
      type: 'Normal',
      count: 1,
      firstTimestamp: minutesAgo(2),
      lastTimestamp: minutesAgo(2),
      source: { component: 'karpenter' },
    } as never);
    server.installCustomResources(karpenterCrds());
    server.putObject('ec2nodeclasses', <never>{
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'default', creationTimestamp: minutesAgo(90) },
      spec: { role: 'KarpenterNodeRole-demo' },
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready' }] },
    });
    server.putObject('nodepools', <never>{
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'general', creationTimestamp: minutesAgo(90) },
      spec: {
        template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } } },
      },
      status: { resources: { nodes: '1', cpu: '2' }, conditions: [{ type: 'Ready', status: 'True' }] },
    });
    server.putObject('nodeclaims', <never>{
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name: 'general-x2k9p',
        creationTimestamp: minutesAgo(5),
        labels: {
          'node.kubernetes.io/instance-type': 'm5.large',
          'karpenter.sh/capacity-type': 'spot',
          'topology.kubernetes.io/zone': 'us-west-2a',
          'karpenter.sh/nodepool': 'general',
        },
      },
      spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
      status: {
        nodeName: 'ip-10-0-1-17.us-west-2.compute.internal',
        conditions: [{ type: 'Ready', status: 'Unknown' }],
      },
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('finds the resources by discovery and prints nodes as the API server tables them', async () => {
    const rows = table(await kubectl.ok('get', 'nodes'));
    expect(rows[0]).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    expect(rows[1]).toEqual([
      'ip-10-0-1-17.us-west-2.compute.internal',
      'Ready',
      '<none>',
      '42m',
      'v1.32.3-eks-1a2b3c',
    ]);
    const wide = table(await kubectl.ok('get', 'nodes', '-o', 'wide'));
    expect(wide[0]?.slice(0, 7)).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP']);
    expect(wide[1]?.[5]).toBe('10.0.1.17');
  });

  it('prints NodeClaims, NodePools and EC2NodeClasses with their CRDs printer columns', async () => {
    const claims = table(await kubectl.ok('get', 'nodeclaims'));
    expect(claims).toEqual([
      ['NAME', 'TYPE', 'CAPACITY', 'ZONE', 'NODE', 'READY', 'AGE'],
      ['general-x2k9p', 'm5.large', 'spot', 'us-west-2a', 'ip-10-0-1-17.us-west-2.compute.internal', 'Unknown', '5m'],
    ]);
    const classes = table(await kubectl.ok('get', 'ec2nodeclasses', '-o', 'wide'));
    expect(classes).toEqual([
      ['NAME', 'READY', 'AGE', 'ROLE'],
      ['default', 'True', '90m', 'KarpenterNodeRole-demo'],
    ]);
    expect(table(await kubectl.ok('get', 'ec2nc'))[0]).toEqual(['NAME', 'READY', 'AGE']);
    const all = await kubectl.ok('get', 'nodepools,nodeclaims,ec2nodeclasses');
    expect(all).toMatch(/nodepool\.karpenter\.sh\/general\s+default\s+1\s+True\s+90m/);
    expect(all).toMatch(/nodeclaim\.karpenter\.sh\/general-x2k9p\s+m5\.large/);
    expect(all).toMatch(/ec2nodeclass\.karpenter\.k8s\.aws\/default\s+True\s+90m/);
  });

  it('describes a pod with its events', async () => {
    const text = await kubectl.ok('describe', 'pod', 'web-1');
    expect(text).toMatch(/^Name:\s+web-1$/m);
    expect(text).toMatch(
      /Events:[\s\S]*Normal\s+Nominated\s+\S+\s+karpenter\s+Pod should schedule on: nodeclaim\/general-x2k9p/,
    );
  });
});

describe("kubectl against a fake API server without Karpenter's CRDs", () => {
  it('has no karpenter resources', async () => {
    if (!binary) throw new Error('no kubectl: set $KUBECTL or install Debian kubernetes-client (.ci/run does)');
    const bare = await FakeApiServer.start({ tls: testTls() });
    try {
      const kubectl = new Kubectl(binary, writeKubeconfig(bare.url, { ca: bare.ca ?? '' }));
      const result = await kubectl.run('get', 'nodeclaims');
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/doesn't have a resource type "nodeclaims"/);
      expect(await kubectl.ok('get', 'nodes')).toBe('');
    } finally {
      await bare.stop();
    }
  });
});
