import type { Image } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { UnsupportedAliasError } from '../../shared/amifamily/alias';
import { AMIProvider, imageRequirements, PROVISION_ALIAS_TTL_MS, searchQuery } from '../../shared/providers/ami';
import type { EC2Api, SSMApi } from '../../shared/providers/ports';
import { nodeClassWithAMIs } from '../helpers/nodeclass';
import { awsError, fakeClock, recordingFake } from './fakes';

/** An EC2 fake that serves `images`, honouring image-id, name and tag filters. */
function imagesFake(images: Image[]) {
  return recordingFake<EC2Api>({
    describeImages: (input) => {
      // Like EC2: deprecated AMIs only when asked for.
      let out = input.IncludeDeprecated
        ? images
        : images.filter((i) => !i.DeprecationTime || Date.parse(i.DeprecationTime) > Date.parse('2026-01-01'));
      for (const f of input.Filters ?? []) {
        if (f.Name === 'image-id') out = out.filter((i) => f.Values?.includes(i.ImageId ?? ''));
        if (f.Name === 'name') out = out.filter((i) => f.Values?.includes(i.Name ?? ''));
        if (f.Name?.startsWith('tag:')) {
          const key = f.Name.slice(4);
          out = out.filter((i) => i.Tags?.some((t) => t.Key === key && f.Values?.includes(t.Value ?? '')));
        }
      }
      return { Images: out };
    },
  });
}

function ssmFake(parameters: Record<string, string>) {
  return recordingFake<SSMApi>({
    getParameter: (input) => {
      const value = parameters[input.Name ?? ''];
      if (value === undefined) throw awsError('ParameterNotFound');
      return { Parameter: { Name: input.Name, Value: value } };
    },
  });
}

const base = '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023';

describe('AMIProvider with an alias', () => {
  const images: Image[] = [
    { ImageId: 'ami-x86', Name: 'al2023-x86', Architecture: 'x86_64', CreationDate: '2024-09-01T00:00:00.000Z' },
    { ImageId: 'ami-arm', Name: 'al2023-arm', Architecture: 'arm64', CreationDate: '2024-09-02T00:00:00.000Z' },
    { ImageId: 'ami-gpu', Name: 'al2023-gpu', Architecture: 'x86_64', CreationDate: '2024-08-01T00:00:00.000Z' },
  ];
  const parameters = {
    [`${base}/x86_64/standard/recommended/image_id`]: 'ami-x86',
    [`${base}/arm64/standard/recommended/image_id`]: 'ami-arm',
    [`${base}/x86_64/nvidia/recommended/image_id`]: 'ami-gpu',
  };

  it('resolves each published variant, skipping missing parameters, newest first', async () => {
    const ec2 = imagesFake(images);
    const amis = await new AMIProvider(ec2, ssmFake(parameters)).resolve(
      nodeClassWithAMIs([{ alias: 'al2023@latest' }]),
      '1.31',
    );
    expect(amis.map((a) => a.id)).toEqual(['ami-arm', 'ami-x86', 'ami-gpu']);
    expect(amis.find((a) => a.id === 'ami-gpu')?.requirements).toEqual([
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' },
    ]);
    // One DescribeImages for every resolved id, deprecated AMIs included for a pinned lookup.
    expect(ec2.callsTo('describeImages')).toEqual([
      {
        Filters: [
          { Name: 'state', Values: ['available'] },
          { Name: 'image-id', Values: ['ami-x86', 'ami-gpu', 'ami-arm'] },
        ],
        IncludeDeprecated: true,
        MaxResults: 1000,
      },
    ]);
  });

  it('caches SSM values for 24 hours', async () => {
    const ssm = ssmFake(parameters);
    const clock = fakeClock();
    const provider = new AMIProvider(imagesFake(images), ssm, clock);
    const nc = nodeClassWithAMIs([{ alias: 'al2023@latest' }]);
    await provider.resolve(nc, '1.31');
    const first = ssm.calls.length;
    await provider.resolve(nc, '1.31');
    // Missing parameters are asked again; found ones are not.
    expect(ssm.calls.length - first).toBe(2);
    clock.advance(24 * 60 * 60 * 1000);
    await provider.resolve(nc, '1.31');
    expect(ssm.calls.length - first).toBe(2 + 5);
  });

  it('re-reads alias parameters after the given TTL (the provision function’s 5 minutes)', async () => {
    const ssm = ssmFake(parameters);
    const clock = fakeClock();
    const provider = new AMIProvider(imagesFake(images), ssm, clock, PROVISION_ALIAS_TTL_MS);
    const nc = nodeClassWithAMIs([{ alias: 'al2023@latest' }]);
    await provider.resolve(nc, '1.31');
    const first = ssm.calls.length;
    clock.advance(PROVISION_ALIAS_TTL_MS - 1);
    await provider.resolve(nc, '1.31');
    expect(ssm.calls.length - first).toBe(2);
    clock.advance(1);
    await provider.resolve(nc, '1.31');
    expect(ssm.calls.length - first).toBe(2 + 5);
  });

  it('returns nothing when no parameter exists', async () => {
    expect(
      await new AMIProvider(imagesFake(images), ssmFake({})).resolve(
        nodeClassWithAMIs([{ alias: 'al2023@latest' }]),
        '1.31',
      ),
    ).toEqual([]);
  });

  it('propagates an unsupported alias', async () => {
    await expect(
      new AMIProvider(imagesFake(images), ssmFake({})).resolve(nodeClassWithAMIs([{ alias: 'al2@latest' }]), '1.33'),
    ).rejects.toThrow(UnsupportedAliasError);
  });
});

