// EC2 Capacity Reservation Instance Interruption Warning: an interruptible reservation is being
// reclaimed. AWS documents the detail-type under two names; both are accepted.

import { message, requireInstanceId } from '../event';
import type { InterruptionParser } from './parser';

export const capacityReservationInterruption: InterruptionParser = {
  kind: 'CapacityReservationInterruption',
  source: 'aws.ec2',
  detailTypes: [
    'EC2 Capacity Reservation Instance Interruption Warning',
    'EC2 Interruptible Capacity Reservation Instance Interruption Warning',
  ],
  parse(envelope) {
    return message(envelope, 'CapacityReservationInterruption', 'CordonAndDrain', [requireInstanceId(envelope.detail)]);
  },
};
