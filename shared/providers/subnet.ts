// Subnets selected by an EC2NodeClass (AWS pkg/providers/subnet): one DescribeSubnets per term,
// unioned, most free IPs first, as status.subnets lists them.

import type { Filter } from '@aws-sdk/client-ec2';
import type { SubnetSelectorTerm } from '../apis/v1/types';
import { tagFilters, tagsToRecord } from './filters';
import type { EC2Api } from './ports';

export type SubnetPort = Pick<EC2Api, 'describeSubnets'>;

export interface Subnet {
  id: string;
  zone: string;
  zoneID?: string;
  availableIps: number;
  tags: Record<string, string>;
}

export function subnetTermFilters(term: SubnetSelectorTerm): Filter[] {
  const filters: Filter[] = [];
  if (term.id) filters.push({ Name: 'subnet-id', Values: [term.id] });
  filters.push(...tagFilters(term.tags));
  return filters;
}

export class SubnetProvider {
  constructor(private readonly ec2: SubnetPort) {}

  async list(terms: readonly SubnetSelectorTerm[]): Promise<Subnet[]> {
    const byId = new Map<string, Subnet>();
    for (const term of terms) {
      const filters = subnetTermFilters(term);
      if (filters.length === 0) continue;
      let token: string | undefined;
      do {
        const page = await this.ec2.describeSubnets({ Filters: filters, ...(token ? { NextToken: token } : {}) });
        for (const s of page.Subnets ?? []) {
          if (!s.SubnetId || !s.AvailabilityZone) continue;
          byId.set(s.SubnetId, {
            id: s.SubnetId,
            zone: s.AvailabilityZone,
            ...(s.AvailabilityZoneId ? { zoneID: s.AvailabilityZoneId } : {}),
            availableIps: s.AvailableIpAddressCount ?? 0,
            tags: tagsToRecord(s.Tags),
          });
        }
        token = page.NextToken;
      } while (token);
    }
    return [...byId.values()].sort((a, b) => b.availableIps - a.availableIps || a.id.localeCompare(b.id));
  }
}

/** zone → subnets, the shape selectOverrides takes. */
export function subnetsByZone(subnets: readonly Subnet[]): Record<string, { id: string; availableIps: number }[]> {
  const out: Record<string, { id: string; availableIps: number }[]> = {};
  for (const s of subnets) {
    const list = out[s.zone] ?? [];
    list.push({ id: s.id, availableIps: s.availableIps });
    out[s.zone] = list;
  }
  return out;
}

/** Karpenter's available-IP cache TTL: a subnet listing older than this is refreshed anyway. */
export const INFLIGHT_IPS_TTL_MS = 5 * 60 * 1000;

/**
 * IPs that launches of this process have taken from each subnet since its free count was listed
 * (subnet.UpdateInflightIPs): the next launch prefers the subnet with the most addresses really
 * left, instead of piling onto the one DescribeSubnets last reported emptiest-looking-full. Entries
 * expire with the subnet listing they correct.
 */
export class InflightIPs {
  private readonly taken = new Map<string, { ips: number; until: number }>();

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly ttlMs = INFLIGHT_IPS_TTL_MS,
  ) {}

  add(subnetId: string, ips: number): void {
    const now = this.clock();
    const current = this.taken.get(subnetId);
    const base = current && current.until > now ? current.ips : 0;
    this.taken.set(subnetId, { ips: base + ips, until: now + this.ttlMs });
  }

  get(subnetId: string): number {
    const entry = this.taken.get(subnetId);
    if (!entry) return 0;
    if (entry.until <= this.clock()) {
      this.taken.delete(subnetId);
      return 0;
    }
    return entry.ips;
  }
}
