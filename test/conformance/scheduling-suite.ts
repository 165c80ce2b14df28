// Loads and judges the scheduler conformance cases: Karpenter's scheduler tests
// (pkg/controllers/provisioning/scheduling/*_test.go) translated It by It into the input of
// `karpless plan` (NodePools, pods, DaemonSets, existing nodes, the fake cloud provider's instance
// types) and what upstream expects of the outcome.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type {
  NodeSelectorRequirement,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  PodAffinityTerm,
  PodSpec,
  WeightedPodAffinityTerm,
} from '../../shared/apis/core/v1';
import type { NodePool, NodeSelectorRequirementWithMinValues, Taint } from '../../shared/apis/v1/types';
import type { InstanceType } from '../../shared/instancetypes/types';
import { type ExistingNode, podRequests, type SchedulingResult, solve } from '../../shared/scheduling';
import { compileSelector } from '../../shared/scheduling/topology';
import { type VolumeObjects, volumeTopology } from '../../shared/scheduling/volumetopology';
import { isActive } from '../../shared/termination/pods';
import { notProvisionableReason } from '../../shared/workloads/provisionable';
import {
  type FakeOptions,
  fakeInstanceType,
  fakeInstanceTypes,
  fakeInstanceTypesAssorted,
  fakeInstanceTypesN,
} from './scheduling/fake-cloudprovider';
import type { UpstreamSource } from './suite';

export const SCHEDULING_DIR = join(import.meta.dirname, 'scheduling');

interface RawPool {
  name?: string;
  requirements?: NodeSelectorRequirementWithMinValues[];
  labels?: Record<string, string>;
  taints?: Taint[];
  startupTaints?: Taint[];
  limits?: Record<string, string>;
  weight?: number;
}

/** A pod as test.UnschedulablePod builds it: spec fields as they are, plus shorthands. */
interface RawPod extends Partial<PodSpec> {
  name: string;
  /** test.UnschedulablePods(opts, count): pods `name-0` … `name-(count-1)`. */
  count?: number;
  namespace?: string;
  labels?: Record<string, string>;
  /** Container requests (upstream sets requests or limits; limits alone are requests too). */
  requests?: Record<string, string>;
  hostPorts?: number[];
  /** test.PodOptions NodeRequirements: one required node-affinity term. */
  nodeRequirements?: NodeSelectorRequirement[];
  /** test.PodOptions NodePreferences: one preferred node-affinity term of weight 1. */
  nodePreferences?: NodeSelectorRequirement[];
  /** test.PodOptions PodRequirements / PodPreferences: required and preferred pod affinity terms. */
  podRequirements?: PodAffinityTerm[];
  podPreferences?: WeightedPodAffinityTerm[];
  /** test.PodOptions PodAntiRequirements / PodAntiPreferences: required and preferred pod anti-affinity terms. */
  podAntiRequirements?: PodAffinityTerm[];
  podAntiPreferences?: WeightedPodAffinityTerm[];
  /** test.Pod instead of test.UnschedulablePod: no PodScheduled=False/Unschedulable condition, so never provisioned for. */
  unmarked?: boolean;
  /** status.phase (Failed and Succeeded pods are ignored for topology, as upstream's IgnoredForTopology). */
  phase?: string;
  /** A deletionTimestamp: being deleted. */
  terminating?: boolean;
  /** test.PodOptions PersistentVolumeClaims: a volume per claim name. */
  persistentVolumeClaims?: string[];
}

/** test.PersistentVolume (with Zones: its node affinity) and test.PersistentVolumeClaim (bound by VolumeName). */
interface RawVolumes {
  persistentVolumes?: { name: string; zones?: string[] }[];
  persistentVolumeClaims?: { name: string; namespace?: string; volumeName?: string; storageClassName?: string }[];
}

interface RawNode {
  name: string;
  /** This many alike nodes, `name-0` … `name-(count-1)`. */
  count?: number;
  labels?: Record<string, string>;
  taints?: Taint[];
  allocatable: Record<string, number | string>;
  initialized?: boolean;
  startupTaints?: Taint[];
  inFlight?: boolean;
  pods?: RawPod[];
}

