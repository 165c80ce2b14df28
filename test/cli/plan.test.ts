import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedInstanceTypes } from '../../bench/run';
import type { PlanJSON } from '../../cli/commands/plan';
import { requireConfiguration } from '../../shared/apis/config';
import { readManifestFiles } from '../../shared/apis/load';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { loadBuiltInCatalog } from '../../shared/instancetypes/catalog';
import { resolveInstanceTypes } from '../../shared/instancetypes/resolve';
import { podKey } from '../../shared/scheduling';
import { collectWorkloads } from '../../shared/workloads';
import { karplessAsync, inProcess as runInProcess } from './run';

const karpless = (...args: string[]) => karplessAsync(args);
const inProcess = (...args: string[]) => runInProcess(['plan', ...args]);

const EXAMPLES = ['--manifests', 'examples/manifests', '--pods', 'examples/workloads'];

describe('karpless plan on the examples (child process)', () => {
  let human: Awaited<ReturnType<typeof karpless>>;
  let json: Awaited<ReturnType<typeof karpless>>;
  let plan: PlanJSON;

  beforeAll(async () => {
    [human, json] = await Promise.all([karpless('plan', ...EXAMPLES), karpless('plan', ...EXAMPLES, '--json')]);
    plan = JSON.parse(json.stdout) as PlanJSON;
  }, 60_000);

  it('exits 0 although one pod is unschedulable', () => {
    expect(human.code).toBe(0);
    expect(json.code).toBe(0);
  });

  it('prints a table of claims, the unschedulable pods with reasons, then the total', () => {
    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(/^NODEPOOL\s+INSTANCE TYPE\s+CAPACITY\s+ZONE\s+PODS\s+\$\/HOUR$/);
    const claimLines = lines.slice(1, lines.indexOf(''));
    expect(claimLines.length).toBe(plan.nodeClaims.length);
    for (const line of claimLines) {
      expect(line).toMatch(
        /^(general|gpu)\s+\S+( \+\d+ alternatives)?\s+(spot|on-demand)\s+us-east-1[a-f]\s+\d+\s+\d+\.\d{4}$/,
      );
    }
    expect(human.stdout).toContain('Unschedulable pods (1):\n  default/huge\n    NodePool ');
    expect(lines.filter((l) => l !== '').at(-1)).toMatch(
      /^Total: \d+ NodeClaims for \d+ pods, \$\d+\.\d{4}\/hour \(1 unschedulable\)$/,
    );
  });

  it('says on stderr that spot prices are on-demand estimates', () => {
    expect(human.stderr).toMatch(/^note: .*spot.*on-demand/m);
  });

  it('puts every pod of examples/workloads exactly once in a claim or in unschedulable', () => {
    const expected = collectWorkloads(readManifestFiles(['examples/workloads']).documents).pending.map(podKey);
    const seen = [...plan.nodeClaims.flatMap((c) => c.pods), ...plan.unschedulable.map((u) => u.pod)];
    expect(seen.sort()).toEqual([...expected].sort());
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('follows the --json contract', () => {
    for (const claim of plan.nodeClaims) {
      expect(claim).toMatchObject({
        nodePool: expect.any(String),
        offering: {
          instanceType: claim.instanceTypes[0],
          zone: expect.stringMatching(/^us-east-1[a-f]$/),
          capacityType: expect.stringMatching(/^(spot|on-demand)$/),
          price: expect.any(Number),
        },
      });
      expect(claim.instanceTypes.length).toBeGreaterThan(0);
      expect(claim.pods.length).toBeGreaterThan(0);
    }
    const sum = plan.nodeClaims.reduce((total, c) => total + c.offering.price, 0);
    expect(plan.totalPrice).toBeCloseTo(sum, 6);
  });

  it('lists the impossible pod as unschedulable with a reason naming a NodePool', () => {
    expect(plan.unschedulable.map((u) => u.pod)).toEqual(['default/huge']);
    expect(plan.unschedulable[0]?.reasons.some((r) => /NodePool (general|gpu)\b/.test(r))).toBe(true);
  });

  it('puts the GPU job on a claim of the gpu NodePool', () => {
    const claim = plan.nodeClaims.find((c) => c.pods.includes('ml/train-resnet-0'));
    expect(claim?.nodePool).toBe('gpu');
  });

  it('puts the arm64-only pods on arm64 instance types only', () => {
    const arch = new Map(loadBuiltInCatalog().instanceTypes.map((t) => [t.name, t.arch]));
    const claims = plan.nodeClaims.filter((c) => c.pods.some((p) => p.startsWith('media/thumbnailer-')));
    expect(claims.length).toBeGreaterThan(0);
    for (const claim of claims) {
      expect(arch.get(claim.offering.instanceType)).toBe('arm64');
      expect(new Set(claim.instanceTypes.map((t) => arch.get(t)))).toEqual(new Set(['arm64']));
    }
  });

  it('spreads the web replicas over zones with a skew of at most 1', () => {
    const perZone = new Map<string, number>();
    for (const claim of plan.nodeClaims) {
      const web = claim.pods.filter((p) => p.startsWith('shop/web-')).length;
      if (web > 0) perZone.set(claim.offering.zone, (perZone.get(claim.offering.zone) ?? 0) + web);
    }
    const counts = [...perZone.values()];
    expect(counts.reduce((a, b) => a + b, 0)).toBe(6);
    // Zones the general NodePool can launch into but that got no replica count as 0 in the skew.
    const { config } = requireConfiguration(['examples/manifests']);
    const general = config.nodePools.find((p) => p.metadata.name === 'general') as NodePool;
    const nodeClass = config.nodeClasses.find((c) => c.metadata.name === general.spec.template.spec.nodeClassRef.name);
    const types = allowedInstanceTypes(general, resolveInstanceTypes(loadBuiltInCatalog(), nodeClass as EC2NodeClass));
    const zones = new Set(types.flatMap((t) => t.offerings.filter((o) => o.available).map((o) => o.zone)));
    const min = perZone.size < zones.size ? 0 : Math.min(...counts);
    expect(Math.max(...counts) - min).toBeLessThanOrEqual(1);
  });

  it('puts no two API replicas on one claim (hostname anti-affinity)', () => {
    const claims = plan.nodeClaims.filter((c) => c.pods.some((p) => p.startsWith('shop/api-')));
    expect(claims).toHaveLength(3);
    for (const claim of claims) expect(claim.pods.filter((p) => p.startsWith('shop/api-'))).toHaveLength(1);
  });

  it('keeps non-GPU pods off the tainted gpu NodePool', () => {
    for (const claim of plan.nodeClaims.filter((c) => c.nodePool === 'gpu')) {
      expect(claim.pods.every((p) => p.startsWith('ml/'))).toBe(true);
    }
  });
});

describe('karpless plan inputs (in process)', () => {
  let dir: string;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  let manifests: string;
  let catalog: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'karpless-plan-'));
    manifests = file(
      'pool.yaml',
      `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-test
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: small}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`,
    );
    catalog = file(
      'catalog.json',
      JSON.stringify({
        version: 1,
        region: 'us-east-1',
        instanceTypes: [
          {
            name: 'm5.large',
            arch: 'amd64',
            vcpu: 2,
            memoryMiB: 8192,
            maximumNetworkInterfaces: 3,
            ipv4PerInterface: 10,
            gpus: 0,
            offerings: [{ zone: 'us-east-1b', capacityType: 'on-demand', price: 0.096, available: true }],
          },
        ],
      }),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const deployment = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: ${replicas}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
`;

  it('plans from a --catalog file instead of the built-in catalog', async () => {
    const pods = file('one.yaml', deployment(1));
    const result = await inProcess('--manifests', manifests, '--pods', pods, '--catalog', catalog, '--json');
    expect(result.stderr).not.toMatch(/error|spot/i);
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as PlanJSON;
    expect(plan.nodeClaims).toHaveLength(1);
    expect(plan.nodeClaims[0]).toMatchObject({
      nodePool: 'small',
      instanceTypes: ['m5.large'],
      offering: { instanceType: 'm5.large', zone: 'us-east-1b', capacityType: 'on-demand', price: 0.096 },
    });
    expect(plan.totalPrice).toBe(0.096);
  });

  it('reserves --daemonsets requests on every claim', async () => {
    // m5.large has 1930m allocatable: two 500m replicas share one node, unless a 1-cpu DaemonSet runs there too.
    const pods = file('pair.yaml', deployment(2));
    const daemonSet = file(
      'ds.yaml',
      'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: {template: {spec: {containers: [{name: a, resources: {requests: {cpu: "1"}}}]}}}\n',
    );
    const args = ['--manifests', manifests, '--pods', pods, '--catalog', catalog, '--json'];
    const without = JSON.parse((await inProcess(...args)).stdout) as PlanJSON;
    const withAgent = JSON.parse((await inProcess(...args, '--daemonsets', daemonSet)).stdout) as PlanJSON;
    expect(without.nodeClaims).toHaveLength(1);
    expect(withAgent.nodeClaims).toHaveLength(2);
    expect(withAgent.nodeClaims.flatMap((c) => c.pods)).toHaveLength(2);
  });

  it('counts a DaemonSet given in both --pods and --daemonsets once, with a warning', async () => {
    const pods = file('pair-again.yaml', deployment(2));
    const daemonSet = file(
      'agent.yaml',
      'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: {template: {spec: {containers: [{name: a, resources: {requests: {cpu: "1"}}}]}}}\n',
    );
    const args = ['--manifests', manifests, '--catalog', catalog, '--json'];
    const once = await inProcess(...args, '--pods', pods, '--daemonsets', daemonSet);
    const twice = await inProcess(...args, '--pods', `${pods},${daemonSet}`, '--daemonsets', daemonSet);
    expect(twice.code).toBe(0);
    // Counted twice, 2 cpu of DaemonSets would leave m5.large no room for a replica: every pod unschedulable.
    expect(JSON.parse(twice.stdout)).toEqual(JSON.parse(once.stdout));
    expect(twice.stderr).toContain(
      `warning: ${daemonSet}: DaemonSet/default/agent is read twice (its file is given twice): counted once`,
    );
    expect(once.stderr).not.toContain('warning');
  });

  it('answers a workload scaled to zero with nothing to launch, exit 0', async () => {
    const zero = file('zero.yaml', deployment(0));
    const result = await inProcess('--manifests', manifests, '--pods', zero, '--catalog', catalog);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Nothing to launch: no pending pods.\n');
    expect(result.stderr).toContain(`note: ${zero}: Deployment/default/app makes no pods (spec.replicas is 0)`);
    const json = await inProcess('--manifests', manifests, '--pods', zero, '--catalog', catalog, '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ nodeClaims: [], unschedulable: [], totalPrice: 0 });
  });

  it('reports a huge request in a unit a person reads (1Ei, not a billion GiB)', async () => {
    const huge = file(
      'huge.yaml',
      'apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\nspec: {containers: [{name: c, resources: {requests: {memory: 1Ei}}}]}\n',
    );
    const result = await inProcess('--manifests', manifests, '--pods', huge, '--catalog', catalog);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('NodePool small: no instance type has 1 EiB memory allocatable (largest allowed: ');
    expect(result.stdout).not.toMatch(/\d{5,} GiB/);
  });

  it('fills existing --nodes before planning claims, with their bound pods counted', async () => {
    const nodes = file(
      'nodes.yaml',
      `kind: Node
metadata:
  name: ip-10-0-0-1
  labels: {topology.kubernetes.io/zone: us-east-1a, kubernetes.io/arch: amd64, kubernetes.io/os: linux, karpenter.sh/nodepool: small, karpenter.sh/capacity-type: on-demand}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
`,
    );
    const bound = file(
      'bound.yaml',
      'kind: Pod\nmetadata: {name: running}\nspec: {nodeName: ip-10-0-0-1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}\n',
    );
    const pods = file('two.yaml', deployment(2));
    const result = await inProcess('--manifests', manifests, '--pods', `${pods},${bound}`, '--nodes', nodes, '--json');
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as PlanJSON;
    // 1 cpu is left beside the running pod: both 500m replicas fit there, nothing new is launched.
    expect(plan.existingNodes).toEqual([
      { name: 'ip-10-0-0-1', pods: [expect.stringMatching(/^default\/app-/), expect.stringMatching(/^default\/app-/)] },
    ]);
    expect(plan.nodeClaims).toEqual([]);
    expect(plan.totalPrice).toBe(0);
  });

  it('counts --nodes of a NodePool against its limits: a pool used up plans no new claim and says why', async () => {
    // Prepare: NodePool "limited" (cpu limit 8) with one 8-vCPU node of it, nearly full; pool "small" has none.
    const limited = file(
      'limited.yaml',
      `${readFileSync(manifests, 'utf8')}---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: limited}
spec:
  weight: 50
  limits: {cpu: "8"}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`,
    );
    const nodes = file(
      'limited-nodes.yaml',
      `kind: Node
metadata:
  name: ip-10-0-0-8
  labels: {topology.kubernetes.io/zone: us-east-1b, kubernetes.io/arch: amd64, kubernetes.io/os: linux, karpenter.sh/nodepool: limited, karpenter.sh/capacity-type: on-demand, node.kubernetes.io/instance-type: m5.2xlarge}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "58"}
  allocatable: {cpu: 7910m, memory: 30Gi, pods: "58"}
`,
    );
    const bound = file(
      'limited-bound.yaml',
      'kind: Pod\nmetadata: {name: busy}\nspec: {nodeName: ip-10-0-0-8, containers: [{name: c, resources: {requests: {cpu: "7500m"}}}]}\n',
    );
    const pods = file('limited-pods.yaml', deployment(2));
    const args = ['--manifests', limited, '--pods', `${pods},${bound}`, '--nodes', nodes, '--catalog', catalog];
    // Act
    const json = await inProcess(...args, '--json');
    const human = await inProcess(...args);
    // Assess: nothing for "limited" (its node holds the whole limit); the pods go to "small" instead.
    expect(json.code).toBe(0);
    const plan = JSON.parse(json.stdout) as PlanJSON;
    expect(plan.nodeClaims.map((c) => c.nodePool)).toEqual(['small']);
    expect(plan.limits).toEqual([{ nodePool: 'limited', used: { cpu: '8' }, limits: { cpu: '8' }, exhausted: true }]);
    expect(human.stdout).toContain(
      'NodePool limits used by the given nodes (used/limit):\n  limited: cpu 8/8 (used up: no new NodeClaim for this NodePool)\n',
    );
  });

  it('plans no claim at all when the only NodePool is used up by --nodes, each pod saying why', async () => {
    const only = file(
      'only-limited.yaml',
      `${readFileSync(manifests, 'utf8').replace('metadata: {name: small}\nspec:\n', 'metadata: {name: small}\nspec:\n  limits: {cpu: "8"}\n')}`,
    );
    const nodes = file(
      'only-nodes.yaml',
      `kind: Node
metadata:
  name: ip-10-0-0-9
  labels: {topology.kubernetes.io/zone: us-east-1b, kubernetes.io/arch: amd64, kubernetes.io/os: linux, karpenter.sh/nodepool: small}
  annotations: {}
spec: {taints: [{key: dedicated, value: db, effect: NoSchedule}]}
status: {capacity: {cpu: "8", memory: 32Gi, pods: "58"}}
`,
    );
    const result = await inProcess(
      '--manifests',
      only,
      '--pods',
      file('only-pods.yaml', deployment(1)),
      '--nodes',
      nodes,
      '--catalog',
      catalog,
      '--json',
    );
    const plan = JSON.parse(result.stdout) as PlanJSON;
    expect(plan.nodeClaims).toEqual([]);
    expect(plan.unschedulable.map((u) => u.reasons)).toEqual([
      expect.arrayContaining(['NodePool small: limits exhausted (cpu 8 of 8 used)']),
    ]);
  });

  it('exits 1 with the file, object and field of a bad workload', async () => {
    const pods = file(
      'bad.yaml',
      'kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n',
    );
    const result = await inProcess('--manifests', manifests, '--pods', pods);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `${pods}: Pod/default/p: spec.containers[0].resources.requests.cpu: "lots" is not a valid resource quantity`,
    );
    expect(result.stdout).toBe('');
  });

  it('exits 1 naming the NodePool when its EC2NodeClass is missing', async () => {
    const orphan = file(
      'orphan.yaml',
      `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: orphan}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: missing}
      requirements: []
`,
    );
    const result = await inProcess('--manifests', orphan, '--pods', file('p.yaml', deployment(1)));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/NodePool\/orphan/);
  });

  it('exits 1 naming the field of a bad --catalog', async () => {
    const bad = file('bad-catalog.json', JSON.stringify({ version: 1, region: 'us-east-1' }));
    const result = await inProcess('--manifests', manifests, '--pods', file('q.yaml', deployment(1)), '--catalog', bad);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${bad}: instanceTypes:`);
  });

  it('exits 1 when a path does not exist', async () => {
    const result = await inProcess('--manifests', manifests, '--pods', join(dir, 'nope'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('nope');
  });

  it.each([
    [['--pods', 'x'], 'missing required flag --manifests'],
    [['--manifests', 'x'], 'missing required flag --pods'],
    [['--manifests', 'x', '--pods', 'y', 'extra'], 'unexpected argument "extra"'],
    [['--manifests', 'x', '--pods', 'y', '--wide'], 'unknown flag --wide'],
  ])('exits 2 on bad flags %j', async (args, message) => {
    const result = await inProcess(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
