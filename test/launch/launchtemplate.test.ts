import { describe, expect, it } from 'vitest';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import {
  buildCreateLaunchTemplateInput,
  type ClusterInfo,
  type LaunchTemplateSpec,
  launchTemplateName,
  type ResolvedAMI,
  resolveLaunchTemplates,
} from '../../shared/launch/launchtemplate';
import { instanceType, nodeClass, nodePool } from './fixtures';

function spec(nc: EC2NodeClass = nodeClass(), overrides: Partial<LaunchTemplateSpec> = {}): LaunchTemplateSpec {
  return {
    clusterName: 'prod',
    nodePool: nodePool(),
    nodeClass: nc,
    amiId: 'ami-0123456789abcdef0',
    userData: '#!/bin/bash\necho hi\n',
    instanceProfile: 'prod_123',
    securityGroupIds: ['sg-1', 'sg-2'],
    capacityType: 'on-demand',
    ...overrides,
  };
}

const data = (s: LaunchTemplateSpec) => {
  const input = buildCreateLaunchTemplateInput(s);
  if (!input.LaunchTemplateData) throw new Error('no data');
  return input.LaunchTemplateData;
};

describe('CreateLaunchTemplate input', () => {
  it('carries the AMI, base64 userData, profile, monitoring and launch-template tags', () => {
    const input = buildCreateLaunchTemplateInput(spec(nodeClass({ detailedMonitoring: true })));
    expect(input.LaunchTemplateName).toMatch(/^karpenter\.k8s\.aws\/\d+$/);
    expect(input.LaunchTemplateData?.ImageId).toBe('ami-0123456789abcdef0');
    expect(Buffer.from(input.LaunchTemplateData?.UserData ?? '', 'base64').toString()).toBe('#!/bin/bash\necho hi\n');
    expect(input.LaunchTemplateData?.IamInstanceProfile).toEqual({ Name: 'prod_123' });
    expect(input.LaunchTemplateData?.Monitoring).toEqual({ Enabled: true });
    expect(input.TagSpecifications).toEqual([
      {
        ResourceType: 'launch-template',
        Tags: [
          { Key: 'kubernetes.io/cluster/prod', Value: 'owned' },
          { Key: 'eks:eks-cluster-name', Value: 'prod' },
          { Key: 'karpenter.sh/nodepool', Value: 'general' },
          { Key: 'karpenter.k8s.aws/ec2nodeclass', Value: 'default' },
        ],
      },
    ]);
  });

  it('defaults metadata options to v1 (required, hop limit 1, enabled, IPv6 disabled, no instance tags)', () => {
    expect(data(spec()).MetadataOptions).toEqual({
      HttpEndpoint: 'enabled',
      HttpProtocolIpv6: 'disabled',
      HttpPutResponseHopLimit: 1,
      HttpTokens: 'required',
      InstanceMetadataTags: 'disabled',
    });
  });

  it('takes metadata options from the node class, and omits IPv6 in ISO regions', () => {
    const nc = nodeClass({
      metadataOptions: {
        httpEndpoint: 'disabled',
        httpProtocolIPv6: 'enabled',
        httpPutResponseHopLimit: 3,
        httpTokens: 'optional',
      },
    });
    expect(data(spec(nc)).MetadataOptions).toEqual({
      HttpEndpoint: 'disabled',
      HttpProtocolIpv6: 'enabled',
      HttpPutResponseHopLimit: 3,
      HttpTokens: 'optional',
      InstanceMetadataTags: 'disabled',
    });
    expect(data(spec(nc, { region: 'us-iso-east-1' })).MetadataOptions).not.toHaveProperty('HttpProtocolIpv6');
  });

  it('maps every EBS field, rounding the size up to GiB and leaving out zero iops/throughput', () => {
    const nc = nodeClass({
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          rootVolume: true,
          ebs: {
            volumeSize: '100G',
            volumeType: 'io2',
            iops: 4000,
            throughput: 0,
            encrypted: true,
            deleteOnTermination: false,
            kmsKeyID: 'arn:aws:kms:us-east-1:111122223333:key/abc',
            snapshotID: 'snap-1',
            volumeInitializationRate: 200,
          },
        },
        { deviceName: '/dev/xvdb', ebs: { volumeSize: '1Ti', volumeType: 'gp3', iops: 0, throughput: 250 } },
      ],
    });
    expect(data(spec(nc)).BlockDeviceMappings).toEqual([
      {
        DeviceName: '/dev/xvda',
        Ebs: {
          VolumeSize: 94,
          VolumeType: 'io2',
          Iops: 4000,
          Encrypted: true,
          DeleteOnTermination: false,
          KmsKeyId: 'arn:aws:kms:us-east-1:111122223333:key/abc',
          SnapshotId: 'snap-1',
          VolumeInitializationRate: 200,
        },
      },
      { DeviceName: '/dev/xvdb', Ebs: { VolumeSize: 1024, VolumeType: 'gp3', Throughput: 250 } },
    ]);
  });

  it.each([
    ['al2023@latest', undefined, [['/dev/xvda', 20]]],
    ['al2@latest', undefined, [['/dev/xvda', 20]]],
    [
      'bottlerocket@latest',
      undefined,
      [
        ['/dev/xvda', 4],
        ['/dev/xvdb', 20],
      ],
    ],
    ['windows2022@latest', undefined, [['/dev/sda1', 50]]],
    ['al2023@latest', 'Custom', null],
  ] as const)('uses the %s (%s) default block devices', (alias, family, expected) => {
    const nc = nodeClass({ amiSelectorTerms: [{ alias }], ...(family ? { amiFamily: family } : {}) });
    const bdms = data(spec(nc)).BlockDeviceMappings;
    if (expected === null) expect(bdms).toBeUndefined();
    else {
      expect(bdms?.map((b) => [b.DeviceName, b.Ebs?.VolumeSize])).toEqual(expected);
      expect(bdms?.every((b) => b.Ebs?.Encrypted === true && b.Ebs?.VolumeType === 'gp3')).toBe(true);
    }
  });

  it('tags network interfaces always and spot requests for spot', () => {
    const types = (s: LaunchTemplateSpec) => data(s).TagSpecifications?.map((t) => t.ResourceType);
    expect(types(spec())).toEqual(['network-interface']);
    expect(types(spec(nodeClass(), { capacityType: 'spot' }))).toEqual(['network-interface', 'spot-instances-request']);
    expect(data(spec()).TagSpecifications?.[0]?.Tags).toContainEqual({ Key: 'eks:eks-cluster-name', Value: 'prod' });
  });
});

