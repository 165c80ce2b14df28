// One NodePool builder for the disruption, drift, gc and consolidation tests: a pool named
// `general` (or as given) on EC2NodeClass `default`, with no requirements unless given.

import type { NodePool } from '../../shared/apis/v1/types';

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
