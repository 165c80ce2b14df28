// The burst benchmark (issue 23): 1,000, 10,000 and 20,000 pending pods from the notice to the last
// CreateFleet, through the real provision decision, the real launcher (records first, identical
// claims batched into one CreateFleet, tags after) and the real pacing, against a fake EC2 that
// takes 1 s per CreateFleet and refuses what EC2's default token buckets would refuse
// (RequestLimitExceeded). Time is the machine's own for computing and skipped ahead for waits
// (EC2 latency, token refills), so the figures are what a Lambda with a 2-minute timeout would see,
// without waiting for them. Each invocation gets 120 s; unstarted batches go to the next one.
//
//   npm run bench                     (after the scheduling suites)
//   npx tsx bench/burst.ts [--record] (this benchmark alone; --record writes bench/results.json)

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { CreateFleetCommandInput, CreateFleetCommandOutput } from '@aws-sdk/client-ec2';
import { LABEL_CAPACITY_TYPE, LABEL_ZONE } from '../shared/apis/v1/labels';
import { METRIC } from '../shared/contracts';
import { loadBuiltInCatalog } from '../shared/instancetypes/catalog';
import { resolveInstanceTypes } from '../shared/instancetypes/resolve';
import type { InstanceType } from '../shared/instancetypes/types';
import { resourceListOf } from '../shared/nodeclaim/launch-record';
import type { ResolvedNodeClass } from '../shared/providers/instance';
import { BatchingInstanceLauncher } from '../shared/providers/instance/batch';
import { InMemoryStateStore } from '../shared/providers/memorystate';
import type { EC2Api } from '../shared/providers/ports';
import { EC2_BUCKETS, pacedEc2, TokenBucket } from '../shared/providers/throttle';
import { InMemoryUnavailableOfferings } from '../shared/providers/unavailableofferings';
import { AwsClaimLauncher } from '../shared/runtime/launcher';
import { LaunchesPendingError, provision } from '../shared/runtime/provision';
import { silentLog } from '../shared/runtime/telemetry';
import { FakeInstances, FakeKube } from '../test/runtime/fakes';
import { makeDiversePods, BENCH_NODE_CLASS as nodeClass, BENCH_NODE_POOL as nodePool } from './pods';

export const BURST_SIZES = (process.env.BURST_SIZES ?? '1000,10000,20000').split(',').map(Number);
/** The provision function's timeout (infra PROVISION_TIMEOUT). */
const INVOCATION_MS = 120_000;
/** A real instant CreateFleet takes about a second. */
const CREATE_FLEET_MS = 1_000;
const CALL_MS = 50;
/** The delay of the first retry of a failed batch (shared/runtime/provision-retry.ts). */
const RETRY_DELAY_MS = 5_000;

export interface BurstResult {
  pods: number;
  nodeClaims: number;
  /** The first invocation's decision (read, plan), computing time. */
  decisionMs: number;
  createFleetCalls: number;
  /** From the notice to the last CreateFleet's answer. */
  secondsToLastLaunch: number;
  invocations: number;
  launchedInFirstInvocation: number;
  /** RequestLimitExceeded answers the fake EC2 gave (the pacing should make them rare). */
  throttled: number;
  /** Records not launched when the benchmark stopped at MAX_INVOCATIONS (0 when every launch went out). */
  unlaunched: number;
  /** NodeClaim records written, and instances launched: equal when nothing launched twice and nothing was abandoned. */
  records: number;
  instances: number;
  /** Claims with more than one instance (must be 0). */
  launchedTwice: number;
  /** The longest invocation, in seconds, and how many ran past INVOCATION_MS (a real Lambda would have been killed: 0). */
  longestInvocationS: number;
  overranTimeout: number;
  /** Pods neither bound nor nominated to a claim at the end (0 when the burst is placed). */
  uncovered: number;
}

/** How long after its launch a node registers and the kube-scheduler binds the pods nominated to it. */
const BIND_AFTER_MS = 90_000;

/**
 * The cluster between two invocations: the pods nominated to a claim whose instance was launched
 * BIND_AFTER_MS ago are bound to its node (the benchmark runs no kubelet), so a burst longer than
 * a nomination's lifetime sees what a real one would: placed pods bound, not pending.
 */
