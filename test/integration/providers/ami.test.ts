import { CreateTagsCommand } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { UnsupportedAliasError } from '../../../shared/amifamily/alias';
import { AMIProvider } from '../../../shared/providers/ami';
import { ec2Api, ssmApi } from '../../../shared/providers/ports';
import { nodeClassWithAMIs } from '../../helpers/nodeclass';
import { type MotoAccount, motoAccount } from '../helpers';
import type { FunctionClients } from '../iam';
import {
  BOTTLEROCKET_LATEST,
  EKS_AMI_OWNER,
  LATEST_RELEASE,
  PINNED_RELEASE,
  seedImageId,
  seedImageName,
} from '../moto/seed';
import { providerClients } from './roles';

/** One account for the file; the images are tagged with its root clients, resolved with the provision function's. */
let shared: Promise<{ account: MotoAccount; clients: FunctionClients }> | undefined;

async function provider() {
  shared ??= (async () => {
    const account = motoAccount();
    return { account, clients: await providerClients(account, 'provision') };
  })();
  const { account, clients } = await shared;
  return { account, amis: new AMIProvider(ec2Api(clients.ec2), ssmApi(clients.ssm)) };
}

const summary = (amis: { id: string; requirements: { key: string; operator: string; values?: string[] }[] }[]) =>
  amis.map((a) => [
    seedImageName(a.id),
    a.requirements.map((r) => `${r.key} ${r.operator} ${(r.values ?? []).join(',')}`.trim()),
  ]);

describe('AMIs on moto', () => {
  it('resolves al2023@latest to the recommended image of every arch and variant', async () => {
    const { amis } = await provider();
    const resolved = await amis.resolve(nodeClassWithAMIs([{ alias: 'al2023@latest' }]), '1.31');
    expect(resolved.map((a) => a.name).sort()).toEqual(
      ['x86_64-standard', 'x86_64-nvidia', 'x86_64-neuron', 'arm64-standard', 'arm64-nvidia']
        .map((v) => `amazon-eks-node-al2023-${v}-1.31-${LATEST_RELEASE}`)
        .sort(),
    );
    const arm = resolved.find((a) => a.name?.includes('arm64-standard'));
    expect(arm?.requirements).toEqual([
      { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] },
      { key: 'karpenter.k8s.aws/instance-accelerator-count', operator: 'DoesNotExist' },
      { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' },
    ]);
  });

  it('resolves a pinned al2023 release to that release', async () => {
    const { amis } = await provider();
    const resolved = await amis.resolve(nodeClassWithAMIs([{ alias: `al2023@${PINNED_RELEASE}` }]), '1.31');
    expect(resolved).toHaveLength(5);
    expect(resolved.every((a) => a.name?.endsWith(PINNED_RELEASE))).toBe(true);
  });

  it('serves nvidia and neuron from the AL2 GPU image', async () => {
    const { amis } = await provider();
    const resolved = await amis.resolve(nodeClassWithAMIs([{ alias: 'al2@latest' }]), '1.31');
    const gpu = seedImageId(`amazon-eks-gpu-node-1.31-${LATEST_RELEASE}`);
    expect(summary(resolved.filter((a) => a.id === gpu))).toEqual([
      [
        `amazon-eks-gpu-node-1.31-${LATEST_RELEASE}`,
        ['kubernetes.io/arch In amd64', 'karpenter.k8s.aws/instance-gpu-count Exists'],
      ],
      [
        `amazon-eks-gpu-node-1.31-${LATEST_RELEASE}`,
        ['kubernetes.io/arch In amd64', 'karpenter.k8s.aws/instance-accelerator-count Exists'],
      ],
    ]);
    expect(resolved).toHaveLength(4);
  });

  it('resolves Bottlerocket and Windows aliases', async () => {
    const { amis } = await provider();
    const bottlerocket = await amis.resolve(nodeClassWithAMIs([{ alias: 'bottlerocket@latest' }]), '1.31');
    expect(bottlerocket.map((a) => a.name)).toContain(
      `bottlerocket-aws-k8s-1.31-nvidia-arm64-v${BOTTLEROCKET_LATEST}-abcdef01`,
    );
    expect(bottlerocket).toHaveLength(5);
    const windows = await amis.resolve(nodeClassWithAMIs([{ alias: 'windows2022@latest' }]), '1.31');
    expect(summary(windows)).toEqual([
      [
        'Windows_Server-2022-English-Core-EKS_Optimized-1.31-2024.09.17',
        [
          'kubernetes.io/arch In amd64',
          'kubernetes.io/os In windows',
          'node.kubernetes.io/windows-build In 10.0.20348',
        ],
      ],
    ]);
  });

  it('finds nothing for a Kubernetes version without published parameters, and refuses unsupported aliases', async () => {
    const { amis } = await provider();
    expect(await amis.resolve(nodeClassWithAMIs([{ alias: 'al2023@latest' }]), '1.29')).toEqual([]);
    await expect(amis.resolve(nodeClassWithAMIs([{ alias: 'al2@latest' }]), '1.33')).rejects.toThrow(
      UnsupportedAliasError,
    );
  });

  it('selects by id, name with owner, tags and ssmParameter terms, one AMI per requirement set, newest first', async () => {
    const { account, amis } = await provider();
    const oldX86 = seedImageId(`amazon-eks-node-al2023-x86_64-standard-1.31-${PINNED_RELEASE}`);
    const newX86 = seedImageId(`amazon-eks-node-al2023-x86_64-standard-1.31-${LATEST_RELEASE}`);
    const arm = seedImageId(`amazon-eks-node-al2023-arm64-standard-1.31-${LATEST_RELEASE}`);

    const byId = await amis.resolve(nodeClassWithAMIs([{ id: oldX86 }], 'AL2023'), '1.31');
    expect(byId.map((a) => [a.id, a.requirements])).toEqual([
      [oldX86, [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }]],
    ]);

    const byName = await amis.resolve(
      nodeClassWithAMIs([{ name: 'amazon-eks-node-al2023-*-standard-1.31-*', owner: EKS_AMI_OWNER }], 'AL2023'),
      '1.31',
    );
    expect(byName.map((a) => a.id)).toEqual([newX86, arm]);

    await account.ec2.send(
      new CreateTagsCommand({ Resources: [oldX86, arm], Tags: [{ Key: 'team', Value: 'platform' }] }),
    );
    const byTags = await amis.resolve(nodeClassWithAMIs([{ tags: { team: 'platform' } }], 'AL2023'), '1.31');
    expect(byTags.map((a) => a.id)).toEqual([arm, oldX86]);
    const byTagKey = await amis.resolve(nodeClassWithAMIs([{ tags: { team: '*' } }], 'AL2023'), '1.31');
    expect(byTagKey.map((a) => a.id).sort()).toEqual([arm, oldX86].sort());

    const bySsm = await amis.resolve(
      nodeClassWithAMIs(
        [{ ssmParameter: `/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id` }],
        'AL2023',
      ),
      '1.31',
    );
    expect(bySsm.map((a) => a.id)).toEqual([arm]);
  });
});
