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
const role = docs.find((d) => d.kind === 'ClusterRole') as { rules: Rule[] };
const binding = docs.find((d) => d.kind === 'ClusterRoleBinding');

function allowed(group: string, resource: string, verb: string): boolean {
  return role.rules.some(
    (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
  );
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
    ['apps', 'daemonsets', 'list'],
    ['policy', 'poddisruptionbudgets', 'list'],
    ['', 'events', 'create'],
  ])('allows %s/%s %s, a call karpless makes', (group, resource, verb) => {
    expect(allowed(group, resource, verb)).toBe(true);
  });

  it.each([
    ['', 'pods', 'delete'],
    ['', 'secrets', 'get'],
    ['', 'nodes', 'create'],
    ['apps', 'daemonsets', 'patch'],
    ['policy', 'poddisruptionbudgets', 'delete'],
  ])('does not allow %s/%s %s', (group, resource, verb) => {
    expect(allowed(group, resource, verb)).toBe(false);
  });
});
