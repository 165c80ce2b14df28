// The launch request of a planned NodeClaim, shaped as Karpenter shapes a NodeClaim (shared/nodeclaim:
// labels with the NodePool and EC2NodeClass, userData labels, taints and startup taints, requirements
// narrowed to the capacity types offered). The provision function's launcher sends it and
// `karpless plan --requests` writes it: one function, so the dry run cannot drift from the launch.

import { nodeLabels } from '../amifamily/userdata/options';
import { resolveAMIFamily } from '../apis/v1/amifamily';
import { LABEL_INSTANCE_TYPE } from '../apis/v1/labels';
import type { EC2NodeClass, NodePool } from '../apis/v1/types';
import type { InstanceType } from '../instancetypes/types';
import { launchCapacity, nodeClaimFromPlan } from '../nodeclaim';
import type { NodeClaimRecord } from '../nodeclaim/record';
import type { PlannedNodeClaim } from '../scheduling';
import type { LaunchClaim } from './request';

export function launchClaimFromPlan(args: {
  nodeClaimName: string;
  claim: PlannedNodeClaim;
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
}): LaunchClaim {
  const { nodeClaimName, claim, nodePool, nodeClass } = args;
  const shaped = nodeClaimFromPlan({ claim, nodePool, nodeClass, seed: nodeClaimName });
  return {
    nodeClaimName,
    nodePool,
    nodeClass,
    instanceTypes: shaped.instanceTypes,
    // No capacityType pin: the requirements allow what the plan offered, and the launch picks
    // reserved > spot > on-demand among what is still available, so a full reservation or a
    // spot shortage falls back as the NodePool allows.
    requirements: shaped.requirements,
    labels: shaped.userDataLabels,
    taints: [...shaped.taints, ...shaped.startupTaints],
    efa: (claim.requests['vpc.amazonaws.com/efa'] ?? 0) > 0,
    enclave: (claim.requests['eks.amazonaws.com/nip-slots'] ?? 0) > 0,
  };
}

/**
 * The launch request of a claim an earlier invocation recorded and did not launch, rebuilt from its
 * record alone (the record is the to-do list; the pods that shaped it are not planned again): the
 * record's labels and taints, its requirements with the `node.kubernetes.io/instance-type In` list the
 * decision kept, and those types as the catalog offers them now. Equal to the planned request but
 * for that requirement, which only restates the candidate types; the NodePool's minValues on it are
 * carried over, as upstream's ToNodeClaim keeps them.
 */
export function launchClaimFromRecord(args: {
  record: NodeClaimRecord;
  nodePool: NodePool;
  nodeClass: EC2NodeClass;
  /** The NodePool's instance types as resolved for this decision. */
  instanceTypes: readonly InstanceType[];
}): LaunchClaim {
  const { record, nodePool, nodeClass } = args;
  const typeRequirement = record.spec.requirements.find((r) => r.key === LABEL_INSTANCE_TYPE);
  // In the record's order, which is the plan's: cheapest first.
  const byName = new Map(args.instanceTypes.map((t) => [t.name, t]));
  const names = typeRequirement?.operator === 'In' ? (typeRequirement.values ?? []) : [];
  const instanceTypes = names.flatMap((name) => byName.get(name) ?? []);
  const minValues = nodePool.spec.template.spec.requirements.find((r) => r.key === LABEL_INSTANCE_TYPE)?.minValues;
  const requirements = record.spec.requirements.map((r) =>
    r.key === LABEL_INSTANCE_TYPE && minValues !== undefined ? { ...r, minValues } : r,
  );
  const { capacityType } = launchCapacity(requirements, instanceTypes);
  const requests = record.spec.resources.requests;
  return {
    nodeClaimName: record.metadata.name,
    nodePool,
    nodeClass,
    instanceTypes,
    requirements,
    labels: nodeLabels(resolveAMIFamily(nodeClass) ?? 'Custom', record.metadata.labels, capacityType),
    taints: [...record.spec.taints, ...record.spec.startupTaints],
    efa: Number.parseFloat(requests['vpc.amazonaws.com/efa'] ?? '0') > 0,
    enclave: Number.parseFloat(requests['eks.amazonaws.com/nip-slots'] ?? '0') > 0,
  };
}
