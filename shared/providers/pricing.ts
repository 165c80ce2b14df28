// Live prices kept as Karpenter's pricing provider keeps them (pkg/providers/pricing): start from the
// bundled on-demand table (a region it lacks falls back to us-east-1), refresh on-demand prices from
// the Pricing API and spot prices from DescribeSpotPriceHistory every 12 hours, and keep the previous
// prices of whatever a refresh could not fetch. The snapshot lives in the state table, so a cold
// start reads it instead of paying for the refresh, and it says where its prices came from.

import {
  type Filter,
  GetProductsCommand,
  type GetProductsCommandInput,
  type GetProductsCommandOutput,
  PricingClient,
} from '@aws-sdk/client-pricing';
import bundledTable from '../instancetypes/data/pricing-on-demand.json';
import { SPOT_PRICED_AS_ON_DEMAND_NOTE } from '../instancetypes/ec2';
import type { Catalog, CatalogInstanceType, CatalogOffering } from '../instancetypes/types';
import { errorCode, errorMessage } from './aws-errors';
import type { Clock } from './clock';
import type { EC2Api } from './ports';
import type { PriceSnapshot, StateStore } from './state';

/** Karpenter's pricing controller refreshes every 12 hours. */
export const PRICES_REFRESH_MS = 12 * 60 * 60 * 1000;
/**
 * After a refresh that failed in part, the next try comes this much later rather than on the next
 * invocation (Karpenter's controller backs off too): an unreachable Pricing API must not cost every
 * decision a timeout.
 */
export const PRICES_RETRY_MS = 15 * 60 * 1000;

export const PRICE_SOURCE = {
  bundled: 'bundled',
  pricingApi: 'pricing-api',
  spotPriceHistory: 'spot-price-history',
} as const;

export interface PricingApi {
  getProducts(input: GetProductsCommandInput): Promise<GetProductsCommandOutput>;
}

interface Sender {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send is generic over every command of the client.
  send(command: any): Promise<any>;
}

export function pricingApi(client: Sender): PricingApi {
  return { getProducts: (i) => client.send(new GetProductsCommand(i)) };
}

/**
 * A Pricing API client for `region`'s prices, talking to the endpoint region Karpenter would use.
 * `override` plays the part of Karpenter's PRICING_REGION_OVERRIDE.
 */
export function awsPricingApi(
  region: string,
  options: { override?: string; endpoint?: string; maxAttempts?: number } = {},
): PricingApi & { endpointRegion: string; destroy(): void } {
  const endpointRegion = pricingEndpointRegion(region, options.override);
  const client = new PricingClient({
    region: endpointRegion,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
  });
  return { ...pricingApi(client), endpointRegion, destroy: () => client.destroy() };
}

/**
 * The region whose Pricing API endpoint serves `region`, as Karpenter picks it: the API only runs in
 * a few regions, and the nearest one answers for all.
 */
export function pricingEndpointRegion(region: string, override?: string): string {
  if (override) return override;
  if (region.startsWith('ap-')) return 'ap-south-1';
  if (region.startsWith('cn-')) return 'cn-northwest-1';
  if (region.startsWith('eu-')) return 'eu-central-1';
  return 'us-east-1';
}

const BUNDLED = bundledTable as { generatedAt: string; regions: Record<string, Record<string, number>> };

/** The bundled snapshot for `region`: its own table if bundled, else us-east-1's (as Karpenter does). */
export function bundledSnapshot(region: string): PriceSnapshot {
  const onDemand = BUNDLED.regions[region] ?? BUNDLED.regions['us-east-1'] ?? {};
  return {
    source: PRICE_SOURCE.bundled,
    fetchedAt: Date.parse(BUNDLED.generatedAt),
    onDemand: { ...onDemand },
    spot: {},
  };
}

const TERM_MATCH = 'TERM_MATCH' as const;

/** Karpenter's GetProducts filters: shared-tenancy instances, then bare metal (listed as dedicated). */
export function onDemandFilterSets(region: string): Filter[][] {
  const base: Filter[] = [
    { Field: 'regionCode', Type: TERM_MATCH, Value: region },
    { Field: 'serviceCode', Type: TERM_MATCH, Value: 'AmazonEC2' },
    { Field: 'preInstalledSw', Type: TERM_MATCH, Value: 'NA' },
    { Field: 'operatingSystem', Type: TERM_MATCH, Value: 'Linux' },
    { Field: 'capacitystatus', Type: TERM_MATCH, Value: 'Used' },
    { Field: 'marketoption', Type: TERM_MATCH, Value: 'OnDemand' },
  ];
  return [
    [
      ...base,
      { Field: 'tenancy', Type: TERM_MATCH, Value: 'Shared' },
      { Field: 'productFamily', Type: TERM_MATCH, Value: 'Compute Instance' },
    ],
    [
      ...base,
      { Field: 'tenancy', Type: TERM_MATCH, Value: 'Dedicated' },
      { Field: 'productFamily', Type: TERM_MATCH, Value: 'Compute Instance (bare metal)' },
    ],
  ];
}

