// Runtime benchmarks (issue 7): the provision decision for 100, 1,000 and 10,000 pending pods, and
// what 1,000 spot interruption warnings do. The decision reads the cluster as it does in Lambda: over
// HTTP from the in-repo fake API server on 127.0.0.1 (pods and nodes listed, JSON encoded and parsed),
// so its figure includes the cluster reads (issue 18). That server runs in this process: its encoding
// of the lists is counted in the reads, network latency is not. EC2, DynamoDB and EventBridge are
// in-memory fakes (no AWS latency). An interruption begins the node's termination and takes its first
// drain steps itself (the watcher resumes the rest): the figure counts the pods those steps evicted,
// against an in-memory Kubernetes fake that evicts at once.
// Figures go to bench/results.json as the element with suite "runtime".
//
//   npm run bench                       (after the scheduling suites)
//   npx tsx bench/runtime.ts [--record] (runtime only; --record writes bench/results.json)

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Node, Pod } from '../shared/apis/core/v1';
import { KUBE } from '../shared/contracts';
import { loadBuiltInCatalog } from '../shared/instancetypes/catalog';
import { resolveInstanceTypes } from '../shared/instancetypes/resolve';
import type { InterruptionMessage } from '../shared/interruption/types';
import { HttpKubeClient } from '../shared/kube/client';
import type { ClusterReader } from '../shared/runtime/cluster-read';
import { handleInterruption } from '../shared/runtime/interruption';
import { provision } from '../shared/runtime/provision';
import { noMetrics, silentLog } from '../shared/runtime/telemetry';
import { FakeInstances, FakeKube, FakeState, recordingLauncher } from '../test/runtime/fakes';
import { FakeApiServer } from '../test/support/kube/fake-apiserver';
import { makeDiversePods, BENCH_NODE_CLASS as nodeClass, BENCH_NODE_POOL as nodePool } from './pods';

export const PROVISION_SIZES = [100, 1000, 10000];
export const INTERRUPTION_MESSAGES = 1000;

