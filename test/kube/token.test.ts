import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type AwsCredentials, decodeEksToken, eksTokenSource, TOKEN_PREFIX } from '../../shared/kube/token';
import { fakeClock } from '../providers/fakes';

const credentials: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session/token+with=odd chars',
};

/** SigV4 for a presigned GET, computed by hand so the test does not trust the signer it checks. */
function expectedSignature(url: URL, headers: Record<string, string>, secret: string): string {
  const query = [...url.searchParams.entries()]
    .filter(([key]) => key !== 'X-Amz-Signature')
    .map(([key, value]) => [rfc3986(key), rfc3986(value)])
    .sort(([a = ''], [b = '']) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const names = Object.keys(headers).sort();
  const canonical = [
    'GET',
    '/',
    query,
    ...names.map((name) => `${name}:${headers[name]}`),
    '',
    names.join(';'),
    createHash('sha256').update('').digest('hex'),
  ].join('\n');
  const date = url.searchParams.get('X-Amz-Date') ?? '';
  const scope = (url.searchParams.get('X-Amz-Credential') ?? '').split('/').slice(1).join('/');
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, createHash('sha256').update(canonical).digest('hex')].join(
    '\n',
  );
  let key: Buffer | string = `AWS4${secret}`;
  for (const part of scope.split('/')) key = createHmac('sha256', key).update(part).digest();
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

describe('EKS token', () => {
  it('is a base64url presigned STS GetCallerIdentity URL signed over the x-k8s-aws-id header', async () => {
    const clock = fakeClock(Date.parse('2026-03-04T05:06:07Z'));
    const token = await eksTokenSource({ clusterName: 'demo', region: 'eu-west-1', credentials, now: clock })();
    expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(token.slice(TOKEN_PREFIX.length)).toMatch(/^[A-Za-z0-9_-]+$/);
    const url = decodeEksToken(token);
    expect(url.protocol).toBe('https:');
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({
      Action: 'GetCallerIdentity',
      Version: '2011-06-15',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'AKIDEXAMPLE/20260304/eu-west-1/sts/aws4_request',
      'X-Amz-Date': '20260304T050607Z',
      'X-Amz-Expires': '60',
      'X-Amz-SignedHeaders': 'host;x-k8s-aws-id',
      'X-Amz-Security-Token': credentials.sessionToken,
    });
    expect(q['X-Amz-Signature']).toMatch(/^[0-9a-f]{64}$/);
    // The cluster name is signed as a header, not carried in the URL.
    expect(url.searchParams.has('x-k8s-aws-id')).toBe(false);
    expect(q['X-Amz-Signature']).toBe(
      expectedSignature(url, { host: url.host, 'x-k8s-aws-id': 'demo' }, credentials.secretAccessKey),
    );
    expect(q['X-Amz-Signature']).not.toBe(
      expectedSignature(url, { host: url.host, 'x-k8s-aws-id': 'other' }, credentials.secretAccessKey),
    );
  });

  it('uses the China partition endpoint in cn- regions', async () => {
    const token = await eksTokenSource({ clusterName: 'c', region: 'cn-north-1', credentials })();
    expect(decodeEksToken(token).host).toBe('sts.cn-north-1.amazonaws.com.cn');
  });

  it('reuses a token for 10 minutes, then mints a new one, and mints on demand', async () => {
    const clock = fakeClock();
    let resolved = 0;
    const source = eksTokenSource({
      clusterName: 'demo',
      region: 'us-west-2',
      credentials: async () => {
        resolved++;
        return credentials;
      },
      now: clock,
    });
    const first = await source();
    clock.advance(9 * 60_000);
    expect(await source()).toBe(first);
    clock.advance(60_000);
    const second = await source();
    expect(second).not.toBe(first);
    expect(decodeEksToken(second).searchParams.get('X-Amz-Date')).toBe('20260101T001000Z');
    clock.advance(1000);
    const forced = await source({ refresh: true });
    expect(forced).not.toBe(second);
    expect(resolved).toBe(3);
  });

  it('mints again before the signing credentials expire', async () => {
    const clock = fakeClock();
    const expiring = { ...credentials, expiration: new Date(clock() + 5 * 60_000) };
    const source = eksTokenSource({
      clusterName: 'demo',
      region: 'us-west-2',
      credentials: async () => expiring,
      now: clock,
    });
    const first = await source();
    clock.advance(3 * 60_000);
    expect(await source()).toBe(first);
    clock.advance(60_000);
    expect(await source()).not.toBe(first);
  });

  it('shares one minting between concurrent callers', async () => {
    let resolved = 0;
    const source = eksTokenSource({
      clusterName: 'demo',
      region: 'us-west-2',
      credentials: async () => {
        resolved++;
        return credentials;
      },
    });
    const tokens = await Promise.all([source(), source(), source()]);
    expect(new Set(tokens).size).toBe(1);
    expect(resolved).toBe(1);
  });

  it('refuses to decode something that is not a token', () => {
    expect(() => decodeEksToken('Bearer abc')).toThrow(/must start with k8s-aws-v1\./);
  });
});
