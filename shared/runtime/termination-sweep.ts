// What the Node watch cannot see: terminations whose function died between two steps. A drain record
// whose Node was never deleted (the interruption or drift function stopped after writing it), a
// drain record whose Node is already gone while its instance still runs, and a NodeClaim record
// marked for deletion (`kubectl delete nodeclaim`, a function that died before its drain record)
// with no drain record at all. The watcher sweeps them on every invocation, so no node stays
// cordoned with a running instance and nothing left to finish it.

import type { Node } from '../apis/core/v1';
import { KUBE } from '../contracts';
import { instanceIdOf, isMarkedForDeletion, type NodeClaimRecord } from '../nodeclaim/record';
import { errorMessage } from '../providers/aws-errors';
import type { NodeClaimStore, StateStore } from '../providers/state';
import { instanceIdFromProviderID } from './instances';
import { deletionTimestamp, finalizers } from './objects';
import { ensureTermination, stepTermination, type TerminationDeps } from './termination';

/**
 * A termination is left to the function that began it for this long: one still running finishes
 * its own step (the interruption function's head start is 10 s, a drift run deletes the Node right
 * after the record), so the sweep only picks up what was abandoned.
 */
export const SWEEP_AFTER_MS = 60_000;

export interface SweepDeps extends TerminationDeps {
  state: TerminationDeps['state'] & Pick<StateStore, 'drains'>;
  records: Pick<NodeClaimStore, 'nodeClaims' | 'getNodeClaim' | 'markNodeClaimForDeletion' | 'deleteNodeClaim'>;
}

export interface SweepReport {
  /** Drain records taken up here: their Node deleted (the reconciler steps it then), or stepped when gone. */
  resumed: number;
  /** Claims marked for deletion that had no drain record: their termination begun. */
  begun: number;
  /** Terminations finished by the sweep. */
  finished: number;
}

/** A Node the reconciler steps on its own: being deleted with our finalizer. */
function steppedByReconciler(node: Node | undefined): boolean {
  return (
    node !== undefined && deletionTimestamp(node) !== undefined && finalizers(node).includes(KUBE.terminationFinalizer)
  );
}

/**
 * Resumes or finishes the abandoned terminations. `nodes` is the watcher's view of the cluster's
 * Nodes by name; an error on one termination is logged and does not stop the others.
 */
export async function sweepTerminations(deps: SweepDeps, nodes: ReadonlyMap<string, Node>): Promise<SweepReport> {
  const report: SweepReport = { resumed: 0, begun: 0, finished: 0 };
  const now = deps.clock();
  const [drains, claims] = await Promise.all([deps.state.drains(), deps.records.nodeClaims()]);
  const covered = new Set(drains.flatMap((d) => (d.nodeClaimName ? [d.nodeClaimName] : [])));
  const abandoned = drains.filter(
    (d) => now - d.startedAt >= SWEEP_AFTER_MS && !steppedByReconciler(nodes.get(d.nodeName)),
  );
  for (const claim of claims) {
    if (covered.has(claim.metadata.name) || !markedLongAgo(claim, now)) continue;
    // Not launched yet: the launch records it or garbage collection drops the record (NeverLaunched).
    const instanceId = instanceIdOf(claim);
    if (instanceId === undefined) continue;
    try {
      const record = await ensureTermination(deps, {
        nodeName: claim.status.nodeName ?? nodeOfInstance(nodes, instanceId) ?? claim.metadata.name,
        instanceId,
        nodeClaimName: claim.metadata.name,
        reason: 'deletion',
      });
      report.begun++;
      deps.log.info('resuming the termination of a NodeClaim marked for deletion without a drain', {
        nodeclaim: claim.metadata.name,
        node: record.nodeName,
        instanceId,
      });
      if (!steppedByReconciler(nodes.get(record.nodeName))) abandoned.push(record);
    } catch (error) {
      deps.log.warn('beginning an abandoned termination failed, will retry', {
        nodeclaim: claim.metadata.name,
        error: errorMessage(error),
      });
    }
  }
  for (const record of abandoned) {
    try {
      report.resumed++;
      const node = nodes.get(record.nodeName);
      deps.log.info('resuming an abandoned termination', {
        node: record.nodeName,
        instanceId: record.instanceId,
        nodeclaim: record.nodeClaimName,
        phase: record.phase,
        why: node ? 'its Node was never deleted' : 'its Node is gone',
      });
      // A Node still there is deleted and left to the reconciler (the watch sees it being deleted and
      // steps it from then on); one gone is only ever stepped here.
      if (node) await deps.kube.deleteNode(record.nodeName);
      else if ((await stepTermination(deps, record)).finished) report.finished++;
    } catch (error) {
      deps.log.warn('resuming an abandoned termination failed, will retry', {
        node: record.nodeName,
        error: errorMessage(error),
      });
    }
  }
  return report;
}

function markedLongAgo(claim: NodeClaimRecord, now: number): boolean {
  if (!isMarkedForDeletion(claim)) return false;
  const since = Date.parse(claim.metadata.deletionTimestamp ?? '');
  return Number.isFinite(since) && now - since >= SWEEP_AFTER_MS;
}

function nodeOfInstance(nodes: ReadonlyMap<string, Node>, instanceId: string): string | undefined {
  for (const node of nodes.values()) {
    if (instanceIdFromProviderID(node.spec?.providerID) === instanceId) return node.metadata.name;
  }
  return undefined;
}
