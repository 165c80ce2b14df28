import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatProblem } from '../../../shared/apis/problems';
import { V1_VALIDATORS } from '../../../shared/apis/v1/validation';
import { type ConversionInput, convertV1beta1 } from '../../../shared/apis/v1beta1/convert';
import type { V1beta1EC2NodeClass, V1beta1NodePool } from '../../../shared/apis/v1beta1/types';
import { type Json, set } from '../v1/builders';

function oldPool(name = 'default', className = 'default'): Json {
  return {
    apiVersion: 'karpenter.sh/v1beta1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { apiVersion: 'karpenter.k8s.aws/v1beta1', kind: 'EC2NodeClass', name: className },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
        },
      },
    },
  };
}

function oldClass(name = 'default'): Json {
  return {
    apiVersion: 'karpenter.k8s.aws/v1beta1',
    kind: 'EC2NodeClass',
    metadata: { name },
    spec: {
      amiFamily: 'AL2023',
      role: 'KarpenterNodeRole-test',
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
    },
  };
}

const inputs = (...objects: Json[]): ConversionInput[] => objects.map((object) => ({ object, file: 'old.yaml' }));
const convert = (...objects: Json[]) => convertV1beta1(inputs(...objects));
const find = (result: ReturnType<typeof convert>, kind: string, name: string) => {
  const found = result.objects.find(
    (o) => o.object.kind === kind && (o.object.metadata as { name?: string } | undefined)?.name === name,
  );
  if (!found) throw new Error(`${kind}/${name} not in the output`);
  return found.object as Json & { spec: Json & Record<string, Json> };
};
const errorsOf = (result: ReturnType<typeof convert>) => result.problems.filter((p) => p.severity === 'error');
const KUBELET_A = { maxPods: 110 };
const KUBELET_B = { maxPods: 58, systemReserved: { cpu: '100m' } };

