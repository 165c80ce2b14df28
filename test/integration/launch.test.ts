// The whole launch path against moto: resolve the node class, build and ensure launch templates,
// CreateFleet with fallback, tags, idempotency and throttling.

import type { CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import {
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeLaunchTemplateVersionsCommand,
} from '@aws-sdk/client-ec2';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { resolveInstanceTypes } from '../../shared/instancetypes';
import type { InstanceType } from '../../shared/instancetypes/types';
import { buildCreateLaunchTemplateInput, resolveLaunchTemplates } from '../../shared/launch/launchtemplate';
import { type NodeClassResolution, readyNodeClass, resolveNodeClass } from '../../shared/nodeclass';
import { AMIProvider } from '../../shared/providers/ami';
import { type Cluster, ClusterProvider } from '../../shared/providers/cluster';
import { InstanceLauncher, type LaunchRequest, type ResolvedNodeClass } from '../../shared/providers/instance';
import { InstanceProfileProvider } from '../../shared/providers/instanceprofile';
import { InstanceTypeProvider } from '../../shared/providers/instancetype';
import { LaunchTemplateProvider } from '../../shared/providers/launchtemplate';
import { ec2Api, eksApi, iamApi, ssmApi } from '../../shared/providers/ports';
import { SecurityGroupProvider } from '../../shared/providers/securitygroup';
import { SubnetProvider } from '../../shared/providers/subnet';
import { InMemoryUnavailableOfferings } from '../../shared/providers/unavailableofferings';
import { solve } from '../../shared/scheduling';
import { fakeClock } from '../providers/fakes';
import { pods } from '../scheduling/helpers';
import {
  createCluster,
  createFleetErrorBody,
  createNetwork,
  ec2ErrorBody,
  injectFault,
  type MotoAccount,
  motoAccount,
} from './helpers';
import { type FunctionClients, type FunctionIdentity, functionClients, functionIdentity } from './iam';
import { LATEST_RELEASE, seedImageId } from './moto/seed';

const CLUSTER = 'c1';
const REGION = 'us-west-2';
const PRICES: Record<string, number> = { 'm5.large': 0.096, 'c5.large': 0.085, 'm5.xlarge': 0.192 };

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'KarpenterNodeRole-c1',
    tags: { team: 'platform', 'cost-center': '42' },
    detailedMonitoring: true,
    metadataOptions: {
      httpEndpoint: 'enabled',
      httpProtocolIPv6: 'disabled',
      httpPutResponseHopLimit: 1,
      httpTokens: 'required',
    },
    blockDeviceMappings: [
      {
        deviceName: '/dev/xvda',
        rootVolume: true,
        ebs: {
          volumeSize: '100Gi',
          volumeType: 'gp3',
          iops: 4000,
          throughput: 250,
          encrypted: true,
          deleteOnTermination: true,
          kmsKeyID: 'arn:aws:kms:us-west-2:111122223333:key/abc',
        },
      },
    ],
  },
};

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      metadata: { labels: { team: 'platform' } },
      spec: {
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        taints: [{ key: 'dedicated', value: 'platform', effect: 'NoSchedule' }],
      },
    },
  },
};

interface Environment {
  account: MotoAccount;
  /** The provision function's role, and its clients: every launch runs as the function would. */
  identity: FunctionIdentity;
  clients: FunctionClients;
  cluster: Cluster;
  resolution: NodeClassResolution;
  resolved: ResolvedNodeClass;
  /** Cheapest on-demand first. */
  instanceTypes: InstanceType[];
}