export interface Expectation {
  /** Pod names that get a node (existing or planned); `all` for every pod. */
  scheduled?: string[] | 'all';
  /** Pod names that stay unschedulable; `all` for every pod. */
  unschedulable?: string[] | 'all';
  /** How many of the case's pods get a node, whichever they are. */
  scheduledCount?: number;
  /** How many NodeClaims are planned. */
  claims?: number;
  /** Labels the node a pod lands on has (a planned claim: its single-valued requirements and its offering). */
  nodeLabels?: Record<string, Record<string, string>>;
  /** Label keys the node a pod lands on must not have. */
  notNodeLabels?: Record<string, string[]>;
  /** Label values the node a pod lands on must not have (Gomega's HaveKeyWithValue(k, Not(Equal(v)))). */
  notNodeLabelValues?: Record<string, Record<string, string>>;
  sameNode?: string[][];
  differentNodes?: string[][];
  /** Pod → the existing node it lands on. */
  onExisting?: Record<string, string>;
  /** Every claim launches at the lowest offering price of all the case's instance types (upstream minPrice). */
  cheapest?: boolean;
  /** supportedInstanceTypes(CreateCalls[…]): what every type a planned claim may launch as has. */
  claimTypes?: ClaimTypesExpectation;
  /** Pod → text its unschedulable reason contains (upstream's PodErrors). */
  reasons?: Record<string, string>;
  /**
   * ExpectSkew: pods of the namespace matching the selector, scheduled and not terminal or terminating,
   * per domain of the key: `counts` sorted high to low (ConsistOf), `max` no domain above it
   * (ToNot(ContainElements(BeNumerically(">", max)))), `maxSkew` the largest minus the smallest at most
   * that (ExpectMaxSkew). No selector: every pod.
   */
  skew?: Skew | Skew[];
  /** Pods whose nodes have the same value of the label key (`sameLabel`) or pairwise different values. */
  sameLabel?: { key: string; pods: string[] }[];
  differentLabel?: { key: string; pods: string[] }[];
  /** The taints the node a pod lands on has (a planned claim: its NodePool's taints), exactly. */
  nodeTaints?: Record<string, Taint[]>;
  /** At most `atMost` nodes (existing and planned) keep `amount` (base units) of `resource` free. */
  freeNodes?: { resource: string; amount: number; atMost: number };
}

interface Skew {
  topologyKey: string;
  selector?: Record<string, string>;
  namespace?: string;
  counts?: number[];
  max?: number;
  maxSkew?: number;
}

export interface ClaimTypesExpectation {
  /** ExpectInstancesWithLabel for arch and os: every type has the label. */
  labels?: Record<string, string>;
  /** ExpectInstancesWithLabel for zone / capacity type: every type has an offering there. */
  zone?: string;
  capacityType?: string;
  /** ExpectInstancesWithOffering: every type has one offering of both. */
  offering?: { zone: string; capacityType: string };
  /** At least this many types (minValues). */
  minCount?: number;
  /** Every type's capacity exceeds the claim's pods' requests plus the type's overhead, in cpu and memory. */
  fitsRequests?: boolean;
}

/** Which fake instance types a case plans with: fake.InstanceTypes(count) or fake.InstanceTypesAssorted(). */
export interface FakeTypeSet {
  count?: number;
  assorted?: boolean;
  /** Resources added per type name. */
  extra?: Record<string, Record<string, number>>;
  /** filterInstanceTypes: types with all these labels (and, with `zone`, an offering there) are removed. */
  except?: { labels?: Record<string, string>; zone?: string }[];
  /** Only the first N types of the list (upstream takes N of its shuffled list). */
  first?: number;
}

export interface SchedulingCase {
  file: string;
  source: UpstreamSource;
  it: string;
  line?: number;
  nodePools: RawPool[];
  /** Instead of the fake provider's default list: `fakeInstanceTypes: N` is fake.InstanceTypes(N), `extra` resources added per type. */
  instanceTypes?: (FakeOptions & { name: string })[];
  /** cloudProvider.InstanceTypesForNodePool: a NodePool's own types instead of the case's. */
  instanceTypesByPool?: Record<string, (FakeOptions & { name: string })[]>;
  fakeInstanceTypes?: FakeTypeSet;
  pods: RawPod[];
  daemonSets?: RawPod[];
  existingNodes?: RawNode[];
  volumes?: RawVolumes;
  expect: Expectation;
  incomparable?: string;
  /** An upstream spec `karpless plan` could express that is not translated yet, and what it needs. */
  untranslated?: string;
  note?: string;
}

