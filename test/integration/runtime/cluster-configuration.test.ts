// Configuration from the cluster (issue 22), end to end: the provision handler as deployed with
// `-c configuration=cluster` against moto and the fake API server, NodePools changed with a real
// `kubectl apply`. The next decision follows the applied NodePool; an invalid one is reported on its
// status (ValidationSucceeded=False naming the field) and with an event, and the last valid version
// keeps deciding.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { karpenterCrds } from '../../../shared/apis/v1/crds';
import type { Condition, EC2NodeClass, NodePool } from '../../../shared/apis/v1/types';
import { ClusterConfigurationSource, CONFIGURATION_TTL_MS } from '../../../shared/runtime/cluster-configuration';
import { watcherDeps } from '../../../shared/runtime/deps/watcher';
import { kubeClient } from '../../../shared/runtime/environment';
import { powertools } from '../../../shared/runtime/powertools';
import { findKubectl, Kubectl, writeKubeconfig } from '../../support/kube/kubectl';
import { ProvisionFixture } from '../helpers';

const CLUSTER = 'gitops';
const binary = findKubectl();

function nodePool(types: string[], extra: Partial<NodePool['spec']> = {}): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: types },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        },
      },
      ...extra,
    },
  };
}

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: `KarpenterNodeRole-${CLUSTER}`,
  },
};

let now = Date.parse('2026-12-04T10:00:00Z');
let fixture: ProvisionFixture;
let kubectl: Kubectl;
let pods = 0;
let bundledDecision: string[];

/** `kubectl apply -f` of the objects (the fake serves no OpenAPI document, hence --validate=false). */
let applied = 0;
async function apply(...objects: object[]): Promise<string> {
  const file = join(kubectl.kubeconfig, '..', `applied-${applied++}.yaml`);
  writeFileSync(file, objects.map((o) => stringify(o)).join('---\n'));
  return kubectl.ok('apply', '--validate=false', '-f', file);
}

/** The instance types the next decision's CreateFleet offers, for one new pending pod. */
async function nextDecision(): Promise<string[]> {
  await fixture.reset();
  now += CONFIGURATION_TTL_MS;
  const pod = fixture.pendingPod(`web-${pods++}`);
  const response = await fixture.provision([fixture.notice([pod])]);
  expect(response.batchItemFailures).toEqual([]);
  const overrides = fixture.fleets[0]?.LaunchTemplateConfigs?.[0]?.Overrides ?? [];
  return [...new Set(overrides.map((o) => String(o.InstanceType)))].sort();
}

beforeAll(async () => {
  if (!binary) throw new Error('no kubectl: set $KUBECTL or install Debian kubernetes-client (.ci/run does)');
  // Bundled: m5.large and m5.xlarge. The cluster's objects replace it once the CRDs are installed.
  fixture = await ProvisionFixture.start({
    cluster: CLUSTER,
    nodePools: [nodePool(['m5.large', 'm5.xlarge'])],
    configuration: 'cluster',
    clock: () => now,
  });
  kubectl = new Kubectl(binary, writeKubeconfig(fixture.api.url));
  // Before Karpenter's CRDs exist the bundle decides; afterwards the cluster's objects do.
  bundledDecision = await nextDecision();
  fixture.api.installCustomResources(karpenterCrds());
  await apply(nodeClass);
  // The CRDs' arrival is noticed within minutes (discovery is cached), then every TTL.
  now += 5 * 60_000;
});

afterAll(async () => {
  await fixture?.stop();
});

