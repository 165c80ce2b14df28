import { describe, expect, it } from 'vitest';
import { parseCron } from '../../../shared/apis/v1/cron';

describe('parseCron', () => {
  it.each([
    ['0 8 * * mon-fri', { hours: [8], minutes: [0], daysOfWeek: [1, 2, 3, 4, 5] }],
    ['*/15 * * * *', { minutes: [0, 15, 30, 45] }],
    ['0 0 1,15 * *', { daysOfMonth: [1, 15] }],
    ['0 22 * jan-mar,DEC sun', { months: [1, 2, 3, 12], daysOfWeek: [0] }],
    ['30 9-17/4 ? * *', { hours: [9, 13, 17], minutes: [30] }],
    ['5/20 * * * *', { minutes: [5, 25, 45] }],
    ['@daily', { minutes: [0], hours: [0] }],
    ['@midnight', { minutes: [0], hours: [0] }],
    ['@hourly', { minutes: [0], hours: [...Array(24).keys()] }],
    ['@weekly', { daysOfWeek: [0] }],
    ['@monthly', { daysOfMonth: [1] }],
    ['@yearly', { months: [1], daysOfMonth: [1] }],
    ['@annually', { months: [1], daysOfMonth: [1] }],
  ])('accepts %s', (text, expected) => {
    const parsed = parseCron(text);
    if (!parsed.ok) throw new Error(parsed.error);
    for (const [field, values] of Object.entries(expected)) {
      expect([...(parsed.schedule[field as keyof typeof parsed.schedule] as Set<number>)]).toEqual(values);
    }
  });

  it.each([
    ['0 8 * *', 'expected 5 fields (minute hour day-of-month month day-of-week), found 4'],
    ['0 8 * * * *', 'expected 5 fields (minute hour day-of-month month day-of-week), found 6'],
    ['60 * * * *', 'minute: 60 is out of range 0-59'],
    ['0 24 * * *', 'hour: 24 is out of range 0-23'],
    ['0 0 0 * *', 'day of month: 0 is out of range 1-31'],
    ['0 0 * 13 *', 'month: 13 is out of range 1-12'],
    ['0 0 * * 7', 'day of week: 7 is out of range 0-6'],
    ['0 0 * * funday', 'day of week: "funday" is not a number or a name'],
    ['*/0 * * * *', 'minute: step "0" must be a positive number'],
    ['0 17-9 * * *', 'hour: range start 17 is beyond its end 9'],
    ['0 1-2-3 * * *', 'hour: too many hyphens in "1-2-3"'],
    [
      '@every 5m',
      'unknown descriptor "@every 5m" (use @annually, @yearly, @monthly, @weekly, @daily, @midnight or @hourly)',
    ],
  ])('rejects %s', (text, error) => {
    expect(parseCron(text)).toEqual({ ok: false, error });
  });

  it('marks which day fields are restricted, for the cron day-matching rule', () => {
    const parsed = parseCron('0 0 1 * mon');
    expect(parsed.ok && [parsed.schedule.daysOfMonthRestricted, parsed.schedule.daysOfWeekRestricted]).toEqual([
      true,
      true,
    ]);
    const starred = parseCron('0 0 * * *');
    expect(starred.ok && [starred.schedule.daysOfMonthRestricted, starred.schedule.daysOfWeekRestricted]).toEqual([
      false,
      false,
    ]);
  });
});
