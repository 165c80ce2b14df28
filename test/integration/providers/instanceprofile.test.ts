import { CreateRoleCommand, GetInstanceProfileCommand, ListInstanceProfilesCommand } from '@aws-sdk/client-iam';
import { describe, expect, it } from 'vitest';
import type { EC2NodeClass } from '../../../shared/apis/v1/types';
import { InstanceProfileProvider, instanceProfileName } from '../../../shared/providers/instanceprofile';
import { iamApi } from '../../../shared/providers/ports';
import { motoAccount } from '../helpers';
import { MISSING_NODE_ROLE, NODE_ROLE, OTHER_NODE_ROLE, providerClients } from './roles';

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [],
    securityGroupSelectorTerms: [],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: NODE_ROLE,
    tags: { team: 'platform' },
  },
};

const trust = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
});

describe('instance profile on moto', () => {
  it('creates the managed profile once with tags, path and role, then reuses it', async () => {
    const account = motoAccount();
    for (const RoleName of [NODE_ROLE, OTHER_NODE_ROLE]) {
      await account.iam.send(new CreateRoleCommand({ RoleName, AssumeRolePolicyDocument: trust }));
    }
    const context = {
      clusterName: 'c1',
      region: 'us-west-2',
      clusterArn: `arn:aws:eks:us-west-2:${account.accountId}:cluster/c1`,
    };
    // The provision function creates the managed profiles as it launches (the drift function too, with the same statements).
    const clients = await providerClients(account, 'provision');
    const provider = new InstanceProfileProvider(iamApi(clients.iam), context);
    const name = await provider.ensure(nodeClass);
    expect(name).toBe(instanceProfileName('c1', 'us-west-2', 'default'));

    // moto has no ListInstanceProfileTags; GetInstanceProfile carries the tags.
    const got = await account.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: name }));
    expect(got.InstanceProfile?.Path).toBe('/karpenter/us-west-2/c1/default/');
    expect(got.InstanceProfile?.Roles?.map((r) => r.RoleName)).toEqual(['KarpenterNodeRole-c1']);
    expect(Object.fromEntries((got.InstanceProfile?.Tags ?? []).map((t) => [t.Key, t.Value]))).toEqual({
      team: 'platform',
      'kubernetes.io/cluster/c1': 'owned',
      'eks:eks-cluster-name': 'c1',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      'topology.kubernetes.io/region': 'us-west-2',
      'eks:eks-cluster-arn': context.clusterArn,
    });

    expect(await provider.ensure(nodeClass)).toBe(name);
    const listed = await account.iam.send(new ListInstanceProfilesCommand({ PathPrefix: '/karpenter/' }));
    expect(listed.InstanceProfiles?.map((p) => p.InstanceProfileName)).toEqual([name]);

    // A changed role gets a new profile; the old one keeps its role for the nodes running with it.
    const other = { ...nodeClass, spec: { ...nodeClass.spec, role: OTHER_NODE_ROLE } };
    const next = await provider.ensure(other);
    expect(next).toBe(instanceProfileName('c1', 'us-west-2', 'default', OTHER_NODE_ROLE));
    const old = await account.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: name }));
    expect(old.InstanceProfile?.Roles?.map((r) => r.RoleName)).toEqual(['KarpenterNodeRole-c1']);
    const fresh = await account.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: next }));
    expect(fresh.InstanceProfile?.Roles?.map((r) => r.RoleName)).toEqual(['OtherRole']);
    expect(fresh.InstanceProfile?.Path).toBe('/karpenter/us-west-2/c1/default/');

    expect(await provider.inspect(other)).toMatchObject({ name: next, exists: true, managed: true, hasRole: true });
    // Changing back reuses the first profile.
    expect(await provider.ensure(nodeClass)).toBe(name);
  });

  it('reports a role that does not exist', async () => {
    const clients = await providerClients(motoAccount(), 'provision');
    const provider = new InstanceProfileProvider(iamApi(clients.iam), { clusterName: 'c1', region: 'us-west-2' });
    await expect(
      provider.ensure({ ...nodeClass, spec: { ...nodeClass.spec, role: MISSING_NODE_ROLE } }),
    ).rejects.toThrow(/spec.role: cannot add role Nope/);
  });
});
