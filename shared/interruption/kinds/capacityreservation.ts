// EC2 Capacity Reservation Instance Interruption Warning: an interruptible reservation is being
// reclaimed. AWS documents the detail-type under two names; both are accepted. As for the other EC2
// warnings, a record whose instance-id is missing or not an instance id matches no NodeClaim and is
// acknowledged, as Karpenter does, instead of being retried into the dead-letter queue.

import { ignoredMessage, lenientInstanceId, message } from '../event';
import type { InterruptionParser } from './parser';

export const capacityReservationInterruption: InterruptionParser = {
  kind: 'CapacityReservationInterruption',
  source: 'aws.ec2',
  detailTypes: [
    'EC2 Capacity Reservation Instance Interruption Warning',
    'EC2 Interruptible Capacity Reservation Instance Interruption Warning',
  ],
  parse(envelope) {
    const { ids, ignored } = lenientInstanceId(envelope.detail);
    if (ignored !== undefined) return ignoredMessage(envelope, 'CapacityReservationInterruption', ignored);
    return message(envelope, 'CapacityReservationInterruption', 'CordonAndDrain', ids);
  },
};
