// karpless and Karpenter must never act on one cluster at once: they share the instances' tags, the
// Nodes' finalizer, the launch templates' names and the instance profiles' path, so both would drain,
// replace and delete the same nodes. A running Karpenter holds and renews its leader-election Lease
// (every few seconds, for 15 s at a time); one stopped (scaled to zero, uninstalled) releases it or
// stops renewing. Each function checks before it acts and refuses as a failed run, so the alarms
// fire and nothing is done on a cluster Karpenter still runs.

import type { Lease } from '../kube/types';
import type { Clock } from '../providers/clock';
import { RunFailedError } from './telemetry';

/** The Lease Karpenter's controller elects its leader with, in whichever namespace it runs. */
export const KARPENTER_LEASE = 'karpenter-leader-election';

// Beyond the Lease's own duration: clocks of the API server and of Lambda may differ this much.
const CLOCK_SKEW_MS = 60_000;
const DEFAULT_LEASE_SECONDS = 15;

export class KarpenterRunningError extends RunFailedError {}

/** The Lease of a Karpenter that is running now: held, and renewed within its duration. */
export function liveKarpenterLease(leases: readonly Lease[], now: number): Lease | undefined {
  return leases.find((lease) => {
    if (lease.metadata.name !== KARPENTER_LEASE) return false;
    const holder = lease.spec?.holderIdentity;
    const renewed = lease.spec?.renewTime ? Date.parse(lease.spec.renewTime) : Number.NaN;
    if (!holder || Number.isNaN(renewed)) return false;
    const duration = (lease.spec?.leaseDurationSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
    return now - renewed <= duration + CLOCK_SKEW_MS;
  });
}

/** Throws KarpenterRunningError, naming the Lease and its holder, when Karpenter runs on the cluster. */
export function karpenterGuard(leases: () => Promise<readonly Lease[]>, clock: Clock): () => Promise<void> {
  return async () => {
    const live = liveKarpenterLease(await leases(), clock());
    if (!live) return;
    const where = `${live.metadata.namespace ?? 'default'}/${live.metadata.name}`;
    throw new KarpenterRunningError(
      `Karpenter is running on this cluster (Lease ${where} held by ${live.spec?.holderIdentity}, renewed ${live.spec?.renewTime}): karpless acts on nothing beside it; stop Karpenter first (see Migrating from Karpenter in the README)`,
    );
  };
}
