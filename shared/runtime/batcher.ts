// Karpenter's provisioning batcher: once a new pending pod shows up, wait until no new one has
// arrived for the idle duration (1 s), but never longer than the max duration (10 s) after the first.
// Pure: the watcher feeds it times from its injected clock.

export const BATCH_IDLE_MS = 1_000;
export const BATCH_MAX_MS = 10_000;

export class Batcher {
  private firstAt: number | undefined;
  private lastAt: number | undefined;

  constructor(
    private readonly idleMs = BATCH_IDLE_MS,
    private readonly maxMs = BATCH_MAX_MS,
  ) {}

  /** A pod the last notice did not carry became pending at `now`. */
  trigger(now: number): void {
    this.firstAt ??= now;
    this.lastAt = now;
  }

  get open(): boolean {
    return this.firstAt !== undefined;
  }

  /** True when the open batch should go out at `now`. */
  due(now: number): boolean {
    if (this.firstAt === undefined || this.lastAt === undefined) return false;
    return now - this.lastAt >= this.idleMs || now - this.firstAt >= this.maxMs;
  }

  /** Epoch ms at which the open batch becomes due if nothing else arrives. */
  dueAt(): number | undefined {
    if (this.firstAt === undefined || this.lastAt === undefined) return undefined;
    return Math.min(this.lastAt + this.idleMs, this.firstAt + this.maxMs);
  }

  close(): void {
    this.firstAt = undefined;
    this.lastAt = undefined;
  }
}
