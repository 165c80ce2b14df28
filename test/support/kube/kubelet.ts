// What the kubelet and the API server's graceful deletion do to a pod, for the fake API server: a
// deleted or evicted pod that is bound to a node and declares spec.terminationGracePeriodSeconds
// stays, with deletionTimestamp = now + grace (as the API server writes it), until the server's clock
// passes that time, or until a test lets it go; a test can also hold it Terminating for ever (a pod
// whose preStop hook never returns). Pod finalizers keep a pod past that, until they are removed.
// Pods that declare no grace period go at once, as containers that exit on SIGTERM do: tests written
// before the fake had a kubelet keep their meaning.

import type { Store, StoredObject } from './store';

interface PodSpecFields {
  nodeName?: string;
  terminationGracePeriodSeconds?: number;
}

function keyOfPod(pod: StoredObject): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

const cmpKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function specOf(pod: StoredObject): PodSpecFields {
  return (pod.spec ?? {}) as PodSpecFields;
}

export class FakeKubelet {
  /** namespace/name of pods the kubelet never finishes until released. */
  private readonly held = new Set<string>();
  /** The store's revision at the last reap and when the next grace period runs out. */
  private scanned: { revision: number; nextDue: number } | undefined;

  constructor(
    private readonly store: Store,
    private readonly now: () => Date,
  ) {}

  /**
   * Graceful deletion: the pod gets its deletionTimestamp (`gracePeriodSeconds` overrides the pod's
   * own and may only shorten a deletion already under way) or goes now. Returns the pod as left.
   */
  delete(key: string, gracePeriodSeconds?: number): StoredObject | undefined {
    const pod = this.store.get('pods', key);
    if (!pod) return undefined;
    const spec = specOf(pod);
    const declared = spec.terminationGracePeriodSeconds;
    const grace = Math.max(0, gracePeriodSeconds ?? declared ?? 0);
    const bound = Boolean(spec.nodeName);
    const at = this.now().getTime() + grace * 1000;
    if (!bound || grace === 0) return this.finish(pod, key);
    const current = pod.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : undefined;
    if (current !== undefined && current <= at) return pod;
    pod.metadata.deletionTimestamp = new Date(at).toISOString();
    pod.metadata.deletionGracePeriodSeconds = grace;
    return this.store.put('pods', pod);
  }

  /**
   * Finishes every terminating pod whose time has come and that no test holds. Called on every request,
   * so it scans again only when a pod changed or the next grace period ran out since its last scan.
   */
  reap(): void {
    const now = this.now().getTime();
    const last = this.scanned;
    if (last && last.revision === this.store.resourceVersion && now < last.nextDue) return;
    let nextDue = Number.POSITIVE_INFINITY;
    const due: StoredObject[] = [];
    for (const pod of this.store.peek('pods')) {
      const at = pod.metadata.deletionTimestamp;
      if (at === undefined) continue;
      const when = Date.parse(at);
      if (when > now) nextDue = Math.min(nextDue, when);
      else due.push(structuredClone(pod) as StoredObject);
    }
    // Finished in key order, as the list this scan replaced gave them.
    due.sort((a, b) => cmpKey(keyOfPod(a), keyOfPod(b)));
    for (const pod of due) {
      const key = keyOfPod(pod);
      if (this.held.has(key)) continue;
      this.finish(pod, key);
    }
    this.scanned = { revision: this.store.resourceVersion, nextDue };
  }

  /** The pod stays Terminating (whatever the clock says) until released. */
  hold(key: string): void {
    this.held.add(key);
  }

  /** Lets a held or terminating pod go now (its containers stopped): gone unless finalizers keep it. */
  release(key: string): void {
    this.held.delete(key);
    const pod = this.store.get('pods', key);
    if (pod?.metadata.deletionTimestamp !== undefined) this.finish(pod, key);
  }

  /** A finalizer change: a terminating pod whose last finalizer went is removed if its time has come. */
  afterUpdate(key: string): void {
    const pod = this.store.get('pods', key);
    const at = pod?.metadata.deletionTimestamp;
    if (!pod || at === undefined || (pod.metadata.finalizers ?? []).length > 0) return;
    if (Date.parse(at) <= this.now().getTime() && !this.held.has(key)) this.finish(pod, key);
  }

  private finish(pod: StoredObject, key: string): StoredObject | undefined {
    if ((pod.metadata.finalizers ?? []).length > 0) {
      // The containers are gone, but the object stays until its finalizers are removed.
      if (pod.metadata.deletionTimestamp !== undefined) return pod;
      pod.metadata.deletionTimestamp = this.now().toISOString();
      pod.metadata.deletionGracePeriodSeconds = 0;
      return this.store.put('pods', pod);
    }
    this.held.delete(key);
    return this.store.remove('pods', key);
  }
}
