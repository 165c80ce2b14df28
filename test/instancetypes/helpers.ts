// Catalog entries with the reference's fixture numbers, and a NodeClass builder.

import type { AMIFamily, EC2NodeClass, EC2NodeClassSpec } from '../../shared/apis/v1/types';
import type { CatalogInstanceType } from '../../shared/instancetypes';

export function catalogType(overrides: Partial<CatalogInstanceType> & { name: string }): CatalogInstanceType {
  return {
    arch: 'amd64',
    vcpu: 4,
    memoryMiB: 16384,
    maximumNetworkInterfaces: 4,
    ipv4PerInterface: 15,
    gpus: 0,
    offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.192, available: true }],
    ...overrides,
  };
}

/** Reference §5 fixtures. */
export const M5_XLARGE = catalogType({ name: 'm5.xlarge' });
export const T3_LARGE = catalogType({
  name: 't3.large',
  vcpu: 2,
  memoryMiB: 8192,
  maximumNetworkInterfaces: 3,
  ipv4PerInterface: 12,
});
export const M6IDN_32XLARGE = catalogType({
  name: 'm6idn.32xlarge',
  vcpu: 128,
  memoryMiB: 524288,
  maximumNetworkInterfaces: 8,
  ipv4PerInterface: 50,
  efaMaxInterfaces: 2,
  localNvmeGB: 7600,
});
export const M6G_XLARGE = catalogType({ name: 'm6g.xlarge', arch: 'arm64' });

const FAMILY_ALIAS: Partial<Record<AMIFamily, string>> = {
  AL2: 'al2@latest',
  AL2023: 'al2023@latest',
  Bottlerocket: 'bottlerocket@latest',
  Windows2019: 'windows2019@latest',
  Windows2022: 'windows2022@latest',
  Windows2025: 'windows2025@latest',
};

export function nodeClass(family: AMIFamily = 'AL2023', spec: Partial<EC2NodeClassSpec> = {}): EC2NodeClass {
  const alias = FAMILY_ALIAS[family];
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      amiSelectorTerms: alias ? [{ alias }] : [{ id: 'ami-0123456789' }],
      ...(alias ? {} : { amiFamily: family }),
      ...spec,
    },
  };
}

export const MI = 2 ** 20;
export const GI = 2 ** 30;
