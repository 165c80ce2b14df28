// The cluster at Kubernetes' scale limits (issue 23: 5,000 nodes, 150,000 pods), read the way the
// functions read it: over HTTP from the fake API server (in a process of its own, bench/scale-cluster.ts,
// so this process's memory is the reader's alone), through the project's client, 500 objects a page.
// Objects are shaped like a real cluster's (bench/scale-objects.ts), not three-field stubs.
//
//   watcher    the real runWatcher: its list of the unassigned pods and of the nodes, its peak memory
//              (the function has 512 MB), then how fast it takes watch events (5,000 new pending pods,
//              then a heartbeat on every node).
//   full read  what the provision decision reads (every pod and node, shared/runtime/cluster-read.ts):
//              time and the memory the objects hold (the provision and drift functions have 1,024 MB).
//
//   npx tsx bench/scale.ts [--record]   (also run by `npm run bench`)
//   npx tsx bench/scale.ts --finished N (adds N pods of completed Jobs, phase Succeeded: the full read
//                                        leaves them out; not recorded)

import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Node, Pod } from '../shared/apis/core/v1';
import { HttpKubeClient } from '../shared/kube/client';
import type { WatchEvent } from '../shared/kube/types';
import { InMemoryStateStore } from '../shared/providers/memorystate';
import { readCluster } from '../shared/runtime/cluster-read';
import { noMetrics, silentLog } from '../shared/runtime/telemetry';
import { runWatcher, type WatcherDeps } from '../shared/runtime/watcher';
import { FakeInstances, FakeState } from '../test/runtime/fakes';
import type { ClusterShape } from './scale-cluster';
import { realisticNode, realisticPod } from './scale-objects';

export const SHAPE: ClusterShape = { nodes: 5_000, boundPods: 140_000, pendingPods: 5_000 };
/** Pending pods created while the watcher watches: the cluster ends at 150,000 pods. */
export const EVENT_PODS = 5_000;

export interface ScaleResults {
  suite: 'scale';
  nodes: number;
  pods: number;
  bytesPerPod: number;
  bytesPerNode: number;
  watcher: {
    /** Wall time of the two lists, made at once: mostly the fake server's own pace. */
    listPendingPodsMs: number;
    listNodesMs: number;
    /** This process's CPU time for both lists: what the watcher itself spends. */
    listCpuMs: number;
    peakRssMiB: number;
    heapMiB: number;
    /** This process's CPU per watch event (parse, slim, pending set or node map): 1e6 / it is its capacity. */
    podEventCpuMicros: number;
    nodeEventCpuMicros: number;
    /** How long after the server wrote its last event the watcher had applied them all. */
    podEventLagMs: number;
    nodeEventLagMs: number;
  };
  fullRead: { pods: number; nodes: number; ms: number; cpuMs: number; heapMiB: number; peakRssMiB: number };
}

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Samples RSS every 20 ms until stopped; returns the peak. */
function rssPeak(): { stop(): number } {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage.rss());
    },
  };
}

type Reply = { op: 'ready'; url: string; seedMs: number } | { op: 'done'; ms: number };

