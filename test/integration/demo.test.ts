// `npm run demo` as a test: the same scenario on a moto server of its own, asserting what the
// timeline claims — instances tagged for the cluster, nodes registered with their instance type's
// labels, the interrupted instance terminated and its pods replaced, planned once, and never more
// than 1.3× the requested vCPU launched at any step. The scenario runs once, as plain `npm run demo`
// (functions outside any VPC); `--vpc` changes only the stack's deploy (scripts/demo/stack.ts), so
// that deploy runs on a second moto as `npm run demo -- --vpc` does it: the preflight, every
// function in the private subnets, the endpoint list. Running the whole scenario twice would double
// the file's time for no path the scenario does not already take.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT, DEMO_REGION, demoEndpoint } from '../../scripts/demo/aws';
import { describeStep } from '../../scripts/demo/cluster';
import { DEMO_CLUSTER, DEMO_POD_GRACE_SECONDS, type DemoResult, runDemo } from '../../scripts/demo/scenario';
import { type DemoStack, deployDemoStack, functionPlacement } from '../../scripts/demo/stack';
import { Timeline } from '../../scripts/demo/timeline';
import { type MotoServer, startMotoServer } from '../../scripts/moto-server';
import { KUBE, TAG } from '../../shared/contracts';
import { resourceAmounts } from '../../shared/instancetypes/capacity';
import { addResources, podRequests } from '../../shared/scheduling/resources';
import { findKubectl, Kubectl, writeKubeconfig } from '../support/kube/kubectl';
import { motoAccount } from './helpers';
import { assumeFunctionRole, type Denial, FUNCTIONS, formatDenial, functionClients, takeDenials } from './iam';
import { functionRole, type Template as HarnessTemplate } from './iam/policies';

let moto: MotoServer;
let result: DemoResult;
const lines: string[] = [];
/** What IAM would have denied the functions during the demo (each runs under its own deployed role). */
let denials: Denial[] = [];
const roleArns = new Map<string, string>();

// `npm run demo -- --vpc`'s deploy, on its own moto (the demo's stack, queue and table names are
// fixed: one deploy per account), made while the scenario runs, which mostly waits on its own moto.
let vpcMoto: MotoServer | undefined;
const vpcLines: string[] = [];
let vpcDeploy: Promise<DemoStack>;

beforeAll(async () => {
  vpcDeploy = (async () => {
    vpcMoto = await startMotoServer({
      command: 'moto_server',
      installHint: "install it with: pip install 'moto[server]'",
    });
    return deployDemoStack(demoEndpoint(vpcMoto.endpoint), new Timeline((line) => vpcLines.push(line)), { vpc: true });
  })();
  // Awaited by its own tests; its failure must not be an unhandled rejection meanwhile.
  vpcDeploy.catch(() => undefined);
  moto = await startMotoServer({ command: 'moto_server', installHint: "install it with: pip install 'moto[server]'" });
  result = await runDemo({
    aws: demoEndpoint(moto.endpoint),
    timeline: new Timeline((line) => lines.push(line)),
    // As `npm run demo -- --keep`: a real kubectl reads the demo's cluster at the end.
    keepApiServer: true,
    // Each function under the role the deployed template gives it (the IAM harness, test/integration/iam).
    asFunction: async (fn, stack) => {
      const account = motoAccount({ endpoint: moto.endpoint, accountId: DEMO_ACCOUNT });
      const ctx = { accountId: DEMO_ACCOUNT, region: DEMO_REGION, tableName: stack.tableName, busName: stack.busName };
      const identity = await assumeFunctionRole(account, functionRole(stack.template as HarnessTemplate, fn, ctx));
      roleArns.set(fn, identity.roleArn);
      return functionClients(account, identity);
    },
  });
  denials = takeDenials();
}, 600_000);

afterAll(async () => {
  await result?.apiServer?.stop();
  await moto?.stop();
  await vpcDeploy?.catch(() => undefined);
  await vpcMoto?.stop();
});

