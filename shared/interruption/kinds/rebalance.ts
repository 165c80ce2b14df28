// EC2 Instance Rebalance Recommendation: elevated interruption risk. Upstream only records it; the
// operator may choose to drain early instead.

import { ignoredMessage, lenientInstanceId, message } from '../event';
import type { InterruptionParser } from './parser';

export const rebalanceRecommendation: InterruptionParser = {
  kind: 'RebalanceRecommendation',
  source: 'aws.ec2',
  detailTypes: ['EC2 Instance Rebalance Recommendation'],
  parse(envelope, options) {
    const action = options.rebalance === 'act' ? 'CordonAndDrain' : 'NoAction';
    const { ids, ignored } = lenientInstanceId(envelope.detail);
    if (ignored !== undefined) return ignoredMessage(envelope, 'RebalanceRecommendation', ignored);
    return message(envelope, 'RebalanceRecommendation', action, ids);
  },
};