async function bindLaunched(
  kube: FakeKube,
  state: InMemoryStateStore,
  instances: FakeInstances,
  launchedAt: ReadonlyMap<string, number>,
  types: readonly InstanceType[],
  now: number,
): Promise<void> {
  const registered = new Set<string>();
  for (const instance of instances.instances.values()) {
    if ((launchedAt.get(instance.instanceId) ?? now) > now - BIND_AFTER_MS) continue;
    registered.add(instance.nodeClaimName);
    if (kube.nodes.has(instance.nodeClaimName)) continue;
    // Registered and initialized: what is bound there counts against its allocatable.
    const type = types.find((t) => t.name === instance.instanceType);
    kube.putNode({
      metadata: {
        name: instance.nodeClaimName,
        // What registration gives a node (launchedLabels): a pod whose affinity or spread names a
        // bound pod's zone finds it there.
        labels: {
          ...type?.labels,
          [LABEL_ZONE]: instance.zone,
          [LABEL_CAPACITY_TYPE]: instance.capacityType,
          'kubernetes.io/hostname': instance.nodeClaimName,
          'karpenter.sh/nodepool': instance.nodePool,
          'karpenter.sh/registered': 'true',
          'karpenter.sh/initialized': 'true',
        },
      },
      spec: { providerID: `aws:///${instance.zone}/${instance.instanceId}` },
      status: { allocatable: resourceListOf(type?.allocatable ?? {}) },
    });
  }
  const byUid = new Map([...kube.pods.values()].map((p) => [p.metadata.uid, p]));
  for (const nomination of await state.nominations()) {
    if (!registered.has(nomination.nodeClaimName)) continue;
    for (const uid of nomination.podUids) {
      const pod = byUid.get(uid);
      if (pod && !pod.spec.nodeName) {
        pod.spec.nodeName = nomination.nodeClaimName;
        pod.status = { phase: 'Running' };
      }
    }
  }
}

/** A burst still launching after this many invocations is reported as it stands, not waited out. */
const MAX_INVOCATIONS = 30;

/** The node class's subnets: one in each zone the catalog offers. */
function resolvedFor(zones: readonly string[]): ResolvedNodeClass {
  return {
    subnets: zones.map((zone, i) => ({ id: `subnet-${i}`, zone, availableIps: 60_000 })),
    securityGroups: [{ id: 'sg-1' }],
    amis: [
      { id: 'ami-x86', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] },
      { id: 'ami-arm', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] },
    ],
    instanceProfile: 'bench_profile',
    cluster: {
      name: 'bench',
      endpoint: 'https://bench.example',
      caBundle: 'Y2E=',
      serviceCIDR: '172.20.0.0/16',
      version: '1.31',
      dnsIP: '172.20.0.10',
      ipv6: false,
    },
  };
}

/** Real time for computing, skipped ahead over waits: `run` jumps to the next timer when all is idle. */
function skippingTime() {
  let offset = 0;
  const now = () => performance.now() + offset;
  const timers: { at: number; resolve: () => void }[] = [];
  const sleep = (ms: number) => new Promise<void>((resolve) => timers.push({ at: now() + Math.max(0, ms), resolve }));
  async function run<T>(promise: Promise<T>): Promise<T> {
    let settled = false;
    promise.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    while (!settled) {
      await new Promise((r) => setImmediate(r));
      if (settled || timers.length === 0) continue;
      timers.sort((a, b) => a.at - b.at);
      const next = timers.shift();
      if (!next) continue;
      if (next.at > now()) offset += next.at - now();
      next.resolve();
    }
    return promise;
  }
  return { now, sleep, run, skip: (ms: number) => (offset += ms) };
}

function throttled(action: string): Error {
  return Object.assign(new Error(`Request limit exceeded (${action})`), {
    name: 'RequestLimitExceeded',
    Code: 'RequestLimitExceeded',
    $metadata: { httpStatusCode: 503 },
  });
}

