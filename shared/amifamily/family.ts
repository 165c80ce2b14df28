// Per-family facts the launch path needs: which family a node class resolves to, its default block
// devices (AWS amifamily/resolver.go), and the Bottlerocket version that picks the RAID0 bind form.

import type { AMIFamily, BlockDeviceMapping, EC2NodeClass } from '../apis/v1/types';

function aliasOf(nodeClass: EC2NodeClass): { family: string; version: string } | undefined {
  const alias = nodeClass.spec.amiSelectorTerms.find((t) => t.alias !== undefined)?.alias;
  if (alias === undefined) return undefined;
  const at = alias.indexOf('@');
  return { family: (at < 0 ? alias : alias.slice(0, at)).toLowerCase(), version: at < 0 ? '' : alias.slice(at + 1) };
}

export function isWindowsFamily(family: AMIFamily | undefined): boolean {
  return family === 'Windows2019' || family === 'Windows2022' || family === 'Windows2025';
}

const DEFAULT_EBS = { encrypted: true, volumeType: 'gp3', volumeSize: '20Gi' } as const;

/** Block devices used when spec.blockDeviceMappings is empty; Custom has none (the AMI's own apply). */
export function defaultBlockDeviceMappings(family: AMIFamily | undefined): BlockDeviceMapping[] {
  switch (family) {
    case 'AL2':
    case 'AL2023':
      return [{ deviceName: '/dev/xvda', ebs: { ...DEFAULT_EBS } }];
    case 'Bottlerocket':
      return [
        { deviceName: '/dev/xvda', ebs: { ...DEFAULT_EBS, volumeSize: '4Gi' } },
        { deviceName: '/dev/xvdb', ebs: { ...DEFAULT_EBS } },
      ];
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025':
      return [{ deviceName: '/dev/sda1', ebs: { ...DEFAULT_EBS, volumeSize: '50Gi' } }];
    default:
      return [];
  }
}

/**
 * The Bottlerocket version, from the alias, else a name term, else the AMI name
 * (bottlerocket-aws-k8s-1.33-x86_64-v1.46.0-…). "latest" for a latest alias.
 */
export function bottlerocketVersion(nodeClass: EC2NodeClass, amiName?: string): string | undefined {
  const alias = aliasOf(nodeClass);
  if (alias?.family === 'bottlerocket' && alias.version !== '') {
    return alias.version === 'latest' ? 'latest' : alias.version.replace(/^v/, '');
  }
  const fromName = (name: string | undefined) => (name ? /-v(\d+\.\d+\.\d+)/.exec(name)?.[1] : undefined);
  for (const term of nodeClass.spec.amiSelectorTerms) {
    const version = fromName(term.name);
    if (version) return version;
  }
  return fromName(amiName);
}
