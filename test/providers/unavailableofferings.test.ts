import { describe, expect, it } from 'vitest';
import { InMemoryUnavailableOfferings } from '../../shared/providers/unavailableofferings';
import { fakeClock } from './fakes';

describe('InMemoryUnavailableOfferings', () => {
  it('marks one offering unavailable for 3 minutes', () => {
    const clock = fakeClock();
    const cache = new InMemoryUnavailableOfferings(clock);
    cache.markUnavailable('spot', 'm5.large', 'us-west-2a', 'InsufficientInstanceCapacity');
    expect(cache.isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(true);
    expect(cache.isUnavailable('on-demand', 'm5.large', 'us-west-2a')).toBe(false);
    expect(cache.isUnavailable('spot', 'm5.large', 'us-west-2b')).toBe(false);
    expect(cache.snapshot()).toEqual({ 'spot:m5.large:us-west-2a': 'InsufficientInstanceCapacity' });
    clock.advance(179_999);
    expect(cache.isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(true);
    clock.advance(1);
    expect(cache.isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(false);
    expect(cache.snapshot()).toEqual({});
  });

  it('restarts the 3 minutes when marked again', () => {
    const clock = fakeClock();
    const cache = new InMemoryUnavailableOfferings(clock);
    cache.markUnavailable('on-demand', 'c5.large', 'a', 'x');
    clock.advance(120_000);
    cache.markUnavailable('on-demand', 'c5.large', 'a', 'x');
    clock.advance(120_000);
    expect(cache.isUnavailable('on-demand', 'c5.large', 'a')).toBe(true);
  });
});