describe('convertV1beta1 rules', () => {
  it('sets the v1 apiVersions', () => {
    const result = convert(oldPool(), oldClass());
    expect(errorsOf(result)).toEqual([]);
    expect(result.objects.map((o) => o.object.apiVersion)).toEqual(['karpenter.sh/v1', 'karpenter.k8s.aws/v1']);
  });

  it.each([
    [{ apiVersion: 'karpenter.k8s.aws/v1beta1', kind: 'EC2NodeClass', name: 'default' }],
    [{ name: 'default' }],
  ])('turns nodeClassRef %j into {group, kind, name}', (ref) => {
    const result = convert(set(oldPool(), 'spec.template.spec.nodeClassRef', ref), oldClass());
    expect(find(result, 'NodePool', 'default').spec.template).toMatchObject({
      spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' } },
    });
  });

  it.each(['720h', 'Never', '24h30m'])('moves disruption.expireAfter %s into the template', (expireAfter) => {
    const result = convert(
      set(oldPool(), 'spec.disruption', { consolidationPolicy: 'WhenUnderutilized', expireAfter }),
      oldClass(),
    );
    const pool = find(result, 'NodePool', 'default');
    expect((pool.spec.template as { spec: Json }).spec.expireAfter).toBe(expireAfter);
    expect(pool.spec.disruption).not.toHaveProperty('expireAfter');
    expect(result.notes).toContain(
      'old.yaml: NodePool/default: moved spec.disruption.expireAfter to spec.template.spec.expireAfter',
    );
  });

  it('renames WhenUnderutilized and gives it the consolidateAfter v1 requires', () => {
    const result = convert(set(oldPool(), 'spec.disruption', { consolidationPolicy: 'WhenUnderutilized' }), oldClass());
    expect(find(result, 'NodePool', 'default').spec.disruption).toEqual({
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: '0s',
    });
  });

  it('keeps WhenEmpty with its consolidateAfter and its budgets', () => {
    const disruption = {
      consolidationPolicy: 'WhenEmpty',
      consolidateAfter: '30s',
      budgets: [{ nodes: '0', schedule: '@daily', duration: '1h' }],
    };
    const result = convert(set(oldPool(), 'spec.disruption', disruption), oldClass());
    expect(find(result, 'NodePool', 'default').spec.disruption).toEqual(disruption);
  });

  it('moves the NodePool kubelet to the referenced EC2NodeClass', () => {
    const result = convert(set(oldPool(), 'spec.template.spec.kubelet', KUBELET_A), oldClass());
    expect(find(result, 'EC2NodeClass', 'default').spec.kubelet).toEqual(KUBELET_A);
    expect((find(result, 'NodePool', 'default').spec.template as { spec: Json }).spec).not.toHaveProperty('kubelet');
    expect(result.notes).toContain('old.yaml: EC2NodeClass/default: spec.kubelet moved here from NodePool/default');
  });

  it('keeps one EC2NodeClass for NodePools that share it with the same kubelet', () => {
    const result = convert(
      set(oldPool('a'), 'spec.template.spec.kubelet', KUBELET_A),
      set(oldPool('b'), 'spec.template.spec.kubelet', { ...KUBELET_A }),
      oldClass(),
    );
    expect(result.objects.filter((o) => o.object.kind === 'EC2NodeClass')).toHaveLength(1);
    expect(find(result, 'EC2NodeClass', 'default').spec.kubelet).toEqual(KUBELET_A);
  });

  it('splits a shared EC2NodeClass per distinct kubelet setting and rewrites the references', () => {
    const result = convert(
      set(oldPool('a'), 'spec.template.spec.kubelet', KUBELET_A),
      set(oldPool('b'), 'spec.template.spec.kubelet', KUBELET_B),
      oldPool('c'),
      oldClass(),
    );
    expect(errorsOf(result)).toEqual([]);
    const refName = (pool: string) =>
      (find(result, 'NodePool', pool).spec.template as { spec: { nodeClassRef: { name: string } } }).spec.nodeClassRef
        .name;
    expect([refName('a'), refName('b'), refName('c')]).toEqual(['default', 'default-b', 'default-c']);
    expect(find(result, 'EC2NodeClass', 'default').spec.kubelet).toEqual(KUBELET_A);
    expect(find(result, 'EC2NodeClass', 'default-b').spec.kubelet).toEqual(KUBELET_B);
    expect(find(result, 'EC2NodeClass', 'default-c').spec).not.toHaveProperty('kubelet');
    expect(find(result, 'EC2NodeClass', 'default-b').spec.role).toBe('KarpenterNodeRole-test');
    expect(result.notes.filter((n) => n.includes('created EC2NodeClass/'))).toEqual([
      'old.yaml: EC2NodeClass/default: NodePools sharing this EC2NodeClass have different kubelet settings, and v1 keeps kubelet on the EC2NodeClass: created EC2NodeClass/default-b (a copy with their kubelet) for NodePool/b, whose nodeClassRef now names it',
      'old.yaml: EC2NodeClass/default: NodePools sharing this EC2NodeClass have different kubelet settings, and v1 keeps kubelet on the EC2NodeClass: created EC2NodeClass/default-c (a copy without kubelet) for NodePool/c, whose nodeClassRef now names it',
    ]);
  });

  it('avoids name clashes when splitting', () => {
    const result = convert(
      set(oldPool('a'), 'spec.template.spec.kubelet', KUBELET_A),
      set(oldPool('b'), 'spec.template.spec.kubelet', KUBELET_B),
      oldClass(),
      oldClass('default-b'),
    );
    expect(result.objects.map((o) => (o.object.metadata as { name: string }).name)).toContain('default-b-2');
  });

  it('refuses to drop a kubelet whose EC2NodeClass is not among the inputs', () => {
    const result = convert(set(oldPool(), 'spec.template.spec.kubelet', KUBELET_A));
    expect(errorsOf(result).map(formatProblem)).toEqual([
      'old.yaml: NodePool/default: spec.template.spec.kubelet: spec.template.spec.kubelet cannot be moved: v1 keeps kubelet settings on the EC2NodeClass, and EC2NodeClass/default (v1beta1) is not among the inputs; convert the NodePool together with its EC2NodeClass',
    ]);
  });

  it.each([
    ['AL2023', 'al2023@latest'],
    ['AL2', 'al2@latest'],
    ['Bottlerocket', 'bottlerocket@latest'],
    ['Windows2022', 'windows2022@latest'],
  ])('turns amiFamily %s without amiSelectorTerms into alias %s, warning to pin it', (family, alias) => {
    const result = convert(set(oldClass(), 'spec.amiFamily', family));
    expect(find(result, 'EC2NodeClass', 'default').spec.amiSelectorTerms).toEqual([{ alias }]);
    expect(result.problems).toMatchObject([{ severity: 'warning', path: 'spec.amiSelectorTerms' }]);
    expect(result.problems[0]?.message).toMatch(/pin a version in production/);
  });

  it('makes the v1beta1 default amiFamily (AL2) explicit when unset', () => {
    const result = convert(set(oldClass(), 'spec.amiFamily', undefined));
    const spec = find(result, 'EC2NodeClass', 'default').spec;
    expect([spec.amiFamily, spec.amiSelectorTerms]).toEqual(['AL2', [{ alias: 'al2@latest' }]]);
  });

  it('keeps amiSelectorTerms and amiFamily when terms are given', () => {
    const terms = [{ id: 'ami-0abc' }, { tags: { team: 'x' } }];
    const result = convert(set(oldClass(), 'spec.amiSelectorTerms', terms));
    const spec = find(result, 'EC2NodeClass', 'default').spec;
    expect([spec.amiFamily, spec.amiSelectorTerms]).toEqual(['AL2023', terms]);
    expect(result.problems).toEqual([]);
  });

  it('cannot convert Custom without amiSelectorTerms', () => {
    const result = convert(set(oldClass(), 'spec.amiFamily', 'Custom'));
    expect(errorsOf(result)).toMatchObject([{ path: 'spec.amiSelectorTerms' }]);
  });

  it('writes out the v1beta1 hop limit 2 with a note on why v1 uses 1', () => {
    const result = convert(oldClass());
    expect(find(result, 'EC2NodeClass', 'default').spec.metadataOptions).toEqual({
      httpEndpoint: 'enabled',
      httpProtocolIPv6: 'disabled',
      httpPutResponseHopLimit: 2,
      httpTokens: 'required',
    });
    expect(
      result.notes.some((n) =>
        /httpPutResponseHopLimit: 2 .*v1 defaults to 1 so that pods without hostNetwork cannot reach IMDS/.test(n),
      ),
    ).toBe(true);
  });

  it('keeps the metadataOptions the user set and adds only the hop limit', () => {
    const result = convert(set(oldClass(), 'spec.metadataOptions', { httpTokens: 'optional' }));
    expect(find(result, 'EC2NodeClass', 'default').spec.metadataOptions).toMatchObject({
      httpTokens: 'optional',
      httpPutResponseHopLimit: 2,
    });
  });

  it('keeps an explicit hop limit without a note', () => {
    const result = convert(set(oldClass(), 'spec.metadataOptions', { httpPutResponseHopLimit: 1 }));
    expect(find(result, 'EC2NodeClass', 'default').spec.metadataOptions).toEqual({ httpPutResponseHopLimit: 1 });
    expect(result.notes.some((n) => n.includes('httpPutResponseHopLimit'))).toBe(false);
  });

  it('refuses Ubuntu with the migration steps', () => {
    const result = convert(set(oldClass(), 'spec.amiFamily', 'Ubuntu'));
    expect(result.objects).toEqual([]);
    expect(errorsOf(result)).toHaveLength(1);
    expect(errorsOf(result)[0]).toMatchObject({ path: 'spec.amiFamily', object: 'EC2NodeClass/default' });
    expect(errorsOf(result)[0]?.message).toMatch(
      /removed the Ubuntu family.*amiSelectorTerms to \[\{id: ami-\.\.\.\}\].*AL2.*Custom/,
    );
  });

  it('drops the unused template resources with a note', () => {
    const result = convert(set(oldPool(), 'spec.template.spec.resources', { requests: { cpu: '1' } }), oldClass());
    expect((find(result, 'NodePool', 'default').spec.template as { spec: Json }).spec).not.toHaveProperty('resources');
    expect(result.notes.some((n) => n.includes('dropped spec.template.spec.resources'))).toBe(true);
  });

  it('passes v1 objects and other kinds through unchanged, with notes', () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } };
    const v1 = {
      ...oldClass('new'),
      apiVersion: 'karpenter.k8s.aws/v1',
      spec: { ...(oldClass().spec as Json), amiSelectorTerms: [{ alias: 'al2023@latest' }] },
    };
    const result = convert(deployment, v1);
    expect(result.objects.map((o) => o.object)).toEqual([deployment, v1]);
    expect(result.notes).toEqual([
      'old.yaml: Deployment/web: not a Karpenter v1beta1 kind, passed through unchanged',
      'old.yaml: EC2NodeClass/new: already v1, unchanged',
    ]);
  });

  it('reports output that v1 rejects as an error on the converted object', () => {
    const result = convert(set(oldClass(), 'spec.tags', { 'eks:eks-cluster-name': 'x' }));
    expect(errorsOf(result).map(formatProblem)).toEqual([
      'old.yaml: EC2NodeClass/default: spec.tags[eks:eks-cluster-name]: tag contains a restricted tag matching eks:eks-cluster-name (in the converted v1 object)',
    ]);
  });

  it('does not modify its input', () => {
    const pool = set(oldPool(), 'spec.template.spec.kubelet', KUBELET_A);
    const before = structuredClone(pool);
    convert(pool, oldClass());
    expect(pool).toEqual(before);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: any valid v1beta1 set converts to valid v1, keeping every field v1 still has.

const dnsName = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}[a-z0-9]$/);
const kubelets = fc.constantFrom(
  undefined,
  { maxPods: 110 },
  { maxPods: 29, podsPerCore: 4 },
  { systemReserved: { cpu: '100m', memory: '100Mi' }, kubeReserved: { 'ephemeral-storage': '1Gi' } },
  {
    evictionHard: { 'memory.available': '5%' },
    evictionSoft: { 'nodefs.available': '15%' },
    evictionSoftGracePeriod: { 'nodefs.available': '2m' },
  },
  { imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80, cpuCFSQuota: false, clusterDNS: ['10.100.0.10'] },
);
const requirement = fc.oneof(
  fc
    .subarray(['spot', 'on-demand'], { minLength: 1 })
    .map((values) => ({ key: 'karpenter.sh/capacity-type', operator: 'In', values })),
  fc
    .subarray(['c', 'm', 'r', 't'], { minLength: 1 })
    .map((values) => ({ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values, minValues: 1 })),
  fc
    .integer({ min: 0, max: 9 })
    .map((n) => ({ key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: [String(n)] })),
  fc.constantFrom('amd64', 'arm64').map((arch) => ({ key: 'kubernetes.io/arch', operator: 'NotIn', values: [arch] })),
  fc.constant({ key: 'example.com/team', operator: 'Exists' }),
);
const duration = fc.tuple(fc.integer({ min: 1, max: 999 }), fc.constantFrom('h', 'm', 's')).map(([n, u]) => `${n}${u}`);
const disruption = fc.oneof(
  fc.constant(undefined),
  fc.record(
    {
      consolidationPolicy: fc.constant('WhenUnderutilized'),
      expireAfter: fc.oneof(duration, fc.constant('Never')),
      budgets: fc.array(fc.record({ nodes: fc.constantFrom('10%', '0', '5', '100%') }), { maxLength: 3 }),
    },
    { requiredKeys: ['consolidationPolicy'] },
  ),
  fc.record(
    { consolidationPolicy: fc.constant('WhenEmpty'), consolidateAfter: duration, expireAfter: duration },
    { requiredKeys: ['consolidationPolicy', 'consolidateAfter'] },
  ),
);
const taint = fc.record({
  key: fc.constantFrom('example.com/a', 'nvidia.com/gpu', 'dedicated'),
  value: fc.constantFrom('true', 'x'),
  effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule'),
});

