import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERRUPTION_RULES } from '../../shared/contracts';
import {
  INTERRUPTION_EVENT_TYPES,
  INTERRUPTION_PARSERS,
  MAX_INTERRUPTION_BODY_BYTES,
  parseInterruption,
  parserFor,
} from '../../shared/interruption';

const DIR = join(import.meta.dirname, '../fixtures/events');

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(DIR, `${name}.json`), 'utf8'));
}

function text(name: string): string {
  return readFileSync(join(DIR, `${name}.json`), 'utf8');
}

function withDetail(name: string, detail: Record<string, unknown>): Record<string, unknown> {
  const event = fixture(name);
  return { ...event, detail: { ...(event.detail as object), ...detail } };
}

function errorOf(body: unknown): string {
  const result = parseInterruption(body);
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.message)}`);
  return result.error;
}

describe('parseInterruption on the sample events', () => {
  it.each([
    ['spot-interruption-warning', 'SpotInterruption', ['i-0b662ef9931388ba0'], 'CordonAndDrain'],
    ['rebalance-recommendation', 'RebalanceRecommendation', ['i-0a1b2c3d4e5f67890'], 'NoAction'],
    ['instance-state-change-stopping', 'InstanceStateChange', ['i-0c9d8e7f6a5b43210'], 'CordonAndDrain'],
    ['instance-state-change-running', 'InstanceStateChange', ['i-0c9d8e7f6a5b43210'], 'NoAction'],
    ['health-scheduled-change', 'ScheduledChange', ['i-0d1e2f3a4b5c6d7e8'], 'CordonAndDrain'],
    [
      'capacity-reservation-interruption-warning',
      'CapacityReservationInterruption',
      ['i-0e1f2a3b4c5d6e7f8'],
      'CordonAndDrain',
    ],
    ['ami-state-change-available', 'Unknown', [], 'NoAction'],
  ])('%s → %s', (name, kind, instanceIds, action) => {
    const event = fixture(name);
    const result = parseInterruption(text(name));
    expect(result).toEqual({
      ok: true,
      message: expect.objectContaining({
        kind,
        instanceIds,
        action,
        eventId: event.id,
        time: Date.parse('2026-11-30T12:00:00Z'),
        source: event.source,
        detailType: event['detail-type'],
      }),
    });
    // The parsed object and its JSON text read alike.
    expect(parseInterruption(event)).toEqual(result);
  });

  it('covers every fixture file', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(7);
    for (const f of files) expect(parseInterruption(readFileSync(join(DIR, f), 'utf8')).ok).toBe(true);
  });

  it('keeps the new state on state changes', () => {
    const result = parseInterruption(text('instance-state-change-stopping'));
    expect(result.ok && result.message.state).toBe('stopping');
  });
});

describe('the registry', () => {
  it('has a parser for every rule the stack routes to the queue', () => {
    for (const rule of INTERRUPTION_RULES) {
      for (const detailType of rule.detailTypes) expect(parserFor(rule.source, detailType)).toBeDefined();
    }
  });

  it('lists each (source, detail-type) once, including the second capacity-reservation name', () => {
    const keys = INTERRUPTION_EVENT_TYPES.map((t) => `${t.source}/${t.detailType}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain('aws.ec2/EC2 Interruptible Capacity Reservation Instance Interruption Warning');
    expect(new Set(INTERRUPTION_PARSERS.map((p) => p.kind)).size).toBe(INTERRUPTION_PARSERS.length);
  });
});

