import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { DynamoStateStore } from '../../../shared/providers/dynamostate';
import { ec2Api } from '../../../shared/providers/ports';
import { bundledSnapshot, type PricingApi, PricingProvider, pricingApi } from '../../../shared/providers/pricing';
import { fakeClock, recordingFake } from '../../providers/fakes';
import { motoAccount, REGION } from '../helpers';
import { providerClients } from './roles';

describe('PricingProvider on moto', () => {
  it('falls back to the bundled on-demand prices when GetProducts fails, takes spot history, and caches both in the table', async () => {
    const account = motoAccount();
    const tableName = `karpless-state-${randomUUID().slice(0, 8)}`;
    await createStateTable(dynamoApi(account.dynamodb), tableName);
    // The provision and drift functions refresh the prices (the same statements): the provision role
    // here. One attempt per call: moto answers GetProducts with HTTP 500, which the SDK would retry.
    const clients = await providerClients(account, 'provision', { tableName, maxAttempts: 1 });
    const clock = fakeClock(Date.now());
    const store = new DynamoStateStore(dynamoApi(clients.dynamodb), tableName, { clock });
    const deps = { region: REGION, ec2: ec2Api(clients.ec2), store, clock };

    const snapshot = await new PricingProvider({ ...deps, pricing: pricingApi(clients.pricing) }).snapshot();
    expect(snapshot.source).toBe('bundled+spot-price-history');
    expect(snapshot.onDemand).toEqual(bundledSnapshot(REGION).onDemand);
    expect(snapshot.errors).toHaveLength(1);
    expect(snapshot.errors?.[0]).toMatch(/^on-demand prices from the Pricing API: /);
    // moto prices every spot offering of the region alike; the shape is what counts here.
    expect(snapshot.spot['m5.large:us-west-2a']).toBeGreaterThan(0);
    expect(Object.keys(snapshot.spot).length).toBeGreaterThan(1000);

    // A cold start reads the table and asks nothing.
    const idle = recordingFake<PricingApi>({});
    const cold = await new PricingProvider({ ...deps, pricing: idle }).snapshot();
    expect(cold).toEqual(snapshot);
    expect(idle.calls).toEqual([]);
  });
});
