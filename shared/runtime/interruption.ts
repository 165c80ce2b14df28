// The interruption decision for one SQS record (reference §6): parse; an unknown kind or an
// instance that is not ours is acknowledged untouched; ours and CordonAndDrain → the node handed to
// the termination path (claim marked for deletion, Node deleted; shared/runtime/termination.ts), its
// first step taken here so a spot warning evicts within seconds, the rest resumed by the watcher;
// a spot offering marked unavailable for 3 minutes. Nothing is
// launched ahead, as in Karpenter: the evicted pods are gone, their controllers make new ones, and
// kube-scheduler marks those Unschedulable for the watcher to notice like any other pending pod (a
// notice naming the evicted pods would plan capacity a second time, for pods that no longer exist).
// Redelivery is harmless: every step is idempotent and the event id is claimed once.

import type { Node, Pod } from '../apis/core/v1';
import { METRIC } from '../contracts';
import type { InterruptionMessage } from '../interruption/types';
import { type KubeClient, KubeTransportError } from '../kube/types';
import { errorCode, errorMessage, isThrottling } from '../providers/aws-errors';
import type { Sleep } from '../providers/clock';
import type { DrainRecord, StateLedgers, StateStore } from '../providers/state';
import { scopeKey, UNAVAILABLE_OFFERINGS_TTL_MS } from '../providers/unavailableofferings';
import type { DrainDeps } from './drain';
import { nodeClaimEvent, nodeEvent, recorderFor } from './events';
import { type ClaimInstance, type ClaimInstances, instanceIdFromProviderID } from './instances';
import { driveTermination, ensureTermination, type TerminationDeps } from './termination';

/** How long one interruption record drives its node's drain before the watcher takes over. */
export const HEAD_START_MS = 10_000;
/** Idempotency records of handled events outlive SQS's retention (4 days by default). */
export const EVENT_RECORD_TTL_MS = 5 * 24 * 60 * 60 * 1000;

export type RebalanceAction = 'record' | 'act';

export interface InterruptionDeps extends DrainDeps, TerminationDeps {
  cluster: string;
  kube: DrainDeps['kube'] & TerminationDeps['kube'] & Pick<KubeClient, 'listNodes'>;
  instances: Pick<ClaimInstances, 'byIds' | 'terminate'>;
  state: DrainDeps['state'] &
    Pick<StateStore, 'claimOnce' | 'markOfferingUnavailable' | 'releaseNomination'> &
    Pick<StateLedgers, 'markScopeUnavailable'>;
  /** Parses one SQS body; throws with the field at fault on a malformed one. */
  parse(body: string): InterruptionMessage;
  rebalanceAction: RebalanceAction;
  sleep: Sleep;
  /** Lambda's own end (epoch ms): a drain still running then resumes on redelivery. */
  invocationDeadline: number;
  pollMs?: number;
}

export type RecordOutcome =
  | { status: 'acknowledged'; reason: string }
  | { status: 'handled'; kind: string; instanceIds: string[]; evicted: number }
  | { status: 'failed'; reason: string; retryable: boolean };

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);

/** Throttling, 5xx answers from AWS or the API server, timeouts and dropped connections. */
export function isRetryable(error: unknown): boolean {
  if (isThrottling(error) || error instanceof KubeTransportError) return true;
  const e = error as { $metadata?: { httpStatusCode?: number }; code?: unknown; $retryable?: unknown };
  if (typeof e?.code === 'number' && RETRYABLE_STATUS.has(e.code)) return true;
  const status = e?.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return true;
  if (e?.$retryable) return true;
  const code = errorCode(error) ?? '';
  return ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'TimeoutError', 'AbortError', 'InternalError'].includes(code);
}

/** The Node event of each kind (Karpenter's interruption events), so `kubectl describe node` says why. */
type KindEvent = { reason: string; message: string; type?: 'Normal' };
const KIND_EVENTS: Partial<Record<InterruptionMessage['kind'], KindEvent>> = {
  SpotInterruption: { reason: 'SpotInterrupted', message: 'Spot interruption warning was triggered' },
  RebalanceRecommendation: {
    type: 'Normal',
    reason: 'SpotRebalanceRecommendation',
    message: 'Spot rebalance recommendation was triggered',
  },
  ScheduledChange: { reason: 'InstanceUnhealthy', message: 'An unhealthy warning was triggered for the instance' },
  CapacityReservationInterruption: {
    reason: 'CapacityReservationInterrupted',
    message: 'Capacity reservation interruption warning was triggered',
  },
};

function kindEvent(message: InterruptionMessage): KindEvent | undefined {
  if (message.kind !== 'InstanceStateChange') return KIND_EVENTS[message.kind];
  return message.state === 'stopping' || message.state === 'stopped'
    ? { reason: 'InstanceStopping', message: 'Instance is stopping' }
    : { reason: 'InstanceTerminating', message: 'Instance is terminating' };
}

function shouldAct(message: InterruptionMessage, rebalance: RebalanceAction): boolean {
  if (message.kind === 'Unknown') return false;
  if (message.kind === 'RebalanceRecommendation') return rebalance === 'act';
  return message.action === 'CordonAndDrain';
}

/**
 * The Nodes of the given instances. Each is first looked up by the instance's private DNS name (the
 * EKS node name), checked by providerID; only instances not found that way cost a list of all nodes.
 */
async function nodesOf(deps: InterruptionDeps, instances: readonly ClaimInstance[]): Promise<Map<string, Node>> {
  const nodes = new Map<string, Node>();
  for (const instance of instances) {
    if (!instance.privateDnsName) continue;
    const node = await deps.kube.getNode(instance.privateDnsName);
    if (node && instanceIdFromProviderID(node.spec?.providerID) === instance.instanceId) {
      nodes.set(instance.instanceId, node);
    }
  }
  const missing = new Set(instances.map((i) => i.instanceId).filter((id) => !nodes.has(id)));
  if (missing.size === 0) return nodes;
  for (const node of (await deps.kube.listNodes()).items) {
    const id = instanceIdFromProviderID(node.spec?.providerID);
    if (id && missing.has(id)) nodes.set(id, node);
  }
  return nodes;
}

