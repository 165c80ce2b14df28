// The claim's disruption conditions (CORE pkg/controllers/nodeclaim/disruption drift.go and
// consolidation.go): Drifted and Consolidatable on the NodeClaim record, set True when they hold and
// removed (never set False) when they do not, as upstream. The drift function refreshes them on every
// run; the NodeClaim objects mirror them, and Drifted's transition time is the "drifted since" that
// orders drift candidates. Pure.

import {
  CONDITION,
  clearCondition,
  condition,
  isConditionTrue,
  type NodeClaimRecord,
  setCondition,
} from '../nodeclaim/record';
import { lastPodEventTime } from './consolidation';
import { consolidateAfterMs } from './emptiness';
import { type CandidateInput, type ClusterNode, driftOf } from './plan';

/** Upstream's reason names where they differ from the detail's (nodeclaim/disruption/drift.go). */
const UPSTREAM_REASON: Record<string, string> = {
  NodePoolDrift: 'NodePoolDrifted',
  RequirementsDrift: 'RequirementsDrifted',
};

/** Drifted: True with the drift's reason on a launched claim that drifted; removed otherwise. */
function withDrifted(input: CandidateInput, entry: ClusterNode, record: NodeClaimRecord): NodeClaimRecord {
  const drift = isConditionTrue(record, CONDITION.launched) ? driftOf(input, entry) : undefined;
  if (!drift) return clearCondition(record, CONDITION.drifted);
  const reason = UPSTREAM_REASON[drift.reason] ?? drift.reason;
  return setCondition(record, CONDITION.drifted, { status: 'True', reason, message: drift.detail, now: input.now });
}

/**
 * Consolidatable: True once an initialized claim saw no pod event (else its initialization) for its
 * NodePool's consolidateAfter; removed while consolidation is off, before initialization, or inside
 * the window.
 */
function withConsolidatable(input: CandidateInput, entry: ClusterNode, record: NodeClaimRecord): NodeClaimRecord {
  const pool = input.nodePools.find((p) => p.metadata.name === entry.instance.nodePool);
  const after = pool ? consolidateAfterMs(pool) : undefined;
  const initialized = condition(record, CONDITION.initialized);
  if (after === undefined || initialized?.status !== 'True') return clearCondition(record, CONDITION.consolidatable);
  if (input.now < lastPodEventTime({ ...entry, record }) + after) {
    return clearCondition(record, CONDITION.consolidatable);
  }
  return setCondition(record, CONDITION.consolidatable, { status: 'True', reason: 'Consolidatable', now: input.now });
}

/** The node's claim record with Drifted and Consolidatable brought up to date; the same object when nothing changed. */
export function withDisruptionConditions(input: CandidateInput, entry: ClusterNode): NodeClaimRecord | undefined {
  const record = entry.record;
  if (!record) return undefined;
  return withConsolidatable(input, entry, withDrifted(input, entry, record));
}
