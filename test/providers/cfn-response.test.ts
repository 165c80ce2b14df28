import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  type CustomResourceEvent,
  isCustomResourceEvent,
  putResponse,
  respond,
} from '../../shared/providers/cfn-response';

const event: CustomResourceEvent = {
  RequestType: 'Delete',
  ResponseURL: 'http://127.0.0.1:1/unused',
  StackId: 'arn:aws:cloudformation:us-west-2:123456789012:stack/Karpless-demo/1',
  RequestId: 'r-1',
  LogicalResourceId: 'ProvisionerUninstall',
  ResourceType: 'Custom::KarplessUninstall',
};

describe('the CloudFormation custom-resource protocol', () => {
  it('tells a CloudFormation event from a scheduled one', () => {
    expect(isCustomResourceEvent(event)).toBe(true);
    expect(isCustomResourceEvent({ source: 'aws.events', 'detail-type': 'Scheduled Event' })).toBe(false);
    expect(isCustomResourceEvent({ ...event, RequestType: 'Rollback' })).toBe(false);
    expect(isCustomResourceEvent(null)).toBe(false);
  });

  it('answers with the request ids and keeps the reason within what CloudFormation accepts', async () => {
    let sent = '';
    await respond(event, { Status: 'SUCCESS', Reason: 'x'.repeat(10_000), PhysicalResourceId: 'p' }, async (_u, b) => {
      sent = b;
    });
    const body = JSON.parse(sent);
    expect(body).toMatchObject({
      Status: 'SUCCESS',
      StackId: event.StackId,
      RequestId: 'r-1',
      PhysicalResourceId: 'p',
    });
    expect(body.LogicalResourceId).toBe('ProvisionerUninstall');
    expect(body.Reason.length).toBeLessThanOrEqual(2_000);
    expect(Buffer.byteLength(sent)).toBeLessThan(4_096);
  });

  it('PUTs to the pre-signed URL without a content type, and fails loudly when refused', async () => {
    const seen: { method?: string; type?: string; body: string }[] = [];
    let status = 200;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen.push({
          ...(req.method ? { method: req.method } : {}),
          ...(req.headers['content-type'] !== undefined ? { type: req.headers['content-type'] } : {}),
          body,
        });
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/presigned?X-Amz-Signature=abc`;
    try {
      await putResponse(url, '{"Status":"SUCCESS"}');
      expect(seen).toEqual([{ method: 'PUT', type: '', body: '{"Status":"SUCCESS"}' }]);
      status = 403;
      await expect(putResponse(url, '{}')).rejects.toThrow(/CloudFormation response to 127.0.0.1:\d+ failed: HTTP 403/);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
