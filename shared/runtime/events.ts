// Events on Nodes and Pods, as Karpenter's recorder publishes them: best effort (a failed event never
// fails the work it describes) and deduplicated, so a drain stepping every few seconds says
// "AwaitingVolumeDetachment" once per two minutes instead of thirty times.

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
