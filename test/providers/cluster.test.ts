import { describe, expect, it } from 'vitest';
import { ClusterNotReadyError, ClusterProvider, kubeDnsIP } from '../../shared/providers/cluster';
import type { EKSApi } from '../../shared/providers/ports';
import { recordingFake } from './fakes';

describe('kubeDnsIP', () => {
  it.each([
    ['172.20.0.0/16', '172.20.0.10'],
    ['10.100.0.0/16', '10.100.0.10'],
    ['10.0.0.250/24', '10.0.1.4'],
    ['fd30:1c53:5f8a::/108', 'fd30:1c53:5f8a::a'],
    ['fd00:0:0:0:0:0:0:0/108', 'fd00::a'],
  ])('%s → %s', (cidr, ip) => {
    expect(kubeDnsIP(cidr)).toBe(ip);
  });

  it('names a malformed CIDR', () => {
    expect(() => kubeDnsIP('300.1.1.1/8')).toThrow('service CIDR "300.1.1.1/8"');
  });
});

function eks(cluster: Record<string, unknown>) {
  return recordingFake<EKSApi>({ describeCluster: () => ({ cluster, $metadata: {} }) });
}

const active = {
  arn: 'arn:aws:eks:us-west-2:111122223333:cluster/c1',
  endpoint: 'https://abc.eks.amazonaws.com',
  certificateAuthority: { data: 'Y2E=' },
  version: '1.31',
  status: 'ACTIVE',
};

describe('ClusterProvider', () => {
  it('reads endpoint, CA, version and the kube-dns IP from the service CIDR', async () => {
    const fake = eks({ ...active, kubernetesNetworkConfig: { serviceIpv4Cidr: '172.20.0.0/16', ipFamily: 'ipv4' } });
    expect(await new ClusterProvider(fake).describe('c1')).toEqual({
      name: 'c1',
      endpoint: 'https://abc.eks.amazonaws.com',
      caBundle: 'Y2E=',
      serviceCIDR: '172.20.0.0/16',
      version: '1.31',
      dnsIP: '172.20.0.10',
      ipv6: false,
      arn: 'arn:aws:eks:us-west-2:111122223333:cluster/c1',
    });
    expect(fake.callsTo('describeCluster')).toEqual([{ name: 'c1' }]);
  });

  it('uses spec.kubelet.clusterDNS when given', async () => {
    const fake = eks({ ...active, kubernetesNetworkConfig: { serviceIpv4Cidr: '172.20.0.0/16' } });
    expect((await new ClusterProvider(fake).describe('c1', { clusterDNS: ['169.254.20.10'] })).dnsIP).toBe(
      '169.254.20.10',
    );
  });

  it('takes the IPv6 service CIDR for an IPv6 cluster', async () => {
    const fake = eks({
      ...active,
      kubernetesNetworkConfig: {
        ipFamily: 'ipv6',
        serviceIpv4Cidr: '172.20.0.0/16',
        serviceIpv6Cidr: 'fd30:1c53:5f8a::/108',
      },
    });
    const cluster = await new ClusterProvider(fake).describe('c1');
    expect(cluster).toMatchObject({ ipv6: true, serviceCIDR: 'fd30:1c53:5f8a::/108', dnsIP: 'fd30:1c53:5f8a::a' });
  });

  it('refuses a cluster that is still creating', async () => {
    const fake = eks({ status: 'CREATING', version: '1.31' });
    await expect(new ClusterProvider(fake).describe('c1')).rejects.toThrow(ClusterNotReadyError);
    await expect(new ClusterProvider(fake).describe('c1')).rejects.toThrow(/status CREATING/);
  });
});
