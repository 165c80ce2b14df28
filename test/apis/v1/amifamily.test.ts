import { describe, expect, it } from 'vitest';
import { amiFamilyFromAlias, resolveAMIFamily } from '../../../shared/apis/v1/amifamily';
import type { EC2NodeClass } from '../../../shared/apis/v1/types';
import { nodeClassWithAMIs } from '../../helpers/nodeclass';

describe('amiFamilyFromAlias', () => {
  it.each([
    ['al2023@v20240807', 'AL2023'],
    ['AL2@latest', 'AL2'],
    ['bottlerocket@v1.20.4', 'Bottlerocket'],
    ['windows2025@latest', 'Windows2025'],
    ['ubuntu@latest', undefined],
  ])('%s → %s', (alias, family) => {
    expect(amiFamilyFromAlias(alias)).toBe(family);
  });
});

describe('resolveAMIFamily', () => {
  it.each<[string, EC2NodeClass, string | undefined]>([
    ['the alias family', nodeClassWithAMIs([{ alias: 'bottlerocket@latest' }]), 'Bottlerocket'],
    [
      'amiFamily over the alias (Custom beside an alias)',
      nodeClassWithAMIs([{ alias: 'al2023@latest' }], 'Custom'),
      'Custom',
    ],
    ['amiFamily with id terms', nodeClassWithAMIs([{ id: 'ami-123' }], 'AL2'), 'AL2'],
    ['nothing when neither is given', nodeClassWithAMIs([{ id: 'ami-123' }]), undefined],
  ])('returns %s', (_, nc, family) => {
    expect(resolveAMIFamily(nc)).toBe(family);
  });
});