function poolArbitrary(name: string, classNames: readonly string[]): fc.Arbitrary<V1beta1NodePool> {
  return fc
    .record(
      {
        className: fc.constantFrom(...classNames),
        kubelet: kubelets,
        requirements: fc.array(requirement, { maxLength: 4 }),
        taints: fc.uniqueArray(taint, { selector: (t) => `${t.key}=${t.effect}`, maxLength: 2 }),
        labels: fc.option(fc.dictionary(fc.constantFrom('team', 'example.com/tier'), fc.constantFrom('web', 'batch')), {
          nil: undefined,
        }),
        disruption,
        weight: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
        limits: fc.option(fc.record({ cpu: fc.constantFrom('100', 1000), memory: fc.constantFrom('1000Gi', '64Gi') }), {
          nil: undefined,
        }),
      },
      { requiredKeys: ['className', 'kubelet', 'requirements', 'taints', 'labels', 'disruption', 'weight', 'limits'] },
    )
    .map((p) => {
      const spec: Json = {
        nodeClassRef: { apiVersion: 'karpenter.k8s.aws/v1beta1', kind: 'EC2NodeClass', name: p.className },
        requirements: p.requirements,
      };
      if (p.taints.length > 0) spec.taints = p.taints;
      if (p.kubelet) spec.kubelet = p.kubelet;
      const poolSpec: Json = { template: { ...(p.labels ? { metadata: { labels: p.labels } } : {}), spec } };
      if (p.disruption) poolSpec.disruption = p.disruption;
      if (p.weight !== undefined) poolSpec.weight = p.weight;
      if (p.limits) poolSpec.limits = p.limits;
      return {
        apiVersion: 'karpenter.sh/v1beta1',
        kind: 'NodePool',
        metadata: { name },
        spec: poolSpec,
      } as unknown as V1beta1NodePool;
    });
}

