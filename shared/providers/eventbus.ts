// Putting karpless's own events (PodsUnschedulable, NodeClaimsLaunched) on the notice bus. PutEvents
// takes at most 10 entries and 256 KB per call and answers per entry: a call can succeed while some
// entries fail, so only those are sent again, with backoff, before the caller hears about them.

import {
  PutEventsCommand,
  type PutEventsCommandInput,
  type PutEventsCommandOutput,
  type PutEventsRequestEntry,
} from '@aws-sdk/client-eventbridge';
import { EVENT_SOURCE } from '../contracts';
import { realSleep, type Sleep } from './clock';

export interface EventBridgeApi {
  putEvents(input: PutEventsCommandInput): Promise<PutEventsCommandOutput>;
}

interface Sender {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send is generic over every command of the client.
  send(command: any): Promise<any>;
}

export function eventBridgeApi(client: Sender): EventBridgeApi {
  return { putEvents: (i) => client.send(new PutEventsCommand(i)) };
}

/** One event to put; `detail` is serialized as JSON. */
export interface BusEvent {
  detailType: string;
  detail: unknown;
  /** Defaults to the publisher's source (`karpless`). */
  source?: string;
  /** ARNs the event is about (e.g. instances), which rules can match on. */
  resources?: string[];
  time?: Date;
}

export interface EventPublisher {
  /** Puts every event or throws naming the ones that could not be put. */
  publish(events: readonly BusEvent[]): Promise<void>;
}

export const PUT_EVENTS_MAX_ENTRIES = 10;
/** PutEvents' limit on one entry and on the entries of one call together. */
export const PUT_EVENTS_MAX_BYTES = 256 * 1024;

/** Entry error codes that the same entry would get again: retrying cannot help. */
const PERMANENT_ENTRY_ERRORS: ReadonlySet<string> = new Set([
  'MalformedDetail',
  'InvalidArgument',
  'ValidationException',
  'AccessDeniedException',
  'NotAuthorizedForSourceException',
  'NotAuthorizedForDetailTypeException',
  'ResourceNotFoundException',
]);

/** An entry's size as EventBridge counts it against the 256 KB limit. */
export function entrySize(entry: PutEventsRequestEntry): number {
  let size = entry.Time ? 14 : 0;
  size += Buffer.byteLength(entry.Source ?? '', 'utf8');
  size += Buffer.byteLength(entry.DetailType ?? '', 'utf8');
  if (entry.Detail !== undefined) size += Buffer.byteLength(entry.Detail, 'utf8');
  for (const resource of entry.Resources ?? []) size += Buffer.byteLength(resource, 'utf8');
  return size;
}

export class EventTooLargeError extends Error {
  constructor(
    readonly index: number,
    readonly detailType: string,
    readonly size: number,
  ) {
    super(
      `event ${index} (${detailType}) is ${size} bytes, over PutEvents' limit of ${PUT_EVENTS_MAX_BYTES}: ` +
        'split its detail across several events',
    );
    this.name = 'EventTooLargeError';
  }
}

export interface FailedEntry {
  /** Position of the event in the publish() call. */
  index: number;
  detailType: string;
  code: string;
  message: string;
}

export class PutEventsError extends Error {
  constructor(
    readonly busName: string,
    readonly failures: readonly FailedEntry[],
  ) {
    const listed = failures.map((f) => `event ${f.index} (${f.detailType}): ${f.code}: ${f.message}`).join('; ');
    super(`PutEvents on bus ${busName} failed for ${failures.length} event(s): ${listed}`);
    this.name = 'PutEventsError';
  }
}

export interface EventBridgePublisherOptions {
  busName: string;
  source?: string;
  sleep?: Sleep;
  /** Attempts after the first for entries that failed with a transient code. */
  retries?: number;
  baseDelayMs?: number;
}

interface Pending {
  index: number;
  entry: PutEventsRequestEntry;
}

export class EventBridgePublisher implements EventPublisher {
  private readonly sleep: Sleep;
  private readonly retries: number;
  private readonly baseDelayMs: number;

