// How every AWS SDK client karpless builds talks to its endpoint: a connect timeout, a timeout per
// request attempt (an endpoint that accepts and never answers must not hang a Lambda or the CLI), the
// SDK's standard retry with backoff, and failures that name the endpoint and the call instead of a
// bare "socket hang up".

/** Defaults sized for the Lambdas: well under their timeout, well over a healthy EC2 answer. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_ATTEMPTS = 5;

export interface AwsTimeouts {
  /** Time to open the TCP (and TLS) connection. */
  connectTimeoutMs?: number;
  /** Time one attempt of a call may take from sending to the complete answer. */
  requestTimeoutMs?: number;
  /** Attempts per call, the first included (the SDK retries throttling and network errors). */
  maxAttempts?: number;
}

/** The SDK client settings for these timeouts (spread into any v3 client's constructor config). */
export function clientTimeoutConfig(options: AwsTimeouts) {
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  return {
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    requestHandler: {
      connectionTimeout: Math.min(options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, requestTimeout),
      requestTimeout,
      // Without this the handler only logs a warning when requestTimeout passes, and waits on.
      throwOnRequestTimeout: true,
    },
  };
}

/** A call that got no usable answer from its endpoint (timeout, refused, unknown host, reset). */
export class EndpointError extends Error {
  override readonly name = 'EndpointError';
  /** Read by errorCode() (aws-errors.ts), so providers and conditions show this, not a class name. */
  readonly code = 'EndpointUnreachable';
  constructor(
    message: string,
    readonly endpoint: string,
    readonly operation: string,
  ) {
    super(message);
  }
}

const NETWORK_CODES = new Set(['ETIMEDOUT', 'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
const NETWORK_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'AbortError']);

interface RequestLike {
  protocol?: string;
  hostname?: string;
  port?: number;
}

function endpointOf(request: unknown): string {
  const r = (request ?? {}) as RequestLike;
  if (!r.hostname) return 'its endpoint';
  return `${r.protocol ?? 'https:'}//${r.hostname}${r.port ? `:${r.port}` : ''}`;
}

/** Whether an error is the network failing rather than AWS answering with an error. */
export function isNetworkFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } };
  if (e.$metadata?.httpStatusCode !== undefined) return false;
  return (
    (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) ||
    (typeof e.name === 'string' && NETWORK_NAMES.has(e.name))
  );
}

function networkReason(error: unknown, requestTimeoutMs: number): string {
  const e = error as { code?: string; name?: string; message?: string };
  if (e.code === 'ECONNREFUSED') return 'connection refused';
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return 'host not found';
  if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return 'connection reset';
  if (/connect/i.test(e.message ?? '') && !/request/i.test(e.message ?? '')) return 'could not connect in time';
  return `no answer within ${formatMs(requestTimeoutMs)}`;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

interface MiddlewareHost {
  middlewareStack: {
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's middleware types are generic per client.
    add(middleware: any, options: { step: 'build'; name: string; override?: boolean }): void;
  };
}

/**
 * Makes a client's network failures EndpointErrors naming the service call, the endpoint URL, the
 * timeout and the attempts made. It sits outside the retry step, so it sees the last attempt's error.
 */
export function nameEndpointOnFailure(client: MiddlewareHost, service: string, options: AwsTimeouts): void {
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const attempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  client.middlewareStack.add(
    (next: (args: { request?: unknown }) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: { request?: unknown }) => {
        try {
          return await next(args);
        } catch (error) {
          if (!isNetworkFailure(error)) throw error;
          const endpoint = endpointOf(args.request);
          const operation = `${service} ${(context.commandName ?? 'call').replace(/Command$/, '')}`;
          const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
          throw new EndpointError(
            `${operation} to ${endpoint} failed: ${networkReason(error, requestTimeoutMs)} (${tries}); check the endpoint, the region and network access, or allow more time`,
            endpoint,
            operation,
          );
        }
      },
    { step: 'build', name: 'karplessNameEndpointOnFailure', override: true },
  );
}