function classArbitrary(name: string): fc.Arbitrary<V1beta1EC2NodeClass> {
  const amiTerms = fc.array(
    fc.oneof(
      fc.stringMatching(/^ami-[0-9a-f]{8}$/).map((id) => ({ id })),
      fc.record(
        { name: fc.constantFrom('my-ami-*', 'golden'), owner: fc.constantFrom('self', '123456789012') },
        { requiredKeys: ['name'] },
      ),
      fc.constant({ tags: { 'image-type': 'golden' } }),
    ),
    { minLength: 1, maxLength: 3 },
  );
  return fc
    .record(
      {
        amiFamily: fc.constantFrom(undefined, 'AL2', 'AL2023', 'Bottlerocket', 'Windows2019', 'Windows2022', 'Custom'),
        amiSelectorTerms: fc.option(amiTerms, { nil: undefined }),
        identity: fc.oneof(
          fc.constant({ role: 'KarpenterNodeRole-test' }),
          fc.constant({ instanceProfile: 'KarpenterNodeInstanceProfile' }),
        ),
        tags: fc.option(fc.dictionary(fc.constantFrom('team', 'cost-center', 'env'), fc.constantFrom('a', 'b')), {
          nil: undefined,
        }),
        metadataOptions: fc.option(
          fc.record(
            {
              httpEndpoint: fc.constantFrom('enabled', 'disabled'),
              httpPutResponseHopLimit: fc.integer({ min: 1, max: 64 }),
              httpTokens: fc.constantFrom('required', 'optional'),
            },
            { requiredKeys: [] },
          ),
          { nil: undefined },
        ),
        blockDeviceMappings: fc.option(
          fc
            .integer({ min: 20, max: 500 })
            .map((size) => [
              { deviceName: '/dev/xvda', ebs: { volumeSize: `${size}Gi`, volumeType: 'gp3', encrypted: true } },
            ]),
          { nil: undefined },
        ),
        userData: fc.option(fc.constantFrom('#!/bin/bash\necho hi', '[settings]'), { nil: undefined }),
        detailedMonitoring: fc.option(fc.boolean(), { nil: undefined }),
      },
      { requiredKeys: ['identity'] },
    )
    .map((c) => {
      const spec: Json = {
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'test' } }],
        ...c.identity,
      };
      if (c.amiFamily) spec.amiFamily = c.amiFamily;
      // v1beta1 requires amiSelectorTerms with Custom.
      if (c.amiSelectorTerms || c.amiFamily === 'Custom')
        spec.amiSelectorTerms = c.amiSelectorTerms ?? [{ id: 'ami-0abc1234' }];
      for (const field of [
        'tags',
        'metadataOptions',
        'blockDeviceMappings',
        'userData',
        'detailedMonitoring',
      ] as const) {
        if (c[field] !== undefined) spec[field] = c[field];
      }
      return {
        apiVersion: 'karpenter.k8s.aws/v1beta1',
        kind: 'EC2NodeClass',
        metadata: { name },
        spec,
      } as unknown as V1beta1EC2NodeClass;
    });
}