  constructor(
    private readonly api: EventBridgeApi,
    private readonly options: EventBridgePublisherOptions,
  ) {
    this.sleep = options.sleep ?? realSleep;
    this.retries = options.retries ?? 3;
    this.baseDelayMs = options.baseDelayMs ?? 100;
  }

  async publish(events: readonly BusEvent[]): Promise<void> {
    const pending = events.map((event, index) => ({ index, entry: this.entryOf(event) }));
    // Every size is checked before anything is sent, so an oversize event puts none of the batch.
    for (const p of pending) {
      const size = entrySize(p.entry);
      if (size > PUT_EVENTS_MAX_BYTES) throw new EventTooLargeError(p.index, p.entry.DetailType ?? '', size);
    }
    const failures: FailedEntry[] = [];
    for (const group of groupEntries(pending)) failures.push(...(await this.put(group)));
    if (failures.length > 0) throw new PutEventsError(this.options.busName, failures);
  }

  private entryOf(event: BusEvent): PutEventsRequestEntry {
    return {
      EventBusName: this.options.busName,
      Source: event.source ?? this.options.source ?? EVENT_SOURCE,
      DetailType: event.detailType,
      Detail: JSON.stringify(event.detail),
      ...(event.resources?.length ? { Resources: event.resources } : {}),
      ...(event.time ? { Time: event.time } : {}),
    };
  }

  /** Puts one call's worth of entries; answers the entries that still failed after the retries. */
  private async put(group: Pending[]): Promise<FailedEntry[]> {
    const permanent: FailedEntry[] = [];
    let pending = group;
    for (let attempt = 0; ; attempt++) {
      const out = await this.api.putEvents({ Entries: pending.map((p) => p.entry) });
      if (!out.FailedEntryCount) return permanent;
      const failed = failedEntries(pending, out);
      const transient = failed.filter((f) => !PERMANENT_ENTRY_ERRORS.has(f.failure.code));
      permanent.push(...failed.filter((f) => PERMANENT_ENTRY_ERRORS.has(f.failure.code)).map((f) => f.failure));
      if (transient.length === 0) return permanent;
      if (attempt >= this.retries) return [...permanent, ...transient.map((f) => f.failure)];
      pending = transient.map((f) => f.pending);
      await this.sleep(this.baseDelayMs * 2 ** attempt);
    }
  }
}

/** The entries PutEvents reports as failed (its results are positional). */
function failedEntries(
  pending: readonly Pending[],
  out: PutEventsCommandOutput,
): { pending: Pending; failure: FailedEntry }[] {
  const results = out.Entries ?? [];
  const failed = pending.flatMap((p, i) => {
    const result = results[i];
    if (!result?.ErrorCode) return [];
    return [{ pending: p, failure: failure(p, result.ErrorCode, result.ErrorMessage ?? '') }];
  });
  if (failed.length > 0) return failed;
  // A failure count without per-entry results: nothing tells which entries landed, so all count as failed.
  return pending.map((p) => ({ pending: p, failure: failure(p, 'InternalFailure', 'no per-entry result') }));
}

function failure(p: Pending, code: string, message: string): FailedEntry {
  return { index: p.index, detailType: p.entry.DetailType ?? '', code, message };
}

/** Consecutive groups of at most 10 entries and 256 KB. */
function groupEntries(pending: readonly Pending[]): Pending[][] {
  const groups: Pending[][] = [];
  let current: Pending[] = [];
  let bytes = 0;
  for (const p of pending) {
    const size = entrySize(p.entry);
    if (current.length === PUT_EVENTS_MAX_ENTRIES || (current.length > 0 && bytes + size > PUT_EVENTS_MAX_BYTES)) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(p);
    bytes += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** Keeps what would have been put: for unit tests, the CLI and dry runs. */
export class RecordingEventPublisher implements EventPublisher {
  readonly published: BusEvent[] = [];

  async publish(events: readonly BusEvent[]): Promise<void> {
    this.published.push(...events.map((e) => structuredClone(e)));
  }
}
