import type { DescribeSpotPriceHistoryCommandInput } from '@aws-sdk/client-ec2';
import type { GetProductsCommandInput } from '@aws-sdk/client-pricing';
import { describe, expect, it } from 'vitest';
import { SPOT_PRICED_AS_ON_DEMAND_NOTE } from '../../shared/instancetypes/ec2';
import type { Catalog } from '../../shared/instancetypes/types';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import type { EC2Api } from '../../shared/providers/ports';
import {
  applyPrices,
  awsPricingApi,
  bundledSnapshot,
  describePrices,
  fetchOnDemandPrices,
  fetchSpotPrices,
  PRICES_REFRESH_MS,
  PRICES_RETRY_MS,
  type PricingApi,
  PricingProvider,
  parsePriceList,
  pricingEndpointRegion,
} from '../../shared/providers/pricing';
import type { PriceSnapshot } from '../../shared/providers/state';
import { awsError, fakeClock, recordingFake } from './fakes';

/** One GetProducts priceList document, shaped as the Pricing API returns it (trimmed to the fields read). */
function priceItem(instanceType: string, price: string, currency = 'USD'): string {
  return JSON.stringify({
    product: {
      productFamily: 'Compute Instance',
      attributes: { instanceType, regionCode: 'us-west-2', operatingSystem: 'Linux', tenancy: 'Shared' },
      sku: `SKU${instanceType}`,
    },
    serviceCode: 'AmazonEC2',
    terms: {
      OnDemand: {
        [`SKU${instanceType}.JRTCKXETXF`]: {
          priceDimensions: {
            [`SKU${instanceType}.JRTCKXETXF.6YS6EN2CT7`]: {
              unit: 'Hrs',
              endRange: 'Inf',
              description: `$${price} per On Demand Linux ${instanceType} Instance Hour`,
              appliesTo: [],
              beginRange: '0',
              pricePerUnit: { [currency]: price },
            },
          },
          sku: `SKU${instanceType}`,
          effectiveDate: '2026-11-01T00:00:00Z',
          offerTermCode: 'JRTCKXETXF',
          termAttributes: {},
        },
      },
    },
    version: '20261101000000',
    publicationDate: '2026-11-01T00:00:00Z',
  });
}

function pricingFake(pages: Record<string, { PriceList: string[]; NextToken?: string }[]>) {
  return recordingFake<PricingApi>({
    getProducts: (input) => {
      const family = input.Filters?.find((f) => f.Field === 'productFamily')?.Value ?? '';
      const list = pages[family] ?? [];
      const index = input.NextToken ? Number(input.NextToken) : 0;
      return list[index] ?? { PriceList: [] };
    },
  });
}

const workingPricing = () =>
  pricingFake({
    'Compute Instance': [
      { PriceList: [priceItem('m5.large', '0.1000000000'), priceItem('c5.large', '0.0850000000')], NextToken: '1' },
      { PriceList: [priceItem('m5.xlarge', '0.1920000000')] },
    ],
    'Compute Instance (bare metal)': [{ PriceList: [priceItem('m5.metal', '4.6080000000')] }],
  });

function spotFake(records: { type: string; zone: string; price: string; at: number }[]) {
  return recordingFake<Pick<EC2Api, 'describeSpotPriceHistory'>>({
    describeSpotPriceHistory: (input) => {
      const start = input.NextToken ? Number(input.NextToken) : 0;
      const page = records.slice(start, start + 2);
      return {
        SpotPriceHistory: page.map((r) => ({
          InstanceType: r.type as 'm5.large',
          AvailabilityZone: r.zone,
          SpotPrice: r.price,
          ProductDescription: 'Linux/UNIX',
          Timestamp: new Date(r.at),
        })),
        NextToken: start + 2 < records.length ? String(start + 2) : '',
      };
    },
  });
}

const workingSpot = () =>
  spotFake([
    { type: 'm5.large', zone: 'us-west-2a', price: '0.0400', at: 2000 },
    { type: 'm5.large', zone: 'us-west-2a', price: '0.0500', at: 1000 },
    { type: 'm5.large', zone: 'us-west-2b', price: '0.0380', at: 2000 },
  ]);