async function environment(): Promise<Environment> {
  const account = motoAccount();
  await createNetwork(account, {
    subnets: [
      { zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } },
      { zone: 'us-west-2b', cidr: '10.0.2.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } },
    ],
    securityGroups: [{ name: 'nodes', tags: { 'karpenter.sh/discovery': CLUSTER } }],
  });
  await createCluster(account, CLUSTER, { serviceCIDR: '172.20.0.0/16' });
  await account.iam.send(
    new CreateRoleCommand({
      RoleName: 'KarpenterNodeRole-c1',
      AssumeRolePolicyDocument: JSON.stringify({
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
      }),
    }),
  );
  const identity = await functionIdentity(account, 'provision', {
    clusterName: CLUSTER,
    configuration: { nodePools: [nodePool], nodeClasses: [nodeClass] },
  });
  const clients = functionClients(account, identity);
  const ec2 = ec2Api(clients.ec2);
  const cluster = await new ClusterProvider(eksApi(clients.eks)).describe(CLUSTER);
  const resolution = await resolveNodeClass(nodeClass, {
    subnets: new SubnetProvider(ec2),
    securityGroups: new SecurityGroupProvider(ec2),
    amis: new AMIProvider(ec2, ssmApi(clients.ssm)),
    instanceProfiles: new InstanceProfileProvider(iamApi(clients.iam), {
      clusterName: CLUSTER,
      region: REGION,
      ...(cluster.arn ? { clusterArn: cluster.arn } : {}),
    }),
    k8sVersion: cluster.version,
  });
  const catalog = await new InstanceTypeProvider(ec2, {
    region: REGION,
    instanceTypes: Object.keys(PRICES),
    onDemandPrice: (t) => PRICES[t],
  }).catalog();
  const instanceTypes = resolveInstanceTypes(catalog, resolution.nodeClass).sort(
    (a, b) => (PRICES[a.name] ?? 0) - (PRICES[b.name] ?? 0),
  );
  return {
    account,
    identity,
    clients,
    cluster,
    resolution,
    resolved: readyNodeClass(resolution, cluster),
    instanceTypes,
  };
}

function claim(env: Environment, name: string): LaunchRequest {
  return {
    nodeClaimName: name,
    nodePool,
    nodeClass: env.resolution.nodeClass,
    instanceTypes: env.instanceTypes,
    requirements: nodePool.spec.template.spec.requirements,
    capacityType: 'on-demand',
    labels: { 'karpenter.sh/nodepool': 'general', 'karpenter.k8s.aws/ec2nodeclass': 'default', team: 'platform' },
  };
}

function launcher(clients: Pick<FunctionClients, 'ec2'>, options: { clock?: () => number; sleeps?: number[] } = {}) {
  const ec2 = ec2Api(clients.ec2);
  const unavailable = new InMemoryUnavailableOfferings(options.clock ?? Date.now);
  return {
    unavailable,
    launcher: new InstanceLauncher({
      ec2,
      launchTemplates: new LaunchTemplateProvider(ec2),
      unavailable,
      clusterName: CLUSTER,
      region: REGION,
      sleep: async (ms) => {
        options.sleeps?.push(ms);
      },
    }),
  };
}

async function instancesOfClaim(account: MotoAccount, name: string) {
  const out = await account.ec2.send(
    new DescribeInstancesCommand({ Filters: [{ Name: 'tag:karpenter.sh/nodeclaim', Values: [name] }] }),
  );
  return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
}

