import { describe, expect, it } from 'vitest';
import { aliasParameters, parseAlias, UnsupportedAliasError } from '../../shared/amifamily/alias';

const names = (alias: string, k8s = '1.31') => aliasParameters(alias, k8s).map((p) => p.name);

describe('parseAlias', () => {
  it.each([
    ['al2@latest', 'AL2', 'latest'],
    ['AL2023@v20240807', 'AL2023', 'v20240807'],
    ['bottlerocket@v1.20.4', 'Bottlerocket', 'v1.20.4'],
    ['windows2022@latest', 'Windows2022', 'latest'],
  ])('%s → %s %s', (alias, family, version) => {
    expect(parseAlias(alias)).toEqual({ family, version });
  });

  it.each([
    ['al2023', /improperly formatted/],
    ['@latest', /improperly formatted/],
    ['al2023@', /improperly formatted/],
    ['ubuntu@latest', /unknown family "ubuntu"/],
    ['windows2019@v1', /windows families may only specify version 'latest'/],
  ])('refuses %s', (alias, message) => {
    expect(() => parseAlias(alias)).toThrow(UnsupportedAliasError);
    expect(() => parseAlias(alias)).toThrow(message);
  });
});

describe('aliasParameters', () => {
  it('maps al2023@latest to the recommended parameter of every arch and variant', () => {
    expect(names('al2023@latest')).toEqual([
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/neuron/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/nvidia/recommended/image_id',
    ]);
  });

  it('maps a pinned al2023 release to the release-named leaf', () => {
    expect(names('al2023@v20240807')[0]).toBe(
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.31-v20240807/image_id',
    );
  });

  it.each([
    [
      'al2@latest',
      [
        '/aws/service/eks/optimized-ami/1.30/amazon-linux-2/recommended/image_id',
        '/aws/service/eks/optimized-ami/1.30/amazon-linux-2-arm64/recommended/image_id',
        '/aws/service/eks/optimized-ami/1.30/amazon-linux-2-gpu/recommended/image_id',
        '/aws/service/eks/optimized-ami/1.30/amazon-linux-2-gpu/recommended/image_id',
      ],
    ],
    [
      'al2@v20240807',
      [
        '/aws/service/eks/optimized-ami/1.30/amazon-linux-2/amazon-eks-node-1.30-v20240807/image_id',
        '/aws/service/eks/optimized-ami/1.30/amazon-linux-2-arm64/amazon-eks-arm64-node-1.30-v20240807/image_id',
        '/aws/service/eks/optimized-ami/1.30/amazon-linux-2-gpu/amazon-eks-gpu-node-1.30-v20240807/image_id',
        '/aws/service/eks/optimized-ami/1.30/amazon-linux-2-gpu/amazon-eks-gpu-node-1.30-v20240807/image_id',
      ],
    ],
    [
      'bottlerocket@latest',
      [
        '/aws/service/bottlerocket/aws-k8s-1.30/x86_64/latest/image_id',
        '/aws/service/bottlerocket/aws-k8s-1.30/x86_64/latest/image_id',
        '/aws/service/bottlerocket/aws-k8s-1.30/arm64/latest/image_id',
        '/aws/service/bottlerocket/aws-k8s-1.30-nvidia/x86_64/latest/image_id',
        '/aws/service/bottlerocket/aws-k8s-1.30-nvidia/arm64/latest/image_id',
      ],
    ],
    [
      'bottlerocket@v1.20.4',
      [
        '/aws/service/bottlerocket/aws-k8s-1.30/x86_64/1.20.4/image_id',
        '/aws/service/bottlerocket/aws-k8s-1.30/x86_64/1.20.4/image_id',
        '/aws/service/bottlerocket/aws-k8s-1.30/arm64/1.20.4/image_id',
        '/aws/service/bottlerocket/aws-k8s-1.30-nvidia/x86_64/1.20.4/image_id',
        '/aws/service/bottlerocket/aws-k8s-1.30-nvidia/arm64/1.20.4/image_id',
      ],
    ],
    [
      'windows2019@latest',
      ['/aws/service/ami-windows-latest/Windows_Server-2019-English-Core-EKS_Optimized-1.30/image_id'],
    ],
    [
      'windows2022@latest',
      ['/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.30/image_id'],
    ],
  ])('%s on 1.30', (alias, expected) => {
    expect(names(alias, '1.30')).toEqual(expected);
  });

  it('takes the major.minor of a full version string', () => {
    expect(names('al2023@latest', 'v1.31.4-eks-2d5f260')[0]).toContain('/optimized-ami/1.31/');
  });

  it.each([
    [
      'x86_64',
      'standard',
      [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'karpenter.k8s.aws/instance-accelerator-count', operator: 'DoesNotExist' },
        { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' },
      ],
    ],
    [
      'x86_64',
      'nvidia',
      [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' },
      ],
    ],
    [
      'x86_64',
      'neuron',
      [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'karpenter.k8s.aws/instance-accelerator-count', operator: 'Exists' },
      ],
    ],
    [
      'arm64',
      'standard',
      [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] },
        { key: 'karpenter.k8s.aws/instance-accelerator-count', operator: 'DoesNotExist' },
        { key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' },
      ],
    ],
  ])('al2023 %s %s carries the variant requirements', (arch, variant, requirements) => {
    const param = aliasParameters('al2023@latest', '1.31').find((p) => p.arch === arch && p.variant === variant);
    expect(param?.requirements).toEqual(requirements);
  });

  it('serves nvidia and neuron from the one AL2 GPU image with different requirements', () => {
    const gpu = aliasParameters('al2@latest', '1.30').filter((p) => p.name.includes('amazon-linux-2-gpu'));
    expect(gpu.map((p) => p.variant)).toEqual(['nvidia', 'neuron']);
  });

  it('gives Windows AMIs the os and build requirements', () => {
    expect(aliasParameters('windows2022@latest', '1.31')[0]?.requirements).toEqual([
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      { key: 'kubernetes.io/os', operator: 'In', values: ['windows'] },
      { key: 'node.kubernetes.io/windows-build', operator: 'In', values: ['10.0.20348'] },
    ]);
  });

  it.each([
    ['al2@latest', '1.33', /AL2 AMIs are not published for Kubernetes 1.33/],
    ['windows2025@latest', '1.34', /Windows2025 AMIs need Kubernetes 1.35/],
    ['al2023@latest', 'latest', /not major.minor/],
  ])('refuses %s on %s', (alias, k8s, message) => {
    expect(() => aliasParameters(alias, k8s)).toThrow(message);
  });

  it('accepts windows2025 from 1.35', () => {
    expect(names('windows2025@latest', '1.35')).toEqual([
      '/aws/service/ami-windows-latest/Windows_Server-2025-English-Core-EKS_Optimized-1.35/image_id',
    ]);
  });
});