const manifestSet = fc
  .tuple(
    fc.uniqueArray(dnsName, { minLength: 1, maxLength: 2 }),
    fc.uniqueArray(dnsName, { minLength: 1, maxLength: 3 }),
  )
  .chain(([classNames, poolNames]) =>
    fc.tuple(
      fc.tuple(...classNames.map(classArbitrary)),
      fc.tuple(...poolNames.map((name) => poolArbitrary(name, classNames))),
    ),
  );

describe('convertV1beta1 property', () => {
  it('converts any valid v1beta1 set to valid v1, keeping every field v1 still has', () => {
    fc.assert(
      fc.property(manifestSet, ([classes, pools]) => {
        const input = [...pools, ...classes].map((object) => ({ object: structuredClone(object) as unknown as Json }));
        const result = convertV1beta1(input);
        expect(errorsOf(result)).toEqual([]);

        for (const { object } of result.objects) {
          const validator = V1_VALIDATORS[String(object.kind)];
          expect(object.apiVersion).toBe(validator?.apiVersion);
          expect(validator?.validate(object).filter((i) => i.severity !== 'warning')).toEqual([]);
        }

        const out = { objects: result.objects, problems: result.problems, notes: result.notes };
        for (const pool of pools) {
          const converted = find(out, 'NodePool', pool.metadata.name);
          const template = converted.spec.template as {
            metadata?: Json;
            spec: Json & { nodeClassRef: { name: string } };
          };
          const old = pool.spec.template.spec;
          expect(template.spec.requirements).toEqual(old.requirements);
          expect(template.spec.taints).toEqual(old.taints);
          expect(template.metadata).toEqual(pool.spec.template.metadata);
          expect(template.spec.expireAfter).toEqual(pool.spec.disruption?.expireAfter);
          expect(converted.spec.limits).toEqual(pool.spec.limits);
          expect(converted.spec.weight).toEqual(pool.spec.weight);
          expect((converted.spec.disruption as Json | undefined)?.budgets).toEqual(pool.spec.disruption?.budgets);
          // The kubelet now lives on the class the NodePool references, whatever its name became.
          const nodeClass = find(out, 'EC2NodeClass', template.spec.nodeClassRef.name);
          expect(nodeClass.spec.kubelet).toEqual(old.kubelet);
        }
        for (const nodeClass of classes) {
          const converted = find(out, 'EC2NodeClass', nodeClass.metadata.name).spec;
          const old = nodeClass.spec as unknown as Json;
          for (const field of [
            'subnetSelectorTerms',
            'securityGroupSelectorTerms',
            'role',
            'instanceProfile',
            'tags',
            'blockDeviceMappings',
            'userData',
            'detailedMonitoring',
          ]) {
            expect(converted[field]).toEqual(old[field]);
          }
          if (old.amiFamily !== undefined) expect(converted.amiFamily).toBe(old.amiFamily);
          if (old.amiSelectorTerms !== undefined) expect(converted.amiSelectorTerms).toEqual(old.amiSelectorTerms);
          expect(converted.metadataOptions).toMatchObject(old.metadataOptions ?? {});
        }
      }),
      { numRuns: 200 },
    );
  });
});