describe('actions', () => {
  it.each([
    ['stopping', 'CordonAndDrain'],
    ['stopped', 'CordonAndDrain'],
    ['shutting-down', 'CordonAndDrain'],
    ['terminated', 'CordonAndDrain'],
    ['Stopping', 'CordonAndDrain'],
    ['pending', 'NoAction'],
    ['running', 'NoAction'],
    ['rebooting', 'NoAction'],
  ])('state %s → %s', (state, action) => {
    const result = parseInterruption(withDetail('instance-state-change-running', { state }));
    expect(result.ok && result.message.action).toBe(action);
  });

  it('drains on a rebalance recommendation only when configured to act', () => {
    const body = text('rebalance-recommendation');
    const record = parseInterruption(body, { rebalance: 'record' });
    const act = parseInterruption(body, { rebalance: 'act' });
    expect(record.ok && record.message.action).toBe('NoAction');
    expect(act.ok && act.message.action).toBe('CordonAndDrain');
  });

  it('reads the second capacity-reservation detail-type name', () => {
    const event = {
      ...fixture('capacity-reservation-interruption-warning'),
      'detail-type': 'EC2 Interruptible Capacity Reservation Instance Interruption Warning',
    };
    const result = parseInterruption(event);
    expect(result.ok && result.message.kind).toBe('CapacityReservationInterruption');
  });
});

describe('AWS Health events', () => {
  const health = (detail: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    ...withDetail('health-scheduled-change', detail),
    ...extra,
  });

  it('drains every affected instance: bare ids, instance ARNs, deduplicated; skips reservations', () => {
    const result = parseInterruption(
      health({
        affectedEntities: [
          { entityValue: 'i-0d1e2f3a4b5c6d7e8', tags: {} },
          { entityValue: 'arn:aws:ec2:us-west-2:123456789012:instance/i-0123456789abcdef0', status: 'PENDING' },
          { entityValue: 'i-0d1e2f3a4b5c6d7e8' },
          { entityValue: 'cr-0123456789abcdef0 | us-west-2a | m5.large' },
          { entityValue: 'i-1234abcd' },
        ],
      }),
    );
    expect(result.ok && result.message.instanceIds).toEqual([
      'i-0d1e2f3a4b5c6d7e8',
      'i-0123456789abcdef0',
      'i-1234abcd',
    ]);
  });

  it('falls back to resources when affectedEntities is missing', () => {
    const event = health({});
    delete (event.detail as Record<string, unknown>).affectedEntities;
    const result = parseInterruption(event);
    expect(result.ok && result.message.instanceIds).toEqual(['i-0d1e2f3a4b5c6d7e8']);
  });

  it('does nothing when no entity is an instance', () => {
    const result = parseInterruption(health({ affectedEntities: [{ entityValue: 'cr-0123456789abcdef0' }] }));
    expect(result.ok && result.message).toMatchObject({ kind: 'ScheduledChange', instanceIds: [], action: 'NoAction' });
  });

  it.each([[{ service: 'RDS' }], [{ eventTypeCategory: 'issue' }], [{ service: undefined }]])(
    'acknowledges other health events without action (%j)',
    (detail) => {
      const result = parseInterruption(health(detail));
      expect(result.ok && result.message).toMatchObject({ kind: 'Unknown', action: 'NoAction', instanceIds: [] });
    },
  );

  it.each([
    [{ affectedEntities: 'i-0d1e2f3a4b5c6d7e8' }, 'detail.affectedEntities: must be an array, got a string'],
    [{ affectedEntities: [null] }, 'detail.affectedEntities[0]: must be an object, got null'],
    [
      { affectedEntities: [{ entityValue: 'i-0d1e2f3a4b5c6d7e8' }, { entityValue: 7 }] },
      'detail.affectedEntities[1].entityValue: must be a string, got a number',
    ],
    [{ service: ['EC2'] }, 'detail.service: must be a string, got an array'],
  ])('names the malformed field %j', (detail, error) => {
    expect(errorOf(health(detail))).toBe(`AWS Health Event: ${error}`);
  });
});

