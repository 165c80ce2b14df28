// The drift function's upkeep of the claims' Drifted and Consolidatable conditions
// (shared/disruption/conditions.ts decides them): on every run, before planning, so that "drifted
// since" orders this run's candidates and the NodeClaim objects show why a node will be disrupted.
// Only changed records are written; a failed write is retried by the next run.

import { withDisruptionConditions } from '../disruption/conditions';
import type { CandidateInput } from '../disruption/plan';
import type { NodeClaimRecord } from '../nodeclaim/record';
import { clusterNodes, type DriftDeps, type Snapshot } from './drift';

export async function recordDisruptionConditions(deps: DriftDeps, snap: Snapshot): Promise<NodeClaimRecord[]> {
  const updates = deps.claimUpdates;
  if (!updates) return snap.claims;
  const { ours } = clusterNodes(snap);
  const input: CandidateInput = {
    now: deps.clock(),
    nodes: ours,
    nodePools: deps.nodePools,
    nodeClasses: snap.session.nodeClasses,
    instanceTypeLabels: (pool, type) => snap.types.byNodePool[pool]?.find((t) => t.name === type)?.labels,
    isEvictable: deps.isEvictable,
    pdbs: snap.pdbs,
    instanceTypes: snap.types.byNodePool,
  };
  const changed = new Map<string, NodeClaimRecord>();
  for (const entry of ours) {
    const next = withDisruptionConditions(input, entry);
    if (!next || next === entry.record) continue;
    const stored = await updates.updateNodeClaim(next).catch((error: unknown) => {
      deps.log.warn('claim conditions not written, the next run retries', { nodeclaim: next.metadata.name, error });
      return undefined;
    });
    changed.set(next.metadata.name, stored ?? next);
  }
  return snap.claims.map((c) => changed.get(c.metadata.name) ?? c);
}