describe('npm run demo', () => {
  it('runs every function under its own role from the template: nothing IAM would deny', () => {
    expect([...roleArns.keys()].sort()).toEqual([...FUNCTIONS].sort());
    expect(denials.map(formatDenial)).toEqual([]);
  });

  it('deploys every function outside any VPC, with no preflight and no endpoint list', async () => {
    const functions = [...result.stack.resources.values()].filter((r) => r.type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(FUNCTIONS.length);
    for (const fn of functions) {
      const placement = await functionPlacement(demoEndpoint(moto.endpoint), fn.physicalId);
      expect(placement.subnetIds).toEqual([]);
    }
    expect(result.stack.substitutions.map((s) => s.type)).not.toContain('Custom::KarplessPreflight');
    expect(result.vpc).toBeUndefined();
    expect(lines.some((l) => l.includes('VPC endpoints'))).toBe(false);
  });

  it('deploys the synthesized stack to moto and says what it created otherwise', () => {
    expect(lines.some((l) => l.includes('CREATE_COMPLETE'))).toBe(true);
    expect(result.stack.substitutions.map((s) => s.type)).toEqual(
      expect.arrayContaining(['AWS::EKS::AccessEntry', 'AWS::SQS::QueuePolicy', 'AWS::Lambda::EventSourceMapping']),
    );
  });

  it('turns the pending pods into tagged instances', () => {
    const first = result.launched[0];
    expect(first?.nodeClaims.length).toBeGreaterThan(0);
    expect(first?.unschedulable).toEqual([]);
    for (const claim of first?.nodeClaims ?? []) {
      const tags = Object.fromEntries(
        (result.instances.get(claim.instanceId)?.Tags ?? []).map((t) => [t.Key, t.Value]),
      );
      expect(tags).toMatchObject({
        [TAG.clusterName]: DEMO_CLUSTER,
        [TAG.clusterOwned(DEMO_CLUSTER)]: 'owned',
        [TAG.nodePool]: 'general',
        [TAG.nodeClass]: 'demo',
        [TAG.nodeClaim]: claim.nodeClaimName,
      });
      expect(claim.price).toBeGreaterThan(0);
    }
  });

  it('registers every node that joined: claim and instance-type labels, the unregistered taint gone', () => {
    const live = result.nodes.filter((n) => !n.metadata.deletionTimestamp);
    expect(live.length).toBeGreaterThan(0);
    for (const node of live) {
      const instanceId = node.spec?.providerID?.split('/').pop() ?? '';
      expect(node.metadata.labels?.[KUBE.registeredLabel]).toBe('true');
      expect(node.metadata.labels?.['karpenter.sh/nodepool']).toBe('general');
      expect(node.metadata.labels?.['workload-class']).toBe('general');
      expect(node.metadata.labels?.['node.kubernetes.io/instance-type']).toBe(
        result.instances.get(instanceId)?.InstanceType,
      );
      expect(node.metadata.labels?.['karpenter.k8s.aws/instance-cpu']).toBeDefined();
      expect(node.metadata.finalizers).toContain(KUBE.terminationFinalizer);
      expect((node.spec?.taints ?? []).some((t) => t.key === KUBE.unregisteredTaintKey)).toBe(false);
    }
  });

  it('shows the drain of the interrupted node waiting for a pod’s grace period before the instance goes', () => {
    const at = (line: string) => Number(/^\s*\+([\d.]+)s/.exec(line)?.[1]);
    const terminating = lines.findIndex((l) =>
      l.includes(`Terminating: its ${DEMO_POD_GRACE_SECONDS} s grace period runs`),
    );
    const gone = lines.findIndex((l) => l.includes('gone after its grace period'));
    const nodeGone = lines.findIndex((l) => l.includes('gone: its instance terminated after the drain'));
    const handled = lines.findIndex((l, i) => i > gone && l.includes('interruption') && l.includes('batch of'));
    expect(terminating).toBeGreaterThan(-1);
    expect(gone).toBeGreaterThan(terminating);
    expect(nodeGone).toBeGreaterThan(gone);
    expect(handled).toBeGreaterThan(gone);
    // The fake kubelet keeps the pod its whole grace period (the timeline rounds to tenths).
    expect(at(lines[gone] ?? '') - at(lines[terminating] ?? '')).toBeGreaterThanOrEqual(DEMO_POD_GRACE_SECONDS - 0.1);
  });

  it('drains and terminates the interrupted instance and replaces its pods', () => {
    expect(result.instances.get(result.interruptedInstance)?.State?.Name).toBe('terminated');
    const running = [...result.instances.values()].filter((i) => i.State?.Name === 'running');
    expect(running.length).toBeGreaterThan(0);
    expect(result.launched.length).toBeGreaterThanOrEqual(2);
    const web = result.pods.filter((p) => p.metadata.labels?.app === 'web');
    expect(web).toHaveLength(7);
    const runningNodes = new Set(
      result.nodes
        .filter((n) => running.some((i) => n.spec?.providerID?.endsWith(`/${i.InstanceId}`)))
        .map((n) => n.metadata.name),
    );
    for (const pod of web) expect(runningNodes.has(pod.spec.nodeName ?? '')).toBe(true);
  });

  it('rolls the nodes onto a released AMI one at a time, each replacement registered before its old node drained', () => {
    const { rollout } = result;
    expect(rollout.rolled.length).toBeGreaterThanOrEqual(2);
    expect(new Set(rollout.rolled).size).toBe(rollout.rolled.length);
    expect(rollout.maxDisrupting).toBe(1);
    const running = [...result.instances.values()].filter((i) => i.State?.Name === 'running');
    expect(running.length).toBeGreaterThan(0);
    expect(running.every((i) => i.ImageId === rollout.to)).toBe(true);
    const drift = lines.filter((l) => l.includes(' drift '));
    expect(drift.some((l) => l.includes('AMIDrift'))).toBe(true);
    expect(drift.some((l) => l.includes('blocked: NodePool/general budgets[0] (nodes: 1) blocks'))).toBe(true);
    for (const node of rollout.rolled) {
      const handed = lines.findIndex((l) => l.includes(`${node} handed to termination, its replacement registered`));
      const started = lines.findIndex((l) => l.includes(`started ${node} `));
      const registeredAfterStart = lines.slice(started).findIndex((l) => l.includes('replacement registered'));
      expect(started).toBeGreaterThanOrEqual(0);
      expect(handed).toBeGreaterThan(started + registeredAfterStart);
    }
  });

  it('launches at most 1.3× the vCPU the pods request, at every step', () => {
    expect(result.capacity.map((s) => s.step)).toEqual(
      expect.arrayContaining(['web pods planned', 'interruption replaced', 'api pods planned', 'drift run 1', 'end']),
    );
    for (const step of result.capacity) {
      expect(step.requestedVcpu, describeStep(step)).toBeGreaterThan(0);
      expect(step.launchedVcpu, describeStep(step)).toBeLessThanOrEqual(1.3 * step.requestedVcpu);
    }
  });

  it("plans the interruption's replacement pods once, and never a pod that is gone or already running", () => {
    const [first, afterInterruption, api] = result.launched;
    const pods = (d: typeof first) => (d?.nodeClaims ?? []).flatMap((c) => c.pods);
    const evicted = new Set(pods(first));
    expect(evicted.size).toBe(7);
    // The decision after the interruption plans the Deployment's 7 new pods, not the 7 evicted ones too.
    expect(pods(afterInterruption)).toHaveLength(7);
    for (const pod of pods(afterInterruption)) expect(evicted.has(pod)).toBe(false);
    // The api decision plans the api pods only: the web pods were bound by then.
    expect(pods(api).sort()).toEqual(['default/api-0', 'default/api-1']);
    const planned = result.launched.flatMap(pods);
    expect(new Set(planned).size).toBe(planned.length);
  });

  it("binds pods only where they fit: no node's pods request more than its allocatable", () => {
    for (const node of result.nodes) {
      const here = result.pods.filter((p) => p.spec.nodeName === node.metadata.name);
      const requested = addResources(...here.map(podRequests));
      const allocatable = resourceAmounts(node.status?.allocatable);
      for (const [name, value] of Object.entries(requested))
        expect(value, `${name} on ${node.metadata.name}`).toBeLessThanOrEqual(allocatable[name] ?? 0);
    }
    // Every pod runs but the one no NodePool allows (arm64 against amd64 only), which stays pending.
    expect(result.pods.filter((p) => !p.spec.nodeName).map((p) => p.metadata.name)).toEqual(['arm-batch-0']);
  });

  it('says what it runs in place of each schedule, and runs gc', () => {
    const schedules = result.stack.substitutions.filter(
      (s) => s.logicalId.includes('Schedule') && s.type === 'AWS::Events::Rule',
    );
    expect(schedules).toHaveLength(3);
    for (const rule of schedules) {
      const fn = rule.logicalId.includes('Watcher') ? 'watcher' : rule.logicalId.includes('Drift') ? 'drift' : 'gc';
      expect(rule.why).toContain(`the demo invokes the ${fn}`);
    }
    expect('error' in result.gc).toBe(false);
    expect(lines.some((l) => / gc {10}/.test(l))).toBe(true);
  });

  it('shows the NodeClaim record of every running instance: name, nodepool, type, zone, conditions', () => {
    const running = [...result.instances.values()].filter((i) => i.State?.Name === 'running');
    const atEnd = lines.slice(lines.findIndex((l) => l.includes('NodeClaim records at the end')));
    expect(running.length).toBeGreaterThan(0);
    for (const instance of running) {
      const name = instance.Tags?.find((t) => t.Key === TAG.nodeClaim)?.Value ?? '';
      const record = result.claims.find((c) => c.metadata.name === name);
      expect(record?.status.providerID, name).toContain(instance.InstanceId);
      const line = atEnd.find((l) => l.includes(`  ${name}: nodepool general, ${instance.InstanceType} `)) ?? '';
      expect(line, name).toContain(`in ${instance.Placement?.AvailabilityZone}`);
      for (const condition of ['Launched=True', 'Registered=True', 'Initialized=True'])
        expect(line).toContain(condition);
    }
  });

  it('mirrors every running instance as a NodeClaim object in the cluster, owned by its NodePool and Ready', () => {
    const running = [...result.instances.values()].filter((i) => i.State?.Name === 'running');
    expect(running.length).toBeGreaterThan(0);
    for (const instance of running) {
      const name = instance.Tags?.find((t) => t.Key === TAG.nodeClaim)?.Value ?? '';
      const object = result.nodeClaimObjects.find((o) => o.metadata.name === name);
      expect(object?.metadata.labels?.['node.kubernetes.io/instance-type'], name).toBe(instance.InstanceType);
      expect((object?.metadata.ownerReferences as { kind: string; name: string }[] | undefined)?.[0]).toMatchObject({
        kind: 'NodePool',
        name: 'general',
      });
      const conditions = (object?.status as { conditions?: { type: string; status: string }[] } | undefined)
        ?.conditions;
      expect(conditions?.find((c) => c.type === 'Ready')?.status, name).toBe('True');
    }
  });

  it('shows the demo cluster to a real kubectl: NodeClaims, EC2NodeClasses with NAME READY AGE ROLE, FailedScheduling on a pod', async () => {
    const binary = findKubectl();
    if (!binary) throw new Error('no kubectl: set $KUBECTL or install Debian kubernetes-client (.ci/run does)');
    const server = result.apiServer;
    if (!server) throw new Error('the demo did not keep its API server');
    const kubectl = new Kubectl(binary, writeKubeconfig(server.url));
    const rows = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s{2,}/));

    const claims = rows(await kubectl.ok('get', 'nodeclaims'));
    expect(claims[0]).toEqual(['NAME', 'TYPE', 'CAPACITY', 'ZONE', 'NODE', 'READY', 'AGE']);
    const running = [...result.instances.values()].filter((i) => i.State?.Name === 'running');
    for (const instance of running) {
      const name = instance.Tags?.find((t) => t.Key === TAG.nodeClaim)?.Value;
      const row = claims.find((r) => r[0] === name);
      expect(row?.slice(1, 4), name).toEqual([
        instance.InstanceType,
        instance.InstanceLifecycle === 'spot' ? 'spot' : 'on-demand',
        instance.Placement?.AvailabilityZone,
      ]);
      expect(row?.[5], name).toBe('True');
    }

    const classes = rows(await kubectl.ok('get', 'ec2nodeclasses', '-o', 'wide'));
    expect(classes[0]).toEqual(['NAME', 'READY', 'AGE', 'ROLE']);
    expect(classes[1]?.slice(0, 2)).toEqual(['demo', 'True']);
    expect(classes[1]?.[3]).toMatch(/\S/);

    // The pod that fits nowhere (arm64 against an amd64-only NodePool) carries karpless's reason.
    const stuck = server.pods().find((p) => p.metadata.labels?.app === 'arm-batch');
    expect(stuck?.spec.nodeName).toBeUndefined();
    const described = await kubectl.ok('describe', 'pod', stuck?.metadata.name ?? '');
    expect(described).toMatch(
      /Warning\s+FailedScheduling\s+.*karpenter\s+Failed to schedule pod, NodePool general: requirement kubernetes\.io\/arch In \[arm64\] conflicts/,
    );
  });
});

