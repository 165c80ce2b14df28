import { describe, expect, it } from 'vitest';
import { ClusterProvider } from '../../../shared/providers/cluster';
import { eksApi } from '../../../shared/providers/ports';
import { createCluster, motoAccount } from '../helpers';
import { PROVIDER_CLUSTER, providerClients } from './roles';

// Every function describes its cluster at cold start; each has the same statement for it, scoped to
// the cluster's ARN. The watcher's runs first of all, so its role reads the cluster here.
async function provider(account = motoAccount()) {
  return new ClusterProvider(eksApi((await providerClients(account, 'watcher')).eks));
}

describe('cluster on moto', () => {
  it('reads endpoint, CA, version and derives the kube-dns IP', async () => {
    const account = motoAccount();
    const created = await createCluster(account, PROVIDER_CLUSTER, { serviceCIDR: '10.100.0.0/16', version: '1.31' });
    const cluster = await (await provider(account)).describe(PROVIDER_CLUSTER);
    expect(cluster).toMatchObject({
      name: PROVIDER_CLUSTER,
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
    await createCluster(account, PROVIDER_CLUSTER, { ipFamily: 'ipv6' });
    const clusters = await provider(account);
    await expect(clusters.describe(PROVIDER_CLUSTER)).rejects.toThrow(/IPv6 but reports no service IPv6 CIDR/);
    expect(await clusters.describe(PROVIDER_CLUSTER, { clusterDNS: ['fd00::a'] })).toMatchObject({
      ipv6: true,
      dnsIP: 'fd00::a',
    });
  });

  it('names a cluster that does not exist', async () => {
    // The role may describe the cluster it was deployed for; the account has no such cluster (yet).
    await expect((await provider()).describe(PROVIDER_CLUSTER)).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
  });
});