describe('AMIProvider with selector terms', () => {
  const clock = fakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const images: Image[] = [
    {
      ImageId: 'ami-old',
      Name: 'team-1',
      Architecture: 'x86_64',
      CreationDate: '2025-01-01T00:00:00.000Z',
      Tags: [{ Key: 'team', Value: 'a' }],
    },
    {
      ImageId: 'ami-new',
      Name: 'team-2',
      Architecture: 'x86_64',
      CreationDate: '2025-06-01T00:00:00.000Z',
      Tags: [{ Key: 'team', Value: 'a' }],
    },
    {
      ImageId: 'ami-dep',
      Name: 'team-3',
      Architecture: 'x86_64',
      CreationDate: '2025-09-01T00:00:00.000Z',
      DeprecationTime: '2025-12-01T00:00:00.000Z',
      Tags: [{ Key: 'team', Value: 'a' }],
    },
    {
      ImageId: 'ami-arm',
      Name: 'team-arm',
      Architecture: 'arm64',
      CreationDate: '2025-02-01T00:00:00.000Z',
      Tags: [{ Key: 'team', Value: 'a' }],
    },
    {
      ImageId: 'ami-i386',
      Name: 'team-i386',
      Architecture: 'i386',
      CreationDate: '2025-02-01T00:00:00.000Z',
      Tags: [{ Key: 'team', Value: 'a' }],
    },
  ];

  it('keeps the newest non-deprecated AMI per requirement set', async () => {
    const amis = await new AMIProvider(imagesFake(images), ssmFake({}), clock).resolve(
      nodeClassWithAMIs([{ tags: { team: 'a' } }], 'AL2023'),
      '1.31',
    );
    expect(amis.map((a) => [a.id, a.requirements])).toEqual([
      ['ami-new', [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }]],
      ['ami-arm', [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }]],
    ]);
  });

  it('finds a term that matches only deprecated AMIs, and ranks deprecated AMIs last', async () => {
    const deprecatedOnly: Image[] = [
      { ...images[2], ImageId: 'ami-dep-x86' },
      {
        ImageId: 'ami-dep-arm',
        Name: 'old-arm',
        Architecture: 'arm64',
        CreationDate: '2025-10-01T00:00:00.000Z',
        DeprecationTime: '2025-12-01T00:00:00.000Z',
        Tags: [{ Key: 'team', Value: 'b' }],
      },
      {
        ImageId: 'ami-cur-x86',
        Name: 'current',
        Architecture: 'x86_64',
        CreationDate: '2025-01-01T00:00:00.000Z',
        Tags: [{ Key: 'team', Value: 'c' }],
      },
    ];
    const ec2 = imagesFake(deprecatedOnly);
    const amis = await new AMIProvider(ec2, ssmFake({}), clock).resolve(
      nodeClassWithAMIs([{ tags: { team: 'b' } }, { name: 'team-3' }, { tags: { team: 'c' } }], 'AL2023'),
      '1.31',
    );
    // arm64 has only a deprecated AMI: it is used. amd64 has a current one: it wins the set. The
    // deprecated AMI, newer though it is, comes last.
    expect(amis.map((a) => [a.id, a.deprecated ?? false])).toEqual([
      ['ami-cur-x86', false],
      ['ami-dep-arm', true],
    ]);
    for (const input of ec2.callsTo('describeImages') as { IncludeDeprecated?: boolean }[]) {
      expect(input.IncludeDeprecated).toBe(true);
    }
  });

  it('accepts a deprecated AMI pinned by id and marks it', async () => {
    const amis = await new AMIProvider(imagesFake(images), ssmFake({}), clock).resolve(
      nodeClassWithAMIs([{ id: 'ami-dep' }], 'AL2023'),
      '1.31',
    );
    expect(amis).toEqual([
      {
        id: 'ami-dep',
        name: 'team-3',
        requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
        creationDate: '2025-09-01T00:00:00.000Z',
        deprecated: true,
      },
    ]);
  });

  it('prefers a current AMI over a newer deprecated one for the same requirements', async () => {
    const amis = await new AMIProvider(imagesFake(images), ssmFake({}), clock).resolve(
      nodeClassWithAMIs([{ id: 'ami-dep' }, { id: 'ami-old' }], 'AL2023'),
      '1.31',
    );
    expect(amis.map((a) => a.id)).toEqual(['ami-old']);
  });

  it('resolves ssmParameter terms through SSM and skips values that are not AMI ids', async () => {
    const ssm = ssmFake({ '/my/ami': 'ami-new', '/my/other': 'not-an-ami' });
    const amis = await new AMIProvider(imagesFake(images), ssm, clock).resolve(
      nodeClassWithAMIs(
        [{ ssmParameter: '/my/ami' }, { ssmParameter: '/my/other' }, { ssmParameter: '/missing' }],
        'AL2023',
      ),
      '1.31',
    );
    expect(amis.map((a) => a.id)).toEqual(['ami-new']);
  });

  it('adds the Windows requirements for a Windows family', () => {
    expect(imageRequirements({ Architecture: 'x86_64' }, 'Windows2019')).toEqual([
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      { key: 'kubernetes.io/os', operator: 'In', values: ['windows'] },
      { key: 'node.kubernetes.io/windows-build', operator: 'In', values: ['10.0.17763'] },
    ]);
  });

  it.each([
    [
      { name: 'my-ami-*' },
      {
        Filters: [
          { Name: 'state', Values: ['available'] },
          { Name: 'name', Values: ['my-ami-*'] },
        ],
        Owners: ['self', 'amazon'],
        IncludeDeprecated: true,
      },
    ],
    [
      { name: 'x', owner: '123456789012' },
      {
        Filters: [
          { Name: 'state', Values: ['available'] },
          { Name: 'name', Values: ['x'] },
        ],
        Owners: ['123456789012'],
        IncludeDeprecated: true,
      },
    ],
    [
      { tags: { team: '*' } },
      {
        Filters: [
          { Name: 'state', Values: ['available'] },
          { Name: 'tag-key', Values: ['team'] },
        ],
        IncludeDeprecated: true,
      },
    ],
    [{ id: 'ami-1' }, undefined],
  ])('searchQuery(%j)', (term, query) => {
    expect(searchQuery(term)).toEqual(query);
  });
});
