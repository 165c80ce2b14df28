// EC2 Instance State-change Notification: a node whose instance stops or terminates under us
// (someone else's action) is drained; pending and running need nothing.

import { ignoredMessage, lenientInstanceId, message, requireString } from '../event';
import type { InterruptionParser } from './parser';

/** Upstream's instance_stopped and instance_terminated states. */
export const ACTIONABLE_STATES: ReadonlySet<string> = new Set(['stopping', 'stopped', 'shutting-down', 'terminated']);

export const instanceStateChange: InterruptionParser = {
  kind: 'InstanceStateChange',
  source: 'aws.ec2',
  detailTypes: ['EC2 Instance State-change Notification'],
  parse(envelope) {
    const { ids, ignored } = lenientInstanceId(envelope.detail);
    const state = requireString(envelope.detail, 'state', 'detail.state');
    if (ignored !== undefined) return ignoredMessage(envelope, 'InstanceStateChange', ignored, state);
    // Upstream compares the state lower-cased.
    const action = ACTIONABLE_STATES.has(state.toLowerCase()) ? 'CordonAndDrain' : 'NoAction';
    return message(envelope, 'InstanceStateChange', action, ids, state);
  },
};
