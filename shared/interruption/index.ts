// The interruption registry: source + detail-type → one parser per kind (kinds/). parseInterruption
// turns an SQS body into an InterruptionMessage or an error naming the field; it never throws on
// input. Events nobody registered (other detail-types, S3 or Auto Scaling messages, SNS envelopes)
// become { kind: 'Unknown', action: 'NoAction' } and are acknowledged.

import {
  describeType,
  FieldError,
  field,
  isObject,
  type JsonObject,
  MAX_INTERRUPTION_BODY_BYTES,
  type ParseResult,
  readEnvelope,
} from './event';
import { capacityReservationInterruption } from './kinds/capacityreservation';
import type { InterruptionParser, ParseOptions } from './kinds/parser';
import { rebalanceRecommendation } from './kinds/rebalance';
import { scheduledChange } from './kinds/scheduledchange';
import { spotInterruption } from './kinds/spot';
import { instanceStateChange } from './kinds/statechange';
import type { InterruptionMessage } from './types';

export { MAX_INTERRUPTION_BODY_BYTES, type ParseResult } from './event';
export type { InterruptionParser, ParseOptions } from './kinds/parser';
export { ACTIONABLE_STATES } from './kinds/statechange';
export type { InterruptionKind, InterruptionMessage } from './types';

export const INTERRUPTION_PARSERS: readonly InterruptionParser[] = [
  spotInterruption,
  rebalanceRecommendation,
  instanceStateChange,
  scheduledChange,
  capacityReservationInterruption,
];

const registryKey = (source: string, detailType: string) => `${source}\u0000${detailType}`;

const REGISTRY: ReadonlyMap<string, InterruptionParser> = new Map(
  INTERRUPTION_PARSERS.flatMap((p) => p.detailTypes.map((dt) => [registryKey(p.source, dt), p] as const)),
);

/** Every (source, detail-type) the registry reads: what the EventBridge rules must route to the queue. */
export const INTERRUPTION_EVENT_TYPES: readonly { source: string; detailType: string }[] = INTERRUPTION_PARSERS.flatMap(
  (p) => p.detailTypes.map((detailType) => ({ source: p.source, detailType })),
);

export function parserFor(source: string, detailType: string): InterruptionParser | undefined {
  return REGISTRY.get(registryKey(source, detailType));
}

function unknown(event: JsonObject | undefined): InterruptionMessage {
  const id = event && field(event, 'id');
  const source = event && field(event, 'source');
  const detailType = event && field(event, 'detail-type');
  const timeText = event && field(event, 'time');
  const time = typeof timeText === 'string' ? Date.parse(timeText) : Number.NaN;
  return {
    kind: 'Unknown',
    eventId: typeof id === 'string' ? id : '',
    instanceIds: [],
    time: Number.isNaN(time) ? 0 : time,
    action: 'NoAction',
    ...(typeof source === 'string' ? { source } : {}),
    ...(typeof detailType === 'string' ? { detailType } : {}),
  };
}

function decode(body: unknown): { ok: true; value: unknown } | { ok: false; error: string } {
  if (typeof body !== 'string') return { ok: true, value: body };
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > MAX_INTERRUPTION_BODY_BYTES) {
    return {
      ok: false,
      error: `body is ${bytes} bytes, over the ${MAX_INTERRUPTION_BODY_BYTES}-byte limit of an SQS message`,
    };
  }
  if (body.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `body is not valid JSON (${bytes} bytes, possibly truncated): ${reason}` };
  }
}

/**
 * Parses one SQS message body (the JSON text, or the value already parsed). Never throws on input:
 * a malformed event of a known kind is `{ ok: false, error }` with the field path; anything that is
 * not a known EventBridge event is acknowledged as Unknown.
 */
export function parseInterruption(body: unknown, options: ParseOptions = {}): ParseResult {
  const decoded = decode(body);
  if (!decoded.ok) return decoded;
  const value = decoded.value;
  // Upstream acknowledges an empty body as a no-op.
  if (value === undefined) return { ok: true, message: unknown(undefined) };
  if (!isObject(value)) {
    return { ok: false, error: `body: must be a JSON object (an EventBridge event), got ${describeType(value)}` };
  }
  const source = field(value, 'source');
  const detailType = field(value, 'detail-type');
  const version = field(value, 'version');
  // Documentation examples sometimes leave out version; delivered events carry "0", all parsers expect it.
  if (typeof source !== 'string' || typeof detailType !== 'string' || (version !== undefined && version !== '0')) {
    return { ok: true, message: unknown(value) };
  }
  const parser = parserFor(source, detailType);
  if (!parser) return { ok: true, message: unknown(value) };
  try {
    const envelope = readEnvelope(value, source, detailType);
    return { ok: true, message: parser.parse(envelope, options) };
  } catch (error) {
    if (error instanceof FieldError) return { ok: false, error: `${detailType}: ${error.message}` };
    throw error;
  }
}
