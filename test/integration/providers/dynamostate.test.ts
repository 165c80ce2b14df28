import { randomUUID } from 'node:crypto';
import { DescribeTimeToLiveCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { STATE_TABLE } from '../../../shared/contracts';
import { createStateTable, dynamoApi } from '../../../shared/providers/dynamo-port';
import { DynamoStateStore, StateTableError } from '../../../shared/providers/dynamostate';
import { fakeClock } from '../../providers/fakes';
import { nodeClaimStoreContract } from '../../providers/nodeclaim-contract';
import { stateStoreContract } from '../../providers/state-contract';
import { motoAccount } from '../helpers';

async function tableStore(clock: ReturnType<typeof fakeClock>) {
  const account = motoAccount();
  const api = dynamoApi(account.dynamodb);
  const tableName = `karpless-state-${randomUUID().slice(0, 8)}`;
  await createStateTable(api, tableName);
  return { account, tableName, store: new DynamoStateStore(api, tableName, { clock, transactionSize: 10 }) };
}

stateStoreContract('DynamoStateStore on moto', async (clock) => (await tableStore(clock)).store);
nodeClaimStoreContract('DynamoStateStore on moto', async (clock) => (await tableStore(clock)).store);

describe('DynamoStateStore on moto: the table', () => {
  it('creates the table with TTL on expiresAt and writes the TTL in epoch seconds', async () => {
    const clock = fakeClock(Date.parse('2026-01-01T00:00:00.250Z'));
    const { account, tableName, store } = await tableStore(clock);
    const ttl = await account.dynamodb.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    expect(ttl.TimeToLiveDescription).toMatchObject({
      AttributeName: STATE_TABLE.ttlAttribute,
      TimeToLiveStatus: 'ENABLED',
    });
    await store.claimOnce('k', 1000);
    const item = await account.dynamodb.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'once#k' }, sk: { S: 'once' } } }),
    );
    expect(item.Item?.expiresAt).toEqual({ N: String(Math.ceil((clock() + 1000) / 1000)) });
    expect(item.Item?.expiresAtMs).toEqual({ N: String(clock() + 1000) });
  });

  it('names the table and the item when a call fails for another reason than a lost condition', async () => {
    const account = motoAccount();
    const store = new DynamoStateStore(dynamoApi(account.dynamodb), 'no-such-table');
    const error = await store.claimOnce('k', 1000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateTableError);
    expect(String(error)).toMatch(
      /state table no-such-table: claiming of item once#k\/once failed: ResourceNotFoundException/,
    );
  });
});
