import { describe, expect, it } from 'vitest';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import {
  InstanceProfileError,
  InstanceProfileProvider,
  instanceProfileName,
  roleName,
} from '../../shared/providers/instanceprofile';
import type { IAMApi } from '../../shared/providers/ports';
import { awsError, recordingFake } from './fakes';

function nodeClass(spec: Partial<EC2NodeClass['spec']>, name = 'default'): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name },
    spec: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [], ...spec },
  };
}

const context = { clusterName: 'c1', region: 'us-west-2', clusterArn: 'arn:aws:eks:us-west-2:1:cluster/c1' };

describe('instanceProfileName', () => {
  it('is stable, cluster-prefixed and differs per region and node class', () => {
    const name = instanceProfileName('c1', 'us-west-2', 'default');
    expect(name).toMatch(/^c1_\d+$/);
    expect(instanceProfileName('c1', 'us-west-2', 'default')).toBe(name);
    expect(instanceProfileName('c1', 'us-east-1', 'default')).not.toBe(name);
    expect(instanceProfileName('c1', 'us-west-2', 'gpu')).not.toBe(name);
  });
});

describe('roleName', () => {
  it.each([
    ['KarpenterNodeRole-c1', 'KarpenterNodeRole-c1'],
    ['arn:aws:iam::111122223333:role/path/to/Node', 'Node'],
  ])('%s → %s', (role, name) => expect(roleName(role)).toBe(name));
});

describe('InstanceProfileProvider.ensure', () => {
  it('creates the profile with path and tags, and adds the role', async () => {
    const iam = recordingFake<IAMApi>({
      getInstanceProfile: () => {
        throw awsError('NoSuchEntity');
      },
      createInstanceProfile: () => ({}) as never,
      addRoleToInstanceProfile: () => ({}),
    });
    const nc = nodeClass({ role: 'KarpenterNodeRole-c1', tags: { team: 'a', 'eks:eks-cluster-name': 'spoof' } });
    const name = await new InstanceProfileProvider(iam, context).ensure(nc);
    expect(name).toBe(instanceProfileName('c1', 'us-west-2', 'default'));
    const [create] = iam.callsTo('createInstanceProfile') as { Tags: { Key: string; Value: string }[]; Path: string }[];
    expect(create?.Path).toBe('/karpenter/us-west-2/c1/default/');
    expect(Object.fromEntries((create?.Tags ?? []).map((t) => [t.Key, t.Value]))).toEqual({
      team: 'a',
      'kubernetes.io/cluster/c1': 'owned',
      'eks:eks-cluster-name': 'c1',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      'topology.kubernetes.io/region': 'us-west-2',
      'eks:eks-cluster-arn': 'arn:aws:eks:us-west-2:1:cluster/c1',
    });
    expect(iam.callsTo('addRoleToInstanceProfile')).toEqual([
      { InstanceProfileName: name, RoleName: 'KarpenterNodeRole-c1' },
    ]);
  });

  it('reuses a profile that already holds the role without changing it', async () => {
    const iam = recordingFake<IAMApi>({
      getInstanceProfile: () => ({ InstanceProfile: { Roles: [{ RoleName: 'Node' }] } }) as never,
    });
    await new InstanceProfileProvider(iam, context).ensure(nodeClass({ role: 'arn:aws:iam::1:role/Node' }));
    expect(iam.calls.map((c) => c.method)).toEqual(['getInstanceProfile']);
  });

  it('creates a new profile for a new role and leaves the old one, with its role, to running nodes', async () => {
    const legacy = instanceProfileName('c1', 'us-west-2', 'default');
    const next = instanceProfileName('c1', 'us-west-2', 'default', 'New');
    const iam = recordingFake<IAMApi>({
      getInstanceProfile: (input) => {
        if (input.InstanceProfileName === legacy) return { InstanceProfile: { Roles: [{ RoleName: 'Old' }] } } as never;
        throw awsError('NoSuchEntity');
      },
      createInstanceProfile: () => ({}) as never,
      addRoleToInstanceProfile: () => ({}),
    });
    const name = await new InstanceProfileProvider(iam, context).ensure(nodeClass({ role: 'New' }));
    expect(name).toBe(next);
    expect(next).toMatch(/^c1_\d+$/);
    expect(next).not.toBe(legacy);
    expect(iam.callsTo('removeRoleFromInstanceProfile')).toEqual([]);
    expect(iam.calls.map((c) => [c.method, (c.input as { InstanceProfileName?: string }).InstanceProfileName])).toEqual(
      [
        ['getInstanceProfile', legacy],
        ['getInstanceProfile', next],
        ['createInstanceProfile', next],
        ['addRoleToInstanceProfile', next],
      ],
    );
  });

  it('goes back to the first profile when the role changes back', async () => {
    const legacy = instanceProfileName('c1', 'us-west-2', 'default');
    const iam = recordingFake<IAMApi>({
      getInstanceProfile: () => ({ InstanceProfile: { Roles: [{ RoleName: 'Old' }] } }) as never,
    });
    expect(await new InstanceProfileProvider(iam, context).ensure(nodeClass({ role: 'Old' }))).toBe(legacy);
  });

  it('names the role when it cannot be added', async () => {
    const iam = recordingFake<IAMApi>({
      getInstanceProfile: () => ({ InstanceProfile: { Roles: [] } }) as never,
      addRoleToInstanceProfile: () => {
        throw awsError('NoSuchEntity', 'The role with name Missing cannot be found.');
      },
    });
    const ensure = new InstanceProfileProvider(iam, context).ensure(nodeClass({ role: 'Missing' }));
    await expect(ensure).rejects.toThrow(InstanceProfileError);
    await expect(new InstanceProfileProvider(iam, context).ensure(nodeClass({ role: 'Missing' }))).rejects.toThrow(
      /EC2NodeClass\/default: spec.role: cannot add role Missing/,
    );
  });

  it('uses spec.instanceProfile as given', async () => {
    const iam = recordingFake<IAMApi>({});
    expect(await new InstanceProfileProvider(iam, context).ensure(nodeClass({ instanceProfile: 'mine' }))).toBe('mine');
    expect(iam.calls).toEqual([]);
  });
});

