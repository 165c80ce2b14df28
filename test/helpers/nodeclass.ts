// An EC2NodeClass that differs only in its AMI selection, for tests of AMI family and AMI resolution.
import type { AMISelectorTerm, EC2NodeClass } from '../../shared/apis/v1/types';

export function nodeClassWithAMIs(
  amiSelectorTerms: AMISelectorTerm[],
  amiFamily?: EC2NodeClass['spec']['amiFamily'],
): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      subnetSelectorTerms: [],
      securityGroupSelectorTerms: [],
      amiSelectorTerms,
      ...(amiFamily ? { amiFamily } : {}),
    },
  };
}
