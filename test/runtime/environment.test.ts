// The AWS clients every function builds: timeouts that turn a blocked network into an error naming
// the call instead of a function timeout, and the Pricing endpoint Karpenter would use per region.

import { createServer, type Server, type Socket } from 'node:net';
import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import {
  awsClients,
  CLIENT_TIMEOUTS,
  clientConfig,
  kubeClient,
  type Runtime,
  readSettings,
} from '../../shared/runtime/environment';

let server: Server | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Accepts connections and never answers, as a security group or missing endpoint might. */
async function silentServer(): Promise<number> {
  server = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('clientConfig', () => {
  it('sets connect and request timeouts, and makes the request timeout an error', () => {
    expect(clientConfig('eu-west-1')).toEqual({
      region: 'eu-west-1',
      maxAttempts: 5,
      requestHandler: {
        connectionTimeout: CLIENT_TIMEOUTS.connectionTimeoutMs,
        requestTimeout: CLIENT_TIMEOUTS.requestTimeoutMs,
        throwOnRequestTimeout: true,
      },
    });
  });

  it('fails a call to an endpoint that never answers instead of waiting for the function timeout', async () => {
    const port = await silentServer();
    const ec2 = new EC2Client({
      ...clientConfig('us-west-2', { connectionTimeoutMs: 200, requestTimeoutMs: 200 }),
      maxAttempts: 1,
      endpoint: `http://127.0.0.1:${port}`,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    await expect(ec2.send(new DescribeInstancesCommand({}))).rejects.toMatchObject({ name: 'TimeoutError' });
    ec2.destroy();
  });
});

describe('awsClients', () => {
  it('asks the Pricing API in the region Karpenter uses for each partition and continent', async () => {
    const endpoints: Record<string, string> = {
      'eu-west-1': 'eu-central-1',
      'ap-southeast-2': 'ap-south-1',
      'cn-north-1': 'cn-northwest-1',
      'us-west-2': 'us-east-1',
      'sa-east-1': 'us-east-1',
    };
    for (const [region, endpoint] of Object.entries(endpoints)) {
      const pricing = awsClients(region).pricing;
      expect(await pricing?.config.region()).toBe(endpoint);
    }
  });
});

describe('isolatedVPC', () => {
  const env = {
    KARPLESS_CLUSTER_NAME: 'demo',
    KARPLESS_STATE_TABLE: 't',
    KARPLESS_NOTICE_BUS: 'b',
    KARPLESS_CONFIG_FILE: '/dev/null',
    AWS_REGION: 'eu-west-1',
  };

  it('reads the setting and builds no Pricing client, so on-demand prices stay the bundled ones', () => {
    expect(readSettings({ ...env, KARPLESS_ISOLATED_VPC: 'true' }).isolatedVPC).toBe(true);
    expect(readSettings(env).isolatedVPC).toBeUndefined();
    expect(awsClients('eu-west-1', true).pricing).toBeUndefined();
    expect(awsClients('eu-west-1').pricing).toBeDefined();
  });

  it('refuses a value that means nothing, naming the variable', () => {
    expect(readSettings({ ...env, KARPLESS_CONFIGURATION_SOURCE: 'cluster' }).configurationSource).toBe('cluster');
    expect(readSettings(env).configurationSource).toBeUndefined();
    expect(() => readSettings({ ...env, KARPLESS_CONFIGURATION_SOURCE: 'git' })).toThrow(
      'environment variable KARPLESS_CONFIGURATION_SOURCE is "git": use "bundled" or "cluster"',
    );
    expect(() => readSettings({ ...env, KARPLESS_ISOLATED_VPC: 'yes' })).toThrow(
      'environment variable KARPLESS_ISOLATED_VPC is "yes": use "true" or "false"',
    );
  });

  it("reads Karpenter's NodeRepair and SpotToSpotConsolidation gates (off unless 'true'), refusing nonsense", () => {
    const on = readSettings({ ...env, KARPLESS_NODE_REPAIR: 'true', KARPLESS_SPOT_TO_SPOT_CONSOLIDATION: 'true' });
    expect([on.nodeRepair, on.spotToSpotConsolidation]).toEqual([true, true]);
    const off = readSettings({ ...env, KARPLESS_NODE_REPAIR: 'false' });
    expect([off.nodeRepair, off.spotToSpotConsolidation]).toEqual([undefined, undefined]);
    expect(() => readSettings({ ...env, KARPLESS_NODE_REPAIR: '1' })).toThrow(
      'environment variable KARPLESS_NODE_REPAIR is "1": use "true" or "false"',
    );
  });
});

describe('kubeClient', () => {
  it("is one client per runtime: the Karpenter guard and the function's deps share it and describe the cluster once", async () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    let describes = 0;
    const runtime = {
      settings: { cluster: 'c1', region: 'us-west-2' },
      clients: {
        ec2: { config: { credentials: async () => ({ accessKeyId: 'a', secretAccessKey: 's' }) } },
        eks: {
          send: async () => {
            describes++;
            return {
              cluster: {
                endpoint: 'https://127.0.0.1:1',
                certificateAuthority: { data: Buffer.from(pem).toString('base64') },
              },
            };
          },
        },
      },
    } as unknown as Runtime;
    const [first, second] = await Promise.all([kubeClient(runtime), kubeClient(runtime)]);
    expect(second).toBe(first);
    expect(await kubeClient(runtime)).toBe(first);
    expect(describes).toBe(1);
    first.close();
  });
});