async function act(deps: InterruptionDeps, message: InterruptionMessage, ours: ClaimInstance[]): Promise<Pod[]> {
  const nodes = await nodesOf(deps, ours);
  // Termination first (get-or-create): a redelivery after a crash anywhere below finds it begun.
  const records = new Map<string, DrainRecord>();
  for (const instance of ours) {
    const node = nodes.get(instance.instanceId);
    if (!node) continue;
    const start = {
      nodeName: node.metadata.name,
      instanceId: instance.instanceId,
      nodeClaimName: instance.nodeClaimName,
      reason: message.kind,
    };
    records.set(instance.instanceId, await ensureTermination(deps, start));
  }
  const first = await deps.state.claimOnce(`interruption/${message.eventId}`, EVENT_RECORD_TTL_MS);
  if (!first && records.size === 0) return [];
  if (first && message.kind === 'SpotInterruption') {
    for (const i of ours.filter((o) => o.capacityType === 'spot')) {
      await deps.state.markOfferingUnavailable(
        'spot',
        i.instanceType,
        i.zone,
        message.kind,
        UNAVAILABLE_OFFERINGS_TTL_MS,
      );
    }
  }
  if (first && message.kind === 'CapacityReservationInterruption') {
    // The reservation is being reclaimed: no new launch goes into it while it is (Karpenter marks it too).
    for (const id of new Set(ours.flatMap((i) => (i.reservation ? [i.reservation.id] : [])))) {
      const scope = scopeKey({ kind: 'reservation', reservationId: id });
      await deps.state.markScopeUnavailable(scope, message.kind, UNAVAILABLE_OFFERINGS_TTL_MS);
    }
  }
  const events = recorderFor(deps.kube, deps.clock, deps.log);
  const evicted: Pod[] = [];
  for (const instance of ours) {
    const record = records.get(instance.instanceId);
    const fields = { nodeclaim: instance.nodeClaimName, instanceId: instance.instanceId, kind: message.kind };
    if (!record) {
      // Not registered (or already gone): nothing to drain; its pods go back to being planned.
      await deps.instances.terminate([instance.instanceId]);
      await deps.state.releaseNomination(instance.nodeClaimName);
      deps.log.info('interrupted instance has no node: terminated', fields);
      continue;
    }
    const said = kindEvent(message);
    if (first && said) {
      // On the Node, and on the NodeClaim object where Karpenter's CRDs are installed, as upstream.
      const kindEvent = { type: said.type ?? 'Warning', reason: said.reason, message: said.message } as const;
      const terminating = {
        type: 'Warning',
        reason: 'TerminatingOnInterruption',
        message: 'Interruption triggered termination for the Node',
      } as const;
      for (const event of [kindEvent, terminating]) {
        await events.publish(nodeEvent(record.nodeName, event.type, event.reason, event.message));
        const claim = await nodeClaimEvent(deps.nodeClaimObjects, deps.log, instance.nodeClaimName, {
          ...event,
          ...(event === terminating ? { message: 'Interruption triggered termination for the NodeClaim' } : {}),
        });
        if (claim) await events.publish(claim);
      }
    }
    await deps.kube.deleteNode(record.nodeName);
    // A head start: the taint and the first evictions now; the watcher resumes every node being deleted.
    const run = await driveTermination(deps, record, {
      until: Math.min(deps.invocationDeadline, deps.clock() + HEAD_START_MS),
      pollMs: deps.pollMs ?? 1_000,
    });
    evicted.push(...run.evicted);
    deps.log.info(run.finished ? 'interrupted node terminated' : 'interrupted node draining, the watcher resumes it', {
      ...fields,
      node: record.nodeName,
      evicted: run.evicted.length,
      phase: run.record.phase,
    });
  }
  return evicted;
}

/** Handles one record; never throws (the outcome says whether SQS should deliver it again). */
export async function handleInterruption(deps: InterruptionDeps, body: string): Promise<RecordOutcome> {
  let message: InterruptionMessage;
  try {
    message = deps.parse(body);
  } catch (error) {
    // A poison message: report it failed so it ends in the DLQ after maxReceiveCount.
    return { status: 'failed', reason: `unparseable message: ${errorMessage(error)}`, retryable: false };
  }
  deps.metrics.record(METRIC.interruptions, 'Count', 1, { kind: message.kind });
  if (message.ignored !== undefined) {
    // Karpenter acknowledges these: the id matches no NodeClaim, and retrying cannot change that.
    deps.log.warn('interruption record acknowledged without action', {
      kind: message.kind,
      eventId: message.eventId,
      why: message.ignored,
    });
    return { status: 'acknowledged', reason: `${message.kind}: ${message.ignored}` };
  }
  if (!shouldAct(message, deps.rebalanceAction)) {
    return { status: 'acknowledged', reason: `${message.kind}: recorded, no action` };
  }
  try {
    const ours = [...(await deps.instances.byIds(message.instanceIds)).values()];
    if (ours.length === 0) return { status: 'acknowledged', reason: `${message.kind}: not an instance of ours` };
    const evicted = await act(deps, message, ours);
    return {
      status: 'handled',
      kind: message.kind,
      instanceIds: ours.map((i) => i.instanceId),
      evicted: evicted.length,
    };
  } catch (error) {
    return { status: 'failed', reason: errorMessage(error), retryable: isRetryable(error) };
  }
}
