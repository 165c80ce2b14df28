import { describe, expect, it } from 'vitest';
import { buildConfiguration, loadConfiguration, requireConfiguration } from '../../shared/apis/config';
import { parseManifests } from '../../shared/apis/load';
import { ConfigurationError, formatProblem } from '../../shared/apis/problems';
import { type Json, nodeClaim, nodeClass, nodePool, set } from './v1/builders';

const docs = (...objects: Json[]) => objects.map((object, i) => ({ file: 'm.yaml', line: i + 1, object }));
const lenient = { strictReferences: false };
const strict = { strictReferences: true };

describe('buildConfiguration', () => {
  it('validates, defaults and returns NodePools and EC2NodeClasses', () => {
    const result = buildConfiguration(docs(nodePool(), nodeClass()), strict);
    expect(result.problems).toEqual([]);
    expect(result.config.nodePools.map((p) => p.metadata.name)).toEqual(['general']);
    expect(result.config.nodePools[0]?.spec.disruption?.budgets).toEqual([{ nodes: '10%' }]);
    expect(result.config.nodeClasses[0]?.spec.metadataOptions?.httpPutResponseHopLimit).toBe(1);
  });

  it('reports problems with file, Kind/name and path, and leaves the invalid object out', () => {
    const result = buildConfiguration(docs(set(nodePool(), 'spec.weight', 0), nodeClass()), lenient);
    expect(result.problems.map(formatProblem)).toEqual([
      'm.yaml: NodePool/general: spec.weight: Invalid value: 0: should be greater than or equal to 1',
    ]);
    expect(result.config.nodePools).toEqual([]);
    expect(result.config.nodeClasses).toHaveLength(1);
  });

  it('skips other kinds with a note and hands them back', () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } };
    const result = buildConfiguration(docs(deployment), lenient);
    expect(result.notes).toEqual(['m.yaml: skipped Deployment/web (not a Karpenter v1 kind)']);
    expect(result.others.map((d) => d.object)).toEqual([deployment]);
    expect(result.problems).toEqual([]);
  });

  it.each([
    ['karpenter.sh/v1beta1', 'NodePool'],
    ['karpenter.k8s.aws/v1beta1', 'EC2NodeClass'],
  ])('tells the user to run karpless convert for %s', (apiVersion, kind) => {
    const result = buildConfiguration(docs({ apiVersion, kind, metadata: { name: 'old' }, spec: {} }), lenient);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ severity: 'error', object: `${kind}/old`, path: 'apiVersion' });
    expect(result.problems[0]?.message).toContain('karpless convert m.yaml');
  });

  it('rejects v1alpha5 Provisioners with the migration path', () => {
    const result = buildConfiguration(
      docs({ apiVersion: 'karpenter.sh/v1alpha5', kind: 'Provisioner', metadata: { name: 'p' } }),
      lenient,
    );
    expect(result.problems[0]?.message).toMatch(/removed in Karpenter v0.33/);
  });

  it('rejects a Karpenter kind with an unknown apiVersion', () => {
    const result = buildConfiguration(docs(set(nodePool(), 'apiVersion', 'karpenter.sh/v2')), lenient);
    expect(result.problems.map(formatProblem)).toEqual([
      'm.yaml: NodePool/general: apiVersion: Unsupported value: "karpenter.sh/v2": supported values: "karpenter.sh/v1"',
    ]);
  });

  it('warns about a nodeClassRef naming no given EC2NodeClass and keeps the NodePool when not strict', () => {
    const result = buildConfiguration(docs(nodePool()), lenient);
    expect(result.problems.map(formatProblem)).toEqual([
      'm.yaml: NodePool/general: spec.template.spec.nodeClassRef: warning: EC2NodeClass/default is not among the given manifests: add the file that defines it, or fix the name',
    ]);
    expect(result.config.nodePools).toHaveLength(1);
  });

  it('makes the missing EC2NodeClass an error and drops the NodePool when strict', () => {
    const result = buildConfiguration(docs(nodePool(), set(nodeClass(), 'metadata.name', 'other')), strict);
    expect(result.problems).toMatchObject([{ severity: 'error', path: 'spec.template.spec.nodeClassRef' }]);
    expect(result.config.nodePools).toEqual([]);
  });

  it('flags a nodeClassRef to another provider', () => {
    const pool = set(nodePool(), 'spec.template.spec.nodeClassRef', {
      group: 'karpenter.azure.com',
      kind: 'AKSNodeClass',
      name: 'x',
    });
    const result = buildConfiguration(docs(pool, nodeClass()), strict);
    expect(result.problems[0]?.message).toMatch(/^karpless provisions only EC2NodeClass nodes/);
  });

  it('rejects duplicate names of one kind and keeps the first', () => {
    const result = buildConfiguration(
      [
        { file: 'a.yaml', line: 1, object: nodeClass() },
        { file: 'b.yaml', line: 1, object: set(nodeClass(), 'spec.role', 'Other') },
        { file: 'b.yaml', line: 9, object: nodePool() },
      ],
      strict,
    );
    expect(result.problems.map(formatProblem)).toEqual([
      'b.yaml: EC2NodeClass/default: metadata.name: duplicate EC2NodeClass name: EC2NodeClass/default is also defined in a.yaml; names must be unique per kind',
    ]);
    expect(result.config.nodeClasses.map((c) => c.spec.role)).toEqual(['KarpenterNodeRole-test']);
  });

  it('allows the same name for different kinds', () => {
    const pool = set(nodePool(), 'metadata.name', 'default');
    expect(buildConfiguration(docs(pool, nodeClass()), strict).problems).toEqual([]);
  });

  it('validates NodeClaims without adding them to the configuration', () => {
    const result = buildConfiguration(docs(set(nodeClaim(), 'spec.foo', 1)), lenient);
    expect(result.problems.map(formatProblem)).toEqual([
      'm.yaml: NodeClaim/general-abcde: spec.foo: unknown field "foo"',
    ]);
  });

  it('drops null fields before defaulting, as the API server does', () => {
    const result = buildConfiguration(docs(set(nodePool(), 'spec.weight', null), nodeClass()), strict);
    expect(result.config.nodePools[0]?.spec).not.toHaveProperty('weight');
  });

  it.each([
    ['bottlerocket@latest', "[settings.kubernetes\nmax-pods = 'x'"],
    ['al2023@latest', 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\nno parts here'],
  ])('rejects custom userData the %s node could not boot with, before any launch', (alias, userData) => {
    const bad = set(set(nodeClass(), 'spec.amiSelectorTerms', [{ alias }]), 'spec.userData', userData);
    const result = buildConfiguration(docs(bad), lenient);
    expect(result.problems).toEqual([
      expect.objectContaining({ severity: 'error', object: 'EC2NodeClass/default', path: 'spec.userData' }),
    ]);
    expect(result.problems[0]?.message).toMatch(/no node would join with it/);
    expect(result.config.nodeClasses).toEqual([]);
  });

  it('warns about Bottlerocket kubernetes settings that Karpenter drops, and keeps the class', () => {
    const userData = '[settings.kubernetes]\n"unknown-setting" = "x"\n';
    const withUserData = set(
      set(nodeClass(), 'spec.amiSelectorTerms', [{ alias: 'bottlerocket@latest' }]),
      'spec.userData',
      userData,
    );
    const result = buildConfiguration(docs(withUserData), lenient);
    expect(result.problems.map(formatProblem)).toEqual([
      'm.yaml: EC2NodeClass/default: spec.userData: warning: settings.kubernetes.unknown-setting is not a Bottlerocket kubernetes setting and is dropped, as Karpenter drops it',
    ]);
    expect(result.config.nodeClasses).toHaveLength(1);
  });

  it('accepts well-formed custom userData', () => {
    const script = set(nodeClass(), 'spec.userData', '#!/bin/bash\necho hello\n');
    expect(buildConfiguration(docs(script), lenient).problems).toEqual([]);
  });

  it('reports every problem across documents at once', () => {
    const text = [
      'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: a}\nspec: {weight: 500, template: {spec: {requirements: [], nodeClassRef: {group: "", kind: EC2NodeClass, name: x}}}}',
      'apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: x}\nspec: {amiSelectorTerms: [{alias: al2023}], subnetSelectorTerms: [], securityGroupSelectorTerms: [{id: sg-1}]}',
    ].join('\n---\n');
    const result = buildConfiguration(parseManifests(text, 'all.yaml').documents, lenient);
    expect(result.problems.map(formatProblem)).toEqual([
      'all.yaml: NodePool/a: spec.weight: Invalid value: 500: should be less than or equal to 100',
      'all.yaml: NodePool/a: spec.template.spec.nodeClassRef.group: group may not be empty',
      "all.yaml: EC2NodeClass/x: spec.amiSelectorTerms[0].alias: 'alias' is improperly formatted, must match the format 'family@version'",
      'all.yaml: EC2NodeClass/x: spec.subnetSelectorTerms: subnetSelectorTerms cannot be empty',
      "all.yaml: EC2NodeClass/x: spec: must specify exactly one of ['role', 'instanceProfile']",
    ]);
  });
});

describe('loadConfiguration', () => {
  it('accepts the examples as they are, with no warning', () => {
    const result = loadConfiguration(['examples/manifests'], strict);
    expect(result.problems).toEqual([]);
    expect(result.config.nodePools.map((p) => p.metadata.name).sort()).toEqual(['general', 'gpu']);
    expect(result.config.nodeClasses.map((c) => c.metadata.name).sort()).toEqual(['default', 'gpu']);
  });
});

describe('requireConfiguration', () => {
  it('throws a ConfigurationError listing the errors', () => {
    expect(() => requireConfiguration(['examples/v1beta1'])).toThrow(ConfigurationError);
  });

  it('returns the configuration when there are no errors', () => {
    expect(requireConfiguration(['examples/manifests']).config.nodePools).toHaveLength(2);
  });
});