interface RawFile {
  source: UpstreamSource;
  /** The BeforeEach NodePool. */
  nodePool: RawPool;
  /** The BeforeEach instance types, for cases that set none. */
  fakeInstanceTypes?: FakeTypeSet;
  cases: (Omit<SchedulingCase, 'file' | 'source' | 'nodePools'> & { nodePool?: RawPool; nodePools?: RawPool[] })[];
}

export function loadSchedulingCases(dir = SCHEDULING_DIR): SchedulingCase[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .flatMap((file) => {
      const raw = parse(readFileSync(join(dir, file), 'utf8')) as RawFile;
      return raw.cases.map(({ nodePool, nodePools, ...c }) => ({
        ...c,
        file,
        source: raw.source,
        pods: c.pods ?? [],
        expect: c.expect ?? {},
        nodePools: nodePools ?? [{ ...raw.nodePool, ...(nodePool ?? {}) }],
        ...(raw.fakeInstanceTypes && !c.instanceTypes && !c.fakeInstanceTypes
          ? { fakeInstanceTypes: raw.fakeInstanceTypes }
          : {}),
      }));
    });
}

function toNodePool(raw: RawPool): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: raw.name ?? 'default' },
    spec: {
      ...(raw.limits ? { limits: raw.limits } : {}),
      ...(raw.weight !== undefined ? { weight: raw.weight } : {}),
      template: {
        ...(raw.labels ? { metadata: { labels: raw.labels } } : {}),
        spec: {
          requirements: raw.requirements ?? [],
          ...(raw.taints ? { taints: raw.taints } : {}),
          ...(raw.startupTaints ? { startupTaints: raw.startupTaints } : {}),
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        },
      },
    },
  };
}

function toPods(raw: RawPod): Pod[] {
  const {
    name,
    count,
    namespace,
    labels,
    requests,
    hostPorts,
    nodeRequirements,
    nodePreferences,
    podRequirements,
    podPreferences,
    podAntiRequirements,
    podAntiPreferences,
    unmarked,
    phase,
    terminating,
    persistentVolumeClaims,
    ...spec
  } = raw;
  if (persistentVolumeClaims) {
    spec.volumes = persistentVolumeClaims.map((claimName) => ({
      name: claimName,
      persistentVolumeClaim: { claimName },
    }));
  }
  if (nodeRequirements || nodePreferences) {
    spec.affinity = {
      ...(spec.affinity ?? {}),
      nodeAffinity: {
        ...(nodeRequirements
          ? {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: nodeRequirements }],
              },
            }
          : {}),
        ...(nodePreferences
          ? {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 1, preference: { matchExpressions: nodePreferences } },
              ],
            }
          : {}),
      },
    };
  }
  if (podRequirements || podPreferences) {
    spec.affinity = {
      ...(spec.affinity ?? {}),
      podAffinity: {
        ...(podRequirements ? { requiredDuringSchedulingIgnoredDuringExecution: podRequirements } : {}),
        ...(podPreferences ? { preferredDuringSchedulingIgnoredDuringExecution: podPreferences } : {}),
      },
    };
  }
  if (podAntiRequirements || podAntiPreferences) {
    spec.affinity = {
      ...(spec.affinity ?? {}),
      podAntiAffinity: {
        ...(podAntiRequirements ? { requiredDuringSchedulingIgnoredDuringExecution: podAntiRequirements } : {}),
        ...(podAntiPreferences ? { preferredDuringSchedulingIgnoredDuringExecution: podAntiPreferences } : {}),
      },
    };
  }
  const status: NonNullable<Pod['status']> = {
    ...(phase ? { phase } : {}),
    ...(unmarked ? {} : { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] }),
  };
  const make = (podName: string): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName,
      namespace: namespace ?? 'default',
      ...(labels ? { labels } : {}),
      ...(terminating ? { deletionTimestamp: '2026-01-01T00:00:10Z' } : {}),
    },
    spec: {
      ...structuredClone(spec),
      containers: [
        {
          name: 'app',
          ...(requests ? { resources: { requests } } : {}),
          ...(hostPorts ? { ports: hostPorts.map((hostPort) => ({ containerPort: hostPort, hostPort })) } : {}),
        },
      ],
    },
    status,
  });
  return count === undefined ? [make(name)] : Array.from({ length: count }, (_, i) => make(`${name}-${i}`));
}

