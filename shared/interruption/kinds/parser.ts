// What one interruption kind's parser declares: the events it claims and how it reads them.

import type { EventEnvelope } from '../event';
import type { InterruptionKind, InterruptionMessage } from '../types';

export interface ParseOptions {
  /** What a rebalance recommendation does: 'record' (upstream's default) or 'act' (cordon and drain). */
  rebalance?: 'record' | 'act';
}

export interface InterruptionParser {
  kind: Exclude<InterruptionKind, 'Unknown'>;
  source: string;
  /** Every detail-type this kind arrives under (AWS renders some in more than one name). */
  detailTypes: readonly string[];
  /** Throws FieldError naming the field when the event is malformed. */
  parse(envelope: EventEnvelope, options: ParseOptions): InterruptionMessage;
}