describe('network interfaces', () => {
  it.each([
    [undefined, 0, [{ DeviceIndex: 0, Groups: ['sg-1', 'sg-2'] }]],
    [true, 0, [{ DeviceIndex: 0, Groups: ['sg-1', 'sg-2'], AssociatePublicIpAddress: true }]],
    [false, 0, [{ DeviceIndex: 0, Groups: ['sg-1', 'sg-2'], AssociatePublicIpAddress: false }]],
    [
      undefined,
      2,
      [
        { NetworkCardIndex: 0, DeviceIndex: 0, InterfaceType: 'efa', Groups: ['sg-1', 'sg-2'] },
        { NetworkCardIndex: 1, DeviceIndex: 1, InterfaceType: 'efa', Groups: ['sg-1', 'sg-2'] },
      ],
    ],
    [
      true,
      2,
      [
        {
          NetworkCardIndex: 0,
          DeviceIndex: 0,
          InterfaceType: 'efa',
          Groups: ['sg-1', 'sg-2'],
          AssociatePublicIpAddress: false,
        },
        {
          NetworkCardIndex: 1,
          DeviceIndex: 1,
          InterfaceType: 'efa',
          Groups: ['sg-1', 'sg-2'],
          AssociatePublicIpAddress: false,
        },
      ],
    ],
    [
      true,
      1,
      [
        {
          NetworkCardIndex: 0,
          DeviceIndex: 0,
          InterfaceType: 'efa',
          Groups: ['sg-1', 'sg-2'],
          AssociatePublicIpAddress: true,
        },
      ],
    ],
  ] as const)('associatePublicIPAddress=%s with %i EFA interfaces', (publicIP, efaCount, expected) => {
    const nc = nodeClass(publicIP === undefined ? {} : { associatePublicIPAddress: publicIP });
    const s = spec(nc, efaCount ? { efaCount } : {});
    expect(data(s).NetworkInterfaces).toEqual(expected);
    expect(data(s).SecurityGroupIds).toBeUndefined();
  });

  it('builds spec.networkInterfaces entries, with no addressing on efa-only ones', () => {
    const nc = nodeClass({
      associatePublicIPAddress: false,
      ipPrefixCount: 2,
      networkInterfaces: [
        { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
        { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' },
      ],
    });
    expect(data(spec(nc)).NetworkInterfaces).toEqual([
      {
        NetworkCardIndex: 0,
        DeviceIndex: 0,
        InterfaceType: 'interface',
        Groups: ['sg-1', 'sg-2'],
        Ipv4PrefixCount: 2,
        AssociatePublicIpAddress: false,
      },
      { NetworkCardIndex: 1, DeviceIndex: 0, InterfaceType: 'efa-only', Groups: ['sg-1', 'sg-2'] },
    ]);
  });

  it('gives IPv6 clusters a primary IPv6 address and IPv6 prefixes', () => {
    expect(data(spec(nodeClass({ ipPrefixCount: 1 }), { ipv6: true })).NetworkInterfaces).toEqual([
      { DeviceIndex: 0, Groups: ['sg-1', 'sg-2'], PrimaryIpv6: true, Ipv6AddressCount: 1, Ipv6PrefixCount: 1 },
    ]);
  });
});

describe('launch template names', () => {
  it('is stable across set order and changes with any input', () => {
    const base = launchTemplateName(spec());
    expect(launchTemplateName(spec(nodeClass(), { securityGroupIds: ['sg-2', 'sg-1'] }))).toBe(base);
    expect(launchTemplateName(spec(nodeClass({ tags: { b: '2', a: '1' } })))).toBe(
      launchTemplateName(spec(nodeClass({ tags: { a: '1', b: '2' } }))),
    );
    const variants = [
      spec(nodeClass(), { amiId: 'ami-other' }),
      spec(nodeClass(), { userData: 'other' }),
      spec(nodeClass(), { securityGroupIds: ['sg-3'] }),
      spec(nodeClass(), { capacityType: 'spot' }),
      spec(nodeClass({ detailedMonitoring: true })),
      spec(nodeClass({ metadataOptions: { httpPutResponseHopLimit: 2 } })),
      spec(nodeClass({ associatePublicIPAddress: true })),
      spec(nodeClass(), { clusterName: 'other' }),
    ];
    const names = new Set([base, ...variants.map(launchTemplateName)]);
    expect(names.size).toBe(variants.length + 1);
  });
});

describe('resolveLaunchTemplates', () => {
  const cluster: ClusterInfo = {
    name: 'prod',
    endpoint: 'https://prod.eks',
    caBundle: 'Y2EtYnVuZGxlCg==',
    serviceCIDR: '10.100.0.0/16',
    version: '1.31',
    dnsIP: '10.100.0.10',
    ipv6: false,
  };
  const amis: ResolvedAMI[] = [
    { id: 'ami-arm', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] },
    {
      id: 'ami-gpu',
      requirements: [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' },
      ],
    },
    {
      id: 'ami-amd',
      requirements: [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' },
      ],
    },
  ];
  const args = {
    clusterName: 'prod',
    cluster,
    nodePool: nodePool(),
    nodeClass: nodeClass(),
    amis,
    capacityType: 'on-demand' as const,
    instanceProfile: 'prod_1',
    securityGroupIds: ['sg-1'],
    labels: { 'karpenter.sh/nodepool': 'general', team: 'a' },
  };

  it('groups instance types by first compatible AMI and maxPods', () => {
    const groups = resolveLaunchTemplates({
      ...args,
      instanceTypes: [
        instanceType('m5.large', [], { pods: 29 }),
        instanceType('c5.large', [], { pods: 29 }),
        instanceType('m5.xlarge', [], { pods: 58 }),
        instanceType('m6g.large', [], { arch: 'arm64', pods: 29 }),
        instanceType('g5.xlarge', [], { gpus: 1, pods: 58 }),
      ],
    });
    expect(groups.map((g) => [g.spec.amiId, g.instanceTypes.map((i) => i.name)])).toEqual([
      ['ami-amd', ['m5.large', 'c5.large']],
      ['ami-amd', ['m5.xlarge']],
      ['ami-arm', ['m6g.large']],
      ['ami-gpu', ['g5.xlarge']],
    ]);
    const first = groups[0]?.spec.userData ?? '';
    expect(first).toContain('maxPods: 29');
    expect(first).toContain('- 10.100.0.10');
    expect(first).toContain('key: dedicated');
    expect(groups[1]?.spec.userData).toContain('maxPods: 58');
  });

  it('uses the node class maxPods for every type, so one template serves them', () => {
    const groups = resolveLaunchTemplates({
      ...args,
      nodeClass: nodeClass({ kubelet: { maxPods: 50 } }),
      instanceTypes: [instanceType('m5.large', [], { pods: 29 }), instanceType('m5.xlarge', [], { pods: 58 })],
    });
    expect(groups).toHaveLength(1);
    expect(groups[0]?.spec.userData).toContain('maxPods: 50');
  });

  it('splits by EFA interface count when the claim asks for EFA', () => {
    const groups = resolveLaunchTemplates({
      ...args,
      efa: true,
      nodeClass: nodeClass({ kubelet: { maxPods: 50 } }),
      instanceTypes: [instanceType('p5.48xlarge', [], { efa: 32 }), instanceType('c5n.18xlarge', [], { efa: 1 })],
    });
    expect(groups.map((g) => g.spec.efaCount)).toEqual([32, 1]);
    expect(data(groups[0]!.spec).NetworkInterfaces).toHaveLength(32);
  });

  it('leaves out instance types no AMI fits', () => {
    const groups = resolveLaunchTemplates({
      ...args,
      amis: [amis[0]!],
      instanceTypes: [instanceType('m5.large', [])],
    });
    expect(groups).toEqual([]);
  });
});

describe('reservations, tenancy, placement and enclaves in the template', () => {
  it('keeps spot and on-demand off the account open reservations', () => {
    expect(data(spec()).CapacityReservationSpecification).toEqual({ CapacityReservationPreference: 'none' });
    expect(data(spec(nodeClass(), { capacityType: 'spot' })).CapacityReservationSpecification).toEqual({
      CapacityReservationPreference: 'none',
    });
    expect(data(spec()).InstanceMarketOptions).toBeUndefined();
  });

  it('targets exactly its reservation for reserved launches, in the reservation market', () => {
    const odcr = data(spec(nodeClass(), { capacityType: 'reserved', reservation: { id: 'cr-1', type: 'default' } }));
    expect(odcr.CapacityReservationSpecification).toEqual({
      CapacityReservationPreference: 'capacity-reservations-only',
      CapacityReservationTarget: { CapacityReservationId: 'cr-1' },
    });
    expect(odcr.InstanceMarketOptions).toBeUndefined();
    const block = data(
      spec(nodeClass(), { capacityType: 'reserved', reservation: { id: 'cr-2', type: 'capacity-block' } }),
    );
    expect(block.InstanceMarketOptions).toEqual({ MarketType: 'capacity-block' });
    const interruptible = data(
      spec(nodeClass(), {
        capacityType: 'reserved',
        reservation: { id: 'cr-3', type: 'default', interruptible: true },
      }),
    );
    expect(interruptible.InstanceMarketOptions).toEqual({ MarketType: 'interruptible-capacity-reservation' });
    // One template per reservation.
    expect(
      launchTemplateName(spec(nodeClass(), { capacityType: 'reserved', reservation: { id: 'cr-1', type: 'default' } })),
    ).not.toBe(
      launchTemplateName(spec(nodeClass(), { capacityType: 'reserved', reservation: { id: 'cr-9', type: 'default' } })),
    );
  });

  it('sends tenancy, the placement group and its partition', () => {
    expect(data(spec()).Placement).toEqual({ Tenancy: 'default' });
    expect(
      data(spec(nodeClass(), { tenancy: 'dedicated', placementGroupId: 'pg-1', placementGroupPartition: 2 })).Placement,
    ).toEqual({ Tenancy: 'dedicated', GroupId: 'pg-1', PartitionNumber: 2 });
  });

  it('enables Nitro Enclaves only when asked', () => {
    expect(data(spec()).EnclaveOptions).toBeUndefined();
    expect(data(spec(nodeClass(), { enclave: true })).EnclaveOptions).toEqual({ Enabled: true });
  });

  it('sends no empty connection tracking specification', () => {
    const [ni] = data(spec(nodeClass({ connectionTracking: {} }))).NetworkInterfaces ?? [];
    expect(ni).not.toHaveProperty('ConnectionTrackingSpecification');
  });

  it('gives every interface an IPv6 address on IPv6 clusters', () => {
    const interfaces = data(spec(nodeClass(), { ipv6: true, efaCount: 2 })).NetworkInterfaces ?? [];
    expect(interfaces.map((ni) => [ni.PrimaryIpv6, ni.Ipv6AddressCount])).toEqual([
      [true, 1],
      [true, 1],
    ]);
  });
});
