import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { KUBE } from '../../shared/contracts';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const docs = parseAllDocuments(readFileSync('infra/kubernetes/rbac.yaml', 'utf8')).map((d) => d.toJS());
const named = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);
const role = named('ClusterRole', 'karpless-provisioner') as { rules: Rule[] };
const binding = named('ClusterRoleBinding', 'karpless-provisioner');
const reader = named('ClusterRole', 'karpless-provision-reader') as { rules: Rule[] };
const readerBinding = named('ClusterRoleBinding', 'karpless-provision-reader');

function allowed(group: string, resource: string, verb: string, of = role): boolean {
  return of.rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
}

describe('infra/kubernetes/rbac.yaml', () => {
  it('binds the cluster role to the group the access entries map the functions to', () => {
    expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: KUBE.rbacGroup }]);
    expect(binding.roleRef.name).toBe('karpless-provisioner');
  });

  it.each([
    ['', 'nodes', 'get'],
    ['', 'nodes', 'list'],
    ['', 'nodes', 'watch'],
    ['', 'nodes', 'patch'],
    ['', 'nodes', 'delete'],
    ['', 'pods', 'list'],
    ['', 'pods', 'watch'],
    ['', 'pods/eviction', 'create'],
    ['', 'pods', 'delete'],
    ['storage.k8s.io', 'volumeattachments', 'list'],
    ['storage.k8s.io', 'volumeattachments', 'watch'],
    ['', 'persistentvolumeclaims', 'get'],
    ['apps', 'daemonsets', 'list'],
    ['policy', 'poddisruptionbudgets', 'list'],
    ['', 'events', 'create'],
    ['', 'events', 'get'],
    ['', 'events', 'patch'],
    ['karpenter.sh', 'nodeclaims', 'get'],
    ['karpenter.sh', 'nodeclaims', 'list'],
    ['karpenter.sh', 'nodeclaims', 'create'],
    ['karpenter.sh', 'nodeclaims', 'patch'],
    ['karpenter.sh', 'nodeclaims', 'delete'],
    ['karpenter.sh', 'nodeclaims/status', 'patch'],
    ['karpenter.sh', 'nodepools', 'list'],
    ['karpenter.sh', 'nodepools', 'get'],
    ['karpenter.sh', 'nodepools', 'watch'],
    ['karpenter.sh', 'nodepools/status', 'patch'],
    ['karpenter.k8s.aws', 'ec2nodeclasses', 'list'],
    ['karpenter.k8s.aws', 'ec2nodeclasses', 'get'],
    ['karpenter.k8s.aws', 'ec2nodeclasses', 'watch'],
    ['karpenter.k8s.aws', 'ec2nodeclasses/status', 'patch'],
    // The EC2NodeClass termination finalizer (configuration from the cluster).
    ['karpenter.k8s.aws', 'ec2nodeclasses', 'patch'],
    ['coordination.k8s.io', 'leases', 'list'],
  ])('allows %s/%s %s, a call karpless makes', (group, resource, verb) => {
    expect(allowed(group, resource, verb)).toBe(true);
  });

  it.each([
    ['', 'pods', 'create'],
    ['', 'pods', 'patch'],
    ['storage.k8s.io', 'volumeattachments', 'delete'],
    ['', 'persistentvolumeclaims', 'list'],
    ['', 'persistentvolumeclaims', 'patch'],
    ['', 'persistentvolumes', 'get'],
    ['', 'secrets', 'get'],
    ['', 'nodes', 'create'],
    ['apps', 'daemonsets', 'patch'],
    ['policy', 'poddisruptionbudgets', 'delete'],
    ['karpenter.sh', 'nodepools', 'patch'],
    ['karpenter.k8s.aws', 'ec2nodeclasses', 'delete'],
    ['coordination.k8s.io', 'leases', 'update'],
  ])('does not allow %s/%s %s', (group, resource, verb) => {
    expect(allowed(group, resource, verb)).toBe(false);
  });
});

describe('infra/kubernetes/rbac.yaml: the provision function', () => {
  it('binds the read-only role to the group its access entry maps it to', () => {
    expect(readerBinding.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: KUBE.readerRbacGroup },
    ]);
    expect(readerBinding.roleRef.name).toBe('karpless-provision-reader');
  });

  it.each([
    ['', 'pods', 'list'],
    ['', 'nodes', 'list'],
    ['', 'persistentvolumeclaims', 'list'],
    ['', 'persistentvolumes', 'list'],
    ['storage.k8s.io', 'storageclasses', 'list'],
    ['coordination.k8s.io', 'leases', 'list'],
    ['karpenter.sh', 'nodepools', 'list'],
    ['karpenter.k8s.aws', 'ec2nodeclasses', 'list'],
  ])('allows %s/%s %s, a read of the provision decision', (group, resource, verb) => {
    expect(allowed(group, resource, verb, reader)).toBe(true);
  });

  it('allows nothing but reads: lists, and get and watch of the configuration read from the cluster', () => {
    const verbs = new Set(reader.rules.flatMap((r) => r.verbs));
    expect([...verbs].sort()).toEqual(['get', 'list', 'watch']);
    const readsMore = reader.rules.filter((r) => r.verbs.some((v) => v !== 'list'));
    expect(readsMore.flatMap((r) => r.resources).sort()).toEqual(['ec2nodeclasses', 'nodepools']);
    const resources = reader.rules.flatMap((r) => r.resources).sort();
    expect(resources).toEqual([
      'ec2nodeclasses',
      'leases',
      'nodepools',
      'nodes',
      'persistentvolumeclaims',
      'persistentvolumes',
      'pods',
      'storageclasses',
    ]);
  });
});
