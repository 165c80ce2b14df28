// List, then watch from the list's resourceVersion until a deadline; list again when the watch
// answers 410 Gone ('expired') or fails. Kubernetes' informer pattern, cut to one Lambda invocation.

import type { ObjectList, WatchEvent, WatchOptions, WatchResult } from '../kube/types';
import { errorMessage } from '../providers/aws-errors';
import type { Clock, Sleep } from '../providers/clock';
import type { RuntimeLog } from './telemetry';

export interface WatchLoop<T> {
  resource: string;
  fieldSelector?: string;
  list(): Promise<ObjectList<T>>;
  watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<WatchResult>;
  onList(items: T[]): void;
  onEvent(event: WatchEvent<T>): void;
}

export interface WatchLoopContext {
  clock: Clock;
  sleep: Sleep;
  log: RuntimeLog;
  /** Epoch ms at which to stop watching. */
  stopAt: number;
  signal: AbortSignal;
  /** Pause after a failed list or watch before trying again. */
  retryMs: number;
}

/** Runs until stopAt or the signal; returns how many times it listed. */
export async function runWatchLoop<T>(loop: WatchLoop<T>, context: WatchLoopContext): Promise<number> {
  let resourceVersion: string | undefined;
  let lists = 0;
  const running = () => context.clock() < context.stopAt && !context.signal.aborted;
  while (running()) {
    try {
      if (resourceVersion === undefined) {
        const list = await loop.list();
        lists++;
        loop.onList(list.items);
        resourceVersion = list.resourceVersion;
      }
      if (!running()) break;
      const result = await loop.watch(
        {
          ...(loop.fieldSelector !== undefined ? { fieldSelector: loop.fieldSelector } : {}),
          resourceVersion,
          timeoutSeconds: Math.max(1, Math.ceil((context.stopAt - context.clock()) / 1000)),
          signal: context.signal,
        },
        loop.onEvent,
      );
      if (result.kind === 'expired') {
        context.log.info('watch expired, listing again', { resource: loop.resource });
        resourceVersion = undefined;
      } else {
        resourceVersion = result.resourceVersion;
      }
    } catch (error) {
      if (context.signal.aborted) break;
      context.log.warn('list or watch failed, retrying', { resource: loop.resource, error: errorMessage(error) });
      resourceVersion = undefined;
      await context.sleep(context.retryMs);
    }
  }
  return lists;
}
