import { describe, expect, it } from 'vitest';
import { defaultEC2NodeClass, defaultNodeClaim, defaultNodePool } from '../../../shared/apis/v1/defaults';
import type { EC2NodeClass, NodeClaim, NodePool } from '../../../shared/apis/v1/types';
import { nodeClaim, nodeClass, nodePool, set } from './builders';

describe('defaultNodePool', () => {
  it('fills expireAfter and the whole disruption block when absent', () => {
    const defaulted = defaultNodePool(nodePool() as unknown as NodePool);
    expect(defaulted.spec.template.spec.expireAfter).toBe('720h');
    expect(defaulted.spec.disruption).toEqual({
      consolidateAfter: '0s',
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      budgets: [{ nodes: '10%' }],
    });
  });

  it('keeps what the user set and defaults only the missing parts', () => {
    const input = set(nodePool(), 'spec.disruption', {
      consolidateAfter: '5m',
      budgets: [{ schedule: '@daily', duration: '1h' }],
    });
    set(input, 'spec.template.spec.expireAfter', 'Never');
    const defaulted = defaultNodePool(input as unknown as NodePool);
    expect(defaulted.spec.template.spec.expireAfter).toBe('Never');
    expect(defaulted.spec.disruption).toEqual({
      consolidateAfter: '5m',
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      budgets: [{ nodes: '10%', schedule: '@daily', duration: '1h' }],
    });
  });

  it('returns a new object and leaves its input untouched', () => {
    const input = nodePool();
    const before = structuredClone(input);
    defaultNodePool(input as unknown as NodePool);
    expect(input).toEqual(before);
  });
});

describe('defaultEC2NodeClass', () => {
  it('fills metadataOptions with IMDSv2 required and hop limit 1', () => {
    const defaulted = defaultEC2NodeClass(nodeClass() as unknown as EC2NodeClass);
    expect(defaulted.spec.metadataOptions).toEqual({
      httpEndpoint: 'enabled',
      httpProtocolIPv6: 'disabled',
      httpPutResponseHopLimit: 1,
      httpTokens: 'required',
    });
  });

  it('defaults each metadataOptions field separately', () => {
    const input = set(nodeClass(), 'spec.metadataOptions', { httpPutResponseHopLimit: 2 });
    const defaulted = defaultEC2NodeClass(input as unknown as EC2NodeClass);
    expect(defaulted.spec.metadataOptions).toMatchObject({ httpPutResponseHopLimit: 2, httpTokens: 'required' });
    expect(input).toEqual(set(nodeClass(), 'spec.metadataOptions', { httpPutResponseHopLimit: 2 }));
  });
});

describe('defaultNodeClaim', () => {
  it('fills expireAfter', () => {
    expect(defaultNodeClaim(nodeClaim() as unknown as NodeClaim).spec.expireAfter).toBe('720h');
  });
});
