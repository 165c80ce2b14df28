// The scale benchmark's cluster (bench/scale.ts), in a process of its own so that the memory measured
// in the benchmark's process is the reader's alone, as in a Lambda that lists a real API server.
// Started with fork(); it seeds the fake API server and then takes commands over IPC:
//   { op: 'pending', count }  adds pending pods (watch events for the watcher's pod watch)
//   { op: 'heartbeat' }       rewrites every node's Ready heartbeat (a MODIFIED event per node)
//   { op: 'stop' }
// and answers each with { op: 'done', ms }.

import { FakeApiServer } from '../test/support/kube/fake-apiserver';
import { realisticNode, realisticPod } from './scale-objects';

export interface ClusterShape {
  nodes: number;
  boundPods: number;
  pendingPods: number;
  /** Pods of completed Jobs (phase Succeeded) still on their nodes: what a batch-heavy cluster keeps. */
  finishedPods?: number;
}

type Command = { op: 'pending'; count: number } | { op: 'heartbeat' } | { op: 'stop' };

async function main(shape: ClusterShape): Promise<void> {
  // A history as long as the burst of events we make: a watch that lags must not get 410 here.
  const api = await FakeApiServer.start({ historyLimit: 50_000 });
  const seedStart = performance.now();
  const names: string[] = [];
  for (let i = 0; i < shape.nodes; i++) names.push(api.addNode(realisticNode(i)).metadata.name);
  for (let i = 0; i < shape.boundPods; i++) api.addPod(realisticPod(i, names[i % names.length]));
  let next = shape.boundPods;
  for (let i = 0; i < shape.pendingPods; i++) api.addPod(realisticPod(next++));
  for (let i = 0; i < (shape.finishedPods ?? 0); i++) {
    const pod = realisticPod(next++, names[i % names.length]);
    api.addPod({ ...pod, status: { ...pod.status, phase: 'Succeeded' } });
  }
  // The request log would grow by every page and watch of the benchmark: nothing reads it here.
  api.requests.length = 0;
  process.send?.({ op: 'ready', url: api.url, seedMs: Math.round(performance.now() - seedStart) });

  process.on('message', async (command: Command) => {
    const start = performance.now();
    if (command.op === 'stop') {
      await api.stop();
      process.send?.({ op: 'done', ms: 0 });
      process.exit(0);
    }
    if (command.op === 'pending') {
      for (let i = 0; i < command.count; i++) api.addPod(realisticPod(next++));
    }
    if (command.op === 'heartbeat') {
      const at = new Date().toISOString();
      for (const name of names) {
        api.updateNode(name, (node) => {
          for (const condition of node.status?.conditions ?? []) {
            (condition as { lastHeartbeatTime?: string }).lastHeartbeatTime = at;
          }
        });
      }
    }
    api.requests.length = 0;
    process.send?.({ op: 'done', ms: Math.round(performance.now() - start) });
  });
}

const shape = JSON.parse(process.argv[2] ?? '{}') as ClusterShape;
await main(shape);
