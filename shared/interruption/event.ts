// Reading one EventBridge event out of an SQS body without trusting any of it: every accessor checks
// the JSON type and returns the field path with what was wrong, so a bad record is named, never thrown.

import type { InterruptionMessage } from './types';

/** SQS refuses larger messages; anything bigger did not come from EventBridge. */
export const MAX_INTERRUPTION_BODY_BYTES = 256 * 1024;

export type JsonObject = { readonly [key: string]: unknown };

export type ParseResult = { ok: true; message: InterruptionMessage } | { ok: false; error: string };

/** The EventBridge envelope fields every parser shares, already checked. */
export interface EventEnvelope {
  id: string;
  source: string;
  detailType: string;
  /** Epoch ms. */
  time: number;
  resources: string[];
  detail: JsonObject;
}

export class FieldError extends Error {}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property only: `constructor` or `__proto__` in a body must not reach the prototype. */
export function field(obj: JsonObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  return `a ${typeof value}`;
}

export function requireString(obj: JsonObject, key: string, path: string): string {
  const value = field(obj, key);
  if (value === undefined) throw new FieldError(`${path}: missing`);
  if (typeof value !== 'string' || value === '') {
    throw new FieldError(`${path}: must be a non-empty string, got ${describeType(value)}`);
  }
  return value;
}

export function optionalString(obj: JsonObject, key: string, path: string): string | undefined {
  const value = field(obj, key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new FieldError(`${path}: must be a string, got ${describeType(value)}`);
  return value;
}

// EC2 instance ids: "i-" and 8 (older) or 17 hex digits.
const INSTANCE_ID = /^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;

export function isInstanceId(value: string): boolean {
  return INSTANCE_ID.test(value);
}

/**
 * The instance of a record Karpenter acknowledges without acting when its id is missing, empty or not
 * an instance id (the id then matches no NodeClaim): `ignored` says which, and no id is returned. A
 * value of the wrong JSON type is still a malformed record.
 */
export function lenientInstanceId(detail: JsonObject): { ids: string[]; ignored?: string } {
  const value = field(detail, 'instance-id');
  if (value === undefined || value === null || value === '') return { ids: [], ignored: 'detail.instance-id: missing' };
  if (typeof value !== 'string') {
    throw new FieldError(`detail.instance-id: must be a non-empty string, got ${describeType(value)}`);
  }
  if (!isInstanceId(value)) {
    return {
      ids: [],
      ignored: `detail.instance-id: ${JSON.stringify(value.slice(0, 64))} is not an EC2 instance id (i- and 8 or 17 hex digits)`,
    };
  }
  return { ids: [value] };
}

/** A message of an instance-id that matches no instance: acknowledged, nothing done (see lenientInstanceId). */
export function ignoredMessage(
  envelope: EventEnvelope,
  kind: InterruptionMessage['kind'],
  ignored: string,
  state?: string,
): InterruptionMessage {
  return { ...message(envelope, kind, 'NoAction', [], state), ignored };
}

/** Reads and checks the envelope of an event whose source and detail-type a parser claimed. */
export function readEnvelope(event: JsonObject, source: string, detailType: string): EventEnvelope {
  const id = requireString(event, 'id', 'id');
  const timeText = requireString(event, 'time', 'time');
  // Precision varies (seconds to nanoseconds); Date.parse takes all of them.
  const time = Date.parse(timeText);
  if (Number.isNaN(time))
    throw new FieldError(`time: ${JSON.stringify(timeText.slice(0, 64))} is not an RFC 3339 time`);
  const rawResources = field(event, 'resources');
  let resources: string[] = [];
  if (rawResources !== undefined && rawResources !== null) {
    if (!Array.isArray(rawResources)) {
      throw new FieldError(`resources: must be an array of strings, got ${describeType(rawResources)}`);
    }
    resources = rawResources.map((r, i) => {
      if (typeof r !== 'string') throw new FieldError(`resources[${i}]: must be a string, got ${describeType(r)}`);
      return r;
    });
  }
  const detail = field(event, 'detail');
  if (detail === undefined) throw new FieldError('detail: missing');
  if (!isObject(detail)) throw new FieldError(`detail: must be an object, got ${describeType(detail)}`);
  return { id, source, detailType, time, resources, detail };
}

/** The message every parser returns, with the envelope's fields filled in. */
export function message(
  envelope: EventEnvelope,
  kind: InterruptionMessage['kind'],
  action: InterruptionMessage['action'],
  instanceIds: string[],
  state?: string,
): InterruptionMessage {
  return {
    kind,
    eventId: envelope.id,
    instanceIds,
    time: envelope.time,
    ...(state !== undefined ? { state } : {}),
    action,
    source: envelope.source,
    detailType: envelope.detailType,
  };
}
