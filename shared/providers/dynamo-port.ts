// The DynamoDB calls the state store makes, one method per call (as ports.ts does for EC2), so unit
// tests hand it a recording fake; dynamoApi() adapts a real DynamoDBClient. createStateTable() builds
// the table from STATE_TABLE_DEFINITION for tests and the demo; the CDK stack builds it from the same data.

import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type CreateTableCommandOutput,
  DeleteItemCommand,
  type DeleteItemCommandInput,
  type DeleteItemCommandOutput,
  DescribeTableCommand,
  type DescribeTableCommandInput,
  type DescribeTableCommandOutput,
  GetItemCommand,
  type GetItemCommandInput,
  type GetItemCommandOutput,
  PutItemCommand,
  type PutItemCommandInput,
  type PutItemCommandOutput,
  QueryCommand,
  type QueryCommandInput,
  type QueryCommandOutput,
  TransactWriteItemsCommand,
  type TransactWriteItemsCommandInput,
  type TransactWriteItemsCommandOutput,
  UpdateItemCommand,
  type UpdateItemCommandInput,
  type UpdateItemCommandOutput,
  UpdateTimeToLiveCommand,
  type UpdateTimeToLiveCommandInput,
  type UpdateTimeToLiveCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { STATE_TABLE_DEFINITION } from '../contracts/state-table';
import { realSleep, type Sleep } from './clock';

export interface DynamoApi {
  getItem(input: GetItemCommandInput): Promise<GetItemCommandOutput>;
  putItem(input: PutItemCommandInput): Promise<PutItemCommandOutput>;
  deleteItem(input: DeleteItemCommandInput): Promise<DeleteItemCommandOutput>;
  updateItem(input: UpdateItemCommandInput): Promise<UpdateItemCommandOutput>;
  query(input: QueryCommandInput): Promise<QueryCommandOutput>;
  transactWriteItems(input: TransactWriteItemsCommandInput): Promise<TransactWriteItemsCommandOutput>;
}

/** Table administration: only tests and the demo create tables (the CDK stack does in AWS). */
export interface DynamoAdminApi {
  createTable(input: CreateTableCommandInput): Promise<CreateTableCommandOutput>;
  describeTable(input: DescribeTableCommandInput): Promise<DescribeTableCommandOutput>;
  updateTimeToLive(input: UpdateTimeToLiveCommandInput): Promise<UpdateTimeToLiveCommandOutput>;
}

interface Sender {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send is generic over every command of the client.
  send(command: any): Promise<any>;
}

export function dynamoApi(client: Sender): DynamoApi & DynamoAdminApi {
  return {
    getItem: (i) => client.send(new GetItemCommand(i)),
    putItem: (i) => client.send(new PutItemCommand(i)),
    deleteItem: (i) => client.send(new DeleteItemCommand(i)),
    updateItem: (i) => client.send(new UpdateItemCommand(i)),
    query: (i) => client.send(new QueryCommand(i)),
    transactWriteItems: (i) => client.send(new TransactWriteItemsCommand(i)),
    createTable: (i) => client.send(new CreateTableCommand(i)),
    describeTable: (i) => client.send(new DescribeTableCommand(i)),
    updateTimeToLive: (i) => client.send(new UpdateTimeToLiveCommand(i)),
  };
}

/** CreateTable input for the state table named `tableName`. */
export function stateTableInput(tableName: string): CreateTableCommandInput {
  const { partitionKey, sortKey, billingMode } = STATE_TABLE_DEFINITION;
  return {
    TableName: tableName,
    KeySchema: [
      { AttributeName: partitionKey.name, KeyType: 'HASH' },
      { AttributeName: sortKey.name, KeyType: 'RANGE' },
    ],
    AttributeDefinitions: [
      { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
      { AttributeName: sortKey.name, AttributeType: sortKey.type },
    ],
    BillingMode: billingMode,
  };
}

/** Creates the state table, waits until it is ACTIVE, and turns its TTL on. */
export async function createStateTable(
  dynamo: DynamoAdminApi,
  tableName: string,
  options: { sleep?: Sleep; timeoutMs?: number } = {},
): Promise<void> {
  const sleep = options.sleep ?? realSleep;
  await dynamo.createTable(stateTableInput(tableName));
  const pollMs = 500;
  const attempts = Math.max(1, Math.ceil((options.timeoutMs ?? 120_000) / pollMs));
  for (let i = 0; ; i++) {
    const described = await dynamo.describeTable({ TableName: tableName });
    const status = described.Table?.TableStatus;
    if (status === 'ACTIVE') break;
    if (i + 1 >= attempts) {
      throw new Error(`state table ${tableName} is still ${status ?? 'unknown'} after creation; try again later`);
    }
    await sleep(pollMs);
  }
  await dynamo.updateTimeToLive({
    TableName: tableName,
    TimeToLiveSpecification: { AttributeName: STATE_TABLE_DEFINITION.ttlAttribute, Enabled: true },
  });
}
