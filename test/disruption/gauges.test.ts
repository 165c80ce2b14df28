// The per-pool disruption gauges (shared/disruption/gauges.ts): upstream's
// karpenter_voluntary_disruption_eligible_nodes and karpenter_nodepools_allowed_disruptions.

import { describe, expect, it } from 'vitest';
import type { BudgetMember } from '../../shared/disruption/budgets';
import { disruptionGauges } from '../../shared/disruption/gauges';
import { testNodePool } from '../support/nodepools';

const now = Date.parse('2026-12-04T12:00:00Z');
const member = (name: string, extra: Partial<BudgetMember> = {}): BudgetMember => ({
  name,
  nodePool: 'general',
  initialized: true,
  notReady: false,
  disrupting: false,
  ...extra,
});

describe('disruptionGauges', () => {
  it('counts eligible nodes per reason and what each budget still allows, NotReady and disrupting nodes counted against it', () => {
    const pool = testNodePool({
      name: 'general',
      disruption: { consolidateAfter: '0s', budgets: [{ nodes: '50%' }, { nodes: '0', reasons: ['Empty'] }] },
    });
    const members = [
      member('a', { disrupting: true }),
      member('b', { notReady: true }),
      member('c'),
      member('d'),
      member('e', { initialized: false }),
    ];
    const gauges = disruptionGauges({
      now,
      nodePools: [pool],
      members,
      eligible: [
        { nodePool: 'general', reason: 'Drifted' },
        { nodePool: 'general', reason: 'Drifted' },
        { nodePool: 'general', reason: 'Underutilized' },
        { nodePool: 'other', reason: 'Drifted' },
      ],
    });
    // 50% of 4 initialized = 2, with a and b using both up.
    expect(gauges).toEqual([
      { nodePool: 'general', reason: 'Drifted', eligible: 2, allowed: 0 },
      { nodePool: 'general', reason: 'Empty', eligible: 0, allowed: 0 },
      { nodePool: 'general', reason: 'Underutilized', eligible: 1, allowed: 0 },
      { nodePool: 'general', reason: 'Expired', eligible: 0 },
    ]);
  });

  it('never says more are allowed than the pool has nodes (no active budget is no limit)', () => {
    const pool = testNodePool({
      name: 'general',
      disruption: { consolidateAfter: '0s', budgets: [{ nodes: '1', reasons: ['Drifted'] }] },
    });
    const gauges = disruptionGauges({ now, nodePools: [pool], members: [member('a'), member('b')], eligible: [] });
    expect(gauges.map((g) => [g.reason, g.allowed])).toEqual([
      ['Drifted', 1],
      ['Empty', 2],
      ['Underutilized', 2],
      ['Expired', undefined],
    ]);
  });
});
