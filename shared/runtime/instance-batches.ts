// DescribeInstances and TerminateInstances batched as Karpenter batches them (aws/karpenter-provider-aws
// pkg/batcher: ids of concurrent requests merged into one call, the answer split back per caller, and
// what a merged call could not settle retried one id at a time). Karpenter's batcher waits for an idle
// window (100 ms, 1 s at most); in a Lambda that latency would be paid by every lone caller, so here
// one call per operation is in flight at a time and whatever is asked meanwhile goes out together in
// the next: a lone caller waits for nothing, 500 drains stepping at once make a handful of calls.

/** One caller's ids and how to answer it. */
interface Waiter<R> {
  ids: readonly string[];
  resolve(value: Map<string, R>): void;
  reject(error: unknown): void;
}

/**
 * Runs `execute` over the union of the ids asked for while the previous call was in flight, at most
 * `maxIds` per call; every caller gets the answers for its own ids, or the error of its chunk.
 */
export class IdBatcher<R> {
  private queue: Waiter<R>[] = [];
  private running = false;
  /** Calls made to `execute` so far (the benchmark and the tests read it). */
  calls = 0;

  constructor(
    private readonly execute: (ids: string[]) => Promise<Map<string, R>>,
    private readonly maxIds: number,
  ) {}

  request(ids: readonly string[]): Promise<Map<string, R>> {
    if (ids.length === 0) return Promise.resolve(new Map());
    return new Promise((resolve, reject) => {
      this.queue.push({ ids, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const waiters = this.queue;
        this.queue = [];
        await this.settle(waiters);
      }
    } finally {
      this.running = false;
    }
  }

  private async settle(waiters: Waiter<R>[]): Promise<void> {
    const ids = [...new Set(waiters.flatMap((w) => w.ids))];
    const answers = new Map<string, R>();
    const failures = new Map<string, unknown>();
    for (let start = 0; start < ids.length; start += this.maxIds) {
      const chunk = ids.slice(start, start + this.maxIds);
      this.calls++;
      try {
        for (const [id, value] of await this.execute(chunk)) answers.set(id, value);
      } catch (error) {
        for (const id of chunk) failures.set(id, error);
      }
    }
    for (const waiter of waiters) {
      const failed = waiter.ids.find((id) => failures.has(id));
      if (failed !== undefined) {
        waiter.reject(failures.get(failed));
        continue;
      }
      waiter.resolve(new Map(waiter.ids.flatMap((id) => (answers.has(id) ? [[id, answers.get(id) as R]] : []))));
    }
  }
}