interface PriceListItem {
  product?: { attributes?: { instanceType?: string } };
  terms?: {
    OnDemand?: Record<string, { priceDimensions?: Record<string, { pricePerUnit?: Record<string, string> }> }>;
  };
}

/** instance type → hourly price from GetProducts' priceList documents (JSON strings). */
export function parsePriceList(priceList: readonly unknown[], currency: string): Record<string, number> {
  const prices: Record<string, number> = {};
  for (const raw of priceList) {
    let item: PriceListItem;
    try {
      item = JSON.parse(String(raw)) as PriceListItem;
    } catch {
      continue; // Karpenter skips a document it cannot read; the others still count.
    }
    const instanceType = item.product?.attributes?.instanceType;
    if (!instanceType) continue;
    for (const term of Object.values(item.terms?.OnDemand ?? {})) {
      for (const dimension of Object.values(term.priceDimensions ?? {})) {
        const price = Number.parseFloat(dimension.pricePerUnit?.[currency] ?? '');
        if (Number.isFinite(price) && price > 0) prices[instanceType] = price;
      }
    }
  }
  return prices;
}

/** On-demand prices of `region` from the Pricing API; throws when either query finds none. */
export async function fetchOnDemandPrices(api: PricingApi, region: string): Promise<Record<string, number>> {
  const currency = region.startsWith('cn-') ? 'CNY' : 'USD';
  const prices: Record<string, number> = {};
  for (const filters of onDemandFilterSets(region)) {
    const found: Record<string, number> = {};
    let token: string | undefined;
    do {
      const page = await api.getProducts({
        ServiceCode: 'AmazonEC2',
        Filters: filters,
        MaxResults: 100,
        ...(token ? { NextToken: token } : {}),
      });
      Object.assign(found, parsePriceList(Array.isArray(page.PriceList) ? page.PriceList : [], currency));
      token = page.NextToken;
    } while (token);
    if (Object.keys(found).length === 0) {
      const family = filters.find((f) => f.Field === 'productFamily')?.Value;
      throw new Error(`GetProducts found no ${family} prices for ${region}`);
    }
    Object.assign(prices, found);
  }
  return prices;
}

/** The latest Linux spot price per "instanceType:zone"; throws when there is none. */
export async function fetchSpotPrices(
  ec2: Pick<EC2Api, 'describeSpotPriceHistory'>,
  now: number,
): Promise<Record<string, number>> {
  const latest = new Map<string, { price: number; at: number }>();
  let token: string | undefined;
  do {
    const page = await ec2.describeSpotPriceHistory({
      ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'],
      // A start time of now asks for the price in effect now, one record per type and zone.
      StartTime: new Date(now),
      MaxResults: 1000,
      ...(token ? { NextToken: token } : {}),
    });
    for (const record of page.SpotPriceHistory ?? []) {
      const price = Number.parseFloat(record.SpotPrice ?? '');
      const at = record.Timestamp?.getTime();
      if (!record.InstanceType || !record.AvailabilityZone || at === undefined || !Number.isFinite(price)) continue;
      const key = `${record.InstanceType}:${record.AvailabilityZone}`;
      const current = latest.get(key);
      if (!current || at >= current.at) latest.set(key, { price, at });
    }
    token = page.NextToken || undefined;
  } while (token);
  if (latest.size === 0) throw new Error('DescribeSpotPriceHistory returned no Linux spot prices');
  return Object.fromEntries([...latest].map(([key, v]) => [key, v.price]));
}

/** Whether the snapshot is old enough (or its last refresh failed long enough ago) to refresh. */
export function pricesDue(snapshot: PriceSnapshot, now: number): boolean {
  const attempted = snapshot.attemptedAt ?? snapshot.fetchedAt;
  if (now - attempted >= PRICES_REFRESH_MS) return true;
  return (snapshot.errors?.length ?? 0) > 0 && now - attempted >= PRICES_RETRY_MS;
}

export interface PricingProviderDeps {
  region: string;
  /** Absent, or `isolatedVPC`, or a GovCloud region: on-demand prices stay as they are (as in Karpenter). */
  pricing?: PricingApi;
  ec2: Pick<EC2Api, 'describeSpotPriceHistory'>;
  store: Pick<StateStore, 'getPrices' | 'putPrices'>;
  clock: Clock;
  isolatedVPC?: boolean;
}

export class PricingProvider {
  private current: PriceSnapshot | undefined;

  constructor(private readonly deps: PricingProviderDeps) {}

