import type { TransactWriteItemsCommandInput } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { DynamoApi } from '../../shared/providers/dynamo-port';
import { DynamoStateStore, lostConditionalWrite, StateTableError } from '../../shared/providers/dynamostate';
import { awsError, fakeClock, recordingFake } from './fakes';

function cancelled(...codes: string[]): Error {
  return Object.assign(awsError('TransactionCanceledException', `Transaction cancelled [${codes.join(', ')}]`), {
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
}

describe('lostConditionalWrite', () => {
  it('counts failed conditions and conflicting transactions as lost races, nothing else', () => {
    expect(lostConditionalWrite(awsError('ConditionalCheckFailedException'))).toBe(true);
    expect(lostConditionalWrite(cancelled('None', 'ConditionalCheckFailed'))).toBe(true);
    expect(lostConditionalWrite(cancelled('TransactionConflict', 'None'))).toBe(true);
    expect(lostConditionalWrite(awsError('TransactionCanceledException'))).toBe(true);
    expect(lostConditionalWrite(cancelled('None', 'ThrottlingError'))).toBe(false);
    expect(lostConditionalWrite(cancelled('ConditionalCheckFailed', 'ValidationError'))).toBe(false);
    expect(lostConditionalWrite(awsError('ProvisionedThroughputExceededException'))).toBe(false);
  });
});

describe('DynamoStateStore', () => {
  it('splits a nomination into transactions of 100 actions, pod locks in uid order and the record last', async () => {
    const dynamo = recordingFake<DynamoApi>({ transactWriteItems: () => ({}) });
    const store = new DynamoStateStore(dynamo, 'state', { clock: fakeClock() });
    const pods = Array.from({ length: 150 }, (_, i) => `pod-${String(149 - i).padStart(3, '0')}`);
    expect(await store.nominate({ nodeClaimName: 'c', nodePool: 'p', podUids: pods, expiresAt: 1 })).toBe(true);
    const calls = dynamo.callsTo('transactWriteItems') as TransactWriteItemsCommandInput[];
    expect(calls.map((c) => c.TransactItems?.length)).toEqual([100, 51]);
    const keys = calls.flatMap((c) => c.TransactItems ?? []).map((a) => a.Put?.Item?.pk?.S);
    expect(keys[0]).toBe('pod#pod-000');
    expect(keys[149]).toBe('pod#pod-149');
    expect(keys[150]).toBe('nomination');
  });

  it('throws naming the table and claim when a transaction fails for another reason, after undoing its locks', async () => {
    let call = 0;
    const dynamo = recordingFake<DynamoApi>({
      transactWriteItems: () => {
        call++;
        if (call === 2) throw cancelled('ThrottlingError');
        return {};
      },
      deleteItem: () => ({}),
    });
    const store = new DynamoStateStore(dynamo, 'karpless-state', { clock: fakeClock(), transactionSize: 2 });
    const error = await store
      .nominate({ nodeClaimName: 'default-x', nodePool: 'p', podUids: ['a', 'b', 'c'], expiresAt: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateTableError);
    expect(String(error)).toContain('state table karpless-state: nominating of item nomination/default-x failed');
    expect(dynamo.callsTo('deleteItem').map((d) => (d as { Key: { pk: { S: string } } }).Key.pk.S)).toEqual([
      'pod#a',
      'pod#b',
    ]);
  });
});