export interface Outcome {
  result: SchedulingResult;
  /** The pods the case applies; only those upstream's provisioner would take (IsProvisionable) are planned. */
  pods: Pod[];
  /** The instance types the case planned with. */
  types: InstanceType[];
  /** The pods the existing nodes already run. */
  bound: Pod[];
  /** Pod name → the node it runs on or lands on: `existing/<name>` or `claim/<index>`, with that node's labels and taints. */
  placement: Map<string, Placement>;
}

interface Placement {
  node: string;
  labels: Record<string, string>;
  taints: Taint[];
}

function fakeTypes(set: FakeTypeSet): InstanceType[] {
  let types = set.assorted ? fakeInstanceTypesAssorted() : fakeInstanceTypesN(set.count ?? 0);
  for (const t of types) {
    const extra = set.extra?.[t.name];
    if (extra) {
      Object.assign(t.capacity, extra);
      Object.assign(t.allocatable, extra);
    }
  }
  for (const x of set.except ?? [])
    types = types.filter(
      (t) =>
        !(
          Object.entries(x.labels ?? {}).every(([k, v]) => t.labels[k] === v) &&
          (x.zone === undefined || t.offerings.some((o) => o.zone === x.zone))
        ),
    );
  return set.first === undefined ? types : types.slice(0, set.first);
}

export function caseInstanceTypes(c: SchedulingCase): InstanceType[] {
  if (c.instanceTypes) return c.instanceTypes.map((o) => fakeInstanceType(o.name, o));
  return c.fakeInstanceTypes ? fakeTypes(c.fakeInstanceTypes) : fakeInstanceTypes();
}

export function plan(c: SchedulingCase): Outcome {
  const nodePools = c.nodePools.map(toNodePool);
  const types = caseInstanceTypes(c);
  const pods = c.pods.flatMap(toPods);
  const existingNodes: ExistingNode[] = expandNodes(c.existingNodes ?? []).map((n) => ({
    name: n.name,
    labels: { 'kubernetes.io/hostname': n.name, ...(n.labels ?? {}) },
    taints: n.taints ?? [],
    allocatable: Object.fromEntries(Object.entries(n.allocatable).map(([k, v]) => [k, Number(v)])),
    pods: (n.pods ?? []).flatMap(toPods).map((p) => {
      const { conditions: _, ...status } = p.status ?? {};
      return { ...p, spec: { ...p.spec, nodeName: n.name }, status };
    }),
    ...(n.initialized !== undefined ? { initialized: n.initialized } : {}),
    ...(n.startupTaints ? { startupTaints: n.startupTaints } : {}),
    ...(n.inFlight ? { inFlight: true } : {}),
  }));
  // As the provision function: a pod's volumes add node requirements, or make it unschedulable.
  const objects = volumeObjects(c.volumes ?? {});
  const planned: Pod[] = [];
  const volumeRequirements = new Map<Pod, NodeSelectorRequirement[]>();
  for (const p of pods.filter((x) => notProvisionableReason(x) === undefined)) {
    const topology = volumeTopology(p, objects);
    if ('unschedulable' in topology) continue;
    planned.push(p);
    if (topology.requirements.length > 0) volumeRequirements.set(p, topology.requirements);
  }
  const result = solve({
    pods: planned,
    volumeRequirements,
    nodePools,
    instanceTypes: Object.fromEntries(
      nodePools.map((p) => {
        const own = c.instanceTypesByPool?.[p.metadata.name];
        return [p.metadata.name, own ? own.map((o) => fakeInstanceType(o.name, o)) : types];
      }),
    ),
    daemonSets: (c.daemonSets ?? []).flatMap(toPods),
    existingNodes,
  });
  const placement = new Map<string, Placement>();
  const bound: Pod[] = [];
  for (const node of existingNodes) {
    for (const p of node.pods) {
      bound.push(p);
      placement.set(p.metadata.name, { node: `existing/${node.name}`, labels: node.labels, taints: node.taints });
    }
  }
  for (const e of result.existingNodes) {
    const node = existingNodes.find((n) => n.name === e.name)!;
    for (const p of e.pods)
      placement.set(p.metadata.name, { node: `existing/${e.name}`, labels: node.labels, taints: node.taints });
  }
  result.nodeClaims.forEach((claim, i) => {
    const pool = nodePools.find((p) => p.metadata.name === claim.nodePool)!;
    const type = claim.instanceTypes.find((t) => t.name === claim.offering.instanceType) ?? claim.instanceTypes[0]!;
    const labels: Record<string, string> = { ...type.labels };
    for (const r of claim.requirements) if (r.operator === 'In' && r.values?.length === 1) labels[r.key] = r.values[0]!;
    Object.assign(labels, pool.spec.template.metadata?.labels ?? {}, {
      'karpenter.sh/nodepool': claim.nodePool,
      'topology.kubernetes.io/zone': claim.offering.zone,
      'karpenter.sh/capacity-type': claim.offering.capacityType,
      'node.kubernetes.io/instance-type': claim.offering.instanceType,
      'kubernetes.io/hostname': `claim-${i}`,
    });
    // Registration labels a reserved node with its reservation (upstream's cloudprovider.ReservationIDLabel).
    if (claim.offering.reservationId)
      labels['karpenter.k8s.aws/capacity-reservation-id'] = claim.offering.reservationId;
    const taints = pool.spec.template.spec.taints ?? [];
    for (const p of claim.pods) placement.set(p.metadata.name, { node: `claim/${i}`, labels, taints });
  });
  return { result, pods, bound, placement, types };
}

