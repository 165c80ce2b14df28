// The defaults the Karpenter v1 CRD schemas apply (there is no defaulting webhook in v1). Pure:
// each function returns a new object and leaves its input untouched.

import type { Budget, Disruption, EC2NodeClass, MetadataOptions, NodeClaim, NodePool } from './types';

export const DEFAULT_EXPIRE_AFTER = '720h';
export const DEFAULT_CONSOLIDATE_AFTER = '0s';
export const DEFAULT_CONSOLIDATION_POLICY = 'WhenEmptyOrUnderutilized';
export const DEFAULT_BUDGET_NODES = '10%';

/**
 * v1 lowered the hop limit from 2 to 1 so that pods without host networking cannot reach IMDS and
 * borrow the node's IAM role; workloads that need IMDS must set 2 explicitly.
 */
export const DEFAULT_METADATA_OPTIONS: Readonly<Required<MetadataOptions>> = {
  httpEndpoint: 'enabled',
  httpProtocolIPv6: 'disabled',
  httpPutResponseHopLimit: 1,
  httpTokens: 'required',
};

function defaultBudget(budget: Budget): Budget {
  return { ...budget, nodes: budget.nodes ?? DEFAULT_BUDGET_NODES };
}

function defaultDisruption(disruption: Disruption | undefined): Disruption {
  if (!disruption) {
    return {
      consolidateAfter: DEFAULT_CONSOLIDATE_AFTER,
      consolidationPolicy: DEFAULT_CONSOLIDATION_POLICY,
      budgets: [{ nodes: DEFAULT_BUDGET_NODES }],
    };
  }
  return {
    ...disruption,
    consolidationPolicy: disruption.consolidationPolicy ?? DEFAULT_CONSOLIDATION_POLICY,
    budgets: disruption.budgets ? disruption.budgets.map(defaultBudget) : [{ nodes: DEFAULT_BUDGET_NODES }],
  };
}

export function defaultNodePool(nodePool: NodePool): NodePool {
  const { template } = nodePool.spec;
  return {
    ...nodePool,
    spec: {
      ...nodePool.spec,
      template: {
        ...template,
        spec: { ...template.spec, expireAfter: template.spec.expireAfter ?? DEFAULT_EXPIRE_AFTER },
      },
      disruption: defaultDisruption(nodePool.spec.disruption),
    },
  };
}

export function defaultNodeClaim(nodeClaim: NodeClaim): NodeClaim {
  return { ...nodeClaim, spec: { ...nodeClaim.spec, expireAfter: nodeClaim.spec.expireAfter ?? DEFAULT_EXPIRE_AFTER } };
}

export function defaultEC2NodeClass(nodeClass: EC2NodeClass): EC2NodeClass {
  return {
    ...nodeClass,
    spec: { ...nodeClass.spec, metadataOptions: { ...DEFAULT_METADATA_OPTIONS, ...nodeClass.spec.metadataOptions } },
  };
}
