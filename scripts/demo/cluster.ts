// What the demo plays in the cluster that is not karpless: the kubelet of each new instance (a Node
// with the capacity its instance type has), the Deployment controller (a deleted pod is replaced by a
// new pending one at once), and kube-scheduler (test/support/kube/scheduler.ts: a pod binds only where
// it fits, else it is marked Unschedulable). Plus the demo's own check on what karpless launched: the
// vCPU of the instances against the vCPU the pods request.

import {
  DescribeInstancesCommand,
  type EC2Client,
  type Instance,
  ModifyInstanceAttributeCommand,
} from '@aws-sdk/client-ec2';
import type { Node, Pod } from '../../shared/apis/core/v1';
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE } from '../../shared/apis/v1/labels';
import { KUBE } from '../../shared/contracts';
import {
  computeAllocatable,
  computeCapacity,
  computeOverhead,
  RESOURCE_CPU,
} from '../../shared/instancetypes/capacity';
import { loadBuiltInCatalog } from '../../shared/instancetypes/catalog';
import type { CatalogInstanceType, Resources } from '../../shared/instancetypes/types';
import { type NodeClaimRecord, nodePoolOf } from '../../shared/nodeclaim/record';
import { podRequests } from '../../shared/scheduling/resources';
import type { FakeApiServer } from '../../test/support/kube/fake-apiserver';
import { type SchedulingPass, StandInScheduler } from '../../test/support/kube/scheduler';
import type { Timeline } from './timeline';

export const DEMO_CLUSTER = 'karpless-demo';

const catalog = new Map(loadBuiltInCatalog().instanceTypes.map((t) => [t.name, t]));

function instanceType(name: string | undefined): CatalogInstanceType {
  const info = catalog.get(name ?? '');
  if (!info) throw new Error(`demo: instance type ${name} is not in the built-in catalog`);
  return info;
}

export async function describeInstances(ec2: EC2Client): Promise<Map<string, Instance>> {
  const out = await ec2.send(
    new DescribeInstancesCommand({ Filters: [{ Name: 'tag:eks:eks-cluster-name', Values: [DEMO_CLUSTER] }] }),
  );
  const instances = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
  return new Map(instances.map((i) => [i.InstanceId ?? '', i]));
}

function quantities(resources: Resources): Record<string, string> {
  return Object.fromEntries(
    Object.entries(resources).map(([name, value]) => [name, name === RESOURCE_CPU ? `${value}m` : String(value)]),
  );
}

/**
 * The kubelet of each new running instance: a Node with its providerID, the unregistered taint, Ready,
 * and the capacity and allocatable the instance type has under the demo's AL2023 node class (what
 * kubelet reports from the machine and its reservations).
 */
export async function joinNodes(
  ec2: EC2Client,
  kube: FakeApiServer,
  timeline: Timeline,
  securityGroupId: string,
): Promise<void> {
  const known = new Set(kube.nodes().map((n) => n.spec?.providerID));
  for (const instance of (await describeInstances(ec2)).values()) {
    const zone = instance.Placement?.AvailabilityZone ?? '';
    const providerID = `aws:///${zone}/${instance.InstanceId}`;
    if (instance.State?.Name !== 'running' || known.has(providerID)) continue;
    // moto drops the launch template's security groups (the instance gets a default group); EC2
    // would not, and the drift step compares them (SecurityGroupDrift), so the demo puts them back.
    await ec2.send(new ModifyInstanceAttributeCommand({ InstanceId: instance.InstanceId, Groups: [securityGroupId] }));
    const name = instance.PrivateDnsName ?? instance.InstanceId ?? '';
    const info = instanceType(instance.InstanceType);
    const settings = { amiFamily: 'AL2023' as const };
    const capacity = computeCapacity(info, settings);
    const allocatable = computeAllocatable(capacity, computeOverhead(info, settings, capacity));
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'node.kubernetes.io/instance-type': instance.InstanceType ?? '',
          'topology.kubernetes.io/zone': zone,
        },
      },
      spec: { providerID, taints: [{ key: KUBE.unregisteredTaintKey, effect: 'NoExecute' }] },
      status: { capacity: quantities(capacity), allocatable: quantities(allocatable) },
    };
    kube.addNode(node);
    kube.markNodeReady(name);
    timeline.add(
      'kubelet',
      `node ${name} joined (${providerID}, ${instance.InstanceType}: ${allocatable.cpu}m CPU allocatable), tainted ${KUBE.unregisteredTaintKey}:NoExecute`,
    );
  }
}

