import { describe, expect, it } from 'vitest';
import { kubeDNSIP } from '../../shared/launch/cluster';

describe('kubeDNSIP', () => {
  it.each([
    ['10.100.0.0/16', '10.100.0.10'],
    ['172.20.0.0/16', '172.20.0.10'],
    ['10.100.5.7/16', '10.100.0.10'],
    ['192.168.0.0/24', '192.168.0.10'],
    ['fd7b:1ac6:e2f5::/108', 'fd7b:1ac6:e2f5::a'],
    ['fd00:0:0:0:0:0:1:0/112', 'fd00::1:a'],
  ])('%s → %s', (cidr, ip) => {
    expect(kubeDNSIP(cidr)).toBe(ip);
  });

  it('refuses text that is no CIDR', () => {
    expect(() => kubeDNSIP('banana')).toThrow(/not an IPv4 or IPv6 CIDR/);
  });
});
