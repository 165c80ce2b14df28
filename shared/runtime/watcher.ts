// The watcher: one invocation (scheduled each minute) lists the unassigned pods and the nodes, then
// watches both until shortly before its deadline. Pending pods are batched as Karpenter does and go
// out as a PodsUnschedulable notice; nodes of ours are registered, initialized, and their deletions
// finished (see nodes.ts); terminations a dead function abandoned are resumed (termination-sweep.ts).
// Nothing depends on one invocation living long: the next one re-lists.

import type { Node, Pod, Workload } from '../apis/core/v1';
import { METRIC } from '../contracts';
import type { KubeClient, WatchEvent } from '../kube/types';
import { errorMessage } from '../providers/aws-errors';
import type { Clock, Sleep } from '../providers/clock';
import type { NodeClaimStore, StateStore } from '../providers/state';
import { Batcher } from './batcher';
import type { ClusterStatusWriter } from './cluster-status';
import { NodeReconciler, type NodeReconcilerDeps } from './nodes';
import { podUid } from './objects';
import { isProvisionable, UNASSIGNED_PODS } from './pending';
import type { PodEvents } from './pod-events';
import { sweepTerminations } from './termination-sweep';
import { runWatchLoop } from './watchloop';

/** Puts the pending set as one or more PodsUnschedulable entries; returns how many entries went out. */
export interface NoticePublisher {
  publish(batch: { pods: Pod[]; daemonSets: Workload[]; observedAt: string }): Promise<number>;
}

export interface WatcherDeps extends NodeReconcilerDeps {
  kube: NodeReconcilerDeps['kube'] &
    Pick<KubeClient, 'listPods' | 'watchPods' | 'listNodes' | 'watchNodes' | 'listDaemonSets'>;
  state: NodeReconcilerDeps['state'] & Pick<StateStore, 'drains'>;
  records: NodeReconcilerDeps['records'] & Pick<NodeClaimStore, 'nodeClaims'>;
  notices: NoticePublisher;
  clock: Clock;
  sleep: Sleep;
  /** How often the batch and the node work are looked at (default 200 ms). */
  tickMs?: number;
  /** How often nodes being deleted take a drain step without a watch event (default 2 s). */
  drainPollMs?: number;
  /**
   * How often abandoned terminations are looked for (termination-sweep.ts; default 30 s, and once
   * as soon as the Nodes are listed).
   */
  sweepIntervalMs?: number;
  /** NodeClaim objects and NodePool/EC2NodeClass status, where Karpenter's CRDs are installed (cluster-status.ts). */
  clusterStatus?: Pick<ClusterStatusWriter, 'sync'>;
  /** Nominated and FailedScheduling events on pending pods (pod-events.ts), written with the cluster status. */
  podEvents?: Pick<PodEvents, 'record'>;
  /** How often the cluster status is written (default 10 s; once more at the end of the run). */
  statusIntervalMs?: number;
}

export interface WatcherReport {
  noticesPut: number;
  podsNoticed: number;
  registered: number;
  initialized: number;
  drained: number;
  podLists: number;
  nodeLists: number;
  /** Nodes of ours whose registration failed (retried on the next pass). */
  registrationFailures: number;
  /**
   * Why the run did not do its job (pods or nodes never listed, pending pods never put in a
   * notice); empty when it did. The handler turns a non-empty list into a failed invocation.
   */
  failed: string[];
}

class PendingSet {
  readonly pods = new Map<string, Pod>();
  /** Pods carried by a notice this invocation: only a pod not among them opens a batch. */
  readonly noticed = new Set<string>();

  constructor(private readonly batcher: Batcher) {}

  replace(items: readonly Pod[], now: number): void {
    this.pods.clear();
    for (const pod of items) this.update(pod, now);
  }

  update(pod: Pod, now: number): void {
    const uid = podUid(pod);
    if (!isProvisionable(pod)) {
      this.pods.delete(uid);
      return;
    }
    this.pods.set(uid, pod);
    if (!this.noticed.has(uid)) this.batcher.trigger(now);
  }

  apply(event: WatchEvent<Pod>, now: number): void {
    if (event.type === 'BOOKMARK') return;
    if (event.type === 'DELETED') this.pods.delete(podUid(event.object));
    else this.update(event.object, now);
  }
}

