// One NodePool builder for the disruption, drift, gc and consolidation tests: a pool named
// `general` (or as given) on EC2NodeClass `default`, with no requirements unless given; and one
// EC2NodeClass builder selecting its subnets and security groups by a discovery tag.

import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';

type Disruption = NonNullable<NodePool['spec']['disruption']>;
type TemplateSpec = NodePool['spec']['template']['spec'];

export function testNodePool(
  options: { name?: string; disruption?: Partial<Disruption>; template?: Partial<TemplateSpec> } = {},
): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: options.name ?? 'general' },
    spec: {
      template: {
        spec: {
          requirements: [],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          ...options.template,
        },
      },
      ...(options.disruption ? { disruption: options.disruption as Disruption } : {}),
    },
  };
}

/**
 * An EC2NodeClass `default` (or as given) finding subnets and security groups by
 * `karpenter.sh/discovery`, with its node identity as a role or a user-given instance profile.
 */
export function testNodeClass(
  options: { name?: string; discovery: string; alias?: string } & ({ role: string } | { instanceProfile: string }),
): EC2NodeClass {
  const tags = { 'karpenter.sh/discovery': options.discovery };
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: options.name ?? 'default' },
    spec: {
      subnetSelectorTerms: [{ tags }],
      securityGroupSelectorTerms: [{ tags }],
      amiSelectorTerms: [{ alias: options.alias ?? 'al2023@latest' }],
      ...('role' in options ? { role: options.role } : { instanceProfile: options.instanceProfile }),
    },
  };
}

/** The m5.large on-demand requirements most integration tests launch with. */
export const M5_LARGE_ON_DEMAND: TemplateSpec['requirements'] = [
  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
  { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
];
