import type { PutEventsCommandInput, PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import { describe, expect, it } from 'vitest';
import {
  type BusEvent,
  type EventBridgeApi,
  EventBridgePublisher,
  EventTooLargeError,
  entrySize,
  PUT_EVENTS_MAX_BYTES,
  PutEventsError,
  RecordingEventPublisher,
} from '../../shared/providers/eventbus';
import { recordingFake } from './fakes';

const event = (i: number, detail: unknown = { i }): BusEvent => ({ detailType: 'PodsUnschedulable', detail });

function publisherWith(answer: (input: PutEventsCommandInput, call: number) => PutEventsResultEntry[]) {
  let call = 0;
  const api = recordingFake<EventBridgeApi>({
    putEvents: (input) => {
      const entries = answer(input, call++);
      return { FailedEntryCount: entries.filter((e) => e.ErrorCode).length, Entries: entries };
    },
  });
  const sleeps: number[] = [];
  const publisher = new EventBridgePublisher(api, {
    busName: 'karpless-notices',
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { api, publisher, sleeps, sent: () => api.callsTo('putEvents') as PutEventsCommandInput[] };
}

const ok = (input: PutEventsCommandInput) => (input.Entries ?? []).map((_, i) => ({ EventId: `e${i}` }));

describe('entrySize', () => {
  it('counts UTF-8 bytes of source, detail-type, detail and resources, and 14 for a time', () => {
    expect(entrySize({ Source: 'karpless', DetailType: 'X', Detail: '{"a":"é"}', Resources: ['arn:1'] })).toBe(
      8 + 1 + 10 + 5,
    );
    expect(entrySize({ Source: 's', DetailType: 'd', Time: new Date(0) })).toBe(16);
  });
});

describe('EventBridgePublisher', () => {
  it('puts 23 events in calls of at most 10, on the bus, with source karpless and JSON detail', async () => {
    const { publisher, sent } = publisherWith(ok);
    await publisher.publish(Array.from({ length: 23 }, (_, i) => event(i)));
    expect(sent().map((c) => c.Entries?.length)).toEqual([10, 10, 3]);
    expect(sent()[2]?.Entries?.[2]).toEqual({
      EventBusName: 'karpless-notices',
      Source: 'karpless',
      DetailType: 'PodsUnschedulable',
      Detail: '{"i":22}',
    });
  });

  it('keeps each call under 256 KB in total', async () => {
    const { publisher, sent } = publisherWith(ok);
    const big = 'x'.repeat(100 * 1024);
    await publisher.publish([event(0, big), event(1, big), event(2, big), event(3, 'small')]);
    expect(sent().map((c) => c.Entries?.length)).toEqual([2, 2]);
  });

  it('refuses an event over 256 KB before putting anything, naming it', async () => {
    const { publisher, sent } = publisherWith(ok);
    const error = await publisher
      .publish([event(0), event(1, 'x'.repeat(PUT_EVENTS_MAX_BYTES))])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventTooLargeError);
    expect(String(error)).toMatch(/event 1 \(PodsUnschedulable\) is 262\d+ bytes, over PutEvents' limit of 262144/);
    expect(sent()).toEqual([]);
  });

  it('sends again only the entries that failed, with backoff', async () => {
    const { publisher, sent, sleeps } = publisherWith((input, call) =>
      (input.Entries ?? []).map((e) =>
        call === 0 && e.Detail === '{"i":1}' ? { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' } : {},
      ),
    );
    await publisher.publish([event(0), event(1), event(2)]);
    expect(sent().map((c) => c.Entries?.map((e) => e.Detail))).toEqual([
      ['{"i":0}', '{"i":1}', '{"i":2}'],
      ['{"i":1}'],
    ]);
    expect(sleeps).toEqual([100]);
  });

  it('throws with the error codes of the entries that still fail after the retries', async () => {
    const { publisher, sent, sleeps } = publisherWith((input) =>
      (input.Entries ?? []).map((e) =>
        e.Detail === '{"i":0}'
          ? { ErrorCode: 'InternalFailure', ErrorMessage: 'try later' }
          : e.Detail === '{"i":2}'
            ? { ErrorCode: 'MalformedDetail', ErrorMessage: 'bad' }
            : {},
      ),
    );
    const error = await publisher.publish([event(0), event(1), event(2)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PutEventsError);
    expect((error as PutEventsError).failures.map((f) => [f.index, f.code])).toEqual([
      [2, 'MalformedDetail'],
      [0, 'InternalFailure'],
    ]);
    expect(String(error)).toContain('PutEvents on bus karpless-notices failed for 2 event(s)');
    // MalformedDetail is not sent again; InternalFailure is, three more times.
    expect(sent().map((c) => c.Entries?.length)).toEqual([3, 1, 1, 1]);
    expect(sleeps).toEqual([100, 200, 400]);
  });
});

describe('RecordingEventPublisher', () => {
  it('keeps copies of what was published, in order', async () => {
    const publisher = new RecordingEventPublisher();
    const detail = { n: 1 };
    await publisher.publish([event(0, detail)]);
    await publisher.publish([event(1)]);
    detail.n = 2;
    expect(publisher.published).toEqual([event(0, { n: 1 }), event(1)]);
  });
});
