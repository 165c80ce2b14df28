// Events on Nodes and Pods, as Karpenter's recorder publishes them: best effort (a failed event never
// fails the work it describes) and deduplicated, so a drain stepping every few seconds says
// "AwaitingVolumeDetachment" once per two minutes instead of thirty times.

import type { KarpenterObjectsApi } from '../kube/karpenter';
import type { KubeClient, KubeEvent } from '../kube/types';
import { errorMessage } from '../providers/aws-errors';
import type { Clock } from '../providers/clock';
import type { RuntimeLog } from './telemetry';

/** Karpenter's recorder drops a repeat of the same event within this window. */
export const EVENT_DEDUPE_MS = 2 * 60 * 1000;

export class EventRecorder {
  private readonly sent = new Map<string, number>();

  constructor(
    private readonly kube: Pick<KubeClient, 'createEvent'>,
    private readonly clock: Clock,
    private readonly log: RuntimeLog,
  ) {}

  async publish(event: KubeEvent): Promise<void> {
    const { kind, namespace = '', name } = event.involvedObject;
    const key = `${kind}/${namespace}/${name}/${event.reason}/${event.message}`;
    const now = this.clock();
    const last = this.sent.get(key);
    if (last !== undefined && now - last < EVENT_DEDUPE_MS) return;
    this.sent.set(key, now);
    if (this.sent.size > 10_000) this.sent.clear();
    try {
      await this.kube.createEvent(event);
    } catch (error) {
      this.log.warn('recording an event failed', {
        object: `${kind}/${name}`,
        reason: event.reason,
        error: errorMessage(error),
      });
    }
  }
}

const recorders = new WeakMap<object, EventRecorder>();

/** One recorder per client, so deduplication spans every step one invocation takes. */
export function recorderFor(kube: Pick<KubeClient, 'createEvent'>, clock: Clock, log: RuntimeLog): EventRecorder {
  let recorder = recorders.get(kube);
  if (!recorder) {
    recorder = new EventRecorder(kube, clock, log);
    recorders.set(kube, recorder);
  }
  return recorder;
}

export function nodeEvent(nodeName: string, type: KubeEvent['type'], reason: string, message: string): KubeEvent {
  return { involvedObject: { kind: 'Node', name: nodeName }, type, reason, message };
}

/** Reads NodeClaim objects, where Karpenter's CRDs are installed (shared/kube/karpenter.ts). */
export type NodeClaimObjects = Pick<KarpenterObjectsApi, 'get'>;

/**
 * The event about the claim's NodeClaim object, as Karpenter publishes beside the Node's; undefined
 * without the object (no CRDs, or not mirrored yet). Its uid makes `kubectl describe nodeclaim` show it.
 */
export async function nodeClaimEvent(
  objects: NodeClaimObjects | undefined,
  log: RuntimeLog,
  name: string,
  event: Omit<KubeEvent, 'involvedObject'>,
): Promise<KubeEvent | undefined> {
  if (!objects) return undefined;
  try {
    const object = await objects.get('nodeclaims', name);
    if (!object) return undefined;
    const uid = object.metadata.uid;
    return {
      involvedObject: { kind: 'NodeClaim', apiVersion: 'karpenter.sh/v1', name, ...(uid ? { uid } : {}) },
      ...event,
    };
  } catch (error) {
    // Events are best effort: a failed read never fails the work the event describes.
    log.warn('reading the NodeClaim object for an event failed', { nodeclaim: name, error: errorMessage(error) });
    return undefined;
  }
}
