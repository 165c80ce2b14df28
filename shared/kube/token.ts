// The EKS bearer token, as aws-iam-authenticator and `aws eks get-token` make it: a presigned STS
// GetCallerIdentity URL whose signature covers the `x-k8s-aws-id: <cluster>` header, so the token
// is good for one cluster only. EKS accepts it for 15 minutes after signing; we mint a new one well
// before that so a token never expires between being read and reaching the API server.

import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** Static credentials, or a provider such as an SDK client's `config.credentials`. */
export type CredentialsSource = AwsCredentials | (() => Promise<AwsCredentials>);

export interface EksTokenOptions {
  clusterName: string;
  region: string;
  credentials: CredentialsSource;
  /** Epoch milliseconds; injected so tests can move time. */
  now?: () => number;
  /** How long a minted token is reused. EKS honours a token for 15 minutes. */
  refreshAfterMs?: number;
}

/** Returns a bearer token; `refresh` mints a new one even if the cached one is still young. */
export type TokenSource = (options?: { refresh?: boolean }) => Promise<string>;

export const TOKEN_PREFIX = 'k8s-aws-v1.';
/** The presigned URL itself only needs to live until EKS checks it; EKS then honours it 15 minutes. */
const PRESIGN_EXPIRES_SECONDS = 60;
const DEFAULT_REFRESH_AFTER_MS = 10 * 60 * 1000;
/** Credentials about to expire would sign a token STS then refuses; re-mint this long before. */
const CREDENTIALS_MARGIN_MS = 60 * 1000;

/** A Sha256 for @smithy/signature-v4 on node:crypto (HMAC when given a secret). */
export class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | Uint8Array | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(secret));
  }
  update(data: string | Uint8Array | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

function toBytes(data: string | Uint8Array | ArrayBuffer | ArrayBufferView): Uint8Array | string {
  if (typeof data === 'string') return data;
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/** SigV4's URI encoding: encodeURIComponent plus the characters it leaves alone. */
function escapeUri(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** STS's regional endpoint; the China partition lives under amazonaws.com.cn. */
export function stsHostname(region: string): string {
  return `sts.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/** Mints one token at `signingDate`. */
export async function mintEksToken(
  options: Pick<EksTokenOptions, 'clusterName' | 'region' | 'credentials'>,
  signingDate: Date,
): Promise<{ token: string; credentialsExpireAt?: number }> {
  const credentials = typeof options.credentials === 'function' ? await options.credentials() : options.credentials;
  const signer = new SignatureV4({
    service: 'sts',
    region: options.region,
    credentials,
    sha256: NodeSha256,
    uriEscapePath: true,
  });
  const hostname = stsHostname(options.region);
  const presigned = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, 'x-k8s-aws-id': options.clusterName },
    },
    {
      expiresIn: PRESIGN_EXPIRES_SECONDS,
      signingDate,
      // EKS reads the cluster name from the signed header, never from the query string.
      unhoistableHeaders: new Set(['x-k8s-aws-id']),
    },
  );
  const query = Object.entries(presigned.query ?? {})
    .flatMap(([key, value]) =>
      (Array.isArray(value) ? value : [value]).map((v) => `${escapeUri(key)}=${escapeUri(v ?? '')}`),
    )
    .join('&');
  const url = `https://${hostname}/?${query}`;
  const token = TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url');
  return credentials.expiration ? { token, credentialsExpireAt: credentials.expiration.getTime() } : { token };
}

/**
 * A cached token source for one cluster: the token is reused until `refreshAfterMs` has passed or
 * the signing credentials are about to expire, and concurrent callers share one minting.
 */
export function eksTokenSource(options: EksTokenOptions): TokenSource {
  const now = options.now ?? Date.now;
  const refreshAfterMs = options.refreshAfterMs ?? DEFAULT_REFRESH_AFTER_MS;
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  const mint = async (): Promise<string> => {
    const mintedAt = now();
    const { token, credentialsExpireAt } = await mintEksToken(options, new Date(mintedAt));
    const renewAt = Math.min(
      mintedAt + refreshAfterMs,
      credentialsExpireAt === undefined ? Number.POSITIVE_INFINITY : credentialsExpireAt - CREDENTIALS_MARGIN_MS,
    );
    cached = { token, renewAt };
    return token;
  };

  return async ({ refresh = false } = {}) => {
    if (!refresh && cached && now() < cached.renewAt) return cached.token;
    pending ??= mint().finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

/** Decodes a token back to its presigned URL (for tests and for debugging a 401). */
export function decodeEksToken(token: string): URL {
  if (!token.startsWith(TOKEN_PREFIX)) throw new Error(`not an EKS token: it must start with ${TOKEN_PREFIX}`);
  return new URL(Buffer.from(token.slice(TOKEN_PREFIX.length), 'base64url').toString('utf8'));
}