describe('configuration read from the cluster', () => {
  it('serves the bundle while the CRDs are missing, then follows each kubectl apply', async () => {
    // The bundle allows m5.large and m5.xlarge: the cheaper one launched.
    expect(bundledDecision).toEqual(['m5.large']);
    await apply(nodePool(['m5.xlarge']));
    expect(await nextDecision()).toEqual(['m5.xlarge']);
    await apply(nodePool(['m5.2xlarge']));
    expect(await nextDecision()).toEqual(['m5.2xlarge']);
  });

  it('reports an invalid NodePool on its status and with an event, and keeps deciding with the last valid one', async () => {
    // Cases run in any order: this one brings its own last valid version.
    await apply(nodePool(['m5.2xlarge']));
    expect(await nextDecision()).toEqual(['m5.2xlarge']);

    const invalid = nodePool(['m5.large'], { disruption: { budgets: [{ nodes: 'lots' }] } as never });
    expect(await apply(invalid)).toMatch(/nodepool\.karpenter\.sh\/general configured/);
    expect(await nextDecision()).toEqual(['m5.2xlarge']);

    // A new Lambda instance (cold start) reads the invalid object first: the version the warm one
    // stored in the state table serves, not the bundle's (m5.large, m5.xlarge).
    const coldStart = new ClusterConfigurationSource({
      karpenter: (await kubeClient(fixture.runtime)).karpenterObjects(),
      bundled: { nodePools: [nodePool(['m5.large', 'm5.xlarge'])], nodeClasses: [] },
      log: powertools('itest', CLUSTER).telemetry.log,
      clock: () => now,
      versions: fixture.runtime.state,
    });
    const cold = await coldStart.current();
    expect(cold.invalid).toMatchObject([{ kind: 'NodePool', name: 'general', serving: 'last-valid' }]);
    const served = cold.config.nodePools[0]?.spec.template.spec.requirements;
    expect(served?.find((r) => r.key === 'node.kubernetes.io/instance-type')?.values).toEqual(['m5.2xlarge']);

    const telemetry = powertools('itest', CLUSTER).telemetry;
    await (await watcherDeps(fixture.runtime, telemetry)).clusterStatus?.sync();
    const status = fixture.api.getObject('nodepools', 'general')?.status as { conditions: Condition[] };
    const validation = status.conditions.find((c) => c.type === 'ValidationSucceeded');
    expect(validation).toMatchObject({ status: 'False', reason: 'ValidationFailed' });
    expect(validation?.message).toMatch(/^spec\.disruption\.budgets\[0\]\.nodes: /);
    const listed = await kubectl.ok('get', 'nodepools');
    expect(listed).toMatch(/^general\s+default\s+\S*\s+False\s+/m);
    const events = await kubectl.ok('get', 'events', '--field-selector', 'involvedObject.kind=NodePool');
    expect(events).toMatch(/Warning\s+ValidationFailed\s+nodepool\/general\s+spec\.disruption\.budgets\[0\]\.nodes/);

    // Fixed: the next decision follows it again.
    await apply(nodePool(['m5.large']));
    expect(await nextDecision()).toEqual(['m5.large']);
  });

  it("re-reads on change: the watcher's status pass serves a kubectl apply before the TTL passes", async () => {
    await apply(nodePool(['m5.large']));
    expect(await nextDecision()).toEqual(['m5.large']);
    const status = (await watcherDeps(fixture.runtime, powertools('itest', CLUSTER).telemetry)).clusterStatus;
    await apply(nodePool(['m5.xlarge']));
    // No time passes: the configuration read for the last decision is still within its TTL.
    await status?.sync();
    const served = fixture.runtime.config.nodePools.find((p) => p.metadata.name === 'general');
    const types = served?.spec.template.spec.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type');
    expect(types?.values).toEqual(['m5.xlarge']);
  });

  it('launches nothing for an EC2NodeClass being deleted, which its finalizer holds while claims use it', async () => {
    await apply(nodePool(['m5.large']));
    expect(await nextDecision()).toEqual(['m5.large']);
    const telemetry = powertools('itest', CLUSTER).telemetry;
    const status = (await watcherDeps(fixture.runtime, telemetry)).clusterStatus;
    await status?.sync();
    expect(fixture.api.getObject('ec2nodeclasses', 'default')?.metadata.finalizers).toEqual([
      'karpenter.k8s.aws/termination',
    ]);

    await kubectl.ok('delete', 'ec2nodeclass', 'default', '--wait=false');
    await status?.sync();
    // The claim just launched names the class: it stays, and the next decision launches nothing.
    expect(fixture.api.getObject('ec2nodeclasses', 'default')?.metadata.deletionTimestamp).toBeDefined();
    expect(await nextDecision()).toEqual([]);
    expect(fixture.api.eventsFor('EC2NodeClass', 'default').map((e) => e.reason)).toContain(
      'WaitingOnNodeClaimTermination',
    );

    // Other cases need the class: let it go as if its claims were gone, and apply it again.
    await kubectl.ok('patch', 'ec2nodeclass', 'default', '--type=merge', '-p', '{"metadata":{"finalizers":null}}');
    expect(fixture.api.getObject('ec2nodeclasses', 'default')).toBeUndefined();
    await apply(nodeClass);
    expect(await nextDecision()).toEqual(['m5.large']);
  });
});