describe('InstanceProfileProvider.inspect', () => {
  it.each([
    [
      'an existing given profile',
      { instanceProfile: 'mine' },
      () => ({ InstanceProfile: { Roles: [{ RoleName: 'R' }] } }),
      { name: 'mine', exists: true, managed: false, hasRole: true },
    ],
    [
      'a missing given profile',
      { instanceProfile: 'mine' },
      () => {
        throw awsError('NoSuchEntity');
      },
      { name: 'mine', exists: false, managed: false },
    ],
    [
      'a managed profile without any role',
      { role: 'R' },
      () => ({ InstanceProfile: { Roles: [] } }),
      { exists: true, managed: true, hasRole: false, roles: [] },
    ],
  ])('reports %s without changing anything', async (_, spec, get, expected) => {
    const iam = recordingFake<IAMApi>({ getInstanceProfile: get as never });
    expect(await new InstanceProfileProvider(iam, context).inspect(nodeClass(spec))).toMatchObject(expected);
    expect(iam.calls.map((c) => c.method)).toEqual(['getInstanceProfile']);
  });

  it('reports the profile of the new role when the first profile holds another', async () => {
    const legacy = instanceProfileName('c1', 'us-west-2', 'default');
    const iam = recordingFake<IAMApi>({
      getInstanceProfile: (input) => {
        if (input.InstanceProfileName === legacy) return { InstanceProfile: { Roles: [{ RoleName: 'X' }] } } as never;
        throw awsError('NoSuchEntity');
      },
    });
    expect(await new InstanceProfileProvider(iam, context).inspect(nodeClass({ role: 'R' }))).toMatchObject({
      name: instanceProfileName('c1', 'us-west-2', 'default', 'R'),
      exists: false,
      managed: true,
    });
  });

  it('cannot name a managed profile without the cluster name', async () => {
    const iam = recordingFake<IAMApi>({});
    await expect(
      new InstanceProfileProvider(iam, { clusterName: '', region: 'r' }).inspect(nodeClass({ role: 'R' })),
    ).rejects.toThrow(/cluster name/);
  });
});
