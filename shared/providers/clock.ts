// Time as a dependency, so caches and backoff are testable without waiting.

/** Milliseconds since the epoch. */
export type Clock = () => number;

export type Sleep = (ms: number) => Promise<void>;

export const systemClock: Clock = () => Date.now();

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A value remembered until `ttlMs` after it was stored. */
export class TTLCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= this.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs = this.ttlMs): void {
    this.entries.set(key, { value, expires: this.clock() + ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
