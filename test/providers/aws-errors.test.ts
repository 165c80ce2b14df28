import { describe, expect, it } from 'vitest';
import { errorCode, isNotFound, isThrottling, isUnauthorized } from '../../shared/providers/aws-errors';
import { awsError } from './fakes';

describe('aws error codes', () => {
  it.each([
    [awsError('RequestLimitExceeded'), 'RequestLimitExceeded'],
    [{ Code: 'InsufficientInstanceCapacity' }, 'InsufficientInstanceCapacity'],
    [new Error('plain'), undefined],
    ['text', undefined],
    [undefined, undefined],
  ])('errorCode(%s) = %s', (error, code) => {
    expect(errorCode(error)).toBe(code);
  });

  it.each([
    ['RequestLimitExceeded', { throttling: true, notFound: false, unauthorized: false }],
    ['ThrottlingException', { throttling: true, notFound: false, unauthorized: false }],
    ['NoSuchEntity', { throttling: false, notFound: true, unauthorized: false }],
    ['ParameterNotFound', { throttling: false, notFound: true, unauthorized: false }],
    ['InvalidLaunchTemplateName.NotFoundException', { throttling: false, notFound: true, unauthorized: false }],
    ['UnauthorizedOperation', { throttling: false, notFound: false, unauthorized: true }],
    ['InsufficientInstanceCapacity', { throttling: false, notFound: false, unauthorized: false }],
  ])('%s', (code, expected) => {
    const error = awsError(code);
    expect({
      throttling: isThrottling(error),
      notFound: isNotFound(error),
      unauthorized: isUnauthorized(error),
    }).toEqual(expected);
  });
});