function expandNodes(nodes: RawNode[]): RawNode[] {
  return nodes.flatMap(({ count, ...n }) =>
    count === undefined ? [n] : Array.from({ length: count }, (_, i) => ({ ...n, name: `${n.name}-${i}` })),
  );
}

function volumeObjects(raw: RawVolumes): VolumeObjects {
  const volumes = (raw.persistentVolumes ?? []).map((v): [string, PersistentVolume] => [
    v.name,
    {
      metadata: { name: v.name },
      spec: {
        ...(v.zones
          ? {
              nodeAffinity: {
                required: {
                  nodeSelectorTerms: [
                    { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: v.zones }] },
                  ],
                },
              },
            }
          : {}),
      },
    },
  ]);
  const claims = (raw.persistentVolumeClaims ?? []).map((c): [string, PersistentVolumeClaim] => [
    `${c.namespace ?? 'default'}/${c.name}`,
    {
      metadata: { name: c.name, namespace: c.namespace ?? 'default' },
      spec: {
        ...(c.volumeName ? { volumeName: c.volumeName } : {}),
        ...(c.storageClassName ? { storageClassName: c.storageClassName } : {}),
      },
    },
  ]);
  return { claims: new Map(claims), volumes: new Map(volumes), classes: new Map() };
}

const names = (list: string[] | 'all', pods: Pod[]) => (list === 'all' ? pods.map((p) => p.metadata.name) : list);