function startCluster(shape: ClusterShape) {
  const child = fork(join(dirname(fileURLToPath(import.meta.url)), 'scale-cluster.ts'), [JSON.stringify(shape)], {
    execArgv: ['--import', 'tsx', '--max-old-space-size=8192'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = () =>
    new Promise<Reply>((resolve, reject) => {
      child.once('message', (m) => resolve(m as Reply));
      child.once('exit', (code) => reject(new Error(`scale cluster exited (${code})`)));
    });
  return {
    ready: next(),
    command: async (op: object) => {
      const reply = next();
      child.send(op);
      return reply;
    },
    kill: () => child.kill(),
  };
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/** Has the cluster make `count` events; the watcher's CPU for them and its lag behind the server. */
async function eventPhase(
  cluster: ReturnType<typeof startCluster>,
  command: object,
  seen: () => number,
  count: number,
): Promise<{ cpuMs: number; lagMs: number }> {
  const before = seen();
  const cpu = process.cpuUsage();
  await cluster.command(command);
  const written = performance.now();
  await until(() => seen() - before, count);
  return { lagMs: performance.now() - written, cpuMs: cpuMs(cpu) };
}

/** Resolves once `count()` reaches `target`. */
async function until(count: () => number, target: number): Promise<void> {
  while (count() < target) await new Promise((r) => setTimeout(r, 5));
}

async function benchWatcher(url: string, cluster: ReturnType<typeof startCluster>): Promise<ScaleResults['watcher']> {
  const client = new HttpKubeClient({ endpoint: url, token: async () => 'bench' });
  const times = { pods: 0, nodes: 0 };
  const seen = { pods: 0, nodes: 0 };
  const timed =
    <T>(key: 'pods' | 'nodes', list: () => Promise<T>) =>
    async () => {
      const start = performance.now();
      const result = await list();
      times[key] = performance.now() - start;
      return result;
    };
  const counted =
    <T>(key: 'pods' | 'nodes', on: (e: WatchEvent<T>) => void) =>
    (event: WatchEvent<T>) => {
      if (event.type !== 'BOOKMARK') seen[key]++;
      on(event);
    };
  const kube = Object.create(client) as HttpKubeClient;
  kube.listPods = (o) => timed('pods', () => client.listPods(o))();
  kube.listNodes = (o) => timed('nodes', () => client.listNodes(o))();
  kube.watchPods = (o, on) => client.watchPods(o, counted<Pod>('pods', on));
  kube.watchNodes = (o, on) => client.watchNodes(o, counted<Node>('nodes', on));
  let shift = 0;
  const clock = () => Date.now() + shift;
  const deps: WatcherDeps = {
    kube,
    instances: new FakeInstances(),
    state: new FakeState(clock),
    records: new InMemoryStateStore(clock),
    notices: { publish: async () => 1 },
    claims: { backfill: async () => Promise.reject(new Error('no backfill here')), terminationGracePeriodMs: () => 0 },
    isEvictable: () => true,
    clock,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    log: silentLog,
    metrics: noMetrics,
  };
  collect();
  const peak = rssPeak();
  const listCpu = process.cpuUsage();
  const run = runWatcher(deps, { stopAt: Date.now() + 600_000 });
  await until(() => (times.pods > 0 && times.nodes > 0 ? 1 : 0), 1);
  const listCpuMs = cpuMs(listCpu);
  collect();
  const heapMiB = process.memoryUsage().heapUsed / MiB;

  const pods = await eventPhase(cluster, { op: 'pending', count: EVENT_PODS }, () => seen.pods, EVENT_PODS);
  const nodes = await eventPhase(cluster, { op: 'heartbeat' }, () => seen.nodes, SHAPE.nodes);
  shift = 10_000_000;
  await run;
  return {
    listPendingPodsMs: Math.round(times.pods),
    listNodesMs: Math.round(times.nodes),
    listCpuMs: Math.round(listCpuMs),
    peakRssMiB: round(peak.stop() / MiB),
    heapMiB: round(heapMiB),
    podEventCpuMicros: round((pods.cpuMs * 1000) / EVENT_PODS),
    nodeEventCpuMicros: round((nodes.cpuMs * 1000) / SHAPE.nodes),
    podEventLagMs: Math.round(pods.lagMs),
    nodeEventLagMs: Math.round(nodes.lagMs),
  };
}

async function benchFullRead(url: string): Promise<ScaleResults['fullRead']> {
  const client = new HttpKubeClient({ endpoint: url, token: async () => 'bench' });
  collect();
  const baseline = process.memoryUsage().heapUsed;
  const peak = rssPeak();
  const start = performance.now();
  const cpu = process.cpuUsage();
  const snapshot = await readCluster(client);
  const ms = performance.now() - start;
  const used = cpuMs(cpu);
  collect();
  const held = process.memoryUsage().heapUsed - baseline;
  const result = {
    pods: snapshot.pods.length,
    nodes: snapshot.nodes.length,
    ms: Math.round(ms),
    cpuMs: Math.round(used),
    heapMiB: round(held / MiB),
    peakRssMiB: round(peak.stop() / MiB),
  };
  return result;
}

function recordScaleResults(results: ScaleResults): void {
  const path = join(dirname(fileURLToPath(import.meta.url)), 'results.json');
  const current: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const list = Array.isArray(current) ? current.filter((e) => (e as { suite?: string }).suite !== 'scale') : [];
  writeFileSync(path, `${JSON.stringify([...list, results], null, 2)}\n`);
  console.log(`wrote the scale figures to ${path}`);
}

export async function runScaleBenchmark(record: boolean, finishedPods = 0): Promise<ScaleResults> {
  const shape: ClusterShape = { ...SHAPE, finishedPods };
  const pods = SHAPE.boundPods + SHAPE.pendingPods + EVENT_PODS + finishedPods;
  console.log(
    `\nkarpless at Kubernetes' scale limits: ${SHAPE.nodes.toLocaleString('en-US')} nodes, ${pods.toLocaleString('en-US')} pods, read over HTTP from the fake API server in its own process`,
  );
  const cluster = startCluster(shape);
  const ready = await cluster.ready;
  if (ready.op !== 'ready') throw new Error('scale cluster did not start');
  console.log(`  cluster seeded in ${(ready.seedMs / 1000).toFixed(1)} s at ${ready.url}`);
  try {
    const watcher = await benchWatcher(ready.url, cluster);
    console.log(
      `  watcher    lists ${SHAPE.pendingPods.toLocaleString('en-US')} unassigned pods in ${watcher.listPendingPodsMs} ms and ${SHAPE.nodes.toLocaleString('en-US')} nodes in ${watcher.listNodesMs} ms (the fake server's pace; ${watcher.listCpuMs} ms of the watcher's CPU); heap ${watcher.heapMiB} MiB after the lists, peak RSS ${watcher.peakRssMiB} MiB (function: 512 MB)`,
    );
    console.log(
      `             watch events: ${watcher.podEventCpuMicros} µs CPU per pod event (${Math.round(1e6 / watcher.podEventCpuMicros).toLocaleString('en-US')}/s), ${watcher.nodeEventCpuMicros} µs per node event (${Math.round(1e6 / watcher.nodeEventCpuMicros).toLocaleString('en-US')}/s); all applied ${watcher.podEventLagMs} ms / ${watcher.nodeEventLagMs} ms after the server wrote the last`,
    );
    const fullRead = await benchFullRead(ready.url);
    console.log(
      `  full read  ${fullRead.pods.toLocaleString('en-US')} pods and ${fullRead.nodes.toLocaleString('en-US')} nodes in ${(fullRead.ms / 1000).toFixed(2)} s (${(fullRead.cpuMs / 1000).toFixed(2)} s of this process's CPU); the objects hold ${fullRead.heapMiB} MiB of heap, peak RSS ${fullRead.peakRssMiB} MiB (provision and drift: 1,024 MB)`,
    );
    const results: ScaleResults = {
      suite: 'scale',
      nodes: SHAPE.nodes,
      pods,
      bytesPerPod: Buffer.byteLength(JSON.stringify(realisticPod(1, 'node'))),
      bytesPerNode: Buffer.byteLength(JSON.stringify(realisticNode(1))),
      watcher,
      fullRead,
    };
    console.log(`  objects    a bound pod ${results.bytesPerPod} B, a node ${results.bytesPerNode} B as JSON`);
    if (record && finishedPods === 0) recordScaleResults(results);
    return results;
  } finally {
    await cluster.command({ op: 'stop' }).catch(() => undefined);
    cluster.kill();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const finished = process.argv.indexOf('--finished');
  await runScaleBenchmark(process.argv.includes('--record'), finished > 0 ? Number(process.argv[finished + 1]) : 0);
}
