// A stand-in for kube-scheduler over the fake API server, for the demo and for tests that need pods to
// land where a real cluster would put them. It runs the default scheduler's filters: NodeUnschedulable,
// NodeAffinity (nodeSelector and required node affinity), TaintToleration, NodePorts and
// NodeResourcesFit (the pods already there plus the DaemonSets that would run there), then scores what
// passed with NodeResourcesFit's default LeastAllocated strategy. A pod no node takes gets
// PodScheduled=False/Unschedulable with kube-scheduler's "0/N nodes are available" message, which is
// what makes it a candidate for karpless. Pod (anti-)affinity and topology spread are not filtered:
// the demo uses none, and the real scheduler's filters for them are not what this stand-in is for.
// Label and taint matching are the core's (shared/scheduling), so the stand-in and the planner agree.

import type { Node, Pod, Toleration, Workload } from '../../../shared/apis/core/v1';
import type { Taint } from '../../../shared/apis/v1/types';
import { resourceAmounts } from '../../../shared/instancetypes/capacity';
import type { Resources } from '../../../shared/instancetypes/types';
import {
  type Requirement,
  Requirements,
  requirementFrom,
  requirementIn,
} from '../../../shared/scheduling/requirements';
import { addResources, CPU, MEMORY, podRequests } from '../../../shared/scheduling/resources';
import { formatTaint, untoleratedTaint } from '../../../shared/scheduling/taints';
import type { FakeApiServer } from './fake-apiserver';

// The node lifecycle controller's taints for a node that is not Ready or is cordoned.
const NOT_READY: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
const UNSCHEDULABLE: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

// The tolerations the DaemonSet controller adds to every DaemonSet pod (daemon/util.AddOrUpdateDaemonPodTolerations).
const DAEMONSET_TOLERATIONS: Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

/** Why a node refused a pod, in kube-scheduler's words (the part after "N "). */
export type Refusal = string;

/** The node's taints as the scheduler sees them: its own plus the lifecycle controller's. */
function effectiveTaints(node: Node): Taint[] {
  const taints = [...(node.spec?.taints ?? [])];
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True' && !taints.some((t) => t.key === NOT_READY.key)) taints.push(NOT_READY);
  if (node.spec?.unschedulable && !taints.some((t) => t.key === UNSCHEDULABLE.key)) taints.push(UNSCHEDULABLE);
  return taints;
}

/** nodeSelector AND (any required node-affinity term), as the NodeAffinity filter reads them. */
export function matchesNodeSelection(pod: Pod, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  const selector = Requirements.from(Object.entries(pod.spec.nodeSelector ?? {}).map(([k, v]) => requirementIn(k, v)));
  if (!selector.matchesLabels(labels)) return false;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return true;
  return terms.some((term) => {
    const expressions = term.matchExpressions ?? [];
    // matchFields supports metadata.name only (the API server rejects anything else).
    const fields = (term.matchFields ?? []).map((f): Requirement => requirementFrom({ ...f, key: 'metadata.name' }));
    if (expressions.length === 0 && fields.length === 0) return false; // an empty term matches nothing
    return (
      Requirements.from(expressions.map(requirementFrom)).matchesLabels(labels) &&
      Requirements.from(fields).matchesLabels({ 'metadata.name': node.metadata.name })
    );
  });
}

/** The host ports a pod asks for, as `protocol/port` (hostIP is not modelled: every port binds all addresses). */
export function hostPorts(pod: Pod): string[] {
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers].flatMap((c) =>
    (c.ports ?? []).flatMap((p) => (p.hostPort ? [`${p.protocol ?? 'TCP'}/${p.hostPort}`] : [])),
  );
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function templatePod(daemonSet: Workload): Pod {
  const template = daemonSet.spec.template;
  return {
    metadata: {
      ...template.metadata,
      name: daemonSet.metadata.name,
      namespace: daemonSet.metadata.namespace ?? 'default',
    },
    spec: {
      ...template.spec,
      tolerations: [...(template.spec.tolerations ?? []), ...DAEMONSET_TOLERATIONS],
    },
  };
}

