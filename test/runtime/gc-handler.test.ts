import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../lambdas/gc/handler';
import { type Powertools, powertools } from '../../shared/runtime/powertools';

let tools: Powertools;

beforeAll(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  tools = powertools('test', 'c1');
});

const context = {
  getRemainingTimeInMillis: () => 60_000,
  awsRequestId: 'req',
  functionName: 'gc',
} as unknown as Context;

describe('gc handler', () => {
  it('logs and returns an error instead of throwing when its dependencies cannot be built', async () => {
    const handler = createHandler(async () => {
      throw new Error('DescribeCluster: AccessDenied');
    }, tools);
    expect(await handler({}, context)).toEqual({ error: 'DescribeCluster: AccessDenied' });
  });

  it('tries to build its dependencies again on the next run after a failed cold start', async () => {
    let builds = 0;
    const { once } = await import('../../shared/runtime/powertools');
    const load = once(async () => {
      builds++;
      throw new Error('not reached twice');
    });
    const handler = createHandler(load, tools);
    await handler({}, context);
    await handler({}, context);
    expect(builds).toBe(2);
  });
});
