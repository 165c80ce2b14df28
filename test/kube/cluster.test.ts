import type { DescribeClusterCommandOutput } from '@aws-sdk/client-eks';
import { STSClient } from '@aws-sdk/client-sts';
import { afterEach, describe, expect, it } from 'vitest';
import { type HttpKubeClient, kubeClientForCluster } from '../../shared/kube/client';
import { decodeEksToken } from '../../shared/kube/token';
import type { EKSApi } from '../../shared/providers/ports';
import { recordingFake } from '../providers/fakes';
import { node } from '../support/kube/builders';
import { FakeApiServer, testTls } from '../support/kube/fake-apiserver';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
const opened: { stop(): Promise<void> | void }[] = [];

afterEach(async () => {
  for (const thing of opened.splice(0)) await thing.stop();
});

function eksAnswering(cluster: DescribeClusterCommandOutput['cluster']) {
  return recordingFake<EKSApi>({ describeCluster: () => ({ cluster }) });
}

function track(client: HttpKubeClient): HttpKubeClient {
  opened.push({ stop: () => client.close() });
  return client;
}

describe('kubeClientForCluster', () => {
  it('connects to the DescribeCluster endpoint over https with its CA and an EKS token', async () => {
    const server = await FakeApiServer.start({ tls: testTls() });
    opened.push(server);
    server.addNode(node('a'));
    const eks = eksAnswering({
      name: 'demo',
      endpoint: server.url,
      certificateAuthority: { data: Buffer.from(testTls().cert).toString('base64') },
    });
    const client = track(await kubeClientForCluster({ eks, clusterName: 'demo', region: 'us-west-2', credentials }));
    expect((await client.listNodes()).items).toHaveLength(1);
    expect(eks.callsTo('describeCluster')).toEqual([{ name: 'demo' }]);
    const token = server.requests[0]?.token ?? '';
    expect(decodeEksToken(token).host).toBe('sts.us-west-2.amazonaws.com');
  });

  it("signs with an SDK client's credential provider", async () => {
    const server = await FakeApiServer.start();
    opened.push(server);
    const sts = new STSClient({ region: 'us-west-2', credentials: { ...credentials, sessionToken: 'from-sdk' } });
    const eks = eksAnswering({});
    const client = track(
      await kubeClientForCluster({
        eks,
        clusterName: 'demo',
        region: 'us-west-2',
        credentials: sts.config.credentials,
        endpointOverride: server.url,
      }),
    );
    await client.getNode('a');
    const url = decodeEksToken(server.requests[0]?.token ?? '');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe('from-sdk');
    sts.destroy();
  });

  it("refuses a CA that is not a PEM certificate (moto's) and says how to use a test server", async () => {
    const eks = eksAnswering({
      name: 'demo',
      endpoint: 'https://x.eks.amazonaws.com',
      certificateAuthority: { data: 'bm90IGEgY2VydA==' },
    });
    await expect(kubeClientForCluster({ eks, clusterName: 'demo', region: 'us-west-2', credentials })).rejects.toThrow(
      /EKS cluster demo: certificateAuthority.data is not a base64 PEM certificate; set KARPLESS_KUBE_ENDPOINT/,
    );
  });

  it('names the cluster when DescribeCluster has no endpoint yet', async () => {
    const eks = eksAnswering({ name: 'demo', status: 'CREATING' });
    await expect(kubeClientForCluster({ eks, clusterName: 'demo', region: 'us-west-2', credentials })).rejects.toThrow(
      /EKS cluster demo: DescribeCluster returned no endpoint \(status CREATING\)/,
    );
  });

  it('uses a loopback http override without calling DescribeCluster', async () => {
    const server = await FakeApiServer.start({ token: 'demo-token' });
    opened.push(server);
    const eks = eksAnswering({});
    const client = track(
      await kubeClientForCluster({
        eks,
        clusterName: 'demo',
        region: 'us-west-2',
        credentials,
        endpointOverride: server.url,
        token: async () => 'demo-token',
      }),
    );
    expect(await client.getNode('missing')).toBeUndefined();
    expect(eks.calls).toHaveLength(0);
  });
});