describe('npm run demo -- --vpc', () => {
  let stack: DemoStack;

  beforeAll(async () => {
    stack = await vpcDeploy;
  }, 300_000);

  it('checks the VPC and subnets before the deploy (the preflight moto cannot invoke)', () => {
    const preflight = vpcLines.findIndex((l) => l.includes('preflight (Custom::KarplessPreflight)'));
    const created = vpcLines.findIndex((l) => l.includes('CREATE_COMPLETE'));
    expect(preflight).toBeGreaterThanOrEqual(0);
    expect(preflight).toBeLessThan(created);
    expect(vpcLines[preflight]).toContain(
      `${stack.vpc?.vpcId} holds subnets ${stack.vpc?.functionSubnetIds.join(', ')}`,
    );
    expect(stack.deployed.substitutions.map((s) => s.type)).toContain('Custom::KarplessPreflight');
  });

  it('deploys every function into the private subnets of the cluster VPC and prints the endpoints they need', () => {
    const vpc = stack.vpc;
    expect(vpc?.functionSubnetIds).toHaveLength(2);
    expect(vpc?.placements).toHaveLength(FUNCTIONS.length);
    for (const placement of vpc?.placements ?? []) {
      expect(placement.vpcId).toBe(vpc?.vpcId);
      expect([...placement.subnetIds].sort()).toEqual([...(vpc?.functionSubnetIds ?? [])].sort());
      expect(placement.securityGroupIds).toHaveLength(1);
    }
    const printed = vpcLines.find((l) => l.includes('VPC endpoints the functions need')) ?? '';
    for (const service of ['ec2', 'eks', 'events', 'sqs', 'ssm', 'dynamodb'])
      expect(printed).toContain(`com.amazonaws.${DEMO_REGION}.${service}`);
    expect(printed).toContain('iam.amazonaws.com');
  });
});
