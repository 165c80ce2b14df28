// AWS error codes the providers branch on, and how to read a code from an SDK v3 error.

export { UNFULFILLABLE_CAPACITY_CODES } from '../launch/fleet';

/** The error code of an SDK v3 service exception (its name), or of a CreateFleet error entry. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { name?: unknown; Code?: unknown; code?: unknown };
  for (const candidate of [e.Code, e.code, e.name]) {
    if (typeof candidate === 'string' && candidate !== 'Error') return candidate;
  }
  return undefined;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export const LAUNCH_TEMPLATE_NOT_FOUND_CODES: ReadonlySet<string> = new Set([
  'InvalidLaunchTemplateName.NotFoundException',
  'InvalidLaunchTemplateId.NotFound',
  'InvalidLaunchTemplateId.VersionNotFound',
]);

export const LAUNCH_TEMPLATE_ALREADY_EXISTS = 'InvalidLaunchTemplateName.AlreadyExistsException';

export const THROTTLING_CODES: ReadonlySet<string> = new Set([
  'RequestLimitExceeded',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
]);

export const UNAUTHORIZED_CODES: ReadonlySet<string> = new Set([
  'UnauthorizedOperation',
  'AccessDenied',
  'AccessDeniedException',
  'AuthFailure',
]);

export const NOT_FOUND_CODES: ReadonlySet<string> = new Set([
  'NoSuchEntity',
  'NoSuchEntityException',
  'ParameterNotFound',
  'ResourceNotFoundException',
  'InvalidAMIID.NotFound',
  'InvalidAMIID.Malformed',
  'InvalidSubnetID.NotFound',
  'InvalidGroup.NotFound',
  'InvalidInstanceID.NotFound',
  ...LAUNCH_TEMPLATE_NOT_FOUND_CODES,
]);

export function isNotFound(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && NOT_FOUND_CODES.has(code);
}

export function isThrottling(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && THROTTLING_CODES.has(code);
}

export function isUnauthorized(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && UNAUTHORIZED_CODES.has(code);
}

/** The SDK found no credentials to sign with (no environment keys, profile, SSO session or role). */
export function isMissingCredentials(error: unknown): boolean {
  return error instanceof Error && error.name === 'CredentialsProviderError';
}
