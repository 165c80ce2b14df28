import { describe, expect, it } from 'vitest';
import { parseCron } from '../../shared/apis/v1/cron';
import type { Budget, NodePool } from '../../shared/apis/v1/types';
import {
  allowedDisruptions,
  budgetActive,
  budgetDecision,
  budgetLimit,
  budgetsOf,
  lastCronHit,
  resolveBudgetNodes,
} from '../../shared/disruption/budgets';
import { UNLIMITED } from '../../shared/disruption/types';
import { testNodePool } from '../support/nodepools';

function pool(budgets?: Budget[]): NodePool {
  return testNodePool(budgets ? { disruption: { consolidateAfter: '0s', budgets } } : {});
}

const at = (iso: string) => Date.parse(iso);

describe('resolveBudgetNodes', () => {
  it.each([
    ['10%', 0, 0],
    ['10%', 1, 1],
    ['10%', 5, 1],
    ['10%', 10, 1],
    ['10%', 11, 2],
    ['50%', 3, 2],
    ['100%', 7, 7],
    ['0%', 7, 0],
    ['0', 7, 0],
    ['3', 0, 3],
    ['25', 4, 25],
  ])('%s of %i nodes is %i (percentages round up)', (nodes, poolNodes, expected) => {
    expect(resolveBudgetNodes(nodes, poolNodes)).toBe(expected);
  });

  it.each(['101%', '-1', '1.5', 'ten', '', '10 %'])('refuses %j', (nodes) => {
    expect(resolveBudgetNodes(nodes, 10)).toBeUndefined();
  });
});

