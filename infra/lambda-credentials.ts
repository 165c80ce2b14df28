// Stands in for @aws-sdk/credential-provider-node in the Lambda bundles (aliased by ./bundling).
// Lambda hands a function its role's credentials in environment variables, valid for the life of
// the execution environment; the full default chain (profiles, SSO, web identity, process, IMDS)
// brings 90 KB of nested STS/SSO/sign-in clients to every bundle and is never reached there.
// Exports mirror the package's: the SDK's client configuration imports exactly these names.

interface EnvCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

const REFRESH_MARGIN_MS = 300_000;

export const defaultProvider = () => async (): Promise<EnvCredentials> => {
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set: this bundle runs only on Lambda, which sets them for the function role',
    );
  }
  const sessionToken = process.env.AWS_SESSION_TOKEN;
  const expiry = process.env.AWS_CREDENTIAL_EXPIRATION;
  return {
    accessKeyId,
    secretAccessKey,
    ...(sessionToken ? { sessionToken } : {}),
    ...(expiry ? { expiration: new Date(expiry) } : {}),
  };
};

export const credentialsWillNeedRefresh = (credentials?: { expiration?: Date }): boolean =>
  credentials?.expiration !== undefined;

export const credentialsTreatedAsExpired = (credentials?: { expiration?: Date }): boolean =>
  credentials?.expiration !== undefined && credentials.expiration.getTime() - Date.now() < REFRESH_MARGIN_MS;