/** EC2 as the launch path sees it: latency, and refusals where EC2's default buckets are empty. */
function fakeEc2(
  time: ReturnType<typeof skippingTime>,
  instances: FakeInstances,
  zoneOfSubnet: (id: string) => string,
) {
  const stats = { createFleet: 0, lastLaunchAt: 0, throttled: 0, launched: 0, launchedAt: new Map<string, number>() };
  const bucket = (spec: { capacity: number; refillPerSecond: number }) => new TokenBucket(spec, time.now, time.sleep);
  const requests = new Map<string, TokenBucket>();
  const admit = (action: string, mutating: boolean) => {
    let b = requests.get(action);
    if (!b) {
      b = bucket(mutating ? EC2_BUCKETS.mutating : EC2_BUCKETS.nonMutating);
      requests.set(action, b);
    }
    if (b.available() < 1) {
      stats.throttled++;
      throw throttled(action);
    }
    void b.take(1);
  };
  const launchTokens = bucket(EC2_BUCKETS.runInstancesResource);
  const tagsOf = new Map<string, Map<string, string>>();
  const placed = new Map<string, { instanceType: string; zone: string; capacityType: 'spot' | 'on-demand' }>();
  let next = 0;
  const ec2 = {
    // Answers the launcher's adoption queries (tag:<key> filters) as EC2 would: a batch whose
    // CreateFleet went out but whose claims were not tagged is found again, not launched twice.
    async describeInstances(input: { Filters?: { Name?: string; Values?: string[] }[] }) {
      admit('DescribeInstances', false);
      await time.sleep(CALL_MS);
      const tagFilters = (input.Filters ?? []).filter(
        (f) => f.Name?.startsWith('tag:') && f.Name !== 'tag:eks:eks-cluster-name',
      );
      const matching = [...tagsOf.entries()].filter(([, tags]) =>
        tagFilters.every((f) => f.Values?.includes(tags.get(f.Name?.slice(4) ?? '') ?? '\0')),
      );
      const Instances = matching.map(([id, tags]) => {
        const place = placed.get(id);
        return {
          InstanceId: id,
          InstanceType: place?.instanceType,
          Placement: { AvailabilityZone: place?.zone },
          ...(place?.capacityType === 'spot' ? { InstanceLifecycle: 'spot' } : {}),
          Tags: [...tags.entries()].map(([Key, Value]) => ({ Key, Value })),
        };
      });
      return { $metadata: {}, Reservations: Instances.length > 0 ? [{ Instances }] : [] };
    },
    async createTags(input: { Resources?: string[]; Tags?: { Key?: string; Value?: string }[] }) {
      admit('CreateTags', true);
      await time.sleep(CALL_MS);
      const claim = input.Tags?.find((t) => t.Key === 'karpenter.sh/nodeclaim')?.Value ?? '';
      for (const id of input.Resources ?? []) {
        for (const tag of input.Tags ?? []) tagsOf.get(id)?.set(tag.Key ?? '', tag.Value ?? '');
        instances.add({ instanceId: id, nodeClaimName: claim, nodePool: nodePool.metadata.name, ...placed.get(id) });
      }
      return {};
    },
    async createFleet(input: CreateFleetCommandInput): Promise<CreateFleetCommandOutput> {
      admit('CreateFleet', true);
      const count = input.TargetCapacitySpecification?.TotalTargetCapacity ?? 1;
      if (launchTokens.available() < count) {
        stats.throttled++;
        throw throttled('CreateFleet (instance bucket)');
      }
      void launchTokens.take(count);
      stats.createFleet++;
      await time.sleep(CREATE_FLEET_MS);
      const override = input.LaunchTemplateConfigs?.[0]?.Overrides?.[0];
      const ids = Array.from({ length: count }, () => `i-${(next++).toString(16).padStart(17, '0')}`);
      const capacityType =
        input.TargetCapacitySpecification?.DefaultTargetCapacityType === 'spot' ? 'spot' : 'on-demand';
      const place = {
        instanceType: override?.InstanceType ?? '',
        zone: zoneOfSubnet(override?.SubnetId ?? ''),
        capacityType,
      } as const;
      const launchTags = (input.TagSpecifications ?? [])
        .filter((t) => t.ResourceType === 'instance')
        .flatMap((t) => t.Tags ?? []);
      for (const id of ids) {
        placed.set(id, place);
        tagsOf.set(id, new Map(launchTags.map((t) => [t.Key ?? '', t.Value ?? ''])));
        stats.launchedAt.set(id, time.now());
      }
      const single = input.TagSpecifications?.[0]?.Tags?.find((t) => t.Key === 'karpenter.sh/nodeclaim')?.Value;
      if (single)
        for (const id of ids)
          instances.add({ instanceId: id, nodeClaimName: single, nodePool: nodePool.metadata.name, ...place });
      stats.launched += count;
      stats.lastLaunchAt = time.now();
      return {
        $metadata: {},
        Instances: [
          {
            InstanceIds: ids,
            InstanceType: override?.InstanceType,
            Lifecycle: capacityType,
            LaunchTemplateAndOverrides: { Overrides: { ...override } },
          },
        ],
      };
    },
  };
  return { ec2: ec2 as unknown as EC2Api, stats };
}