export async function runWatcher(deps: WatcherDeps, options: { stopAt: number }): Promise<WatcherReport> {
  const tickMs = deps.tickMs ?? 200;
  const drainPollMs = deps.drainPollMs ?? 2_000;
  const batcher = new Batcher();
  const pending = new PendingSet(batcher);
  const nodes = new Map<string, Node>();
  const dirty = new Set<string>();
  const reconciler = new NodeReconciler(deps);
  const report: WatcherReport = {
    noticesPut: 0,
    podsNoticed: 0,
    registered: 0,
    initialized: 0,
    drained: 0,
    podLists: 0,
    nodeLists: 0,
    registrationFailures: 0,
    failed: [],
  };
  const abort = new AbortController();
  const context = {
    clock: deps.clock,
    sleep: deps.sleep,
    log: deps.log,
    stopAt: options.stopAt,
    signal: abort.signal,
    retryMs: 1_000,
  };

  const flush = async (): Promise<void> => {
    const pods = [...pending.pods.values()];
    if (pods.length === 0) {
      batcher.close();
      return;
    }
    try {
      const daemonSets = (await deps.kube.listDaemonSets()).items;
      const entries = await deps.notices.publish({
        pods,
        daemonSets,
        observedAt: new Date(deps.clock()).toISOString(),
      });
      for (const pod of pods) pending.noticed.add(podUid(pod));
      batcher.close();
      report.noticesPut += entries;
      report.podsNoticed += pods.length;
      deps.metrics.record(METRIC.noticesPut, 'Count', entries);
      deps.metrics.record(METRIC.unschedulablePods, 'Count', pods.length);
      deps.log.info('notice put', { pods: pods.length, entries, daemonSets: daemonSets.length });
    } catch (error) {
      // Keep the batch open and try again a second later.
      batcher.trigger(deps.clock());
      deps.log.error('putting the notice failed, will retry', { pods: pods.length, error: errorMessage(error) });
    }
  };

  const sweepIntervalMs = deps.sweepIntervalMs ?? 30_000;
  let nodesListed = false;
  let lastSweep = Number.NEGATIVE_INFINITY;
  let sweeping: Promise<void> | undefined;
  const sweep = async (): Promise<void> => {
    try {
      const swept = await sweepTerminations(deps, nodes);
      report.drained += swept.finished;
    } catch (error) {
      deps.log.warn('looking for abandoned terminations failed, will retry', { error: errorMessage(error) });
    }
  };

  const statusIntervalMs = deps.statusIntervalMs ?? 10_000;
  const writeStatus = async (): Promise<void> => {
    try {
      await deps.clusterStatus?.sync();
      await deps.podEvents?.record([...pending.pods.values()]);
    } catch (error) {
      // Status is for people reading the cluster; a failure here never stops the watcher's own work.
      deps.log.warn('writing NodeClaims and status to the cluster failed, will retry', { error: errorMessage(error) });
    }
  };

  const work = async (): Promise<void> => {
    let lastDrainPoll = deps.clock();
    let lastStatus = Number.NEGATIVE_INFINITY;
    while (deps.clock() < options.stopAt) {
      const now = deps.clock();
      if (batcher.due(now)) await flush();
      if (now - lastStatus >= statusIntervalMs) {
        lastStatus = now;
        await writeStatus();
      }
      // Only once the Nodes are known: the sweep leaves the Nodes being deleted to the reconciler.
      if (nodesListed && !sweeping && now - lastSweep >= sweepIntervalMs) {
        lastSweep = now;
        // Beside the loop: its DynamoDB reads never hold up a notice or a drain step.
        sweeping = sweep().finally(() => {
          sweeping = undefined;
        });
      }
      if (now - lastDrainPoll >= drainPollMs) {
        lastDrainPoll = now;
        for (const node of nodes.values()) if (reconciler.wants(node)) dirty.add(node.metadata.name);
      }
      if (dirty.size > 0) {
        const batch = [...dirty].flatMap((name) => nodes.get(name) ?? []);
        dirty.clear();
        try {
          await reconciler.reconcile(batch);
        } catch (error) {
          for (const node of batch) dirty.add(node.metadata.name);
          deps.log.warn('looking up node instances failed, will retry', { error: errorMessage(error) });
        }
      }
      await deps.sleep(tickMs);
    }
    if (batcher.open) await flush();
    await sweeping;
    await writeStatus();
  };

  const [podLists, nodeLists] = await Promise.all([
    runWatchLoop<Pod>(
      {
        resource: 'pods',
        fieldSelector: UNASSIGNED_PODS,
        list: () => deps.kube.listPods({ fieldSelector: UNASSIGNED_PODS }),
        watch: (o, on) => deps.kube.watchPods(o, on),
        onList: (items) => pending.replace(items, deps.clock()),
        onEvent: (event) => pending.apply(event, deps.clock()),
      },
      context,
    ),
    runWatchLoop<Node>(
      {
        resource: 'nodes',
        list: () => deps.kube.listNodes(),
        watch: (o, on) => deps.kube.watchNodes(o, on),
        onList: (items) => {
          nodesListed = true;
          nodes.clear();
          for (const node of items) {
            nodes.set(node.metadata.name, node);
            dirty.add(node.metadata.name);
          }
        },
        onEvent: (event) => {
          if (event.type === 'BOOKMARK') return;
          const name = event.object.metadata.name;
          if (event.type === 'DELETED') nodes.delete(name);
          else {
            nodes.set(name, event.object);
            dirty.add(name);
          }
        },
      },
      context,
    ),
    work().finally(() => abort.abort()),
  ]);
  report.podLists = podLists;
  report.nodeLists = nodeLists;
  Object.assign(report, {
    registered: reconciler.counts.registered,
    initialized: reconciler.counts.initialized,
    drained: reconciler.counts.drained + report.drained,
    registrationFailures: reconciler.counts.registrationFailures,
  });
  if (podLists === 0) report.failed.push('pending pods were never listed');
  if (nodeLists === 0) report.failed.push('nodes were never listed');
  // The last flush failed: these pods wait for the next run, and a run that keeps failing here is
  // the watcher failing at its one job.
  if (batcher.open) report.failed.push(`${pending.pods.size} pending pod(s) were never put in a notice`);
  return report;
}