function count(n: number): string {
  return n === 1 ? '1 pod' : `${n} pods`;
}

export interface App {
  name: string;
  cpu: string;
  memory: string;
  nodeSelector?: Record<string, string>;
}

export function appPod(name: string, app: App): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      labels: { app: app.name },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app.name}-7d4f9`, controller: true }],
    },
    spec: {
      containers: [{ name: app.name, resources: { requests: { cpu: app.cpu, memory: app.memory } } }],
      ...(app.nodeSelector ? { nodeSelector: app.nodeSelector } : {}),
    },
    status: { phase: 'Pending' },
  };
}

const DELETION_QUIET_MS = 100;

/**
 * The Deployment (ReplicaSet) controller: keeps each app at its replica count. A pod deleted (an
 * eviction) is replaced by a new pending pod right away, as the real controller does on the watch event.
 */
export class Deployments {
  private readonly apps = new Map<string, { app: App; replicas: number; made: number }>();
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private idle: Promise<void> = Promise.resolve();
  private done: () => void = () => undefined;

  constructor(
    private readonly kube: FakeApiServer,
    private readonly timeline: Timeline,
  ) {
    this.unsubscribe = kube.store.subscribe((change) => {
      if (change.resource === 'pods' && change.type === 'DELETED') this.queue();
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearTimeout(this.timer);
    this.done();
  }

  /** Creates (or scales) an app; its pods start pending with no scheduling verdict yet. */
  apply(app: App, replicas: number): void {
    this.apps.set(app.name, { app, replicas, made: this.apps.get(app.name)?.made ?? 0 });
    this.reconcile();
  }

  /** Resolves once the replacements for the deletions seen so far exist. */
  settled(): Promise<void> {
    return this.idle;
  }

  // A drain evicts pod after pod; like the ReplicaSet controller's batching, the replacements for a
  // burst of deletions are made together once it has been quiet for a moment.
  private queue(): void {
    if (this.timer) clearTimeout(this.timer);
    else this.idle = new Promise((resolve) => (this.done = resolve));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      try {
        this.reconcile();
      } finally {
        this.done();
      }
    }, DELETION_QUIET_MS);
  }

  private reconcile(): void {
    for (const entry of this.apps.values()) {
      const { app, replicas } = entry;
      const live = this.kube.pods().filter((p) => p.metadata.labels?.app === app.name).length;
      if (live >= replicas) continue;
      const names: string[] = [];
      for (let i = live; i < replicas; i++) {
        const name = `${app.name}-${entry.made++}`;
        this.kube.addPod(appPod(name, app));
        names.push(name);
      }
      const what = entry.made === names.length ? 'created' : 'replaced its deleted pods with';
      this.timeline.add(
        'cluster',
        `Deployment ${app.name} ${what} ${count(names.length)} (${app.cpu} CPU / ${app.memory} each), pending: ${names.join(', ')}`,
      );
    }
  }
}

/** kube-scheduler's stand-in, reporting what each pass did on the timeline. */
export function startScheduler(kube: FakeApiServer, timeline: Timeline): StandInScheduler {
  const short = (pod: string) => pod.replace(/^default\//, '');
  const report = (pass: SchedulingPass) => {
    const byNode = new Map<string, string[]>();
    for (const b of pass.bound) byNode.set(b.node, [...(byNode.get(b.node) ?? []), short(b.pod)]);
    for (const [node, pods] of byNode)
      timeline.add('scheduler', `bound ${count(pods.length)} to ${node}: ${pods.join(', ')}`);
    const byMessage = new Map<string, string[]>();
    for (const u of pass.unschedulable) byMessage.set(u.message, [...(byMessage.get(u.message) ?? []), short(u.pod)]);
    for (const [message, pods] of byMessage)
      timeline.add('scheduler', `${count(pods.length)} Unschedulable (${message}): ${pods.join(', ')}`);
  };
  return new StandInScheduler(kube, report).start();
}

/** What karpless has launched against what the pods ask for, at one step of the demo. */
export interface CapacityStep {
  step: string;
  /** vCPU of our pending and running instances, leaving out nodes being replaced or removed. */
  launchedVcpu: number;
  /** vCPU of the instances whose nodes are being disrupted or deleted (drift's surge). */
  leavingVcpu: number;
  /** CPU the pods request (pending or bound, not finished), in vCPU. */
  requestedVcpu: number;
  instances: number;
}

function leaving(node: Node | undefined): boolean {
  if (!node) return false;
  return (
    node.metadata.deletionTimestamp !== undefined ||
    (node.spec?.taints ?? []).some((t) => t.key === KUBE.disruptedTaintKey)
  );
}

export async function measureCapacity(ec2: EC2Client, kube: FakeApiServer, step: string): Promise<CapacityStep> {
  const nodes = new Map(kube.nodes().map((n) => [n.spec?.providerID?.split('/').pop() ?? '', n]));
  let launchedVcpu = 0;
  let leavingVcpu = 0;
  let instances = 0;
  for (const instance of (await describeInstances(ec2)).values()) {
    if (!['pending', 'running'].includes(instance.State?.Name ?? '')) continue;
    const vcpu = instanceType(instance.InstanceType).vcpu;
    if (leaving(nodes.get(instance.InstanceId ?? ''))) leavingVcpu += vcpu;
    else {
      launchedVcpu += vcpu;
      instances++;
    }
  }
  const pods = kube.pods().filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  const requestedVcpu = pods.reduce((sum, p) => sum + (podRequests(p)[RESOURCE_CPU] ?? 0), 0) / 1000;
  return { step, launchedVcpu, leavingVcpu, requestedVcpu, instances };
}

export function describeStep(s: CapacityStep): string {
  const ratio = s.requestedVcpu > 0 ? ` (${(s.launchedVcpu / s.requestedVcpu).toFixed(2)}×)` : '';
  const surge = s.leavingVcpu > 0 ? `, plus ${s.leavingVcpu} vCPU on nodes being replaced` : '';
  return `${s.step}: ${s.instances} ${s.instances === 1 ? 'instance' : 'instances'} with ${s.launchedVcpu} vCPU for ${s.requestedVcpu} vCPU of requests${ratio}${surge}`;
}

/** One line per NodeClaim record, like `kubectl get nodeclaims` with the conditions spelled out. */
export function describeClaims(records: readonly NodeClaimRecord[]): string[] {
  return records.map((r) => {
    const labels = r.metadata.labels;
    const conditions = r.status.conditions
      .map((c) => `${c.type}=${c.status}${c.reason && c.reason !== c.type ? ` (${c.reason})` : ''}`)
      .join(', ');
    const deleting = r.metadata.deletionTimestamp ? ', being deleted' : '';
    return `${r.metadata.name}: nodepool ${nodePoolOf(r) ?? '?'}, ${labels[LABEL_INSTANCE_TYPE] ?? 'type not launched yet'} ${labels[LABEL_CAPACITY_TYPE] ?? ''} in ${labels[LABEL_ZONE] ?? '?'}, node ${r.status.nodeName ?? 'none yet'}${deleting}; ${conditions || 'no conditions'}`;
  });
}