async function burst(size: number, types: ReturnType<typeof resolveInstanceTypes>): Promise<BurstResult> {
  const time = skippingTime();
  const instances = new FakeInstances();
  const kube = new FakeKube(async () => {});
  const pods = makeDiversePods(size).map((pod) => ({
    ...pod,
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
  }));
  for (const pod of pods) kube.putPod(pod);
  const state = new InMemoryStateStore(time.now);
  const zones = [...new Set(types.flatMap((t) => t.offerings.map((o) => o.zone)))].sort();
  const { ec2, stats } = fakeEc2(time, instances, (subnet) => zones[Number(subnet.replace('subnet-', ''))] ?? '');
  const paced = pacedEc2(ec2, time.now, time.sleep);
  const batching = new BatchingInstanceLauncher({
    ec2: paced,
    launchTemplates: {
      ensure: async (input) => ({ name: input.LaunchTemplateName ?? '', id: 'lt-1', created: false }),
      invalidate: () => {},
    },
    unavailable: new InMemoryUnavailableOfferings(time.now),
    clusterName: 'bench',
    sleep: time.sleep,
    throttleRetries: 8,
  });
  const launcher = new AwsClaimLauncher({
    nodeClasses: [nodeClass],
    cluster: async () => {
      throw new Error('not used: the node class is resolved in advance');
    },
    resolver: {} as ConstructorParameters<typeof AwsClaimLauncher>[0]['resolver'],
    launcher: batching,
    records: state,
    clock: time.now,
    resolveNodeClass: async () => resolvedFor(zones),
    launchTokens: paced,
  });
  let decisionMs = 0;
  const deps = {
    cluster: 'bench',
    nodePools: [nodePool],
    instanceTypes: async () => ({ byNodePool: { [nodePool.metadata.name]: types }, priceSource: 'bundled' }),
    instances,
    kube,
    state,
    records: state,
    launcher,
    events: { nodeClaimsLaunched: async () => {} },
    clock: time.now,
    log: silentLog,
    metrics: {
      record(name: string, _unit: string, value: number) {
        if (name === METRIC.decisionLatency && decisionMs === 0) decisionMs = value;
      },
    },
  };
  const batch = { pods, daemonSets: [], observedAt: new Date().toISOString() };
  const noticeAt = time.now();
  let invocations = 0;
  let launchedInFirstInvocation = 0;
  let nodeClaims = 0;
  let capped = false;
  let longestInvocationMs = 0;
  let overranTimeout = 0;
  const timed = async <T>(work: Promise<T>): Promise<T> => {
    const started = time.now();
    try {
      return await time.run(work);
    } finally {
      const took = time.now() - started;
      longestInvocationMs = Math.max(longestInvocationMs, took);
      if (took > INVOCATION_MS) overranTimeout++;
    }
  };
  for (;;) {
    invocations++;
    const deadline = time.now() + INVOCATION_MS;
    try {
      const report = await timed(provision(deps, structuredClone(batch), { remainingMs: () => deadline - time.now() }));
      if (invocations === 1) launchedInFirstInvocation = stats.launched;
      nodeClaims = (await state.nodeClaims()).length;
      if (process.env.BURST_DEBUG)
        console.log(JSON.stringify(report.detail.ignored.slice(0, 2)), report.detail.unschedulable.slice(0, 2));
      break;
    } catch (error) {
      if (invocations === 1) launchedInFirstInvocation = stats.launched;
      if (!(error instanceof LaunchesPendingError)) throw error;
      if (invocations >= MAX_INVOCATIONS) {
        nodeClaims = (await state.nodeClaims()).length;
        capped = true;
        break;
      }
      time.skip(RETRY_DELAY_MS);
      await bindLaunched(kube, state, instances, stats.launchedAt, types, time.now());
    }
  }
  const nominatedTo = new Set((await state.nominations()).flatMap((n) => n.podUids));
  const uncovered = [...kube.pods.values()].filter(
    (p) => !p.spec.nodeName && !nominatedTo.has(p.metadata.uid ?? ''),
  ).length;
  const perClaim = new Map<string, number>();
  for (const i of instances.instances.values()) perClaim.set(i.nodeClaimName, (perClaim.get(i.nodeClaimName) ?? 0) + 1);
  return {
    pods: size,
    nodeClaims,
    decisionMs: Math.round(decisionMs * 10) / 10,
    createFleetCalls: stats.createFleet,
    secondsToLastLaunch: Math.round((stats.lastLaunchAt - noticeAt) / 100) / 10,
    invocations,
    launchedInFirstInvocation,
    throttled: stats.throttled,
    unlaunched: capped ? Math.max(0, nodeClaims - stats.launched) : 0,
    records: nodeClaims,
    instances: stats.launched,
    launchedTwice: [...perClaim.values()].filter((n) => n > 1).length,
    uncovered,
    longestInvocationS: Math.round(longestInvocationMs / 100) / 10,
    overranTimeout,
  };
}

