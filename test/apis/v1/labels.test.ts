import { describe, expect, it } from 'vitest';
import { qualifiedNameMessages, restrictedLabelMessages } from '../../../shared/apis/v1/labels';

describe('qualifiedNameMessages (Go validation.IsQualifiedName)', () => {
  it.each(['key', 'Test', 'test.com/Test', `${'p'.repeat(253)}/n`, `example.com/${'n'.repeat(63)}`, 'kops.k8s.io'])(
    'accepts %s',
    (key) => {
      expect(qualifiedNameMessages(key)).toEqual([]);
    },
  );

  it.each([
    [`${'p'.repeat(254)}/n`, 'prefix part must be no more than 253 bytes'],
    [`example.com/${'n'.repeat(64)}`, 'name part must be no more than 63 bytes'],
    ['/test', 'prefix part must be non-empty'],
    ['test/', 'name part must be non-empty'],
    ['Test.com/test', 'prefix part a lowercase RFC 1123 subdomain'],
    ['test/test/test', 'a qualified name must consist of'],
    ['spaces are not allowed', 'name part must consist of'],
  ])('refuses %s', (key, message) => {
    expect(qualifiedNameMessages(key).join('; ')).toContain(message);
  });
});

describe('restrictedLabelMessages (CRD rules since Karpenter v1.9)', () => {
  it.each([
    'kubernetes.io/team',
    'subdomain.k8s.io/key',
    'node-restriction.kubernetes.io/x',
    'karpenter.sh/capacity-type',
  ])('lets %s through', (key) => {
    expect(restrictedLabelMessages(key, { nodePool: true })).toEqual([]);
  });

  it('restricts karpenter.sh/nodepool on NodePools only', () => {
    expect(restrictedLabelMessages('karpenter.sh/nodepool', { nodePool: true })).toEqual([
      'label "karpenter.sh/nodepool" is restricted',
    ]);
    expect(restrictedLabelMessages('karpenter.sh/nodepool', { nodePool: false })).toEqual([]);
  });

  it.each([
    ['karpenter.sh/team', 'label domain "karpenter.sh" is restricted'],
    // CEL's find("^([^/]+)") is the whole key without a '/': a bare domain key is in the domain.
    ['karpenter.sh', 'label domain "karpenter.sh" is restricted'],
    ['kubernetes.io/hostname', 'label "kubernetes.io/hostname" is restricted'],
    ['karpenter.k8s.aws/owner', 'label domain "karpenter.k8s.aws" is restricted'],
  ])('restricts %s', (key, message) => {
    expect(restrictedLabelMessages(key, { nodePool: false })).toEqual([message]);
  });
});