export interface RuntimeResults {
  suite: 'runtime';
  provision: { pods: number; decisionMs: number; totalMs: number; nodeClaims: number }[];
  interruption: { messages: number; seconds: number; messagesPerSecond: number; podsEvicted: number };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/** The pods as the API server holds them: pending, marked Unschedulable by the kube-scheduler. */
async function clusterOf(pods: Pod[]): Promise<{ api: FakeApiServer; pods: Pod[] }> {
  const api = await FakeApiServer.start();
  const stored = pods.map((pod) =>
    api.addPod({
      ...pod,
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
    }),
  );
  return { api, pods: stored };
}

/** The client, timing its pod list (the larger of the two reads made at once). */
function timedClient(api: FakeApiServer): { kube: ClusterReader; readMs: () => number } {
  const client = new HttpKubeClient({ endpoint: api.url, token: async () => 'bench' });
  let readMs = 0;
  const kube: ClusterReader = {
    listPods: async (options) => {
      const started = performance.now();
      const list = await client.listPods(options);
      readMs += performance.now() - started;
      return list;
    },
    listNodes: (options) => client.listNodes(options),
    listPersistentVolumeClaims: (options) => client.listPersistentVolumeClaims(options),
    listPersistentVolumes: (options) => client.listPersistentVolumes(options),
    listStorageClasses: (options) => client.listStorageClasses(options),
  };
  return { kube, readMs: () => readMs };
}

async function provisionOnce(api: FakeApiServer, pods: Pod[], types: ReturnType<typeof resolveInstanceTypes>) {
  const state = new FakeState(Date.now);
  const instances = new FakeInstances();
  const { kube, readMs } = timedClient(api);
  const started = performance.now();
  const report = await provision(
    {
      cluster: 'bench',
      nodePools: [nodePool],
      instanceTypes: async () => ({ byNodePool: { [nodePool.metadata.name]: types }, priceSource: 'bundled' }),
      instances,
      kube,
      state,
      records: state,
      launcher: recordingLauncher(instances),
      events: { nodeClaimsLaunched: async () => {} },
      clock: Date.now,
      log: silentLog,
      metrics: noMetrics,
    },
    { pods, daemonSets: [], observedAt: new Date().toISOString() },
  );
  return {
    decisionMs: report.decisionMs,
    readMs: readMs(),
    totalMs: performance.now() - started,
    nodeClaims: report.detail.nodeClaims.length,
  };
}

export async function benchProvision(): Promise<RuntimeResults['provision']> {
  const types = resolveInstanceTypes(loadBuiltInCatalog(), nodeClass);
  const out: RuntimeResults['provision'] = [];
  for (const size of PROVISION_SIZES) {
    const { api, pods } = await clusterOf(makeDiversePods(size));
    try {
      await provisionOnce(api, structuredClone(pods), types); // warm-up
      const runs = size >= 10000 ? 3 : 5;
      const samples = [];
      for (let i = 0; i < runs; i++) samples.push(await provisionOnce(api, structuredClone(pods), types));
      const decision = median(samples.map((s) => s.decisionMs));
      const reads = median(samples.map((s) => s.readMs));
      const total = median(samples.map((s) => s.totalMs));
      out.push({
        pods: size,
        decisionMs: round(decision, 1),
        totalMs: round(total, 1),
        nodeClaims: samples[0]?.nodeClaims ?? 0,
      });
      console.log(
        `provision  ${String(size).padStart(6)} pods  decision ${decision.toFixed(1).padStart(8)} ms (of which cluster reads ${reads.toFixed(1).padStart(7)} ms)  with launches and nominations ${total.toFixed(1).padStart(8)} ms  ${samples[0]?.nodeClaims} claims`,
      );
    } finally {
      await api.stop();
    }
  }
  return out;
}

function parse(body: string): InterruptionMessage {
  return JSON.parse(body) as InterruptionMessage;
}

async function benchInterruption(): Promise<RuntimeResults['interruption']> {
  const kube = new FakeKube(async () => {});
  const state = new FakeState(Date.now);
  const instances = new FakeInstances();
  const bodies: string[] = [];
  for (let i = 0; i < INTERRUPTION_MESSAGES; i++) {
    const id = `i-${i.toString(16).padStart(17, '0')}`;
    instances.add({ instanceId: id, nodeClaimName: `default-${i}`, capacityType: 'spot', privateDnsName: `node-${i}` });
    const node: Node = {
      metadata: {
        name: `node-${i}`,
        labels: { [KUBE.registeredLabel]: 'true' },
        finalizers: [KUBE.terminationFinalizer],
      } as Node['metadata'],
      spec: { providerID: `aws:///us-west-2a/${id}`, taints: [] },
    };
    kube.putNode(node);
    for (let p = 0; p < 3; p++) {
      kube.putPod({
        metadata: { name: `pod-${i}-${p}`, namespace: 'default', uid: `u-${i}-${p}` },
        spec: { nodeName: `node-${i}`, containers: [] },
        status: { phase: 'Running' },
      });
    }
    const message: InterruptionMessage = {
      kind: 'SpotInterruption',
      eventId: `e-${i}`,
      instanceIds: [id],
      time: Date.now(),
      action: 'CordonAndDrain',
    };
    bodies.push(JSON.stringify(message));
  }
  const deps = {
    cluster: 'bench',
    kube,
    instances,
    state,
    parse,
    rebalanceAction: 'record' as const,
    isEvictable: () => true,
    clock: Date.now,
    sleep: async () => {},
    invocationDeadline: Number.MAX_SAFE_INTEGER,
    log: silentLog,
    metrics: noMetrics,
  };
  let evicted = 0;
  let finished = 0;
  const failed: string[] = [];
  const started = performance.now();
  // As the Lambda gets them: batches of 10 records, handled in parallel.
  for (let i = 0; i < bodies.length; i += 10) {
    const outcomes = await Promise.all(bodies.slice(i, i + 10).map((body) => handleInterruption(deps, body)));
    for (const outcome of outcomes) {
      if (outcome.status === 'handled') evicted += outcome.evicted;
      else if (outcome.status === 'failed') failed.push(outcome.reason);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  // The head start ends when the drain does (the fake evicts at once, no PodDisruptionBudget): a node
  // whose termination finished has no Node left.
  for (let i = 0; i < INTERRUPTION_MESSAGES; i++) if (!(await kube.getNode(`node-${i}`))) finished++;
  if (failed.length > 0) throw new Error(`interruption benchmark: ${failed.length} records failed: ${failed[0]}`);
  console.log(
    `interruption ${INTERRUPTION_MESSAGES} spot warnings  ${seconds.toFixed(2)} s  ${(INTERRUPTION_MESSAGES / seconds).toFixed(0)} messages/s  ${evicted} pods evicted by the head start's drain steps, ${finished} nodes terminated within it`,
  );
  return {
    messages: INTERRUPTION_MESSAGES,
    seconds: round(seconds, 3),
    messagesPerSecond: Math.round(INTERRUPTION_MESSAGES / seconds),
    podsEvicted: evicted,
  };
}

/** Puts the runtime figures into results.json beside the scheduling ones (element with suite "runtime"). */
export function recordRuntimeResults(
  results: RuntimeResults,
  path = join(dirname(fileURLToPath(import.meta.url)), 'results.json'),
): void {
  let current: unknown = [];
  try {
    current = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    current = [];
  }
  const list = Array.isArray(current)
    ? current.filter((e) => (e as { suite?: string }).suite !== 'runtime')
    : [current];
  writeFileSync(path, `${JSON.stringify([...list, results], null, 2)}\n`);
  console.log(`wrote the runtime figures to ${path}`);
}

export async function runRuntimeBenchmarks(write: boolean): Promise<RuntimeResults> {
  console.log(
    '\nkarpless runtime benchmark: the decision reads pods and nodes over HTTP from the fake API server on 127.0.0.1, in this process (its JSON encoding counted, no network latency); EC2, DynamoDB and EventBridge are in-memory fakes (no AWS latency); interruptions drain against an in-memory Kubernetes fake',
  );
  const results: RuntimeResults = {
    suite: 'runtime',
    provision: await benchProvision(),
    interruption: await benchInterruption(),
  };
  if (write) recordRuntimeResults(results);
  return results;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runRuntimeBenchmarks(process.argv.includes('--record') || process.argv.includes('--write'));
}
