// core/v1 Events as Karpenter's recorder writes them: deduplicated (the same reason and message on the
// same object within two minutes is one event, its count raised afterwards rather than a new one) and
// without any state of its own across invocations: the event's name is derived from the object, the
// reason and the message, so the next invocation finds the event the last one wrote.

import { createHash } from 'node:crypto';
import type { Transport } from './http';

/** Karpenter's recorder drops a repeat of the same event within this window. */
export const EVENT_DEDUPE_MS = 2 * 60_000;
export const EVENT_SOURCE = 'karpenter';

export interface EventTarget {
  kind: string;
  apiVersion: string;
  name: string;
  namespace?: string;
  uid?: string;
}

export interface EventRecord {
  object: EventTarget;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface EventRecorder {
  /** Records the event unless the same one was recorded within the dedupe window; true when written. */
  publish(event: EventRecord): Promise<boolean>;
}

interface StoredEvent {
  metadata: { name: string; resourceVersion?: string };
  count?: number;
  lastTimestamp?: string;
}

export class HttpEventRecorder implements EventRecorder {
  /** name → epoch ms of the last write this recorder made or saw. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly transport: Transport,
    private readonly now: () => number,
  ) {}

  async publish(event: EventRecord): Promise<boolean> {
    const namespace = event.object.namespace ?? 'default';
    const name = eventName(event);
    const now = this.now();
    const last = this.seen.get(name);
    if (last !== undefined && now - last < EVENT_DEDUPE_MS) return false;
    const at = new Date(now).toISOString();
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
    const created = await this.transport.request({
      method: 'POST',
      path,
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: { ...event.object, namespace: event.object.namespace },
        type: event.type,
        reason: event.reason,
        message: event.message,
        count: 1,
        firstTimestamp: at,
        lastTimestamp: at,
        source: { component: EVENT_SOURCE },
        reportingComponent: EVENT_SOURCE,
      },
      retry: 'unsent',
      accept: [409],
    });
    if (created.status !== 409) {
      this.seen.set(name, now);
      return true;
    }
    // Another invocation wrote it: count the repeat once the window has passed, as the recorder does.
    const existing = (
      await this.transport.request({ method: 'GET', path: `${path}/${name}`, retry: 'idempotent', accept: [404] })
    ).body as StoredEvent;
    const previous = Date.parse(existing.lastTimestamp ?? '');
    if (Number.isFinite(previous) && now - previous < EVENT_DEDUPE_MS) {
      this.seen.set(name, previous);
      return false;
    }
    await this.transport.request({
      method: 'PATCH',
      path: `${path}/${name}`,
      body: { count: (existing.count ?? 1) + 1, lastTimestamp: at },
      contentType: 'application/merge-patch+json',
      retry: 'idempotent',
      accept: [404],
    });
    this.seen.set(name, now);
    return true;
  }
}

/** `<object>.<hash of kind, uid, reason, message>`: one event per distinct thing said about one object. */
export function eventName(event: EventRecord): string {
  const hash = createHash('sha256')
    .update([event.object.kind, event.object.uid ?? '', event.reason, event.message].join('\n'))
    .digest('hex')
    .slice(0, 16);
  return `${event.object.name}.${hash}`;
}
