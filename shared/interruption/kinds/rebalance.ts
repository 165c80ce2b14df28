// EC2 Instance Rebalance Recommendation: elevated interruption risk. Upstream only records it; the
// operator may choose to drain early instead.

import { message, requireInstanceId } from '../event';
import type { InterruptionParser } from './parser';

export const rebalanceRecommendation: InterruptionParser = {
  kind: 'RebalanceRecommendation',
  source: 'aws.ec2',
  detailTypes: ['EC2 Instance Rebalance Recommendation'],
  parse(envelope, options) {
    const action = options.rebalance === 'act' ? 'CordonAndDrain' : 'NoAction';
    return message(envelope, 'RebalanceRecommendation', action, [requireInstanceId(envelope.detail)]);
  },
};
