// One HTTP exchange with the API server, with the connect and request timeouts, retries with
// backoff and the translation of `Status` answers into KubeApiError. Built on node:https (the
// global fetch cannot take the cluster CA) and node:http for loopback test servers only.

import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type { TokenSource } from './token';
import { KubeApiError, KubeTransportError } from './types';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface TransportOptions {
  /** https://host[:port], or http://127.0.0.1:port for a loopback fake server. */
  endpoint: string;
  /** PEM bundle the server certificate must chain to (the cluster CA). */
  ca?: string;
  token: TokenSource;
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Injected so tests need not wait out backoffs. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/**
 * Which failures a call may retry: 'idempotent' retries 429, 5xx and broken connections;
 * 'unsent' only failures where the server cannot have applied the request (refused or timed-out
 * connects, 429), for writes whose repetition would not be harmless.
 */
export type RetryMode = 'idempotent' | 'unsent';

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  retry: RetryMode;
  /** Statuses returned as-is instead of thrown (e.g. 404 for a get that may miss). */
  accept?: readonly number[];
  /** 429 is handed back to the caller (evictions retry it on their own schedule). */
  noRetryOn429?: boolean;
  /** An answer retrying cannot change (thrown at once, whatever its status). */
  noRetryWhen?: (status: number, body: unknown) => boolean;
  signal?: AbortSignal;
}

export interface Answer {
  status: number;
  body: unknown;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 20_000;
export const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 200, maxDelayMs: 5_000 };

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);
const REASON_BY_CODE: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export class Transport {
  readonly endpoint: URL;
  private readonly agent: http.Agent;
  private readonly tls: boolean;
  private readonly connectTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly retry: RetryPolicy;
  readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(private readonly options: TransportOptions) {
    this.endpoint = parseEndpoint(options.endpoint);
    this.tls = this.endpoint.protocol === 'https:';
    this.agent = this.tls
      ? new https.Agent({ keepAlive: true, ...(options.ca ? { ca: options.ca } : {}) })
      : new http.Agent({ keepAlive: true });
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
  }

  /** Frees the kept-alive sockets. */
  close(): void {
    this.agent.destroy();
  }

  /** "GET /api/v1/nodes/x": the request as KubeApiError names it. */
  describe(spec: Pick<RequestSpec, 'method' | 'path'>): string {
    return `${spec.method} ${spec.path}`;
  }

  /** Exponential backoff with jitter in [delay/2, delay], so retrying callers spread out. */
  backoff(attempt: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'> = this.retry): number {
    const delay = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
    return Math.round(delay / 2 + (this.random() * delay) / 2);
  }

  /** Sends a request and reads the whole answer; throws KubeApiError for an error status. */
  async request(spec: RequestSpec): Promise<Answer> {
    const res = await this.send(spec, false);
    return { status: res.status, body: res.body };
  }

  /** Sends a request and hands back the open response of a 2xx answer (watches). */
  async stream(spec: RequestSpec): Promise<http.IncomingMessage> {
    const res = await this.send(spec, true);
    if (!res.stream) throw new Error(`${this.describe(spec)}: expected a streaming answer`);
    return res.stream;
  }

  private async send(spec: RequestSpec, streaming: boolean): Promise<Exchanged> {
    let refreshToken = false;
    for (let attempt = 0; ; attempt++) {
      const token = await this.options.token(refreshToken ? { refresh: true } : undefined);
      let answer: Exchanged;
      try {
        answer = await this.exchange(spec, token, streaming);
      } catch (error) {
        if (!(error instanceof KubeTransportError) || spec.signal?.aborted) throw error;
        const retryable = spec.retry === 'idempotent' || error.phase === 'connect';
        if (!retryable || attempt >= this.retry.retries) throw error;
        await this.sleep(this.backoff(attempt));
        continue;
      }
      if (answer.status < 400 || spec.accept?.includes(answer.status)) return answer;
      // A token minted just before its credentials rotated: mint again once, without counting an attempt.
      if (answer.status === 401 && !refreshToken) {
        refreshToken = true;
        attempt--;
        continue;
      }
      const error = this.statusError(spec, answer);
      const final = spec.noRetryWhen?.(answer.status, answer.body) === true;
      if (!final && this.shouldRetry(spec, answer.status) && attempt < this.retry.retries) {
        await this.sleep(Math.max(this.backoff(attempt), retryAfterMs(answer.retryAfter, this.retry.maxDelayMs)));
        continue;
      }
      throw error;
    }
  }

  private shouldRetry(spec: RequestSpec, status: number): boolean {
    if (!RETRYABLE_STATUS.has(status)) return false;
    if (status === 429) return !spec.noRetryOn429;
    return spec.retry === 'idempotent';
  }

  private statusError(spec: RequestSpec, answer: Exchanged): KubeApiError {
    const body = answer.body as { kind?: string; code?: number; reason?: string; message?: string } | undefined;
    const isStatus = body !== undefined && body !== null && body.kind === 'Status';
    const reason = (isStatus && body.reason) || REASON_BY_CODE[answer.status] || 'Unknown';
    let message = isStatus && body.message ? body.message : describeBody(answer);
    if (answer.status === 401 || answer.status === 403) {
      message += `; check that the EKS access entry maps this role to the RBAC group that may call ${spec.method} ${spec.path.split('?')[0]}`;
    }
    return new KubeApiError(this.describe(spec), answer.status, reason, message);
  }

  private exchange(spec: RequestSpec, token: string, streaming: boolean): Promise<Exchanged> {
    const path = spec.path + queryString(spec.query);
    const where = `${spec.method} ${this.endpoint.origin}${path}`;
    const body = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body));
    const headers: http.OutgoingHttpHeaders = { accept: 'application/json', authorization: `Bearer ${token}` };
    if (body) {
      headers['content-type'] = spec.contentType ?? 'application/json';
      headers['content-length'] = body.length;
    }
    const module = this.tls ? https : http;
    const open = () =>
      module.request({
        protocol: this.endpoint.protocol,
        hostname: this.endpoint.hostname.replace(/^\[|\]$/g, ''),
        port: this.endpoint.port || (this.tls ? 443 : 80),
        path,
        method: spec.method,
        headers,
        agent: this.agent,
      });
    return new Exchange(where, this.tls, this.connectTimeoutMs, this.requestTimeoutMs, spec.signal, streaming).run(
      open,
      body,
    );
  }
}