describe('launch on moto', () => {
  let env: Environment;
  beforeAll(async () => {
    env = await environment();
  });

  it('resolves the node class to Ready with subnets, groups, AMIs and the instance profile', () => {
    expect(env.resolution.ready).toBe(true);
    expect(env.resolution.nodeClass.status?.subnets?.map((s) => s.zone).sort()).toEqual(['us-west-2a', 'us-west-2b']);
    expect(env.resolution.nodeClass.status?.securityGroups?.map((g) => g.name)).toEqual(['nodes']);
    expect(env.resolution.nodeClass.status?.amis).toHaveLength(5);
    expect(env.resolution.instanceProfile).toMatch(/^c1_\d+$/);
    expect(env.instanceTypes.map((t) => t.name)).toEqual(['c5.large', 'm5.large', 'm5.xlarge']);
  });

  it('launches the cheapest type with every tag and a launch template that round-trips every field', async () => {
    const { launcher: l } = launcher(env.clients);
    const result = await l.launch(claim(env, 'general-tags'), env.resolved);
    expect(result).toMatchObject({ instanceType: 'c5.large', capacityType: 'on-demand', existing: false });
    expect(['us-west-2a', 'us-west-2b']).toContain(result.zone);

    const [instance, ...others] = await instancesOfClaim(env.account, 'general-tags');
    expect(others).toEqual([]);
    expect(instance?.InstanceId).toBe(result.instanceId);
    expect(instance?.ImageId).toBe(seedImageId(`amazon-eks-node-al2023-x86_64-standard-1.31-${LATEST_RELEASE}`));
    expect(result.imageId).toBe(instance?.ImageId);
    const tags = Object.fromEntries((instance?.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject({
      'eks:eks-cluster-name': CLUSTER,
      'kubernetes.io/cluster/c1': 'owned',
      'karpenter.sh/nodepool': 'general',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      'karpenter.sh/nodeclaim': 'general-tags',
      Name: 'general-tags',
      team: 'platform',
      'cost-center': '42',
    });
    expect(tags).not.toHaveProperty('karpenter.sh/managed-by');

    // The template the instance came from holds exactly what the builder produced.
    const [group] = resolveLaunchTemplates({
      clusterName: CLUSTER,
      cluster: env.cluster,
      nodePool,
      nodeClass: env.resolution.nodeClass,
      instanceTypes: env.instanceTypes.filter((t) => t.name === 'c5.large'),
      amis: env.resolved.amis,
      capacityType: 'on-demand',
      instanceProfile: env.resolved.instanceProfile,
      securityGroupIds: env.resolved.securityGroups.map((g) => g.id),
      labels: claim(env, 'x').labels,
      region: REGION,
    });
    if (!group) throw new Error('c5.large has no launch template group');
    const input = buildCreateLaunchTemplateInput(group.spec);
    const described = await env.account.ec2.send(
      new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: [input.LaunchTemplateName ?? ''] }),
    );
    expect(described.LaunchTemplates).toHaveLength(1);
    const template = described.LaunchTemplates?.[0];
    expect(Object.fromEntries((template?.Tags ?? []).map((t) => [t.Key, t.Value]))).toEqual({
      team: 'platform',
      'cost-center': '42',
      'kubernetes.io/cluster/c1': 'owned',
      'eks:eks-cluster-name': CLUSTER,
      'karpenter.sh/nodepool': 'general',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
    });
    const versions = await env.account.ec2.send(
      new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: template?.LaunchTemplateId ?? '' }),
    );
    const data = versions.LaunchTemplateVersions?.[0]?.LaunchTemplateData;
    const expected = input.LaunchTemplateData;
    expect(data?.ImageId).toBe(expected?.ImageId);
    expect(data?.UserData).toBe(expected?.UserData);
    expect(Buffer.from(data?.UserData ?? '', 'base64').toString()).toContain('name: c1');
    expect(data?.IamInstanceProfile).toEqual({ Name: env.resolved.instanceProfile });
    expect(data?.Monitoring).toEqual({ Enabled: true });
    expect(data?.MetadataOptions).toEqual({
      HttpEndpoint: 'enabled',
      HttpProtocolIpv6: 'disabled',
      HttpPutResponseHopLimit: 1,
      HttpTokens: 'required',
      InstanceMetadataTags: 'disabled',
    });
    expect(data?.BlockDeviceMappings).toEqual([
      {
        DeviceName: '/dev/xvda',
        Ebs: {
          DeleteOnTermination: true,
          Encrypted: true,
          Iops: 4000,
          KmsKeyId: 'arn:aws:kms:us-west-2:111122223333:key/abc',
          Throughput: 250,
          VolumeSize: 100,
          VolumeType: 'gp3',
        },
      },
    ]);
    expect(data?.NetworkInterfaces).toEqual([{ DeviceIndex: 0, Groups: env.resolved.securityGroups.map((g) => g.id) }]);
    const niTags = data?.TagSpecifications?.find((t) => t.ResourceType === 'network-interface')?.Tags ?? [];
    expect(Object.fromEntries(niTags.map((t) => [t.Key, t.Value]))).toMatchObject({
      'eks:eks-cluster-name': CLUSTER,
      'karpenter.sh/nodepool': 'general',
    });
    // Every field the builder set comes back unchanged. (moto also echoes the template's own
    // launch-template tags inside the data, which EC2 does not; that entry is not ours to compare.)
    const echoed = {
      ...data,
      TagSpecifications: data?.TagSpecifications?.filter((t) => t.ResourceType !== 'launch-template'),
    };
    for (const [field, value] of Object.entries(expected ?? {})) {
      expect({ field, value: echoed[field as keyof typeof echoed] }).toEqual({ field, value });
    }
  });

  it('launches every claim of a zone-pinned plan only in its zone', async () => {
    // The node pool taints its nodes dedicated=platform.
    const tolerations = [
      { key: 'dedicated', operator: 'Equal' as const, value: 'platform', effect: 'NoSchedule' as const },
    ];
    const planned = solve({
      pods: [
        ...pods('web-b', 2, {
          cpu: '500m',
          tolerations,
          nodeSelector: { 'topology.kubernetes.io/zone': 'us-west-2b' },
        }),
        ...pods('web-a', 2, {
          cpu: '500m',
          tolerations,
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2a'] }],
                  },
                ],
              },
            },
          },
        }),
      ],
      nodePools: [nodePool],
      instanceTypes: { general: env.instanceTypes },
    });
    expect(planned.unschedulable).toEqual([]);
    expect(planned.nodeClaims.map((c) => c.offering.zone).sort()).toEqual(['us-west-2a', 'us-west-2b']);

    const ec2 = ec2Api(env.clients.ec2);
    const fleets: CreateFleetCommandInput[] = [];
    const recording = {
      ...ec2,
      createFleet: (input: CreateFleetCommandInput) => {
        fleets.push(input);
        return ec2.createFleet(input);
      },
    };
    const l = new InstanceLauncher({
      ec2: recording,
      launchTemplates: new LaunchTemplateProvider(ec2),
      unavailable: new InMemoryUnavailableOfferings(Date.now),
      clusterName: CLUSTER,
      region: REGION,
    });
    for (const [i, c] of planned.nodeClaims.entries()) {
      const zone = c.offering.zone;
      const name = `general-pinned-${i}`;
      const result = await l.launch(
        {
          nodeClaimName: name,
          nodePool,
          nodeClass: env.resolution.nodeClass,
          instanceTypes: c.instanceTypes,
          requirements: c.requirements,
          labels: { 'karpenter.sh/nodepool': 'general', team: 'platform' },
        },
        env.resolved,
      );
      const fleet = fleets.at(-1);
      const zones = new Set(
        (fleet?.LaunchTemplateConfigs ?? []).flatMap((cfg) => (cfg.Overrides ?? []).map((o) => o.AvailabilityZone)),
      );
      expect([...zones]).toEqual([zone]);
      expect(result.zone).toBe(zone);
      const [instance] = await instancesOfClaim(env.account, name);
      expect(instance?.Placement?.AvailabilityZone).toBe(zone);
    }
  });

  it('launches spot with a spot-instances-request tag specification in the template', async () => {
    const { launcher: l } = launcher(env.clients);
    // Both allowed and no pin: the launch prefers spot, as Karpenter does.
    const { capacityType: _pinned, ...rest } = claim(env, 'general-spot');
    const request: LaunchRequest = {
      ...rest,
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }],
    };
    const result = await l.launch(request, env.resolved);
    expect(result).toMatchObject({ capacityType: 'spot', existing: false });
    const [instance] = await instancesOfClaim(env.account, 'general-spot');
    expect(instance?.InstanceLifecycle).toBe('spot');
    const templates = await env.account.ec2.send(
      new DescribeLaunchTemplatesCommand({
        Filters: [{ Name: 'tag:karpenter.k8s.aws/ec2nodeclass', Values: ['default'] }],
      }),
    );
    const kinds = await Promise.all(
      (templates.LaunchTemplates ?? []).map(async (t) => {
        const v = await env.account.ec2.send(
          new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: t.LaunchTemplateId ?? '' }),
        );
        return (v.LaunchTemplateVersions?.[0]?.LaunchTemplateData?.TagSpecifications ?? []).map((s) => s.ResourceType);
      }),
    );
    expect(kinds.some((k) => k.includes('spot-instances-request'))).toBe(true);
  });

  it('reuses launch templates instead of duplicating them', async () => {
    const templates = async () => {
      const out = await env.account.ec2.send(
        new DescribeLaunchTemplatesCommand({
          Filters: [{ Name: 'tag:karpenter.k8s.aws/ec2nodeclass', Values: ['default'] }],
        }),
      );
      return (out.LaunchTemplates ?? []).map((t) => t.LaunchTemplateName).sort();
    };
    await launcher(env.clients).launcher.launch(claim(env, 'general-reuse-1'), env.resolved);
    const before = await templates();
    expect(before.length).toBeGreaterThan(0);
    // A fresh provider (no cache) must find, not recreate, what the first launch made.
    await launcher(env.clients).launcher.launch(claim(env, 'general-reuse-2'), env.resolved);
    expect(await templates()).toEqual(before);
  });

  it('returns the same instance when the same claim is launched again', async () => {
    const first = await launcher(env.clients).launcher.launch(claim(env, 'general-retry'), env.resolved);
    const again = await launcher(env.clients).launcher.launch(claim(env, 'general-retry'), env.resolved);
    expect(again).toMatchObject({ instanceId: first.instanceId, instanceType: first.instanceType, existing: true });
    expect(await instancesOfClaim(env.account, 'general-retry')).toHaveLength(1);
  });

  it('falls back to the next type when the cheapest has no capacity, and forgets that after 3 minutes', async () => {
    const clock = fakeClock(Date.now());
    const { launcher: l, unavailable } = launcher(env.clients, { clock });
    await injectFault(env.account, {
      action: 'CreateFleet',
      contains: 'general-ice',
      status: 200,
      body: createFleetErrorBody(
        ['us-west-2a', 'us-west-2b'].map((zone) => ({
          instanceType: 'c5.large',
          zone,
          code: 'InsufficientInstanceCapacity',
          message: 'We currently do not have sufficient c5.large capacity in the Availability Zone you requested.',
        })),
      ),
      times: 1,
    });
    const result = await l.launch(claim(env, 'general-ice'), env.resolved);
    expect(result.instanceType).toBe('m5.large');
    expect(await instancesOfClaim(env.account, 'general-ice')).toHaveLength(1);
    expect(Object.keys(unavailable.snapshot()).sort()).toEqual([
      'on-demand:c5.large:us-west-2a',
      'on-demand:c5.large:us-west-2b',
    ]);
    clock.advance(3 * 60 * 1000);
    expect(unavailable.snapshot()).toEqual({});
    expect(unavailable.isUnavailable('on-demand', 'c5.large', 'us-west-2a')).toBe(false);
  });

  it('falls back to on-demand and blocks spot when the spot service-linked role cannot be created', async () => {
    const clock = fakeClock(Date.now());
    const { launcher: l, unavailable } = launcher(env.clients, { clock });
    await injectFault(env.account, {
      action: 'CreateFleet',
      // The claim's first request, the spot one.
      contains: 'general-slr',
      status: 200,
      body: createFleetErrorBody([
        {
          instanceType: 'c5.large',
          zone: 'us-west-2a',
          code: 'AuthFailure.ServiceLinkedRoleCreationNotPermitted',
          message:
            'The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances.',
        },
      ]),
      times: 1,
    });
    const { capacityType: _pinned, ...rest } = claim(env, 'general-slr');
    const result = await l.launch(
      { ...rest, requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }] },
      env.resolved,
    );
    expect(result).toMatchObject({ capacityType: 'on-demand', existing: false });
    const [instance] = await instancesOfClaim(env.account, 'general-slr');
    expect(instance?.InstanceLifecycle).toBeUndefined();
    expect(unavailable.isScopeUnavailable({ kind: 'capacity-type', capacityType: 'spot' })).toBe(true);
    clock.advance(3 * 60 * 1000);
    expect(unavailable.isScopeUnavailable({ kind: 'capacity-type', capacityType: 'spot' })).toBe(false);
  });

  it('leaves a subnet without free addresses out for 3 minutes and launches in another', async () => {
    const { launcher: l, unavailable } = launcher(env.clients);
    const full = env.resolved.subnets.find((s) => s.zone === 'us-west-2a');
    if (!full) throw new Error('no subnet in us-west-2a');
    await injectFault(env.account, {
      action: 'CreateFleet',
      contains: 'general-full-subnet',
      status: 200,
      body: createFleetErrorBody([
        {
          instanceType: 'c5.large',
          zone: 'us-west-2a',
          subnetId: full.id,
          code: 'InsufficientFreeAddressesInSubnet',
          message: 'There are not enough free addresses in subnet to satisfy the requested number of instances.',
        },
      ]),
      times: 1,
    });
    const result = await l.launch(claim(env, 'general-full-subnet'), env.resolved);
    expect(result.zone).toBe('us-west-2b');
    expect(unavailable.isScopeUnavailable({ kind: 'subnet', subnetId: full.id })).toBe(true);
    // The offering itself did not run out.
    expect(unavailable.isUnavailable('on-demand', 'c5.large', 'us-west-2a')).toBe(false);
  });

  it('recreates a launch template CreateFleet reports missing and retries once', async () => {
    const { launcher: l } = launcher(env.clients);
    await injectFault(env.account, {
      action: 'CreateFleet',
      contains: 'general-lt-gone',
      status: 200,
      body: createFleetErrorBody([
        {
          instanceType: 'c5.large',
          zone: 'us-west-2a',
          code: 'InvalidLaunchTemplateName.NotFoundException',
          message: 'The specified launch template does not exist.',
        },
      ]),
      times: 1,
    });
    const result = await l.launch(claim(env, 'general-lt-gone'), env.resolved);
    expect(result).toMatchObject({ instanceType: 'c5.large', existing: false });
    expect(await instancesOfClaim(env.account, 'general-lt-gone')).toHaveLength(1);
  });

  it('retries a throttled CreateFleet', async () => {
    // maxAttempts 1: the SDK does not retry, so the launcher's own backoff has to.
    const account = env.account;
    const sleeps: number[] = [];
    const { launcher: l } = launcher(functionClients(account, env.identity, { maxAttempts: 1 }), { sleeps });
    await injectFault(account, {
      action: 'CreateFleet',
      contains: 'general-throttle',
      status: 503,
      body: ec2ErrorBody('RequestLimitExceeded', 'Request limit exceeded.'),
      times: 2,
    });
    const result = await l.launch(claim(env, 'general-throttle'), env.resolved);
    expect(result.existing).toBe(false);
    // Full jitter: each wait is drawn between 0 and the doubling backoff (500 ms, then 1 s).
    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBeLessThanOrEqual(500);
    expect(sleeps[1]).toBeLessThanOrEqual(1000);
    expect(await instancesOfClaim(account, 'general-throttle')).toHaveLength(1);
  });

  it('surfaces UnauthorizedOperation from CreateFleet', async () => {
    await injectFault(env.account, {
      action: 'CreateFleet',
      contains: 'general-denied',
      status: 400,
      body: ec2ErrorBody('UnauthorizedOperation', 'You are not authorized to perform this operation.'),
      times: 1,
    });
    await expect(
      launcher(env.clients).launcher.launch(claim(env, 'general-denied'), env.resolved),
    ).rejects.toMatchObject({
      name: 'UnauthorizedOperation',
    });
    expect(await instancesOfClaim(env.account, 'general-denied')).toEqual([]);
  });
});