describe('malformed events of known kinds', () => {
  it.each([
    [
      'spot-interruption-warning',
      { 'instance-id': 42 },
      'detail.instance-id: must be a non-empty string, got a number',
    ],
    ['instance-state-change-stopping', { state: undefined }, 'detail.state: missing'],
    [
      'instance-state-change-stopping',
      { state: { name: 'stopping' } },
      'detail.state: must be a non-empty string, got an object',
    ],
    [
      'capacity-reservation-interruption-warning',
      { 'instance-id': ['i-0123456789abcdef0'] },
      'detail.instance-id: must be a non-empty string, got an array',
    ],
  ])('%s with %j', (name, detail, error) => {
    const event = withDetail(name, detail);
    for (const [k, v] of Object.entries(detail))
      if (v === undefined) delete (event.detail as Record<string, unknown>)[k];
    expect(errorOf(event)).toContain(error);
    expect(errorOf(event)).toContain(String(fixture(name)['detail-type']));
  });

  it.each([
    ['id', undefined, 'id: missing'],
    ['id', 5, 'id: must be a non-empty string, got a number'],
    ['time', 'yesterday', 'time: "yesterday" is not an RFC 3339 time'],
    ['time', undefined, 'time: missing'],
    ['detail', undefined, 'detail: missing'],
    ['detail', 'x', 'detail: must be an object, got a string'],
    ['resources', 'arn', 'resources: must be an array of strings, got a string'],
    ['resources', [1], 'resources[0]: must be a string, got a number'],
  ])('envelope %s = %j', (key, value, error) => {
    const event: Record<string, unknown> = { ...fixture('spot-interruption-warning'), [key]: value };
    if (value === undefined) delete event[key];
    expect(errorOf(event)).toBe(`EC2 Spot Instance Interruption Warning: ${error}`);
  });

  it('accepts an event without version, times of any precision and 8-digit instance ids', () => {
    const event = fixture('spot-interruption-warning');
    delete event.version;
    const result = parseInterruption({
      ...event,
      time: '2026-11-30T12:00:00.123456789Z',
      detail: { 'instance-id': 'i-1234abcd', 'instance-action': 'terminate' },
    });
    expect(result.ok && result.message).toMatchObject({
      instanceIds: ['i-1234abcd'],
      time: Date.parse('2026-11-30T12:00:00.123Z'),
    });
  });

  it('ignores the zone-bearing resources ARN of spot warnings', () => {
    const result = parseInterruption({
      ...fixture('spot-interruption-warning'),
      resources: ['arn:aws:ec2:us-west-2c:instance/i-0ffffffffffffffff'],
    });
    expect(result.ok && result.message.instanceIds).toEqual(['i-0b662ef9931388ba0']);
  });

  it('does not read inherited properties', () => {
    const event = JSON.parse(
      '{"version":"0","id":"x","detail-type":"EC2 Instance Rebalance Recommendation","source":"aws.ec2","time":"2026-11-30T12:00:00Z","detail":{"__proto__":{"instance-id":"i-0a1b2c3d4e5f67890"}}}',
    );
    const result = parseInterruption(event, { rebalance: 'act' });
    expect(result.ok && result.message).toMatchObject({ instanceIds: [], ignored: 'detail.instance-id: missing' });
  });
});

