import { randomUUID } from 'node:crypto';
import { DescribeTimeToLiveCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { STATE_TABLE } from '../../../shared/contracts';
import { createStateTable, type DynamoApi, dynamoApi } from '../../../shared/providers/dynamo-port';
import { DynamoStateStore, StateTableError } from '../../../shared/providers/dynamostate';
import { fakeClock } from '../../providers/fakes';
import { nodeClaimStoreContract } from '../../providers/nodeclaim-contract';
import { stateStoreContract } from '../../providers/state-contract';
import { type MotoAccount, motoAccount } from '../helpers';
import { FUNCTIONS, type FunctionClients, type FunctionName } from '../iam';
import { providerClients } from './roles';

// Every function reads and writes the state table with the same grant (infra/provisioner.ts): the
// stores of successive tests cycle through the functions' roles, so the contract runs under each.
// One account for the file and a table per test: the roles name the file's tables by their prefix.
const TABLE_PREFIX = `karpless-state-${randomUUID().slice(0, 8)}-`;
let account: MotoAccount | undefined;
const roles = new Map<FunctionName, Promise<FunctionClients>>();
let stores = 0;

async function functionDynamo(): Promise<{ account: MotoAccount; api: DynamoApi }> {
  account ??= motoAccount();
  const fn = FUNCTIONS[stores++ % FUNCTIONS.length] ?? 'provision';
  let clients = roles.get(fn);
  if (!clients) {
    clients = providerClients(account, fn, { tableName: `${TABLE_PREFIX}*` });
    roles.set(fn, clients);
  }
  return { account, api: dynamoApi((await clients).dynamodb) };
}

async function tableStore(clock: ReturnType<typeof fakeClock>) {
  const { account, api } = await functionDynamo();
  const tableName = `${TABLE_PREFIX}${randomUUID().slice(0, 8)}`;
  // The stack creates the table, not the functions.
  await createStateTable(dynamoApi(account.dynamodb), tableName);
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
    const { api } = await functionDynamo();
    const tableName = `${TABLE_PREFIX}gone`;
    const store = new DynamoStateStore(api, tableName);
    const error = await store.claimOnce('k', 1000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateTableError);
    expect(String(error)).toMatch(
      new RegExp(`state table ${tableName}: claiming of item once#k/once failed: ResourceNotFoundException`),
    );
  });
});