describe('budgetActive: windows [cron hit, cron hit + duration) in UTC', () => {
  const weekdays9to17: Budget = { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' };
  it.each([
    ['2026-12-02T08:59:59Z', false, 'a second before the hit'],
    ['2026-12-02T09:00:00Z', true, 'at the hit'],
    ['2026-12-02T12:30:00Z', true, 'inside'],
    ['2026-12-02T16:59:59Z', true, 'the last second'],
    ['2026-12-02T17:00:00Z', false, 'at hit + duration'],
    ['2026-12-05T10:00:00Z', false, 'a Saturday'],
    ['2026-12-07T09:00:00Z', true, 'Monday at the hit'],
  ])('weekdays 09:00 for 8h at %s: %s (%s)', (now, active) => {
    expect(budgetActive(weekdays9to17, at(now))).toEqual({ active });
  });

  it('keeps a window open across midnight and month ends', () => {
    const nightly: Budget = { nodes: '0', schedule: '0 22 * * *', duration: '4h' };
    expect(budgetActive(nightly, at('2026-12-31T23:59:00Z')).active).toBe(true);
    expect(budgetActive(nightly, at('2027-01-01T01:59:59Z')).active).toBe(true);
    expect(budgetActive(nightly, at('2027-01-01T02:00:00Z')).active).toBe(false);
  });

  it('finds a hit a month back for a long duration, and none beyond it', () => {
    const monthly: Budget = { nodes: '0', schedule: '@monthly', duration: '720h' };
    expect(budgetActive(monthly, at('2026-12-30T23:59:00Z')).active).toBe(true);
    const yearly: Budget = { nodes: '0', schedule: '@yearly', duration: '24h' };
    expect(budgetActive(yearly, at('2026-12-31T23:00:00Z')).active).toBe(false);
    expect(budgetActive(yearly, at('2027-01-01T23:59:59Z')).active).toBe(true);
  });

  it('is always active without schedule and duration, and fails closed with one of them', () => {
    expect(budgetActive({ nodes: '1' }, 0)).toEqual({ active: true });
    expect(budgetActive({ nodes: '1', schedule: '@daily' }, 0)).toMatchObject({
      active: false,
      error: expect.any(String),
    });
    expect(budgetActive({ nodes: '1', schedule: 'not cron', duration: '1h' }, 0).error).toContain('not cron');
  });
});

describe('lastCronHit', () => {
  it('treats restricted day-of-month and day-of-week as either, a starred one as deferring', () => {
    const either = parseCron('0 0 13 * fri');
    if (!either.ok) throw new Error(either.error);
    // 2026-12-04 is a Friday, not the 13th: either field matching is enough.
    expect(lastCronHit(either.schedule, at('2026-12-04T00:00:00Z'), at('2026-12-03T23:00:00Z'))).toBe(
      at('2026-12-04T00:00:00Z'),
    );
    const dowOnly = parseCron('0 0 * * fri');
    if (!dowOnly.ok) throw new Error(dowOnly.error);
    expect(lastCronHit(dowOnly.schedule, at('2026-12-03T00:00:00Z'), at('2026-12-02T23:00:00Z'))).toBeUndefined();
  });
});

describe('budgetLimit', () => {
  const now = at('2026-12-02T12:00:00Z'); // a Wednesday
  it.each<[string, Budget[] | undefined, number, 'Drifted' | 'Empty', number, number | undefined]>([
    ['the default 10% of 0 nodes', undefined, 0, 'Drifted', 0, 0],
    ['the default 10% of 5 nodes', undefined, 5, 'Drifted', 1, 0],
    ['100% of 7 nodes', [{ nodes: '100%' }], 7, 'Drifted', 7, 0],
    ['the minimum of two', [{ nodes: '50%' }, { nodes: '2' }], 10, 'Drifted', 2, 1],
    ['the first of equal ones', [{ nodes: '1' }, { nodes: '10%' }], 10, 'Drifted', 1, 0],
    [
      'a budget for other reasons is ignored',
      [{ nodes: '5' }, { nodes: '0', reasons: ['Empty'] }],
      10,
      'Drifted',
      5,
      0,
    ],
    ['a budget for this reason counts', [{ nodes: '5' }, { nodes: '0', reasons: ['Empty'] }], 10, 'Empty', 0, 1],
    [
      'an active window',
      [{ nodes: '10' }, { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' }],
      10,
      'Drifted',
      0,
      1,
    ],
    [
      'an inactive window',
      [{ nodes: '3' }, { nodes: '0', schedule: '0 0 * * sun', duration: '1h' }],
      10,
      'Drifted',
      3,
      0,
    ],
    [
      'only inactive budgets: no limit',
      [{ nodes: '0', schedule: '0 0 * * sun', duration: '1h' }],
      10,
      'Drifted',
      UNLIMITED,
      undefined,
    ],
    [
      'an invalid budget fails closed',
      [{ nodes: '3' }, { nodes: '0', schedule: '0 25 * * *', duration: '1h' }],
      10,
      'Drifted',
      0,
      1,
    ],
  ])('%s', (_, budgets, nodes, reason, limit, bindingIndex) => {
    const result = budgetLimit(pool(budgets), reason, { nodes, now });
    expect(result.limit).toBe(limit);
    expect(result.binding?.index).toBe(bindingIndex);
  });

  it('subtracts the nodes already disrupting, never below zero', () => {
    const limit = budgetLimit(pool([{ nodes: '2' }]), 'Drifted', { nodes: 10, now });
    expect([0, 1, 2, 3].map((d) => allowedDisruptions(limit, d))).toEqual([2, 1, 0, 0]);
  });

  it('defaults budgets as the CRD does', () => {
    expect(budgetsOf(pool())).toEqual([{ nodes: '10%' }]);
  });
});

describe('budgetDecision', () => {
  const now = at('2026-12-02T12:00:00Z');
  it('names the budget that blocks and its numbers', () => {
    const budgets: Budget[] = [
      { nodes: '10' },
      { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h', reasons: ['Drifted'] },
    ];
    const decision = budgetDecision(budgetLimit(pool(budgets), 'Drifted', { nodes: 4, now }), 0);
    expect(decision).toEqual({
      allowed: false,
      budgetIndex: 1,
      message:
        'NodePool/general budgets[1] (nodes: 0, schedule "0 9 * * mon-fri" for 8h, reasons Drifted) blocks: 0 of 4 node(s) at once, 0 already disrupting',
    });
  });

  it('allows while a slot is left and says who allows', () => {
    const limit = budgetLimit(pool([{ nodes: '1' }]), 'Drifted', { nodes: 3, now });
    expect(budgetDecision(limit, 0)).toMatchObject({ allowed: true, budgetIndex: 0 });
    expect(budgetDecision(limit, 0).message).toContain('budgets[0] (nodes: 1) allows');
    expect(budgetDecision(limit, 1).allowed).toBe(false);
  });

  it('says an invalid budget blocks until fixed, and that no budget limits when none is active', () => {
    const invalid = budgetLimit(pool([{ nodes: 'ten' }]), 'Drifted', { nodes: 3, now });
    expect(budgetDecision(invalid, 0)).toMatchObject({ allowed: false, budgetIndex: 0 });
    expect(budgetDecision(invalid, 0).message).toContain('is invalid (nodes "ten" is neither');
    const none = budgetLimit(pool([{ nodes: '0', reasons: ['Empty'] }]), 'Drifted', { nodes: 3, now });
    expect(budgetDecision(none, 2)).toEqual({
      allowed: true,
      message: 'NodePool/general: no active budget limits Drifted disruptions',
    });
  });
});