describe('pricingEndpointRegion', () => {
  it('picks the Pricing API region as Karpenter does', () => {
    expect(pricingEndpointRegion('us-west-2')).toBe('us-east-1');
    expect(pricingEndpointRegion('ap-northeast-1')).toBe('ap-south-1');
    expect(pricingEndpointRegion('eu-west-1')).toBe('eu-central-1');
    expect(pricingEndpointRegion('cn-north-1')).toBe('cn-northwest-1');
    expect(pricingEndpointRegion('me-south-1')).toBe('us-east-1');
    expect(pricingEndpointRegion('sa-east-1', 'eu-central-1')).toBe('eu-central-1');
  });
});

describe('awsPricingApi', () => {
  it('talks to the endpoint region of the cluster region', () => {
    const api = awsPricingApi('eu-west-1');
    expect(api.endpointRegion).toBe('eu-central-1');
    api.destroy();
    expect(awsPricingApi('us-west-2', { override: 'ap-south-1' }).endpointRegion).toBe('ap-south-1');
  });
});

describe('bundledSnapshot', () => {
  it("holds the bundled table of the region, or us-east-1's for a region it lacks", () => {
    const east = bundledSnapshot('us-east-1');
    expect(east.source).toBe('bundled');
    expect(east.onDemand['m5.large']).toBe(0.096);
    expect(east.spot).toEqual({});
    expect(bundledSnapshot('xx-nowhere-9').onDemand).toEqual(east.onDemand);
  });
});

describe('parsePriceList', () => {
  it('reads the hourly price of each document, skipping unreadable, zero and other-currency ones', () => {
    expect(
      parsePriceList(
        [
          priceItem('m5.large', '0.096'),
          '{not json',
          priceItem('t3.nano', '0.0000000000'),
          priceItem('c5.large', '1', 'CNY'),
        ],
        'USD',
      ),
    ).toEqual({ 'm5.large': 0.096 });
  });
});

describe('fetchOnDemandPrices', () => {
  it("asks GetProducts with Karpenter's filters, page by page, for shared and bare-metal instances", async () => {
    const api = workingPricing();
    expect(await fetchOnDemandPrices(api, 'us-west-2')).toEqual({
      'm5.large': 0.1,
      'c5.large': 0.085,
      'm5.xlarge': 0.192,
      'm5.metal': 4.608,
    });
    const calls = api.callsTo('getProducts') as GetProductsCommandInput[];
    expect(calls).toHaveLength(3);
    expect(calls[0]).toEqual({
      ServiceCode: 'AmazonEC2',
      MaxResults: 100,
      Filters: [
        { Field: 'regionCode', Type: 'TERM_MATCH', Value: 'us-west-2' },
        { Field: 'serviceCode', Type: 'TERM_MATCH', Value: 'AmazonEC2' },
        { Field: 'preInstalledSw', Type: 'TERM_MATCH', Value: 'NA' },
        { Field: 'operatingSystem', Type: 'TERM_MATCH', Value: 'Linux' },
        { Field: 'capacitystatus', Type: 'TERM_MATCH', Value: 'Used' },
        { Field: 'marketoption', Type: 'TERM_MATCH', Value: 'OnDemand' },
        { Field: 'tenancy', Type: 'TERM_MATCH', Value: 'Shared' },
        { Field: 'productFamily', Type: 'TERM_MATCH', Value: 'Compute Instance' },
      ],
    });
    expect(calls[1]?.NextToken).toBe('1');
    expect(calls[2]?.Filters?.slice(-2)).toEqual([
      { Field: 'tenancy', Type: 'TERM_MATCH', Value: 'Dedicated' },
      { Field: 'productFamily', Type: 'TERM_MATCH', Value: 'Compute Instance (bare metal)' },
    ]);
  });

  it('reads CNY prices in China regions, and fails when a query finds nothing', async () => {
    const cn = pricingFake({
      'Compute Instance': [{ PriceList: [priceItem('m5.large', '0.7', 'CNY')] }],
      'Compute Instance (bare metal)': [{ PriceList: [priceItem('m5.metal', '30', 'CNY')] }],
    });
    expect(await fetchOnDemandPrices(cn, 'cn-north-1')).toEqual({ 'm5.large': 0.7, 'm5.metal': 30 });
    const noMetal = pricingFake({ 'Compute Instance': [{ PriceList: [priceItem('m5.large', '0.1')] }] });
    await expect(fetchOnDemandPrices(noMetal, 'us-west-2')).rejects.toThrow(
      'GetProducts found no Compute Instance (bare metal) prices for us-west-2',
    );
  });
});