/** What goes into bench/results.json as the element with suite "burst". */
export interface BurstResults {
  suite: 'burst';
  fakeEc2: string;
  targets: string;
  sizes: BurstResult[];
}

/** Replaces the burst element of results.json (every other element kept). */
export function recordBurstResults(
  results: BurstResults,
  path = join(dirname(fileURLToPath(import.meta.url)), 'results.json'),
): void {
  let current: unknown = [];
  try {
    current = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    current = [];
  }
  const list = Array.isArray(current) ? current.filter((e) => (e as { suite?: string }).suite !== 'burst') : [current];
  writeFileSync(path, `${JSON.stringify([...list, results], null, 2)}\n`);
  console.log(`wrote the burst figures to ${path}`);
}

export async function runBurstBenchmarks(write = false): Promise<BurstResult[]> {
  console.log(
    '\nkarpless burst benchmark (fake EC2: 1 s per CreateFleet, EC2 default token buckets; waits skipped ahead)',
  );
  const types = resolveInstanceTypes(loadBuiltInCatalog(), nodeClass);
  const out: BurstResult[] = [];
  for (const size of BURST_SIZES) {
    const result = await burst(size, types);
    out.push(result);
    console.log(
      `burst  ${String(size).padStart(6)} pods  ${String(result.nodeClaims).padStart(5)} claims  decision ${result.decisionMs.toFixed(0).padStart(6)} ms  ${result.createFleetCalls} CreateFleet  last launch at ${result.secondsToLastLaunch} s  ${result.invocations} invocation(s), ${result.launchedInFirstInvocation} instances in the first  ${result.throttled} throttled  ${result.records} records / ${result.instances} instances, ${result.launchedTwice} launched twice, ${result.uncovered} pods uncovered  longest invocation ${result.longestInvocationS} s, ${result.overranTimeout} over the ${INVOCATION_MS / 1000} s timeout${result.unlaunched > 0 ? `  ${result.unlaunched} claims still unlaunched after ${MAX_INVOCATIONS} invocations` : ''}`,
    );
  }
  if (write) {
    recordBurstResults({
      suite: 'burst',
      fakeEc2: `CreateFleet ${CREATE_FLEET_MS} ms; request buckets ${EC2_BUCKETS.mutating.capacity}+${EC2_BUCKETS.mutating.refillPerSecond}/s (mutating), ${EC2_BUCKETS.nonMutating.capacity}+${EC2_BUCKETS.nonMutating.refillPerSecond}/s (describe); instance bucket ${EC2_BUCKETS.runInstancesResource.capacity}+${EC2_BUCKETS.runInstancesResource.refillPerSecond}/s; ${INVOCATION_MS / 1000} s invocations`,
      targets: '20,000 pods launched within 60 s; 10,000 within the first invocation',
      sizes: out,
    });
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runBurstBenchmarks(process.argv.includes('--record'));
}
