// EC2 Spot Instance Interruption Warning: two minutes before EC2 reclaims the instance. The
// `resources` ARN carries a zone where the region belongs, so the id comes from the detail only.

import { ignoredMessage, lenientInstanceId, message } from '../event';
import type { InterruptionParser } from './parser';

export const spotInterruption: InterruptionParser = {
  kind: 'SpotInterruption',
  source: 'aws.ec2',
  detailTypes: ['EC2 Spot Instance Interruption Warning'],
  parse(envelope) {
    const { ids, ignored } = lenientInstanceId(envelope.detail);
    if (ignored !== undefined) return ignoredMessage(envelope, 'SpotInterruption', ignored);
    return message(envelope, 'SpotInterruption', 'CordonAndDrain', ids);
  },
};
