import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../cli/main';
import { EndpointError, isNetworkFailure } from '../../shared/providers/aws-client';
import { awsApis } from '../../shared/providers/ports';

// Local servers only: one accepts connections and never answers, one answers every request with an
// AWS error, and one port is closed.
const sockets = new Set<Socket>();
let silent: Server;
let answering: ReturnType<typeof createHttpServer>;
let closedPort: number;

const listen = (server: Server | ReturnType<typeof createHttpServer>) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => {});
  });
  answering = createHttpServer((_, response) => {
    response.writeHead(403, { 'content-type': 'text/xml' });
    response.end(
      '<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>no</Message></Error></Errors><RequestID>r</RequestID></Response>',
    );
  });
  const spare = createServer();
  closedPort = await listen(spare);
  await new Promise((resolve) => spare.close(resolve));
  await Promise.all([listen(silent), listen(answering)]);
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all([
    new Promise((resolve) => silent.close(resolve)),
    new Promise((resolve) => answering.close(resolve)),
  ]);
});

beforeEach(() => {
  // Static credentials: the default chain would otherwise look for an instance role off this host.
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'testing');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'testing');
  vi.stubEnv('AWS_SESSION_TOKEN', '');
  vi.stubEnv('AWS_PROFILE', '');
});

const port = (server: Server | ReturnType<typeof createHttpServer>) => (server.address() as AddressInfo).port;

describe('AWS calls: timeouts, retries and an error naming the endpoint', () => {
  it.each<[string, () => string, RegExp]>([
    [
      'an endpoint that accepts and never answers',
      () => `http://127.0.0.1:${port(silent)}`,
      /^EC2 DescribeSubnets to http:\/\/127\.0\.0\.1:\d+ failed: no answer within 200ms \(2 attempts\)/,
    ],
    [
      'a closed port',
      () => `http://127.0.0.1:${closedPort}`,
      /^EC2 DescribeSubnets to http:\/\/127\.0\.0\.1:\d+ failed: connection refused \(2 attempts\)/,
    ],
  ])('%s: an EndpointError', async (_, endpoint, message) => {
    const aws = awsApis({ region: 'us-east-1', endpoint: endpoint(), requestTimeoutMs: 200, maxAttempts: 2 });
    try {
      const error = await aws.ec2.describeSubnets({}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EndpointError);
      expect((error as EndpointError).message).toMatch(message);
      expect((error as EndpointError).code).toBe('EndpointUnreachable');
    } finally {
      aws.destroy();
    }
  });

  it('an endpoint that answers with an AWS error: that error, untouched', async () => {
    const aws = awsApis({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port(answering)}`, maxAttempts: 1 });
    try {
      const error = await aws.ec2.describeSubnets({}).catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(EndpointError);
      expect((error as { name: string }).name).toBe('UnauthorizedOperation');
      expect(isNetworkFailure(error)).toBe(false);
    } finally {
      aws.destroy();
    }
  });

  it('karpless status --timeout stops with exit 1 and the endpoint instead of waiting forever', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const endpoint = `http://127.0.0.1:${port(silent)}`;
    const code = await main(
      [
        'status',
        '--manifests',
        'examples/manifests',
        '--region',
        'us-east-1',
        '--endpoint-url',
        endpoint,
        '--timeout',
        '100ms',
      ],
      { stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) } },
    );
    expect(code).toBe(1);
    expect(out.join('')).toBe('');
    expect(err.join('')).toBe(
      `karpless status: EC2 DescribeSubnets to ${endpoint} failed: no answer within 100ms (3 attempts); check the endpoint, the region and network access, or allow more time\n`,
    );
  });

  it.each(['0s', '-1s', 'soon', '2h'])('karpless status --timeout %s is a usage error', async (value) => {
    const err: string[] = [];
    const code = await main(
      ['status', '--manifests', 'examples/manifests', '--region', 'us-east-1', '--timeout', value],
      {
        stdout: { write: () => undefined },
        stderr: { write: (t: string) => err.push(t) },
      },
    );
    expect(code).toBe(2);
    expect(err.join('')).toContain(
      `--timeout must be a duration between 1ms and 1h such as 500ms, 10s or 1m, not "${value}"`,
    );
  });
});
