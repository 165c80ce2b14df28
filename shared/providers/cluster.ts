// The EKS cluster a node joins (DescribeCluster): endpoint, CA, version, service CIDR, and the
// kube-dns address kubelet is given (the service CIDR's 10th address unless spec.kubelet.clusterDNS).

import type { ClusterInfo } from '../launch/launchtemplate';
import type { EKSApi } from './ports';

export type ClusterPort = Pick<EKSApi, 'describeCluster'>;

export interface Cluster extends ClusterInfo {
  arn?: string;
}

export class ClusterNotReadyError extends Error {
  override readonly name = 'ClusterNotReadyError';
}

/** The 10th address of a CIDR: 172.20.0.0/16 → 172.20.0.10, fd00:1::/108 → fd00:1::a. */
export function kubeDnsIP(serviceCIDR: string): string {
  const [network = ''] = serviceCIDR.split('/');
  if (network.includes(':')) return ipv6Add(network, 10);
  const octets = network.split('.').map(Number);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) {
    throw new Error(`service CIDR "${serviceCIDR}" is not an IPv4 or IPv6 CIDR`);
  }
  const value =
    ((octets[0] ?? 0) * 2 ** 24 + (octets[1] ?? 0) * 2 ** 16 + (octets[2] ?? 0) * 2 ** 8 + (octets[3] ?? 0) + 10) >>> 0;
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

function ipv6Add(address: string, n: number): string {
  const [head = '', tail = ''] = address.includes('::') ? address.split('::') : [address, ''];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const groups = [...headParts, ...Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts].map((g) =>
    Number.parseInt(g || '0', 16),
  );
  let value = 0n;
  for (const g of groups) value = (value << 16n) | BigInt(g);
  value += BigInt(n);
  const out: string[] = [];
  for (let i = 7; i >= 0; i--) out.push(((value >> BigInt(i * 16)) & 0xffffn).toString(16));
  // Compress the longest run of zero groups, as addresses are conventionally written.
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (out[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && out[j] === '0') j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  if (best.start < 0) return out.join(':');
  return `${out.slice(0, best.start).join(':')}::${out.slice(best.start + best.length).join(':')}`;
}

export class ClusterProvider {
  constructor(private readonly eks: ClusterPort) {}

  async describe(name: string, options: { clusterDNS?: readonly string[] } = {}): Promise<Cluster> {
    const out = await this.eks.describeCluster({ name });
    const cluster = out.cluster;
    if (!cluster?.endpoint || !cluster.certificateAuthority?.data || !cluster.version) {
      throw new ClusterNotReadyError(
        `EKS cluster ${name} has no endpoint, CA or version yet (status ${cluster?.status ?? 'unknown'}); wait until it is ACTIVE`,
      );
    }
    const network = cluster.kubernetesNetworkConfig;
    const ipv6 = network?.ipFamily === 'ipv6';
    const serviceCIDR = ipv6 ? network?.serviceIpv6Cidr : network?.serviceIpv4Cidr;
    const given = options.clusterDNS?.[0];
    const dnsIP = given ?? (serviceCIDR ? kubeDnsIP(serviceCIDR) : ipv6 ? undefined : '10.100.0.10');
    if (!dnsIP) throw new ClusterNotReadyError(`EKS cluster ${name} is IPv6 but reports no service IPv6 CIDR`);
    return {
      name,
      endpoint: cluster.endpoint,
      caBundle: cluster.certificateAuthority.data,
      ...(serviceCIDR ? { serviceCIDR } : {}),
      version: cluster.version,
      dnsIP,
      ipv6,
      ...(cluster.arn ? { arn: cluster.arn } : {}),
    };
  }
}
