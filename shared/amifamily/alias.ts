// amiSelectorTerms[].alias → the public SSM parameters that name the AMI, per Kubernetes version,
// architecture and variant (AWS pkg/providers/amifamily/{al2,al2023,bottlerocket,windows}.go). Pure.

import { ALIAS_FAMILIES, type AliasFamily } from '../apis/v1/amifamily';
import { LABEL_ARCH, LABEL_OS, LABEL_WINDOWS_BUILD } from '../apis/v1/labels';
import type { NodeSelectorRequirementWithMinValues } from '../apis/v1/types';

export type { AliasFamily };
export type Variant = 'standard' | 'nvidia' | 'neuron';
export type EC2Architecture = 'x86_64' | 'arm64';

export const LABEL_GPU_COUNT = 'karpenter.k8s.aws/instance-gpu-count';
export const LABEL_ACCELERATOR_COUNT = 'karpenter.k8s.aws/instance-accelerator-count';

export const WINDOWS_BUILDS: Record<'Windows2019' | 'Windows2022' | 'Windows2025', string> = {
  Windows2019: '10.0.17763',
  Windows2022: '10.0.20348',
  Windows2025: '10.0.26100',
};

/** An alias that cannot be resolved; readiness reports it as AMIsReady=False, reason UnsupportedAlias. */
export class UnsupportedAliasError extends Error {
  override readonly name = 'UnsupportedAliasError';
}

export interface Alias {
  family: AliasFamily;
  /** "latest" or a pinned release such as v20240807 (Bottlerocket: 1.20.4). */
  version: string;
}

export function parseAlias(alias: string): Alias {
  const at = alias.indexOf('@');
  if (at <= 0 || at === alias.length - 1) {
    throw new UnsupportedAliasError(`alias "${alias}" is improperly formatted, must match the format 'family@version'`);
  }
  const familyName = alias.slice(0, at).toLowerCase();
  const family = ALIAS_FAMILIES[familyName];
  if (!family) {
    throw new UnsupportedAliasError(
      `alias "${alias}" has unknown family "${familyName}"; use one of ${Object.keys(ALIAS_FAMILIES).join(', ')}`,
    );
  }
  const version = alias.slice(at + 1);
  if (family.startsWith('Windows') && version !== 'latest') {
    throw new UnsupportedAliasError(`alias "${alias}": windows families may only specify version 'latest'`);
  }
  return { family, version };
}

/** One SSM parameter to read and the requirements of the AMI it names. */
export interface AliasParameter {
  name: string;
  arch: EC2Architecture;
  variant: Variant;
  requirements: NodeSelectorRequirementWithMinValues[];
}

function minor(k8sVersion: string): [number, number] {
  const match = /^v?(\d+)\.(\d+)/.exec(k8sVersion);
  if (!match) throw new UnsupportedAliasError(`Kubernetes version "${k8sVersion}" is not major.minor`);
  return [Number(match[1]), Number(match[2])];
}

function atLeast(k8sVersion: string, major: number, min: number): boolean {
  const [ma, mi] = minor(k8sVersion);
  return ma > major || (ma === major && mi >= min);
}

export function archLabel(arch: EC2Architecture | string): 'amd64' | 'arm64' | undefined {
  if (arch === 'x86_64' || arch === 'amd64') return 'amd64';
  if (arch === 'arm64') return 'arm64';
  return undefined;
}

export function variantRequirements(arch: EC2Architecture, variant: Variant): NodeSelectorRequirementWithMinValues[] {
  const requirements: NodeSelectorRequirementWithMinValues[] = [
    { key: LABEL_ARCH, operator: 'In', values: [archLabel(arch) ?? arch] },
  ];
  if (variant === 'standard') {
    requirements.push(
      { key: LABEL_ACCELERATOR_COUNT, operator: 'DoesNotExist' },
      { key: LABEL_GPU_COUNT, operator: 'DoesNotExist' },
    );
  } else if (variant === 'nvidia') {
    requirements.push({ key: LABEL_GPU_COUNT, operator: 'Exists' });
  } else {
    requirements.push({ key: LABEL_ACCELERATOR_COUNT, operator: 'Exists' });
  }
  return requirements;
}

