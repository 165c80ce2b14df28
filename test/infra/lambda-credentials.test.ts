import { afterEach, describe, expect, it, vi } from 'vitest';
import { credentialsTreatedAsExpired, defaultProvider } from '../../infra/lambda-credentials';

afterEach(() => vi.unstubAllEnvs());

describe('Lambda environment credentials (the bundles’ default provider)', () => {
  it('reads the role credentials Lambda sets, with the session token and expiry', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    vi.stubEnv('AWS_SESSION_TOKEN', 'token');
    vi.stubEnv('AWS_CREDENTIAL_EXPIRATION', '2030-01-01T00:00:00Z');
    expect(await defaultProvider()()).toEqual({
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'secret',
      sessionToken: 'token',
      expiration: new Date('2030-01-01T00:00:00Z'),
    });
  });

  it('names the missing variables instead of trying other sources', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', '');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', '');
    await expect(defaultProvider()()).rejects.toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set/);
  });

  it('treats credentials as expired five minutes before their expiry', () => {
    expect(credentialsTreatedAsExpired({ expiration: new Date(Date.now() + 60_000) })).toBe(true);
    expect(credentialsTreatedAsExpired({ expiration: new Date(Date.now() + 3_600_000) })).toBe(false);
    expect(credentialsTreatedAsExpired({})).toBe(false);
  });
});