/** Every way the plan differs from what upstream expects; empty when it agrees. */
export function disagreements(c: SchedulingCase, o: Outcome): string[] {
  const out: string[] = [];
  const e = c.expect;
  const where = (pod: string) => o.placement.get(pod);
  for (const pod of names(e.scheduled ?? [], o.pods)) if (!where(pod)) out.push(`${pod}: not scheduled`);
  for (const pod of names(e.unschedulable ?? [], o.pods))
    if (where(pod)) out.push(`${pod}: scheduled (${where(pod)!.node})`);
  const scheduledCount = o.pods.filter((p) => where(p.metadata.name)).length;
  if (e.scheduledCount !== undefined && scheduledCount !== e.scheduledCount)
    out.push(`${scheduledCount} pods scheduled, upstream ${e.scheduledCount}`);
  if (e.claims !== undefined && o.result.nodeClaims.length !== e.claims)
    out.push(`${o.result.nodeClaims.length} claims planned, upstream ${e.claims}`);
  for (const [pod, labels] of Object.entries(e.nodeLabels ?? {})) {
    const at = where(pod);
    for (const [k, v] of Object.entries(labels))
      if (at?.labels[k] !== v) out.push(`${pod}: node label ${k}=${at?.labels[k]}, upstream ${v}`);
  }
  for (const [pod, keys] of Object.entries(e.notNodeLabels ?? {})) {
    const at = where(pod);
    for (const k of keys) if (at?.labels[k] !== undefined) out.push(`${pod}: node has label ${k}`);
  }
  for (const [pod, labels] of Object.entries(e.notNodeLabelValues ?? {})) {
    const at = where(pod);
    for (const [k, v] of Object.entries(labels))
      if (!at || at.labels[k] === undefined || at.labels[k] === v)
        out.push(`${pod}: node label ${k}=${at?.labels[k]}, upstream not ${v}`);
  }
  for (const group of e.sameNode ?? []) {
    const nodes = new Set(group.map((p) => where(p)?.node));
    if (nodes.size !== 1 || nodes.has(undefined)) out.push(`${group.join(', ')}: not on one node`);
  }
  for (const group of e.differentNodes ?? []) {
    const nodes = group.map((p) => where(p)?.node);
    if (nodes.includes(undefined) || new Set(nodes).size !== nodes.length)
      out.push(`${group.join(', ')}: not on different nodes`);
  }
  for (const [pod, node] of Object.entries(e.onExisting ?? {}))
    if (where(pod)?.node !== `existing/${node}`) out.push(`${pod}: on ${where(pod)?.node}, upstream ${node}`);
  if (e.cheapest) {
    const min = Math.min(...o.types.flatMap((t) => t.offerings.map((x) => x.price)));
    for (const [i, claim] of o.result.nodeClaims.entries())
      if (claim.offering.price !== min) out.push(`claim ${i}: offering price ${claim.offering.price}, upstream ${min}`);
  }
  if (e.claimTypes)
    for (const [i, claim] of o.result.nodeClaims.entries())
      out.push(...claimTypeDisagreements(e.claimTypes, claim).map((d) => `claim ${i}: ${d}`));
  for (const [pod, text] of Object.entries(e.reasons ?? {})) {
    const reasons = o.result.unschedulable.find((u) => u.pod.metadata.name === pod)?.reasons ?? [];
    if (!reasons.some((r) => r.includes(text))) out.push(`${pod}: reasons ${JSON.stringify(reasons)} lack "${text}"`);
  }
  if (e.freeNodes) out.push(...freeNodeDisagreements(e.freeNodes, c, o));
  for (const skew of e.skew === undefined ? [] : Array.isArray(e.skew) ? e.skew : [e.skew]) {
    out.push(...skewDisagreements(skew, o));
  }
  for (const { key, pods } of e.sameLabel ?? []) {
    const values = new Set(pods.map((p) => where(p)?.labels[key]));
    if (values.size !== 1 || values.has(undefined)) out.push(`${pods.join(', ')}: ${key} differs (${[...values]})`);
  }
  for (const { key, pods } of e.differentLabel ?? []) {
    const values = pods.map((p) => where(p)?.labels[key]);
    if (values.includes(undefined) || new Set(values).size !== values.length)
      out.push(`${pods.join(', ')}: ${key} not pairwise different (${values})`);
  }
  for (const [pod, taints] of Object.entries(e.nodeTaints ?? {})) {
    const got = where(pod)?.taints;
    if (JSON.stringify(got) !== JSON.stringify(taints))
      out.push(`${pod}: node taints ${JSON.stringify(got)}, upstream ${JSON.stringify(taints)}`);
  }
  return out;
}

