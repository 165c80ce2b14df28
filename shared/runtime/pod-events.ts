// Events on pending pods, as Karpenter's provisioner records them: `Nominated` ("Pod should schedule
// on: nodeclaim/<name>") for each pod a live nomination holds. The watcher sees the pending pods and
// the nominations the provision function wrote to the state table; the recorder deduplicates.

import type { Pod } from '../apis/core/v1';
import type { EventRecorder } from '../kube/events';
import { errorMessage } from '../providers/aws-errors';
import type { StateStore } from '../providers/state';
import { podUid } from './objects';
import type { RuntimeLog } from './telemetry';

export interface PodEventsDeps {
  recorder: EventRecorder;
  state: Pick<StateStore, 'nominations'>;
  log: RuntimeLog;
}

export function nominatedMessage(nodeClaimName: string): string {
  return `Pod should schedule on: nodeclaim/${nodeClaimName}`;
}

export class PodEvents {
  constructor(private readonly deps: PodEventsDeps) {}

  /** Records Nominated on every pending pod a live nomination holds; returns how many were written. */
  async nominated(pods: readonly Pod[]): Promise<number> {
    if (pods.length === 0) return 0;
    const claimOf = new Map<string, string>();
    for (const nomination of await this.deps.state.nominations()) {
      for (const uid of nomination.podUids) claimOf.set(uid, nomination.nodeClaimName);
    }
    let written = 0;
    for (const pod of pods) {
      const claim = claimOf.get(podUid(pod));
      if (!claim) continue;
      try {
        const object = {
          kind: 'Pod',
          apiVersion: 'v1',
          name: pod.metadata.name,
          namespace: pod.metadata.namespace ?? 'default',
          ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}),
        };
        if (
          await this.deps.recorder.publish({
            object,
            type: 'Normal',
            reason: 'Nominated',
            message: nominatedMessage(claim),
          })
        )
          written++;
      } catch (error) {
        this.deps.log.warn('recording a pod event failed', { pod: pod.metadata.name, error: errorMessage(error) });
      }
    }
    return written;
  }
}
