import { CreateEventBusCommand, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { DETAIL_TYPE, EVENT_SOURCE } from '../../../shared/contracts';
import { EventBridgePublisher, eventBridgeApi } from '../../../shared/providers/eventbus';
import { type MotoAccount, motoAccount } from '../helpers';
import { providerClients } from './roles';

async function busWithQueue(account: MotoAccount, detailType: string) {
  const busName = 'karpless-notices';
  await account.eventbridge.send(new CreateEventBusCommand({ Name: busName }));
  const queue = await account.sqs.send(new CreateQueueCommand({ QueueName: 'notices' }));
  const queueUrl = queue.QueueUrl ?? '';
  const attributes = await account.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  await account.eventbridge.send(
    new PutRuleCommand({
      Name: 'notices-to-queue',
      EventBusName: busName,
      EventPattern: JSON.stringify({ source: [EVENT_SOURCE], 'detail-type': [detailType] }),
    }),
  );
  await account.eventbridge.send(
    new PutTargetsCommand({
      Rule: 'notices-to-queue',
      EventBusName: busName,
      Targets: [{ Id: 'queue', Arn: attributes.Attributes?.QueueArn ?? '' }],
    }),
  );
  return { busName, queueUrl };
}

async function drain(account: MotoAccount, queueUrl: string): Promise<Message[]> {
  const messages: Message[] = [];
  for (;;) {
    const page = await account.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!page.Messages?.length) return messages;
    messages.push(...page.Messages);
  }
}

describe('EventBridgePublisher on moto', () => {
  it('delivers every published event, and only the matching ones, to a rule on the custom bus', async () => {
    const account = motoAccount();
    const { busName, queueUrl } = await busWithQueue(account, DETAIL_TYPE.podsUnschedulable);
    // The watcher puts the notices, the provision function what it launched: each with its own role.
    const publisher = async (fn: 'watcher' | 'provision') =>
      new EventBridgePublisher(eventBridgeApi((await providerClients(account, fn, { busName })).eventbridge), {
        busName,
      });
    await (await publisher('watcher')).publish(
      Array.from({ length: 12 }, (_, i) => ({
        detailType: DETAIL_TYPE.podsUnschedulable,
        detail: { cluster: 'demo', part: i },
      })),
    );
    await (await publisher('provision')).publish([
      { detailType: DETAIL_TYPE.nodeClaimsLaunched, detail: { cluster: 'demo' } },
    ]);
    const events = (await drain(account, queueUrl)).map(
      (m) => JSON.parse(m.Body ?? '{}') as { source: string; 'detail-type': string; detail: { part: number } },
    );
    expect(events.map((e) => e.detail.part).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(new Set(events.map((e) => `${e.source}/${e['detail-type']}`))).toEqual(
      new Set([`${EVENT_SOURCE}/${DETAIL_TYPE.podsUnschedulable}`]),
    );
  });
});
