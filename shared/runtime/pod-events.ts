// Events on pending pods, as Karpenter's provisioner records them: `Nominated` ("Pod should schedule
// on: nodeclaim/<name>") for each pod a live nomination holds, and `FailedScheduling` with the
// reasons the last decision gave for a pod it could place nowhere (the text `karpless plan` prints).
// The watcher sees the pending pods; the provision function wrote the nominations and the
// unschedulable records to the state table. The recorder deduplicates and rate-limits.

import type { Pod } from '../apis/core/v1';
import type { EventRecorder } from '../kube/events';
import { errorMessage } from '../providers/aws-errors';
import type { StateStore, UnschedulableState } from '../providers/state';
import { podUid } from './objects';
import type { RuntimeLog } from './telemetry';
import { FAILED_SCHEDULING, failedSchedulingMessage } from './unschedulable';

export interface PodEventsDeps {
  recorder: EventRecorder;
  state: Pick<StateStore, 'nominations'> & Partial<Pick<UnschedulableState, 'unschedulable'>>;
  log: RuntimeLog;
}

export function nominatedMessage(nodeClaimName: string): string {
  return `Pod should schedule on: nodeclaim/${nodeClaimName}`;
}

interface PodEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export class PodEvents {
  constructor(private readonly deps: PodEventsDeps) {}

  /**
   * Records both events on the pending pods from one read of the nominations: Nominated where a live
   * nomination holds the pod, FailedScheduling where the latest decision placed it nowhere and no
   * nomination holds it now. Returns how many events were written.
   */
  async record(pods: readonly Pod[]): Promise<number> {
    if (pods.length === 0) return 0;
    const claimOf = await this.nominatedClaims();
    return (await this.nominatedWith(pods, claimOf)) + (await this.failedSchedulingWith(pods, claimOf));
  }

  /** Records Nominated on every pending pod a live nomination holds; returns how many were written. */
  async nominated(pods: readonly Pod[]): Promise<number> {
    if (pods.length === 0) return 0;
    return this.nominatedWith(pods, await this.nominatedClaims());
  }

  /**
   * Records FailedScheduling on every pending pod the latest decision about it placed nowhere, unless
   * a live nomination holds it now; returns how many were written.
   */
  async failedScheduling(pods: readonly Pod[]): Promise<number> {
    if (pods.length === 0 || !this.deps.state.unschedulable) return 0;
    return this.failedSchedulingWith(pods, await this.nominatedClaims());
  }

  /** Pod uid → the claim a live nomination holds it on. */
  private async nominatedClaims(): Promise<Map<string, string>> {
    const claimOf = new Map<string, string>();
    for (const nomination of await this.deps.state.nominations()) {
      for (const uid of nomination.podUids) claimOf.set(uid, nomination.nodeClaimName);
    }
    return claimOf;
  }

  private nominatedWith(pods: readonly Pod[], claimOf: ReadonlyMap<string, string>): Promise<number> {
    return this.publish(pods, (uid) => {
      const claim = claimOf.get(uid);
      return claim ? { type: 'Normal', reason: 'Nominated', message: nominatedMessage(claim) } : undefined;
    });
  }

  private async failedSchedulingWith(pods: readonly Pod[], claimOf: ReadonlyMap<string, string>): Promise<number> {
    const read = this.deps.state.unschedulable;
    if (!read) return 0;
    const latest = new Map<string, { reasons: string[]; expiresAt: number }>();
    for (const record of await read.call(this.deps.state)) {
      for (const uid of record.podUids) {
        const known = latest.get(uid);
        if (!known || known.expiresAt < record.expiresAt) latest.set(uid, record);
      }
    }
    return this.publish(pods, (uid) => {
      const record = latest.get(uid);
      if (!record || claimOf.has(uid)) return undefined;
      return { type: 'Warning', reason: FAILED_SCHEDULING, message: failedSchedulingMessage(record.reasons) };
    });
  }

  private async publish(pods: readonly Pod[], eventOf: (uid: string) => PodEvent | undefined): Promise<number> {
    let written = 0;
    for (const pod of pods) {
      const event = eventOf(podUid(pod));
      if (!event) continue;
      try {
        const object = {
          kind: 'Pod',
          apiVersion: 'v1',
          name: pod.metadata.name,
          namespace: pod.metadata.namespace ?? 'default',
          ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}),
        };
        if (await this.deps.recorder.publish({ object, ...event })) written++;
      } catch (error) {
        this.deps.log.warn('recording a pod event failed', { pod: pod.metadata.name, error: errorMessage(error) });
      }
    }
    return written;
  }
}
