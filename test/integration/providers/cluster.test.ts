import { describe, expect, it } from 'vitest';
import { ClusterProvider } from '../../../shared/providers/cluster';
import { eksApi } from '../../../shared/providers/ports';
import { createCluster, motoAccount } from '../helpers';

describe('cluster on moto', () => {
  it('reads endpoint, CA, version and derives the kube-dns IP', async () => {
    const account = motoAccount();
    const created = await createCluster(account, 'c1', { serviceCIDR: '10.100.0.0/16', version: '1.31' });
    const cluster = await new ClusterProvider(eksApi(account.eks)).describe('c1');
    expect(cluster).toMatchObject({
      name: 'c1',
      endpoint: created.endpoint,
      version: '1.31',
      serviceCIDR: '10.100.0.0/16',
      dnsIP: '10.100.0.10',
      ipv6: false,
      arn: created.arn,
    });
    expect(cluster.caBundle.length).toBeGreaterThan(0);
  });

  it('recognises an IPv6 cluster (moto reports no service IPv6 CIDR, so clusterDNS is needed here)', async () => {
    const account = motoAccount();
    await createCluster(account, 'v6', { ipFamily: 'ipv6' });
    const provider = new ClusterProvider(eksApi(account.eks));
    await expect(provider.describe('v6')).rejects.toThrow(/IPv6 but reports no service IPv6 CIDR/);
    expect(await provider.describe('v6', { clusterDNS: ['fd00::a'] })).toMatchObject({ ipv6: true, dnsIP: 'fd00::a' });
  });

  it('names a cluster that does not exist', async () => {
    const account = motoAccount();
    await expect(new ClusterProvider(eksApi(account.eks)).describe('missing')).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
  });
});
