import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../shared/apis/core/v1';
import { HttpKubeClient } from '../../shared/kube/client';
import { KubeApiError, type WatchEvent } from '../../shared/kube/types';
import { LineDecoder, parseWatchLine } from '../../shared/kube/watch';
import { node, pod } from '../support/kube/builders';
import { FakeApiServer } from '../support/kube/fake-apiserver';

let server: FakeApiServer;
let client: HttpKubeClient;

beforeEach(async () => {
  server = await FakeApiServer.start({ token: 'secret' });
  client = new HttpKubeClient({ endpoint: server.url, token: async () => 'secret', sleep: async () => {} });
});

afterEach(async () => {
  client.close();
  await server.stop();
});

/** Collects events until `count` arrived (then aborts the watch) and returns them with the result. */
function watchUntil<T>(
  start: (signal: AbortSignal, onEvent: (event: WatchEvent<T>) => void) => Promise<unknown>,
  count: number,
) {
  const events: WatchEvent<T>[] = [];
  const stop = new AbortController();
  const result = start(stop.signal, (event) => {
    events.push(event);
    if (events.length >= count) stop.abort();
  });
  return result.then((outcome) => ({ outcome, events }));
}

const summary = (events: WatchEvent<Pod | Node>[]) => events.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`);

describe('watch', () => {
  it('delivers ADDED, MODIFIED and DELETED from the list resourceVersion and returns the last one seen', async () => {
    server.addPod(pod('before'));
    const list = await client.listPods();
    const watching = watchUntil<Pod>(
      (signal, onEvent) =>
        client.watchPods({ resourceVersion: list.resourceVersion, timeoutSeconds: 30, signal }, onEvent),
      3,
    );
    server.addPod(pod('p'));
    server.updatePod('default', 'p', (p) => {
      p.metadata.labels = { x: 'y' };
    });
    server.deletePod('default', 'p');
    const { outcome, events } = await watching;
    expect(summary(events)).toEqual(['ADDED p', 'MODIFIED p', 'DELETED p']);
    expect(outcome).toEqual({ kind: 'closed', resourceVersion: server.resourceVersion });
    const query = server.requestsTo('GET', '/api/v1/pods').at(-1)?.query;
    expect(query).toMatchObject({ watch: 'true', allowWatchBookmarks: 'true', timeoutSeconds: '30' });
  });

  it('sees a pod leave the unassigned selection as DELETED when it is bound', async () => {
    server.addPod(pod('p'));
    const list = await client.listPods({ fieldSelector: 'spec.nodeName=' });
    const watching = watchUntil<Pod>(
      (signal, onEvent) =>
        client.watchPods(
          { resourceVersion: list.resourceVersion, timeoutSeconds: 30, fieldSelector: 'spec.nodeName=', signal },
          onEvent,
        ),
      2,
    );
    server.addPod(pod('q'));
    server.bindPod('default', 'p', 'n1');
    const { events } = await watching;
    expect(summary(events)).toEqual(['ADDED q', 'DELETED p']);
  });

  it('tracks the resourceVersion of bookmarks and forwards them', async () => {
    const list = await client.listNodes();
    server.addPod(pod('elsewhere'));
    const watching = watchUntil<Node>(
      (signal, onEvent) =>
        client.watchNodes({ resourceVersion: list.resourceVersion, timeoutSeconds: 30, signal }, onEvent),
      1,
    );
    await until(() => server.activeWatches === 1);
    server.sendBookmarks();
    const { outcome, events } = await watching;
    expect(events.map((e) => e.type)).toEqual(['BOOKMARK']);
    expect(outcome).toEqual({ kind: 'closed', resourceVersion: server.resourceVersion });
    expect(Number(server.resourceVersion)).toBeGreaterThan(Number(list.resourceVersion));
  });

  it('resumes from the returned resourceVersion without repeating events', async () => {
    const list = await client.listNodes();
    const first = watchUntil<Node>(
      (signal, onEvent) =>
        client.watchNodes({ resourceVersion: list.resourceVersion, timeoutSeconds: 30, signal }, onEvent),
      1,
    );
    server.addNode(node('a'));
    server.addNode(node('b'));
    const { outcome, events } = await first;
    expect(summary(events)).toEqual(['ADDED a']);
    if (outcome === undefined || (outcome as { kind: string }).kind !== 'closed') throw new Error('watch not closed');
    const from = (outcome as { resourceVersion: string }).resourceVersion;
    const second = await watchUntil<Node>(
      (signal, onEvent) => client.watchNodes({ resourceVersion: from, timeoutSeconds: 30, signal }, onEvent),
      1,
    );
    expect(summary(second.events)).toEqual(['ADDED b']);
  });

  it('returns expired for a compacted resourceVersion (ERROR event with 410)', async () => {
    const list = await client.listPods();
    server.addPod(pod('p'));
    server.compactHistory();
    const result = await client.watchPods({ resourceVersion: list.resourceVersion, timeoutSeconds: 30 }, () => {
      throw new Error('no event expected');
    });
    expect(result).toEqual({ kind: 'expired' });
  });

  it('returns expired when the history limit has dropped the resourceVersion', async () => {
    const small = await FakeApiServer.start({ historyLimit: 2 });
    const c = new HttpKubeClient({ endpoint: small.url, token: async () => 'x' });
    try {
      const list = await c.listNodes();
      for (const name of ['a', 'b', 'c']) small.addNode(node(name));
      expect(await c.watchNodes({ resourceVersion: list.resourceVersion, timeoutSeconds: 30 }, () => {})).toEqual({
        kind: 'expired',
      });
    } finally {
      c.close();
      await small.stop();
    }
  });

  it('returns expired when the server answers 410 Gone outright', async () => {
    server.injectFault({ method: 'GET', path: /watch=true/, status: 410 });
    expect(await client.watchPods({ resourceVersion: '1', timeoutSeconds: 30 }, () => {})).toEqual({ kind: 'expired' });
  });

  it('ends when the server timeoutSeconds passes, with the resourceVersion it started from', async () => {
    const list = await client.listNodes();
    expect(await client.watchNodes({ resourceVersion: list.resourceVersion, timeoutSeconds: 1 }, () => {})).toEqual({
      kind: 'closed',
      resourceVersion: list.resourceVersion,
    });
  });

  it('returns at once when the signal is already aborted', async () => {
    const result = await client.watchPods(
      { resourceVersion: '7', timeoutSeconds: 30, signal: AbortSignal.abort() },
      () => {},
    );
    expect(result).toEqual({ kind: 'closed', resourceVersion: '7' });
    expect(server.requests).toHaveLength(0);
  });

  it('rejects with the error of a handler that throws', async () => {
    const list = await client.listPods();
    server.addPod(pod('p'));
    await expect(
      client.watchPods({ resourceVersion: list.resourceVersion, timeoutSeconds: 30 }, () => {
        throw new Error('handler broke');
      }),
    ).rejects.toThrow('handler broke');
  });

  it('rejects a watch the server refuses with a Status other than 410', async () => {
    server.injectFault({ method: 'GET', path: /watch=true/, status: 403, message: 'nodes is forbidden' });
    const error = await client.watchNodes({ resourceVersion: '1', timeoutSeconds: 30 }, () => {}).catch((e) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({ code: 403, reason: 'Forbidden' });
  });
});

describe('watch stream parsing', () => {
  const events = [
    { type: 'ADDED', object: { metadata: { name: 'p-ü', resourceVersion: '11' } } },
    { type: 'MODIFIED', object: { metadata: { name: 'p-ü', resourceVersion: '12', labels: { 日本: '語' } } } },
    { type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '13' } } },
    { type: 'DELETED', object: { metadata: { name: '🦀', resourceVersion: '14' } } },
  ];
  const bytes = Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''), 'utf8');

  function parse(chunks: Uint8Array[]): unknown[] {
    const decoder = new LineDecoder();
    const lines = chunks.flatMap((chunk) => decoder.push(chunk)).concat(decoder.end());
    return lines.map((line) => parseWatchLine(line, 'GET /api/v1/pods'));
  }

  it('reads the same events however the bytes are chunked, even inside a multi-byte character', () => {
    const whole = parse([bytes]);
    expect(whole).toHaveLength(4);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), bytes.length];
        const chunks = points.slice(1).map((end, i) => bytes.subarray(points[i], end));
        expect(parse(chunks)).toEqual(whole);
      }),
    );
  });

  it('reads a last event without a trailing newline', () => {
    expect(parse([bytes.subarray(0, bytes.length - 1)])).toEqual(parse([bytes]));
  });

  it('turns ERROR 410 into expired and other ERRORs into a KubeApiError', () => {
    const expired = { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } };
    expect(parseWatchLine(JSON.stringify(expired), 'GET /x')).toEqual({ kind: 'expired' });
    const other = { type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd' } };
    const parsed = parseWatchLine(JSON.stringify(other), 'GET /x');
    expect(parsed.kind === 'error' && parsed.error).toMatchObject({ code: 500, reason: 'InternalError' });
  });

  it('names the watch in errors for malformed or unknown events', () => {
    expect(parseWatchLine('{"type":"ADDED"', 'GET /api/v1/pods')).toMatchObject({
      kind: 'error',
      error: { message: expect.stringContaining('GET /api/v1/pods: malformed watch event') },
    });
    expect(parseWatchLine('{"type":"RENAMED","object":{}}', 'GET /x')).toMatchObject({
      kind: 'error',
      error: { message: expect.stringContaining('unknown watch event type "RENAMED"') },
    });
  });
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
