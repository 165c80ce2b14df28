// Reading a watch stream: newline-delimited JSON events that arrive in chunks cut anywhere, even
// inside a multi-byte character. The resourceVersion of every event, bookmarks included, is where
// the next watch resumes; a 410 (as the answer's status or as an ERROR event) means re-list.

import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { KubeApiError, type WatchEvent, type WatchEventType, type WatchResult } from './types';

/** Splits byte chunks into complete lines; text after the last newline waits for the next chunk. */
export class LineDecoder {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';

  push(chunk: Uint8Array): string[] {
    const text = this.rest + this.decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    return lines.filter((line) => line.trim() !== '');
  }

  /** The final line when the stream ends without a trailing newline. */
  end(): string[] {
    const last = this.rest + this.decoder.end();
    this.rest = '';
    return last.trim() === '' ? [] : [last];
  }
}

const EVENT_TYPES = new Set<string>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

export type ParsedLine<T> =
  | { kind: 'event'; event: WatchEvent<T> }
  | { kind: 'expired' }
  | { kind: 'error'; error: Error };

/** Reads one watch line; `request` names the watch in errors. */
export function parseWatchLine<T>(line: string, request: string): ParsedLine<T> {
  let raw: { type?: unknown; object?: unknown };
  try {
    raw = JSON.parse(line);
  } catch {
    return {
      kind: 'error',
      error: new Error(`${request}: malformed watch event ${JSON.stringify(line.slice(0, 120))}`),
    };
  }
  if (raw === null || typeof raw !== 'object' || typeof raw.object !== 'object' || raw.object === null) {
    return { kind: 'error', error: new Error(`${request}: watch event without an object: ${line.slice(0, 120)}`) };
  }
  if (raw.type === 'ERROR') {
    const status = raw.object as { code?: number; reason?: string; message?: string };
    if (status.code === 410) return { kind: 'expired' };
    return {
      kind: 'error',
      error: new KubeApiError(request, status.code ?? 500, status.reason ?? 'Unknown', status.message ?? line),
    };
  }
  if (typeof raw.type !== 'string' || !EVENT_TYPES.has(raw.type)) {
    return { kind: 'error', error: new Error(`${request}: unknown watch event type ${JSON.stringify(raw.type)}`) };
  }
  return { kind: 'event', event: { type: raw.type as WatchEventType, object: raw.object as T } };
}

function resourceVersionOf(object: unknown): string | undefined {
  const version = (object as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
  return typeof version === 'string' && version !== '' ? version : undefined;
}

/**
 * Delivers the events of an open watch answer until the server ends it, the connection drops
 * (both 'closed': resume from the last resourceVersion) or a 410 ('expired'). A malformed event,
 * another ERROR event or a throwing handler rejects.
 */
export function consumeWatch<T>(
  response: IncomingMessage,
  request: string,
  resourceVersion: string,
  onEvent: (event: WatchEvent<T>) => void,
  signal?: AbortSignal,
): Promise<WatchResult> {
  const decoder = new LineDecoder();
  return new Promise<WatchResult>((resolve, reject) => {
    let finished = false;
    const finish = (outcome: { result: WatchResult } | { error: unknown }) => {
      if (finished) return;
      finished = true;
      response.destroy();
      if ('result' in outcome) resolve(outcome.result);
      else reject(outcome.error);
    };
    const handle = (lines: string[]) => {
      for (const line of lines) {
        if (finished) return;
        // Once aborted, events still buffered in this chunk are not delivered: the returned
        // resourceVersion is that of the last event the handler saw.
        if (signal?.aborted) return finish({ result: { kind: 'closed', resourceVersion } });
        const parsed = parseWatchLine<T>(line, request);
        if (parsed.kind === 'expired') return finish({ result: { kind: 'expired' } });
        if (parsed.kind === 'error') return finish({ error: parsed.error });
        resourceVersion = resourceVersionOf(parsed.event.object) ?? resourceVersion;
        try {
          onEvent(parsed.event);
        } catch (error) {
          return finish({ error });
        }
      }
    };
    response.on('data', (chunk: Buffer) => handle(decoder.push(chunk)));
    response.on('end', () => {
      handle(decoder.end());
      finish({ result: { kind: 'closed', resourceVersion } });
    });
    // A dropped connection or an abort ends the watch like a timeout: the caller resumes from here.
    response.on('error', () => finish({ result: { kind: 'closed', resourceVersion } }));
    response.on('close', () => finish({ result: { kind: 'closed', resourceVersion } }));
  });
}