describe('fetchSpotPrices', () => {
  it('keeps the latest Linux price per type and zone across pages', async () => {
    const ec2 = workingSpot();
    expect(await fetchSpotPrices(ec2, 5000)).toEqual({ 'm5.large:us-west-2a': 0.04, 'm5.large:us-west-2b': 0.038 });
    const calls = ec2.callsTo('describeSpotPriceHistory') as DescribeSpotPriceHistoryCommandInput[];
    expect(calls.map((c) => c.NextToken)).toEqual([undefined, '2']);
    expect(calls[0]).toMatchObject({
      ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'],
      StartTime: new Date(5000),
    });
  });

  it('fails when there is no price at all', async () => {
    await expect(fetchSpotPrices(spotFake([]), 0)).rejects.toThrow('no Linux spot prices');
  });
});

describe('PricingProvider', () => {
  it('refreshes once, saves to the state table, and a cold start within 12 hours reads it without fetching', async () => {
    const clock = fakeClock();
    const store = new InMemoryStateStore(clock);
    const pricing = workingPricing();
    const ec2 = workingSpot();
    const first = await new PricingProvider({ region: 'us-west-2', pricing, ec2, store, clock }).snapshot();
    expect(first.source).toBe('pricing-api+spot-price-history');
    expect(first.onDemand['m5.large']).toBe(0.1);
    // Types the API did not list keep their bundled price.
    expect(first.onDemand['t3.micro']).toBe(bundledSnapshot('us-west-2').onDemand['t3.micro']);
    expect(first.spot).toEqual({ 'm5.large:us-west-2a': 0.04, 'm5.large:us-west-2b': 0.038 });
    expect(first.errors).toBeUndefined();
    expect(await store.getPrices('us-west-2')).toEqual(first);

    clock.advance(PRICES_REFRESH_MS - 1);
    const coldPricing = workingPricing();
    const coldEc2 = workingSpot();
    const cold = new PricingProvider({ region: 'us-west-2', pricing: coldPricing, ec2: coldEc2, store, clock });
    expect(await cold.snapshot()).toEqual(first);
    expect(coldPricing.calls.length + coldEc2.calls.length).toBe(0);
    clock.advance(1);
    expect((await cold.snapshot()).fetchedAt).toBe(clock());
    expect(coldPricing.calls.length).toBe(3);
  });

  it('keeps the bundled on-demand prices when the Pricing API fails, says so, and tries again 15 minutes later', async () => {
    const clock = fakeClock();
    const store = new InMemoryStateStore(clock);
    const pricing = recordingFake<PricingApi>({
      getProducts: () => {
        throw awsError('InternalFailure', 'HTTP 500');
      },
    });
    const provider = new PricingProvider({ region: 'us-west-2', pricing, ec2: workingSpot(), store, clock });
    const snapshot = await provider.snapshot();
    expect(snapshot.source).toBe('bundled+spot-price-history');
    expect(snapshot.onDemand).toEqual(bundledSnapshot('us-west-2').onDemand);
    expect(snapshot.errors).toEqual(['on-demand prices from the Pricing API: InternalFailure: HTTP 500']);
    expect(describePrices(snapshot)).toMatch(
      /^prices from bundled\+spot-price-history as of 2026-01-01T00:00:00.000Z, \d+ on-demand, 2 spot, last refresh failed: on-demand prices/,
    );
    clock.advance(PRICES_RETRY_MS - 1);
    await provider.snapshot();
    expect(pricing.calls).toHaveLength(1);
    clock.advance(1);
    await provider.snapshot();
    expect(pricing.calls).toHaveLength(2);
  });

  it('keeps every previous price when both fetches fail', async () => {
    const clock = fakeClock();
    const store = new InMemoryStateStore(clock);
    const previous: PriceSnapshot = {
      source: 'pricing-api+spot-price-history',
      fetchedAt: clock() - PRICES_REFRESH_MS,
      onDemand: { 'm5.large': 0.1 },
      spot: { 'm5.large:us-west-2a': 0.04 },
    };
    await store.putPrices('us-west-2', previous);
    const failing = recordingFake<Pick<EC2Api, 'describeSpotPriceHistory'>>({
      describeSpotPriceHistory: () => {
        throw awsError('RequestLimitExceeded');
      },
    });
    const pricing = recordingFake<PricingApi>({ getProducts: () => ({ PriceList: [] }) });
    const snapshot = await new PricingProvider({ region: 'us-west-2', pricing, ec2: failing, store, clock }).snapshot();
    expect(snapshot).toEqual({
      ...previous,
      attemptedAt: clock(),
      errors: [
        'on-demand prices from the Pricing API: GetProducts found no Compute Instance prices for us-west-2',
        'spot prices from DescribeSpotPriceHistory: RequestLimitExceeded',
      ],
    });
  });

  it('does not ask the Pricing API in an isolated VPC or in GovCloud', async () => {
    for (const [region, isolatedVPC] of [
      ['us-west-2', true],
      ['us-gov-west-1', false],
    ] as const) {
      const clock = fakeClock();
      const pricing = workingPricing();
      const provider = new PricingProvider({
        region,
        pricing,
        ec2: workingSpot(),
        store: new InMemoryStateStore(clock),
        clock,
        isolatedVPC,
      });
      expect((await provider.snapshot()).source).toBe('bundled+spot-price-history');
      expect(pricing.calls).toEqual([]);
    }
  });
});

