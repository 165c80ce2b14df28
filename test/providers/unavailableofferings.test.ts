import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { InMemoryUnavailableOfferings, StateUnavailableOfferings } from '../../shared/providers/unavailableofferings';
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

describe('StateUnavailableOfferings', () => {
  function countingStore(clock: ReturnType<typeof fakeClock>) {
    const store = new InMemoryStateStore(clock);
    let reads = 0;
    const unavailableOfferings = store.unavailableOfferings.bind(store);
    store.unavailableOfferings = () => {
      reads++;
      return unavailableOfferings();
    };
    return { store, reads: () => reads };
  }

  it('lets the next invocation skip an offering this one found out of capacity, for 3 minutes', async () => {
    const clock = fakeClock();
    const { store } = countingStore(clock);
    const first = new StateUnavailableOfferings(store, clock);
    await first.markUnavailable('spot', 'm5.large', 'us-west-2a', 'InsufficientInstanceCapacity');
    const next = new StateUnavailableOfferings(store, clock);
    expect(await next.isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(true);
    expect(await next.isUnavailable('on-demand', 'm5.large', 'us-west-2a')).toBe(false);
    expect(next.snapshot()).toEqual({ 'spot:m5.large:us-west-2a': 'InsufficientInstanceCapacity' });
    clock.advance(3 * 60_000 - 1);
    expect(await new StateUnavailableOfferings(store, clock).isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(
      true,
    );
    clock.advance(1);
    expect(await next.isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(false);
    expect(await new StateUnavailableOfferings(store, clock).isUnavailable('spot', 'm5.large', 'us-west-2a')).toBe(
      false,
    );
  });

  it('answers many lookups from one read, and reads again once its view is 5 s old', async () => {
    const clock = fakeClock();
    const { store, reads } = countingStore(clock);
    const reader = new StateUnavailableOfferings(store, clock);
    for (const zone of ['a', 'b', 'c']) expect(await reader.isUnavailable('spot', 'c5.large', zone)).toBe(false);
    expect(reads()).toBe(1);
    await new StateUnavailableOfferings(store, clock).markUnavailable('spot', 'c5.large', 'b', 'ICE');
    clock.advance(4_999);
    expect(await reader.isUnavailable('spot', 'c5.large', 'b')).toBe(false);
    expect(reader.has('spot', 'c5.large', 'b')).toBe(false);
    clock.advance(1);
    expect(await reader.isUnavailable('spot', 'c5.large', 'b')).toBe(true);
    expect(reader.has('spot', 'c5.large', 'b')).toBe(true);
    expect(reads()).toBe(2);
  });

  it('sees its own marks at once, without reading', async () => {
    const clock = fakeClock();
    const { store, reads } = countingStore(clock);
    const cache = new StateUnavailableOfferings(store, clock);
    await cache.markUnavailable('on-demand', 'p5.48xlarge', 'us-west-2a', 'InsufficientInstanceCapacity');
    expect(cache.has('on-demand', 'p5.48xlarge', 'us-west-2a')).toBe(true);
    expect(reads()).toBe(0);
    expect(await store.isOfferingUnavailable('on-demand', 'p5.48xlarge', 'us-west-2a')).toBe(true);
  });
});
