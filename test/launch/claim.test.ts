// A claim recorded by one invocation and launched by the next asks EC2 for what the plan asked:
// the launch rebuilt from the record equals the planned one (the instance-type requirement only
// restates the candidate types), so the claims of one batch stay identical requests.

import { describe, expect, it } from 'vitest';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import { launchClaimFromPlan, launchClaimFromRecord } from '../../shared/launch/claim';
import { nodeClaimFromPlan } from '../../shared/nodeclaim';
import { launchRecord } from '../../shared/nodeclaim/launch-record';
import { solve } from '../../shared/scheduling';
import { pendingPod } from '../runtime/fakes';
import { nodePool, standardTypes } from '../scheduling/helpers';

const nodeClass = {
  metadata: { name: 'default' },
  spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }] },
} as EC2NodeClass;
const pool = nodePool('default', {
  requirements: [
    { key: 'team', operator: 'In', values: ['a', 'b'] },
    { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 2 },
  ],
  taints: [{ key: 'teams', effect: 'NoSchedule' }],
  startupTaints: [{ key: 'cni', effect: 'NoSchedule' }],
});

describe('launchClaimFromRecord', () => {
  it('rebuilds the planned launch from the record written before it', () => {
    const pod = pendingPod('p', {
      nodeSelector: { team: 'b' },
      tolerations: [{ key: 'teams', operator: 'Exists', effect: 'NoSchedule' }],
      containers: [{ name: 'app', resources: { requests: { cpu: '1', 'vpc.amazonaws.com/efa': '1' } } }],
    });
    const types = standardTypes().map((t) => ({
      ...t,
      capacity: { ...t.capacity, 'vpc.amazonaws.com/efa': 1 },
      allocatable: { ...t.allocatable, 'vpc.amazonaws.com/efa': 1 },
    }));
    const [claim] = solve({ pods: [pod], nodePools: [pool], instanceTypes: { default: types } }).nodeClaims;
    if (!claim) throw new Error('nothing planned');
    const name = 'default-bcdfg';
    const shaped = nodeClaimFromPlan({ claim, nodePool: pool, nodeClass, seed: name });
    const record = launchRecord({ shaped: { ...shaped, name }, claim, nodePool: pool, nodeClass, now: 0 });

    const planned = launchClaimFromPlan({ nodeClaimName: name, claim, nodePool: pool, nodeClass });
    const rebuilt = launchClaimFromRecord({ record, nodePool: pool, nodeClass, instanceTypes: types });
    const withoutTypes = (r: typeof planned.requirements) =>
      r.filter((x) => x.key !== 'node.kubernetes.io/instance-type');
    expect({ ...rebuilt, requirements: withoutTypes(rebuilt.requirements) }).toEqual({
      ...planned,
      requirements: withoutTypes(planned.requirements),
    });
    expect(rebuilt.efa).toBe(true);
    expect(rebuilt.requirements).toContainEqual({
      key: 'node.kubernetes.io/instance-type',
      operator: 'In',
      values: planned.instanceTypes.map((t) => t.name),
      minValues: 2,
    });
  });

  it('launches only the recorded types the catalog still has', () => {
    const pod = pendingPod('p', { tolerations: [{ key: 'teams', operator: 'Exists', effect: 'NoSchedule' }] });
    const [claim] = solve({ pods: [pod], nodePools: [pool], instanceTypes: { default: standardTypes() } }).nodeClaims;
    if (!claim) throw new Error('nothing planned');
    const shaped = nodeClaimFromPlan({ claim, nodePool: pool, nodeClass, seed: 's' });
    const record = launchRecord({ shaped, claim, nodePool: pool, nodeClass, now: 0 });
    const today = standardTypes().filter((t) => t.name !== 'm5.large');
    const rebuilt = launchClaimFromRecord({ record, nodePool: pool, nodeClass, instanceTypes: today });
    expect(rebuilt.instanceTypes.map((t) => t.name)).toEqual(
      claim.instanceTypes.map((t) => t.name).filter((n) => n !== 'm5.large'),
    );
  });
});