describe('applyPrices', () => {
  const catalog: Catalog = {
    version: 1,
    region: 'us-west-2',
    notes: ['from a test', SPOT_PRICED_AS_ON_DEMAND_NOTE],
    instanceTypes: [
      {
        name: 'm5.large',
        arch: 'amd64',
        vcpu: 2,
        memoryMiB: 8192,
        maximumNetworkInterfaces: 3,
        ipv4PerInterface: 10,
        gpus: 0,
        offerings: [
          { zone: 'us-west-2a', capacityType: 'on-demand', price: 0.096, available: true },
          { zone: 'us-west-2a', capacityType: 'spot', price: 0.096, available: true },
          { zone: 'us-west-2b', capacityType: 'spot', price: 0.096, available: true },
        ],
      },
    ],
  };
  const base: PriceSnapshot = { source: 'pricing-api', fetchedAt: 0, onDemand: { 'm5.large': 0.1 }, spot: {} };

  it('prices spot as on-demand until spot prices are known', () => {
    const priced = applyPrices(catalog, base);
    expect(priced.instanceTypes[0]?.offerings.map((o) => o.price)).toEqual([0.1, 0.1, 0.1]);
    expect(priced.notes).toEqual([
      'from a test',
      SPOT_PRICED_AS_ON_DEMAND_NOTE,
      'prices from pricing-api as of 1970-01-01T00:00:00.000Z, 1 on-demand, 0 spot',
    ]);
  });

  it('prices spot per zone once known, and offers no spot in a zone without a price (as Karpenter)', () => {
    const priced = applyPrices(catalog, {
      ...base,
      source: 'pricing-api+spot-price-history',
      spot: { 'm5.large:us-west-2a': 0.04 },
    });
    expect(priced.instanceTypes[0]?.offerings).toEqual([
      { zone: 'us-west-2a', capacityType: 'on-demand', price: 0.1, available: true },
      { zone: 'us-west-2a', capacityType: 'spot', price: 0.04, available: true },
      { zone: 'us-west-2b', capacityType: 'spot', price: 0.096, available: false },
    ]);
    expect(priced.notes).not.toContain(SPOT_PRICED_AS_ON_DEMAND_NOTE);
    expect(catalog.instanceTypes[0]?.offerings[1]?.price).toBe(0.096);
  });
});
