// AWS Health Event: only EC2 scheduled changes (retirement, maintenance) concern nodes. Every
// affected entity that names an instance — a bare id or an instance ARN — is drained; capacity
// reservation entities (`cr-…`, sometimes joined with zone and type by " | ") are not instances.

import {
  describeType,
  type EventEnvelope,
  FieldError,
  field,
  isInstanceId,
  isObject,
  message,
  optionalString,
} from '../event';
import type { InterruptionParser } from './parser';

const INSTANCE_ARN = /^arn:[^:]+:ec2:[^:]*:[^:]*:instance\/(i-[0-9a-f]+)$/;

function instanceIdOf(value: string): string | undefined {
  for (const part of value.split('|').map((p) => p.trim())) {
    if (isInstanceId(part)) return part;
    const arn = INSTANCE_ARN.exec(part)?.[1];
    if (arn !== undefined && isInstanceId(arn)) return arn;
  }
  return undefined;
}

function affectedInstanceIds(envelope: EventEnvelope): string[] {
  const entities = field(envelope.detail, 'affectedEntities');
  const ids: string[] = [];
  if (entities === undefined || entities === null) {
    // Older and partial events: fall back to the envelope's resources.
    for (const r of envelope.resources) {
      const id = instanceIdOf(r);
      if (id !== undefined) ids.push(id);
    }
  } else {
    if (!Array.isArray(entities)) {
      throw new FieldError(`detail.affectedEntities: must be an array, got ${describeType(entities)}`);
    }
    entities.forEach((entity, i) => {
      const path = `detail.affectedEntities[${i}]`;
      if (!isObject(entity)) throw new FieldError(`${path}: must be an object, got ${describeType(entity)}`);
      const value = optionalString(entity, 'entityValue', `${path}.entityValue`);
      const id = value === undefined ? undefined : instanceIdOf(value);
      if (id !== undefined) ids.push(id);
    });
  }
  return [...new Set(ids)];
}

export const scheduledChange: InterruptionParser = {
  kind: 'ScheduledChange',
  source: 'aws.health',
  detailTypes: ['AWS Health Event'],
  parse(envelope) {
    const service = optionalString(envelope.detail, 'service', 'detail.service');
    const category = optionalString(envelope.detail, 'eventTypeCategory', 'detail.eventTypeCategory');
    if (service !== 'EC2' || category !== 'scheduledChange') {
      // Other services' and categories' health events are acknowledged without action, as upstream.
      return message(envelope, 'Unknown', 'NoAction', []);
    }
    const ids = affectedInstanceIds(envelope);
    return message(envelope, 'ScheduledChange', ids.length > 0 ? 'CordonAndDrain' : 'NoAction', ids);
  },
};