// What aws/karpenter-provider-aws pkg/controllers/interruption acknowledges: an id that matches no
// NodeClaim is deleted from the queue, never retried into the dead-letter queue.
describe('records Karpenter acknowledges without action', () => {
  it.each([
    ['rebalance-recommendation', { 'instance-id': undefined }, 'detail.instance-id: missing'],
    ['spot-interruption-warning', { 'instance-id': '' }, 'detail.instance-id: missing'],
    [
      'spot-interruption-warning',
      { 'instance-id': ' i-0b662ef9931388ba0' },
      'detail.instance-id: " i-0b662ef9931388ba0" is not an EC2 instance id',
    ],
    ['instance-state-change-stopping', { 'instance-id': undefined }, 'detail.instance-id: missing'],
    [
      'rebalance-recommendation',
      { 'instance-id': 'vol-0123' },
      'detail.instance-id: "vol-0123" is not an EC2 instance id',
    ],
    ['rebalance-recommendation', { 'instance-id': null }, 'detail.instance-id: missing'],
    [
      'rebalance-recommendation',
      { 'instance-id': ' i-0b662ef9931388ba0' },
      'detail.instance-id: " i-0b662ef9931388ba0" is not an EC2 instance id',
    ],
    [
      'instance-state-change-stopping',
      { 'instance-id': ' i-0b662ef9931388ba0' },
      'detail.instance-id: " i-0b662ef9931388ba0" is not an EC2 instance id',
    ],
    ['capacity-reservation-interruption-warning', { 'instance-id': undefined }, 'detail.instance-id: missing'],
    ['capacity-reservation-interruption-warning', { 'instance-id': null }, 'detail.instance-id: missing'],
    ['capacity-reservation-interruption-warning', { 'instance-id': '' }, 'detail.instance-id: missing'],
    [
      'capacity-reservation-interruption-warning',
      { 'instance-id': ' i-0b662ef9931388ba0' },
      'detail.instance-id: " i-0b662ef9931388ba0" is not an EC2 instance id',
    ],
    [
      'capacity-reservation-interruption-warning',
      { 'instance-id': 'cr-0123456789abcdef0' },
      'detail.instance-id: "cr-0123456789abcdef0" is not an EC2 instance id',
    ],
  ])('%s with %j', (name, detail, ignored) => {
    const event = withDetail(name, detail);
    for (const [k, v] of Object.entries(detail))
      if (v === undefined) delete (event.detail as Record<string, unknown>)[k];
    const result = parseInterruption(event, { rebalance: 'act' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.message).toMatchObject({ action: 'NoAction', instanceIds: [] });
    expect(result.message.ignored).toContain(ignored);
  });
});

describe('bodies that are not events', () => {
  it.each([
    ['malformed JSON', '{"source": aws.ec2}', 'body is not valid JSON'],
    ['truncated JSON', text('spot-interruption-warning').slice(0, 120), 'possibly truncated'],
    ['a JSON array', '[1,2]', 'body: must be a JSON object (an EventBridge event), got an array'],
    ['a JSON string', '"hello"', 'got a string'],
    ['null', 'null', 'got null'],
  ])('%s → error', (_name, body, error) => {
    expect(errorOf(body)).toContain(error);
  });

  it('refuses an oversize body with the size and the limit', () => {
    const body = JSON.stringify({
      ...fixture('spot-interruption-warning'),
      pad: 'x'.repeat(MAX_INTERRUPTION_BODY_BYTES),
    });
    const error = errorOf(body);
    expect(error).toContain(`${Buffer.byteLength(body)} bytes`);
    expect(error).toContain(`${MAX_INTERRUPTION_BODY_BYTES}-byte limit`);
  });

  it.each([
    ['an empty body', ''],
    ['an S3 notification', JSON.stringify({ Records: [{ eventSource: 'aws:s3', s3: { bucket: { name: 'b' } } }] })],
    [
      'an Auto Scaling lifecycle message',
      JSON.stringify({ Origin: 'EC2', LifecycleHookName: 'h', EC2InstanceId: 'i-0123456789abcdef0' }),
    ],
    [
      'an SNS envelope',
      JSON.stringify({ Type: 'Notification', MessageId: 'm', Message: text('spot-interruption-warning') }),
    ],
    [
      'another aws.ec2 detail-type with an instance id',
      JSON.stringify({ ...fixture('spot-interruption-warning'), 'detail-type': 'EC2 Instance Launch Successful' }),
    ],
    ['another version', JSON.stringify({ ...fixture('spot-interruption-warning'), version: '1' })],
    ['a detail-type of the wrong type', JSON.stringify({ ...fixture('spot-interruption-warning'), 'detail-type': 5 })],
  ])('%s → Unknown, acknowledged without action', (_name, body) => {
    const result = parseInterruption(body);
    expect(result.ok && result.message).toMatchObject({ kind: 'Unknown', action: 'NoAction', instanceIds: [] });
  });

  it('keeps what it can of an unknown event for the log line', () => {
    const result = parseInterruption(text('ami-state-change-available'));
    expect(result.ok && result.message).toMatchObject({
      eventId: '8c1e0a2d-5b4f-4c3e-9d2a-1f0e9d8c7b6a',
      source: 'aws.ec2',
      detailType: 'EC2 AMI State Change',
    });
  });
});
