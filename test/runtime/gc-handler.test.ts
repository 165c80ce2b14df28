import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../lambdas/gc/handler';
import { type GcReport, gcRunFailure } from '../../shared/runtime/gc';
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
  it('fails the invocation (Errors metric, alarm) when its dependencies cannot be built', async () => {
    const handler = createHandler(async () => {
      throw new Error('DescribeCluster: AccessDenied');
    }, tools);
    await expect(handler({}, context)).rejects.toThrow('DescribeCluster: AccessDenied');
  });

  it('tries to build its dependencies again on the next run after a failed cold start', async () => {
    let builds = 0;
    const { once } = await import('../../shared/runtime/powertools');
    const load = once(async () => {
      builds++;
      throw new Error('not reached twice');
    });
    const handler = createHandler(load, tools);
    await expect(handler({}, context)).rejects.toThrow('not reached twice');
    await expect(handler({}, context)).rejects.toThrow('not reached twice');
    expect(builds).toBe(2);
  });
});

describe('gcRunFailure', () => {
  const empty = (): GcReport => ({
    deleted: [],
    failed: [],
    emptiness: { marked: [], cleared: [], disrupted: [], blocked: [], finished: [] },
  });
  const part = (resource: string) => ({ resource, id: '*', error: 'AccessDenied' });

  it('fails a run in which nothing could be listed', () => {
    const report = empty();
    report.failed.push(part('nodes'), part('launch-templates'), part('instance-profiles'));
    expect(gcRunFailure(report)).toBe(
      'nodes: AccessDenied; launch-templates: AccessDenied; instance-profiles: AccessDenied',
    );
  });

  it('does not fail a run that did part of its job, or whose failures were single deletions', () => {
    const partly = empty();
    partly.failed.push(part('nodes'), part('launch-templates'));
    expect(gcRunFailure(partly)).toBeUndefined();
    const deletions = empty();
    deletions.failed.push({ resource: 'instance', id: 'i-0abc', error: 'UnauthorizedOperation' });
    expect(gcRunFailure(deletions)).toBeUndefined();
    expect(gcRunFailure(empty())).toBeUndefined();
  });
});