  /**
   * The prices to decide with: this container's copy, else the state table's, else the bundled
   * table; refreshed first when due. Never throws for a failed refresh: the snapshot then keeps the
   * previous prices and lists what failed in `errors`.
   */
  async snapshot(): Promise<PriceSnapshot> {
    const now = this.deps.clock();
    if (this.current && !pricesDue(this.current, now)) return this.current;
    const stored = await this.deps.store.getPrices(this.deps.region);
    if (stored && !pricesDue(stored, now)) {
      this.current = stored;
      return stored;
    }
    // Nothing stored yet: the bundled table is the starting point, however recent its date.
    const refreshed = await this.refresh(stored ?? bundledSnapshot(this.deps.region));
    try {
      await this.deps.store.putPrices(this.deps.region, refreshed);
    } catch (error) {
      // The prices are good for this container; the next cold start refreshes again.
      refreshed.errors = [...(refreshed.errors ?? []), `saving the prices: ${errorMessage(error)}`];
    }
    this.current = refreshed;
    return refreshed;
  }

  /** Fetches on-demand and spot prices over `previous`, keeping what a failed fetch could not replace. */
  async refresh(previous: PriceSnapshot): Promise<PriceSnapshot> {
    const now = this.deps.clock();
    const { region } = this.deps;
    const skipOnDemand = !this.deps.pricing || this.deps.isolatedVPC || region.startsWith('us-gov');
    let onDemandError: string | undefined;
    let spotError: string | undefined;
    const [onDemand, spot] = await Promise.all([
      skipOnDemand || !this.deps.pricing
        ? undefined
        : fetchOnDemandPrices(this.deps.pricing, region).catch((error: unknown) => {
            onDemandError = `on-demand prices from the Pricing API: ${describeError(error)}`;
            return undefined;
          }),
      fetchSpotPrices(this.deps.ec2, now).catch((error: unknown) => {
        spotError = `spot prices from DescribeSpotPriceHistory: ${describeError(error)}`;
        return undefined;
      }),
    ]);
    const errors = [onDemandError, spotError].filter((e): e is string => e !== undefined);
    const previousParts = previous.source.split('+');
    const onDemandSource = onDemand
      ? PRICE_SOURCE.pricingApi
      : previousParts.includes(PRICE_SOURCE.pricingApi)
        ? PRICE_SOURCE.pricingApi
        : PRICE_SOURCE.bundled;
    const spotKnown = spot !== undefined || previousParts.includes(PRICE_SOURCE.spotPriceHistory);
    return {
      source: spotKnown ? `${onDemandSource}+${PRICE_SOURCE.spotPriceHistory}` : onDemandSource,
      fetchedAt: onDemand || spot ? now : previous.fetchedAt,
      onDemand: { ...previous.onDemand, ...onDemand },
      spot: { ...previous.spot, ...spot },
      attemptedAt: now,
      ...(errors.length > 0 ? { errors } : {}),
    };
  }
}

function describeError(error: unknown): string {
  const code = errorCode(error);
  return code && !errorMessage(error).startsWith(code) ? `${code}: ${errorMessage(error)}` : errorMessage(error);
}

/** One line for the decision log: where the prices came from, how old, how many. */
export function describePrices(snapshot: PriceSnapshot): string {
  const parts = [
    `prices from ${snapshot.source} as of ${new Date(snapshot.fetchedAt).toISOString()}`,
    `${Object.keys(snapshot.onDemand).length} on-demand`,
    `${Object.keys(snapshot.spot).length} spot`,
  ];
  if (snapshot.errors?.length) parts.push(`last refresh failed: ${snapshot.errors.join('; ')}`);
  return parts.join(', ');
}

/** The on-demand lookup InstanceTypeProvider takes. */
export function onDemandPriceLookup(snapshot: PriceSnapshot): (instanceType: string) => number | undefined {
  return (instanceType) => snapshot.onDemand[instanceType];
}

/**
 * The catalog with the snapshot's prices on its offerings, as Karpenter prices offerings: on-demand
 * from the on-demand table (a type the snapshot lacks keeps the catalog's price); spot at the
 * on-demand price until spot prices are known, then at the zone's spot price, and not available in
 * a zone without one.
 */
export function applyPrices(catalog: Catalog, snapshot: PriceSnapshot): Catalog {
  const spotKnown = Object.keys(snapshot.spot).length > 0;
  const priceOffering = (type: CatalogInstanceType, o: CatalogOffering): CatalogOffering => {
    const onDemand =
      snapshot.onDemand[type.name] ??
      type.offerings.find((x) => x.capacityType === 'on-demand' && x.zone === o.zone)?.price;
    if (o.capacityType === 'on-demand') return onDemand === undefined ? o : { ...o, price: onDemand };
    if (o.capacityType !== 'spot') return o;
    if (!spotKnown) return onDemand === undefined ? o : { ...o, price: onDemand };
    const spot = snapshot.spot[`${type.name}:${o.zone}`];
    return spot === undefined ? { ...o, available: false } : { ...o, price: spot };
  };
  const notes = (catalog.notes ?? []).filter((n) => !(spotKnown && n === SPOT_PRICED_AS_ON_DEMAND_NOTE));
  notes.push(describePrices({ ...snapshot, errors: [] }));
  return {
    ...catalog,
    notes,
    instanceTypes: catalog.instanceTypes.map((type) => ({
      ...type,
      offerings: type.offerings.map((o) => priceOffering(type, o)),
    })),
  };
}
