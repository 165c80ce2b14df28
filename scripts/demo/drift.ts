// The demo's drift step: an AMI release (the EC2NodeClass's tag moves to a newer image, as a new
// release tagged by a pipeline would), its `EC2 AMI State Change` event to the drift handler, and the
// rollout that follows within the NodePool's 1-node budget: each old node gets its replacement
// first, and drains once the replacement registered. Between the drift runs the demo's kubelets join
// the new instances and the watcher registers them; its Deployment controller and scheduler react on
// their own as pods are evicted and nodes change (see cluster.ts).

import { CreateTagsCommand, DeleteTagsCommand, DescribeImagesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { KUBE } from '../../shared/contracts';
import type { DriftReport } from '../../shared/runtime/drift';
import type { FakeApiServer } from '../../test/support/kube/fake-apiserver';
import type { Timeline } from './timeline';

/** A drift run can hardly take more: nodes × (start, hand over, finish) with room to spare. */
const MAX_ROUNDS = 30;

export interface RolloutActors {
  ec2: EC2Client;
  kube: FakeApiServer;
  timeline: Timeline;
  region: string;
  /** The drift handler, invoked in-process. */
  drift(event: unknown): Promise<DriftReport>;
  /** The kubelets of new instances join. */
  joinNodes(): Promise<void>;
  runWatcher(why: string): Promise<void>;
  /** After each drift run: the evicted pods are back and bound, and the demo takes its measure. */
  settlePods(round: number): Promise<void>;
}

export interface RolloutResult {
  from: string;
  to: string;
  /** Old nodes in the order they were disrupted. */
  rolled: string[];
  /** The most nodes disrupting at any moment (the budget allows 1). */
  maxDisrupting: number;
}

/** Moves the node class's AMI tag from the current image to another x86_64 image of moto's. */
async function releaseAMI(ec2: EC2Client, current: string): Promise<string> {
  const images = await ec2.send(
    new DescribeImagesCommand({
      Filters: [
        { Name: 'architecture', Values: ['x86_64'] },
        { Name: 'name', Values: ['amzn2-ami-*-x86_64-gp2'] },
        { Name: 'state', Values: ['available'] },
      ],
    }),
  );
  const next = images.Images?.find((i) => i.ImageId && i.ImageId !== current)?.ImageId;
  if (!next) throw new Error('demo: moto offers no second x86_64 image to release');
  await ec2.send(new DeleteTagsCommand({ Resources: [current], Tags: [{ Key: 'karpless-demo' }] }));
  await ec2.send(new CreateTagsCommand({ Resources: [next], Tags: [{ Key: 'karpless-demo', Value: 'al2023' }] }));
  return next;
}

function disrupting(kube: FakeApiServer): number {
  return kube
    .nodes()
    .filter(
      (n) =>
        n.metadata.deletionTimestamp !== undefined ||
        (n.spec?.taints ?? []).some((t) => t.key === KUBE.disruptedTaintKey),
    ).length;
}

function describeRun(report: DriftReport): string {
  const parts = [
    ...report.started.map((s) => `started ${s.node} (${s.detail}; replacement ${s.replacements.join(', ') || 'none'})`),
    ...report.draining.map((n) => `${n} handed to termination, its replacement registered`),
    ...report.finished.map((n) => `${n} gone`),
    ...(report.waiting.length > 0 ? [`waiting for the replacement of ${report.waiting.join(', ')}`] : []),
    ...(report.blocked.length > 0 ? [`${report.blocked.length} blocked: ${report.blocked[0]?.message}`] : []),
  ];
  return parts.length > 0 ? parts.join('; ') : 'nothing to do';
}

export async function rollOutNewAMI(actors: RolloutActors, currentImage: string): Promise<RolloutResult> {
  const { timeline } = actors;
  const to = await releaseAMI(actors.ec2, currentImage);
  timeline.add(
    'aws',
    `AMI release: ${to} now carries the node class's tag (was ${currentImage}); EC2 AMI State Change`,
  );
  const result: RolloutResult = { from: currentImage, to, rolled: [], maxDisrupting: 0 };
  let event: unknown = {
    version: '0',
    id: `demo-ami-${to}`,
    'detail-type': 'EC2 AMI State Change',
    source: 'aws.ec2',
    region: actors.region,
    resources: [`arn:aws:ec2:${actors.region}::image/${to}`],
    detail: { ImageId: to, State: 'available' },
  };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const report = await actors.drift(event);
    event = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };
    timeline.add('drift', describeRun(report));
    result.rolled.push(...report.started.map((s) => s.node));
    result.maxDisrupting = Math.max(result.maxDisrupting, disrupting(actors.kube));
    if (report.started.length > 0 || report.waiting.length > 0) {
      await actors.joinNodes();
      await actors.runWatcher('replacement registered');
    }
    for (let i = 0; i < 4 && actors.kube.nodes().some((n) => n.metadata.deletionTimestamp); i++) {
      await actors.runWatcher('old node draining');
    }
    await actors.settlePods(round + 1);
    const idle =
      report.candidates === 0 && report.started.length + report.waiting.length + report.draining.length === 0;
    if (idle && !actors.kube.nodes().some((n) => n.metadata.deletionTimestamp)) return result;
  }
  throw new Error(`demo: the rollout to ${to} did not finish in ${MAX_ROUNDS} drift runs`);
}