function ownedBy(pod: Pod, daemonSet: Workload): boolean {
  return (pod.metadata.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet' && o.name === daemonSet.metadata.name);
}

/** What a node holds: its allocatable, and what its pods and pending DaemonSet pods request. */
export interface NodeUsage {
  node: Node;
  allocatable: Resources;
  requested: Resources;
  ports: Set<string>;
}

/**
 * The usage of a node: the non-terminal pods bound there, plus one pod of each DaemonSet that would run
 * there but has none yet (the DaemonSet controller places those as soon as the node appears).
 */
export function nodeUsage(node: Node, pods: readonly Pod[], daemonSets: readonly Workload[]): NodeUsage {
  const here = pods.filter((p) => p.spec.nodeName === node.metadata.name && !isTerminal(p));
  const daemons = daemonSets
    .filter((ds) => !here.some((p) => ownedBy(p, ds)))
    .map(templatePod)
    .filter((p) => matchesNodeSelection(p, node) && !untoleratedTaint(p.spec.tolerations, effectiveTaints(node), true));
  const all = [...here, ...daemons];
  return {
    node,
    allocatable: resourceAmounts(node.status?.allocatable ?? node.status?.capacity),
    requested: addResources(...all.map(podRequests)),
    ports: new Set(all.flatMap(hostPorts)),
  };
}

/** The filters, in the default profile's order; undefined when the pod fits the node. */
export function refusal(pod: Pod, usage: NodeUsage): Refusal | undefined {
  const { node } = usage;
  if (node.spec?.unschedulable && untoleratedTaint(pod.spec.tolerations, [UNSCHEDULABLE], false))
    return 'node(s) were unschedulable';
  if (!matchesNodeSelection(pod, node)) return "node(s) didn't match Pod's node affinity/selector";
  const taints = effectiveTaints(node).filter((t) => t.key !== UNSCHEDULABLE.key);
  const taint = untoleratedTaint(pod.spec.tolerations, taints, true);
  if (taint) return `node(s) had untolerated taint {${formatTaint(taint)}}`;
  if (hostPorts(pod).some((p) => usage.ports.has(p)))
    return "node(s) didn't have free ports for the requested pod ports";
  const wanted = podRequests(pod);
  for (const [name, value] of Object.entries(wanted)) {
    if ((usage.requested[name] ?? 0) + value > (usage.allocatable[name] ?? 0))
      return name === 'pods' ? 'Too many pods' : `Insufficient ${name}`;
  }
  return undefined;
}

/** NodeResourcesFit's LeastAllocated score (0-100): the free share of cpu and memory after the pod. */
function leastAllocated(pod: Pod, usage: NodeUsage): number {
  const wanted = podRequests(pod);
  const free = (name: string) => {
    const capacity = usage.allocatable[name] ?? 0;
    if (capacity === 0) return 0;
    return Math.max(0, capacity - (usage.requested[name] ?? 0) - (wanted[name] ?? 0)) / capacity;
  };
  return ((free(CPU) + free(MEMORY)) / 2) * 100;
}

/** kube-scheduler's FitError text: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) …". */
function fitError(total: number, refusals: readonly Refusal[]): string {
  const counts = new Map<string, number>();
  for (const r of refusals) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([r, n]) => `${n} ${r}`);
  return `0/${total} nodes are available${parts.length > 0 ? `: ${parts.join(', ')}` : ''}.`;
}

export interface SchedulingPass {
  bound: { pod: string; node: string }[];
  /** Pods newly marked (or re-marked with a new reason) Unschedulable, with the message. */
  unschedulable: { pod: string; message: string }[];
}

function podName(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

/**
 * One pass of the stand-in over the fake API server: every pending pod, in creation order, goes to the
 * best-scored node that passes the filters, else is marked Unschedulable. `start()` runs a pass after
 * every change to pods, nodes or DaemonSets, as the real scheduler reacts to its informers.
 */
export class StandInScheduler {
  private unsubscribe: (() => void) | undefined;
  private queued = false;
  private idle: Promise<void> = Promise.resolve();

  constructor(
    private readonly kube: FakeApiServer,
    private readonly onPass: (pass: SchedulingPass) => void = () => undefined,
  ) {}

  start(): this {
    this.unsubscribe ??= this.kube.store.subscribe(() => this.queue());
    this.queue();
    return this;
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Resolves once the passes queued by changes so far have run. */
  async settled(): Promise<void> {
    for (let before = this.idle; ; before = this.idle) {
      await before;
      if (before === this.idle && !this.queued) return;
    }
  }

  private queue(): void {
    if (this.queued) return;
    this.queued = true;
    // A change arrives inside the store's write: the pass runs after it, never nested in it.
    this.idle = new Promise((resolve) =>
      setImmediate(() => {
        this.queued = false;
        try {
          this.schedule();
        } finally {
          resolve();
        }
      }),
    );
  }

  schedule(): SchedulingPass {
    const pass: SchedulingPass = { bound: [], unschedulable: [] };
    const nodes = this.kube.nodes();
    const pods = this.kube.pods();
    const daemonSets = this.kube.store.list('daemonsets') as unknown as Workload[];
    const usage = new Map(nodes.map((n) => [n.metadata.name, nodeUsage(n, pods, daemonSets)]));
    const pending = pods.filter((p) => !p.spec.nodeName && !p.metadata.deletionTimestamp && !isTerminal(p));
    for (const pod of pending) {
      const refusals: Refusal[] = [];
      let best: { usage: NodeUsage; score: number } | undefined;
      for (const u of usage.values()) {
        const why = refusal(pod, u);
        if (why) {
          refusals.push(why);
          continue;
        }
        const score = leastAllocated(pod, u);
        if (!best || score > best.score) best = { usage: u, score };
      }
      const namespace = pod.metadata.namespace ?? 'default';
      if (best) {
        const target = best.usage;
        this.kube.bindPod(namespace, pod.metadata.name, target.node.metadata.name);
        target.requested = addResources(target.requested, podRequests(pod));
        for (const port of hostPorts(pod)) target.ports.add(port);
        pass.bound.push({ pod: podName(pod), node: target.node.metadata.name });
        continue;
      }
      const message = fitError(nodes.length, refusals);
      const current = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
      if (current?.status === 'False' && current.reason === 'Unschedulable' && current.message === message) continue;
      this.kube.updatePod(namespace, pod.metadata.name, (p) => {
        const others = (p.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
        p.status = {
          ...p.status,
          phase: 'Pending',
          conditions: [...others, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
        };
      });
      pass.unschedulable.push({ pod: podName(pod), message });
    }
    if (pass.bound.length > 0 || pass.unschedulable.length > 0) this.onPass(pass);
    return pass;
  }
}
