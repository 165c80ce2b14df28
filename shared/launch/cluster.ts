// Cluster facts derived offline: the kube-dns Service IP is the service CIDR's 10th address.

/** The kube-dns IP for a service CIDR: x.y.z.10 for IPv4, <prefix>::a for IPv6. */
export function kubeDNSIP(serviceCIDR: string): string {
  const [address = '', bitsText] = serviceCIDR.trim().split('/');
  if (address.includes(':')) {
    const groups = expandIPv6(address);
    const bits = bitsText === undefined ? 128 : Number(bitsText);
    let value = groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
    const mask = bits === 0 ? 0n : ((1n << BigInt(bits)) - 1n) << BigInt(128 - bits);
    value = (value & mask) + 10n;
    const out = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt((7 - i) * 16)) & 0xffffn));
    return compressIPv6(out);
  }
  const octets = address.split('.').map(Number);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) {
    throw new Error(`"${serviceCIDR}" is not an IPv4 or IPv6 CIDR`);
  }
  const bits = bitsText === undefined ? 32 : Number(bitsText);
  const value = octets.reduce((acc, o) => acc * 256 + o, 0);
  const size = 2 ** (32 - bits);
  const ip = Math.floor(value / size) * size + 10;
  return [24, 16, 8, 0].map((shift) => Math.floor(ip / 2 ** shift) % 256).join('.');
}

function expandIPv6(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const groups = [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) {
    throw new Error(`"${address}" is not an IPv6 address`);
  }
  return groups;
}

// RFC 5952: the longest run of zero groups (length ≥ 2) becomes "::".
function compressIPv6(groups: number[]): string {
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { start: i, length: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.length < 2) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.length).join(':')}`;
}

export function isIPv6(ip: string): boolean {
  return ip.includes(':');
}
