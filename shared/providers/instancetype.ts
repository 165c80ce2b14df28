// Live instance types and offerings (DescribeInstanceTypes, DescribeInstanceTypeOfferings,
// DescribeSpotPriceHistory, DescribeAvailabilityZones) in the Catalog format of
// shared/instancetypes/types.ts (types mapped by the catalog's own catalogInstanceTypeFromEC2), cached for 5 minutes like Karpenter's instance-type cache.
// On-demand prices come from a lookup the caller injects: the Pricing API is us-east-1 only and
// absent from emulators, so the runtime passes the bundled price table.

import type { _InstanceType, InstanceTypeInfo } from '@aws-sdk/client-ec2';
import { catalogInstanceTypeFromEC2 } from '../instancetypes/ec2';
import type { Catalog, CatalogInstanceType, CatalogOffering } from '../instancetypes/types';
import { type Clock, systemClock, TTLCache } from './clock';
import type { EC2Api } from './ports';

export type InstanceTypePort = Pick<
  EC2Api,
  'describeInstanceTypes' | 'describeInstanceTypeOfferings' | 'describeSpotPriceHistory' | 'describeAvailabilityZones'
>;

export const INSTANCE_TYPES_TTL_MS = 5 * 60 * 1000;

export interface InstanceTypeProviderOptions {
  region: string;
  /** USD/hour on-demand price of a type; a type without one gets no on-demand offering. */
  onDemandPrice?: (instanceType: string) => number | undefined;
  /** Restrict to these names (wildcards allowed, e.g. "m5.*"), as an EC2 instance-type filter. */
  instanceTypes?: readonly string[];
  clock?: Clock;
  ttlMs?: number;
}

export class InstanceTypeProvider {
  private readonly cache: TTLCache<Catalog>;
  private readonly clock: Clock;

  constructor(
    private readonly ec2: InstanceTypePort,
    private readonly options: InstanceTypeProviderOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.cache = new TTLCache(this.clock, options.ttlMs ?? INSTANCE_TYPES_TTL_MS);
  }

  /** The region's catalog, from cache while it is younger than the TTL. */
  async catalog(): Promise<Catalog> {
    const cached = this.cache.get('catalog');
    if (cached) return cached;
    const catalog = await this.fetch();
    this.cache.set('catalog', catalog);
    return catalog;
  }

  private async fetch(): Promise<Catalog> {
    const nameFilter = this.options.instanceTypes?.length
      ? [{ Name: 'instance-type', Values: [...this.options.instanceTypes] }]
      : undefined;
    const infos: InstanceTypeInfo[] = [];
    let token: string | undefined;
    do {
      const page = await this.ec2.describeInstanceTypes({
        ...(nameFilter ? { Filters: nameFilter } : {}),
        MaxResults: 100,
        ...(token ? { NextToken: token } : {}),
      });
      infos.push(...(page.InstanceTypes ?? []));
      token = page.NextToken;
    } while (token);

    const zones = await this.ec2.describeAvailabilityZones({});
    const zoneIDs = new Map<string, string>();
    for (const z of zones.AvailabilityZones ?? []) if (z.ZoneName && z.ZoneId) zoneIDs.set(z.ZoneName, z.ZoneId);

    const offered = new Map<string, Set<string>>();
    token = undefined;
    do {
      const page = await this.ec2.describeInstanceTypeOfferings({
        LocationType: 'availability-zone',
        ...(nameFilter ? { Filters: nameFilter } : {}),
        ...(token ? { NextToken: token } : {}),
      });
      for (const o of page.InstanceTypeOfferings ?? []) {
        if (!o.InstanceType || !o.Location) continue;
        const set = offered.get(o.InstanceType) ?? new Set<string>();
        set.add(o.Location);
        offered.set(o.InstanceType, set);
      }
      token = page.NextToken;
    } while (token);

    const spot = await this.spotPrices(infos.map((i) => i.InstanceType ?? '').filter(Boolean));
    const instanceTypes: CatalogInstanceType[] = [];
    for (const info of infos) {
      const base = catalogInstanceTypeFromEC2(info);
      if (!base) continue;
      const offerings: CatalogOffering[] = [];
      const onDemand = this.options.onDemandPrice?.(base.name);
      const spotCapable = info.SupportedUsageClasses?.includes('spot') ?? false;
      for (const zone of [...(offered.get(base.name) ?? [])].sort()) {
        const zoneID = zoneIDs.get(zone);
        const z = { zone, ...(zoneID ? { zoneID } : {}) };
        const spotPrice = spot.get(`${base.name}/${zone}`);
        if (spotCapable && spotPrice !== undefined) {
          offerings.push({ ...z, capacityType: 'spot', price: spotPrice, available: true });
        }
        if (onDemand !== undefined)
          offerings.push({ ...z, capacityType: 'on-demand', price: onDemand, available: true });
      }
      instanceTypes.push({ ...base, offerings });
    }
    instanceTypes.sort((a, b) => a.name.localeCompare(b.name));
    return {
      version: 1,
      region: this.options.region,
      generatedAt: new Date(this.clock()).toISOString(),
      notes: [`live from EC2 in ${this.options.region}`],
      instanceTypes,
    };
  }

  /** The latest Linux spot price per "type/zone". */
  private async spotPrices(types: string[]): Promise<Map<string, number>> {
    const latest = new Map<string, { price: number; at: number }>();
    if (types.length === 0) return new Map();
    let token: string | undefined;
    do {
      const page = await this.ec2.describeSpotPriceHistory({
        ProductDescriptions: ['Linux/UNIX'],
        StartTime: new Date(this.clock()),
        ...(this.options.instanceTypes?.length ? { InstanceTypes: types as _InstanceType[] } : {}),
        ...(token ? { NextToken: token } : {}),
      });
      for (const p of page.SpotPriceHistory ?? []) {
        if (!p.InstanceType || !p.AvailabilityZone || p.SpotPrice === undefined) continue;
        const key = `${p.InstanceType}/${p.AvailabilityZone}`;
        const at = p.Timestamp?.getTime() ?? 0;
        const price = Number(p.SpotPrice);
        const current = latest.get(key);
        if (Number.isFinite(price) && (!current || at > current.at)) latest.set(key, { price, at });
      }
      token = page.NextToken;
    } while (token);
    return new Map([...latest].map(([k, v]) => [k, v.price]));
  }
}
