// EC2NodeClass deletion with the configuration read from the cluster, on moto, each function under
// its own synthesized role (the IAM harness: a call the role does not allow fails the test). The
// provision function launches for a class, creating its instance profile (spec.role) and launch
// template; `kubectl delete ec2nodeclass` then only marks the class while a claim names it; once no
// claim does, the watcher's status pass deletes the profile and the templates and removes the
// finalizer, as upstream's nodeclass termination controller does. A spec.instanceProfile the user
// gave is never touched.

import { DescribeLaunchTemplatesCommand, type LaunchTemplate } from '@aws-sdk/client-ec2';
import { CreateInstanceProfileCommand, GetInstanceProfileCommand, type InstanceProfile } from '@aws-sdk/client-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { karpenterCrds } from '../../../shared/apis/v1/crds';
import { TAG } from '../../../shared/contracts';
import { errorCode } from '../../../shared/providers/aws-errors';
import { instanceProfileName } from '../../../shared/providers/instanceprofile';
import { CONFIGURATION_TTL_MS } from '../../../shared/runtime/cluster-configuration';
import { watcherDeps } from '../../../shared/runtime/deps/watcher';
import { kubeClient } from '../../../shared/runtime/environment';
import { NODECLASS_TERMINATION_FINALIZER } from '../../../shared/runtime/nodeclass-termination';
import { powertools } from '../../../shared/runtime/powertools';
import { M5_LARGE_ON_DEMAND, testNodeClass, testNodePool } from '../../support/nodepools';
import { ProvisionFixture } from '../helpers';

const CLUSTER = 'classgone';
const ROLE = `KarpenterNodeRole-${CLUSTER}`;

const nodePool = (name: string, nodeClass: string) =>
  testNodePool({
    name,
    template: {
      requirements: M5_LARGE_ON_DEMAND,
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass },
    },
  });

const nodeClass = (name: string, identity: { role: string } | { instanceProfile: string }) =>
  testNodeClass({ name, discovery: CLUSTER, ...identity });

let now = Date.parse('2026-12-04T10:00:00Z');
let fixture: ProvisionFixture;

/** One status pass of the watcher function (its own role), as its schedule runs it. */
async function watcherPass(): Promise<void> {
  const deps = await watcherDeps(fixture.runtimes.watcher, powertools('itest', CLUSTER).telemetry);
  await deps.clusterStatus?.sync();
}

async function launchFor(pool: string): Promise<void> {
  await fixture.reset();
  now += CONFIGURATION_TTL_MS;
  const pod = fixture.pendingPod(`web-${pool}-${now}`, '500m', (p) => {
    p.spec.nodeSelector = { 'karpenter.sh/nodepool': pool };
  });
  const response = await fixture.provision([fixture.notice([pod])]);
  expect(response.batchItemFailures).toEqual([]);
  expect(fixture.fleets).toHaveLength(1);
}

async function templatesOf(name: string): Promise<LaunchTemplate[]> {
  const out = await fixture.account.ec2.send(
    new DescribeLaunchTemplatesCommand({ Filters: [{ Name: `tag:${TAG.nodeClass}`, Values: [name] }] }),
  );
  return out.LaunchTemplates ?? [];
}

async function profile(name: string): Promise<InstanceProfile | undefined> {
  try {
    return (await fixture.account.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: name })))
      .InstanceProfile;
  } catch (error) {
    if (errorCode(error) === 'NoSuchEntity') return undefined;
    throw error;
  }
}

const classObject = (name: string) => fixture.api.getObject('ec2nodeclasses', name);

beforeAll(async () => {
  fixture = await ProvisionFixture.start({
    cluster: CLUSTER,
    nodePools: [nodePool('general', 'default')],
    configuration: 'cluster',
    clock: () => now,
  });
  fixture.api.installCustomResources(karpenterCrds());
  fixture.api.putObject('ec2nodeclasses', nodeClass('default', { role: ROLE }));
  fixture.api.putObject('nodepools', nodePool('general', 'default'));
  now += 5 * 60_000;
});

afterAll(async () => {
  await fixture?.stop();
});

describe('EC2NodeClass deletion', () => {
  it('holds the class while a claim uses it, then deletes its instance profile and launch templates and lets it go', async () => {
    await launchFor('general');
    await watcherPass();
    expect(classObject('default')?.metadata.finalizers).toEqual([NODECLASS_TERMINATION_FINALIZER]);
    // The profile the launch created for spec.role.
    const profileName = instanceProfileName(CLUSTER, fixture.account.region, 'default');
    expect((await profile(profileName))?.Roles?.map((r) => r.RoleName)).toEqual([ROLE]);
    const templates = await templatesOf('default');
    expect(templates.length).toBeGreaterThan(0);

    const kube = await kubeClient(fixture.runtime);
    await kube.karpenterObjects().remove('ec2nodeclasses', 'default');
    await watcherPass();
    // The claim just launched names the class: everything stays.
    expect(classObject('default')?.metadata.deletionTimestamp).toBeDefined();
    expect(classObject('default')?.metadata.finalizers).toEqual([NODECLASS_TERMINATION_FINALIZER]);
    expect(await profile(profileName)).toBeDefined();
    expect(await templatesOf('default')).toHaveLength(templates.length);

    // Its claims leave (terminated, their records gone): the next pass cleans up and releases.
    await fixture.reset();
    for (const record of await fixture.runtime.state.nodeClaims()) {
      await fixture.runtime.state.deleteNodeClaim(record.metadata.name);
    }
    await watcherPass();
    expect(await profile(profileName)).toBeUndefined();
    expect(await templatesOf('default')).toEqual([]);
    expect(classObject('default')).toBeUndefined();
  });

  it('leaves a spec.instanceProfile the user gave alone, even tagged as if karpless had made it', async () => {
    const given = `${CLUSTER}-byo-profile`;
    await fixture.account.iam.send(
      new CreateInstanceProfileCommand({
        InstanceProfileName: given,
        Path: `/karpenter/${fixture.account.region}/${CLUSTER}/byo/`,
        Tags: [
          { Key: `kubernetes.io/cluster/${CLUSTER}`, Value: 'owned' },
          { Key: TAG.clusterName, Value: CLUSTER },
          { Key: TAG.nodeClass, Value: 'byo' },
          { Key: 'topology.kubernetes.io/region', Value: fixture.account.region },
        ],
      }),
    );
    fixture.api.putObject('ec2nodeclasses', nodeClass('byo', { instanceProfile: given }));
    fixture.api.putObject('nodepools', nodePool('byo', 'byo'));
    now += CONFIGURATION_TTL_MS;
    await launchFor('byo');
    expect(
      fixture.fleets[0]?.LaunchTemplateConfigs?.[0]?.LaunchTemplateSpecification?.LaunchTemplateName,
    ).toBeDefined();
    await watcherPass();
    expect(classObject('byo')?.metadata.finalizers).toEqual([NODECLASS_TERMINATION_FINALIZER]);

    await fixture.reset();
    for (const record of await fixture.runtime.state.nodeClaims()) {
      await fixture.runtime.state.deleteNodeClaim(record.metadata.name);
    }
    const kube = await kubeClient(fixture.runtime);
    await kube.karpenterObjects().remove('nodepools', 'byo');
    await kube.karpenterObjects().remove('ec2nodeclasses', 'byo');
    await watcherPass();
    expect(classObject('byo')).toBeUndefined();
    expect(await templatesOf('byo')).toEqual([]);
    expect((await profile(given))?.InstanceProfileName).toBe(given);
  });
});
