import { describe, expect, it } from 'vitest';
import { formatGoDuration, parseDurationSeconds } from '../../shared/apis/duration';
import { isQuantity, parseQuantity } from '../../shared/apis/quantity';

describe('parseQuantity', () => {
  it.each([
    ['500m', 0.5],
    ['2', 2],
    ['16Gi', 16 * 2 ** 30],
    ['100Mi', 100 * 2 ** 20],
    ['1k', 1000],
    ['1e3', 1000],
    ['1.5G', 1.5e9],
    ['.5', 0.5],
  ])('reads %s', (text, expected) => {
    expect(parseQuantity(text)).toBe(expected);
  });

  it.each(['', 'abc', '1.2.3', '5Gb', '--1', 'Gi'])('rejects %j', (text) => {
    expect(isQuantity(text)).toBe(false);
    expect(() => parseQuantity(text)).toThrow(/not a valid resource quantity/);
  });
});

describe('Go durations', () => {
  it.each([
    ['720h', 2_592_000],
    ['1h30m', 5400],
    ['90s', 90],
    ['0s', 0],
  ])('parses %s', (text, seconds) => {
    expect(parseDurationSeconds(text)).toBe(seconds);
  });

  it.each(['1d', 'h', '10', '-5s'])('rejects %s', (text) => {
    expect(parseDurationSeconds(text)).toBeUndefined();
  });

  it.each([
    [60, '1m0s'],
    [90, '1m30s'],
    [30, '30s'],
    [5400, '1h30m0s'],
    [0, '0s'],
  ])('formats %d seconds as %s', (seconds, text) => {
    expect(formatGoDuration(seconds)).toBe(text);
  });
});