function claimTypeDisagreements(e: ClaimTypesExpectation, claim: SchedulingResult['nodeClaims'][number]): string[] {
  const out: string[] = [];
  const types = claim.instanceTypes;
  if (e.minCount !== undefined && types.length < e.minCount)
    out.push(`${types.length} instance types, upstream at least ${e.minCount}`);
  const requests = claim.pods.map(podRequests);
  const sum = (k: string) => requests.reduce((a, r) => a + (r[k] ?? 0), 0);
  for (const t of types) {
    for (const [k, v] of Object.entries(e.labels ?? {}))
      if (t.labels[k] !== v) out.push(`${t.name}: ${k}=${t.labels[k]}, upstream ${v}`);
    if (e.zone !== undefined && !t.offerings.some((x) => x.zone === e.zone))
      out.push(`${t.name}: no offering in ${e.zone}`);
    if (e.capacityType !== undefined && !t.offerings.some((x) => x.capacityType === e.capacityType))
      out.push(`${t.name}: no ${e.capacityType} offering`);
    const { offering } = e;
    if (offering && !t.offerings.some((x) => x.zone === offering.zone && x.capacityType === offering.capacityType))
      out.push(`${t.name}: no ${offering.capacityType} offering in ${offering.zone}`);
    if (e.fitsRequests)
      for (const k of ['cpu', 'memory']) {
        const overhead =
          (t.overhead.kubeReserved[k] ?? 0) +
          (t.overhead.systemReserved[k] ?? 0) +
          (t.overhead.evictionThreshold[k] ?? 0);
        if (sum(k) + overhead >= (t.capacity[k] ?? 0))
          out.push(`${t.name}: ${k} requests + overhead not below capacity`);
      }
  }
  return out;
}

/** Upstream's ExpectSkew / ExpectMaxSkew: scheduled, active pods of the namespace that the selector matches, per domain. */
function skewDisagreements(skew: Skew, o: Outcome): string[] {
  const selector = compileSelector(skew.selector ? { matchLabels: skew.selector } : {});
  const namespace = skew.namespace ?? 'default';
  const counts = new Map<string, number>();
  for (const p of [...o.pods, ...o.bound]) {
    if ((p.metadata.namespace ?? 'default') !== namespace || !isActive(p)) continue;
    if (!selector.matches(p.metadata.labels ?? {})) continue;
    const d = o.placement.get(p.metadata.name)?.labels[skew.topologyKey];
    if (d !== undefined) counts.set(d, (counts.get(d) ?? 0) + 1);
  }
  const got = [...counts.values()].sort((a, b) => b - a);
  const out: string[] = [];
  const upstream = JSON.stringify(skew.counts);
  if (skew.counts && JSON.stringify(got) !== upstream)
    out.push(`skew on ${skew.topologyKey}: ${JSON.stringify(got)}, upstream ${upstream}`);
  if (skew.max !== undefined && got.some((n) => n > skew.max!))
    out.push(`skew on ${skew.topologyKey}: ${JSON.stringify(got)}, upstream none above ${skew.max}`);
  if (skew.maxSkew !== undefined && got.length > 0 && got[0]! - got[got.length - 1]! > skew.maxSkew)
    out.push(`skew on ${skew.topologyKey}: ${JSON.stringify(got)}, upstream a max skew of ${skew.maxSkew}`);
  return out;
}

function freeNodeDisagreements(e: NonNullable<Expectation['freeNodes']>, c: SchedulingCase, o: Outcome): string[] {
  const sum = (pods: Pod[]) => pods.reduce((a, p) => a + (podRequests(p)[e.resource] ?? 0), 0);
  const free: string[] = [];
  for (const n of expandNodes(c.existingNodes ?? [])) {
    const placed = o.result.existingNodes.find((x) => x.name === n.name)?.pods ?? [];
    const used = sum((n.pods ?? []).flatMap(toPods)) + sum(placed);
    if (Number(n.allocatable[e.resource] ?? 0) - used >= e.amount) free.push(`existing/${n.name}`);
  }
  for (const [i, claim] of o.result.nodeClaims.entries()) {
    const type = o.types.find((t) => t.name === claim.offering.instanceType);
    if ((type?.allocatable[e.resource] ?? 0) - (claim.requests[e.resource] ?? 0) >= e.amount) free.push(`claim/${i}`);
  }
  return free.length > e.atMost
    ? [`${free.length} nodes keep ${e.amount} ${e.resource} free (${free.join(', ')}), upstream at most ${e.atMost}`]
    : [];
}
