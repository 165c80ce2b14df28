// Interruption messages after parsing: one kind per EventBridge event karpless reacts to (reference
// §6). The registry in shared/interruption/ maps source + detail-type to a parser; an event it does
// not know becomes { kind: 'Unknown' } and is acknowledged without action.

export type InterruptionKind =
  | 'SpotInterruption'
  | 'RebalanceRecommendation'
  | 'InstanceStateChange'
  | 'ScheduledChange'
  | 'CapacityReservationInterruption'
  | 'Unknown';

export interface InterruptionMessage {
  kind: InterruptionKind;
  /** EventBridge event id (idempotency key of the action). */
  eventId: string;
  instanceIds: string[];
  /** Event time, epoch ms. */
  time: number;
  /** InstanceStateChange: the new state (stopping, stopped, shutting-down, terminated …). */
  state?: string;
  /** What the kind calls for (Karpenter's actions): drain and delete, or record only. */
  action: 'CordonAndDrain' | 'NoAction';
  /** EventBridge source and detail-type as received (for logs; also set on Unknown when present). */
  source?: string;
  detailType?: string;
  /** Why a record of a known kind is acknowledged without action (its instance-id matches nothing). */
  ignored?: string;
}