/**
 * One request and its answer, with the timers that bound it. Settles once: the first of answer,
 * error, timeout or abort wins, and every timer and listener goes with it.
 */
class Exchange {
  private settled = false;
  private connected = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private req: http.ClientRequest | undefined;
  private resolve: (answer: Exchanged) => void = () => {};
  private reject: (error: unknown) => void = () => {};
  private readonly onAbort = () => this.fail('request', 'aborted by the caller');

  constructor(
    private readonly where: string,
    private readonly tls: boolean,
    private readonly connectTimeoutMs: number,
    private readonly requestTimeoutMs: number,
    private readonly signal: AbortSignal | undefined,
    private readonly streaming: boolean,
  ) {}

  run(open: () => http.ClientRequest, body: Buffer | undefined): Promise<Exchanged> {
    return new Promise<Exchanged>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      const req = open();
      this.req = req;
      this.timers.push(
        setTimeout(
          () => this.fail('request', `no answer within ${this.requestTimeoutMs} ms (request timeout)`),
          this.requestTimeoutMs,
        ),
      );
      req.on('socket', (socket: Socket) => this.onSocket(socket));
      req.on('error', (error: NodeJS.ErrnoException) => this.onError(error));
      req.on('response', (res) => this.onResponse(res));
      if (this.signal?.aborted) return this.fail('request', 'aborted by the caller');
      this.signal?.addEventListener('abort', this.onAbort, { once: true });
      req.end(body);
    });
  }

  private settle(fn: () => void): void {
    if (this.settled) return;
    this.settled = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.signal?.removeEventListener('abort', this.onAbort);
    fn();
  }

  private fail(phase: 'connect' | 'request', message: string): void {
    const error = new KubeTransportError(this.where, phase, message);
    this.settle(() => this.reject(error));
    this.req?.destroy(error);
  }

  /** A kept-alive socket is connected already; a new one must connect (and shake hands) in time. */
  private onSocket(socket: Socket): void {
    if (!socket.connecting) {
      this.connected = true;
      return;
    }
    const timer = setTimeout(
      () =>
        this.fail(
          'connect',
          `could not connect within ${this.connectTimeoutMs} ms (connect timeout); check that the endpoint is reachable from this network`,
        ),
      this.connectTimeoutMs,
    );
    this.timers.push(timer);
    socket.once(this.tls ? 'secureConnect' : 'connect', () => {
      this.connected = true;
      clearTimeout(timer);
    });
  }

  private onError(error: NodeJS.ErrnoException): void {
    this.settle(() => {
      if (error instanceof KubeTransportError) return this.reject(error);
      const phase = this.connected ? 'request' : 'connect';
      const message = `${error.code ?? error.name}: ${error.message}`;
      this.reject(new KubeTransportError(this.where, phase, message, { cause: error }));
    });
  }

  private onResponse(res: http.IncomingMessage): void {
    const status = res.statusCode ?? 0;
    const retryAfter = headerValue(res.headers['retry-after']);
    if (this.streaming && status < 300) {
      this.settle(() => this.resolve({ status, body: undefined, stream: res, retryAfter }));
      // The watch owns the response from here; aborting the signal still ends it.
      this.signal?.addEventListener('abort', () => res.destroy(), { once: true });
      return;
    }
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', (error) => this.fail('request', `the answer broke off: ${error.message}`));
    res.on('close', () => {
      if (!res.complete) this.fail('request', 'the connection closed before the answer was complete');
    });
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      this.settle(() => this.resolve({ status, body: parseJson(text), text, retryAfter }));
    });
  }
}

interface Exchanged {
  status: number;
  body: unknown;
  text?: string;
  stream?: http.IncomingMessage;
  retryAfter?: string | undefined;
}

function parseEndpoint(endpoint: string): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`Kubernetes endpoint ${JSON.stringify(endpoint)} is not a URL: give https://host[:port]`);
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return url;
  throw new Error(
    `Kubernetes endpoint ${endpoint} must use https (plain http is allowed only for a loopback test server)`,
  );
}

export function queryString(query: RequestSpec['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describeBody(answer: Exchanged): string {
  const text = (answer.text ?? '').trim();
  if (text === '') return 'no Status in the answer';
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function retryAfterMs(value: string | undefined, capMs: number): number {
  const seconds = value === undefined ? Number.NaN : Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, capMs) : 0;
}