/**
 * The SSM parameters to try for an alias on a cluster of the given Kubernetes version ("1.31"), in
 * order. A parameter that does not exist is skipped by the caller; when none resolves the alias has
 * no AMI. Throws UnsupportedAliasError for aliases Karpenter refuses.
 */
export function aliasParameters(alias: string | Alias, k8sVersion: string): AliasParameter[] {
  const { family, version } = typeof alias === 'string' ? parseAlias(alias) : alias;
  const [major, min] = minor(k8sVersion);
  const k8s = `${major}.${min}`;
  const latest = version === 'latest';
  const param = (name: string, arch: EC2Architecture, variant: Variant): AliasParameter => ({
    name,
    arch,
    variant,
    requirements: variantRequirements(arch, variant),
  });
  const eks = `/aws/service/eks/optimized-ami/${k8s}`;
  switch (family) {
    case 'AL2': {
      if (atLeast(k8s, 1, 33)) {
        throw new UnsupportedAliasError(
          `AL2 AMIs are not published for Kubernetes ${k8s} (AL2 ends at 1.32); use the al2023 or bottlerocket alias`,
        );
      }
      const leaf = (prefix: string) => (latest ? 'recommended' : `${prefix}-${k8s}-${version}`);
      return [
        param(`${eks}/amazon-linux-2/${leaf('amazon-eks-node')}/image_id`, 'x86_64', 'standard'),
        param(`${eks}/amazon-linux-2-arm64/${leaf('amazon-eks-arm64-node')}/image_id`, 'arm64', 'standard'),
        param(`${eks}/amazon-linux-2-gpu/${leaf('amazon-eks-gpu-node')}/image_id`, 'x86_64', 'nvidia'),
        param(`${eks}/amazon-linux-2-gpu/${leaf('amazon-eks-gpu-node')}/image_id`, 'x86_64', 'neuron'),
      ];
    }
    case 'AL2023': {
      const combos: [EC2Architecture, Variant][] = [
        ['x86_64', 'standard'],
        ['x86_64', 'nvidia'],
        ['x86_64', 'neuron'],
        ['arm64', 'standard'],
        ['arm64', 'nvidia'],
      ];
      return combos.map(([arch, variant]) => {
        const leaf = latest ? 'recommended' : `amazon-eks-node-al2023-${arch}-${variant}-${k8s}-${version}`;
        return param(`${eks}/amazon-linux-2023/${arch}/${variant}/${leaf}/image_id`, arch, variant);
      });
    }
    case 'Bottlerocket': {
      const leaf = latest ? 'latest' : version.replace(/^v/, '');
      const br = `/aws/service/bottlerocket/aws-k8s-${k8s}`;
      return [
        param(`${br}/x86_64/${leaf}/image_id`, 'x86_64', 'standard'),
        param(`${br}/x86_64/${leaf}/image_id`, 'x86_64', 'neuron'),
        param(`${br}/arm64/${leaf}/image_id`, 'arm64', 'standard'),
        param(`${br}-nvidia/x86_64/${leaf}/image_id`, 'x86_64', 'nvidia'),
        param(`${br}-nvidia/arm64/${leaf}/image_id`, 'arm64', 'nvidia'),
      ];
    }
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025': {
      if (family === 'Windows2025' && !atLeast(k8s, 1, 35)) {
        throw new UnsupportedAliasError(`Windows2025 AMIs need Kubernetes 1.35 or newer, the cluster runs ${k8s}`);
      }
      const year = family.slice('Windows'.length);
      return [
        {
          name: `/aws/service/ami-windows-latest/Windows_Server-${year}-English-Core-EKS_Optimized-${k8s}/image_id`,
          arch: 'x86_64',
          variant: 'standard',
          requirements: [
            { key: LABEL_ARCH, operator: 'In', values: ['amd64'] },
            { key: LABEL_OS, operator: 'In', values: ['windows'] },
            { key: LABEL_WINDOWS_BUILD, operator: 'In', values: [WINDOWS_BUILDS[family]] },
          ],
        },
      ];
    }
  }
}
