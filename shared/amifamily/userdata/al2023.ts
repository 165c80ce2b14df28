// AL2023: a nodeadm NodeConfig as the last part of a MIME archive. nodeadm merges NodeConfigs in
// order, so putting Karpenter's last makes its cluster, kubelet, label and taint settings win.

import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import {
  CONTENT_TYPE_NODE_CONFIG,
  CONTENT_TYPE_SHELL_SCRIPT,
  contentTypeOf,
  looksLikeMime,
  type MimePart,
  mimePart,
  parseMimeArchive,
  serializeMimeArchive,
} from '../mime';
import { goDurations, goQuote, sortedEntries } from './options';
import type { FamilyInput } from './types';

export class MissingClusterCIDRError extends Error {}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The NodeConfig object Karpenter generates (JSON field names, before YAML). */
export function nodeConfig(input: FamilyInput): Record<string, unknown> {
  if (!input.clusterCIDR) throw new MissingClusterCIDRError('resolving cluster CIDR');
  const ca = input.caBundle.replace(/\s+/g, '');
  if (!BASE64.test(ca)) throw new Error(`cluster CA bundle is not base64: "${input.caBundle.slice(0, 20)}…"`);
  const { kubelet } = input;
  const config: Record<string, unknown> = {};
  if (kubelet.clusterDNS !== undefined) config.clusterDNS = kubelet.clusterDNS;
  if (kubelet.maxPods !== undefined) config.maxPods = kubelet.maxPods;
  if (kubelet.podsPerCore !== undefined) config.podsPerCore = kubelet.podsPerCore;
  if (kubelet.systemReserved !== undefined) config.systemReserved = kubelet.systemReserved;
  if (kubelet.kubeReserved !== undefined) config.kubeReserved = kubelet.kubeReserved;
  if (kubelet.evictionHard !== undefined) config.evictionHard = kubelet.evictionHard;
  if (kubelet.evictionSoft !== undefined) config.evictionSoft = kubelet.evictionSoft;
  if (kubelet.evictionSoftGracePeriod !== undefined) {
    config.evictionSoftGracePeriod = goDurations(kubelet.evictionSoftGracePeriod);
  }
  if (kubelet.evictionMaxPodGracePeriod !== undefined)
    config.evictionMaxPodGracePeriod = kubelet.evictionMaxPodGracePeriod;
  if (kubelet.imageGCHighThresholdPercent !== undefined) {
    config.imageGCHighThresholdPercent = kubelet.imageGCHighThresholdPercent;
  }
  if (kubelet.imageGCLowThresholdPercent !== undefined) {
    config.imageGCLowThresholdPercent = kubelet.imageGCLowThresholdPercent;
  }
  if (kubelet.cpuCFSQuota !== undefined) config.cpuCFSQuota = kubelet.cpuCFSQuota;
  if (input.taints.length > 0) {
    config.registerWithTaints = input.taints.map((t) => ({
      effect: t.effect,
      key: t.key,
      ...(t.value ? { value: t.value } : {}),
    }));
  }
  const kubeletSpec: Record<string, unknown> = { config };
  const labelText = sortedEntries(input.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  if (labelText !== '') kubeletSpec.flags = [`--node-labels=${goQuote(labelText)}`];
  return {
    apiVersion: 'node.eks.aws/v1alpha1',
    kind: 'NodeConfig',
    metadata: {},
    spec: {
      cluster: {
        apiServerEndpoint: input.clusterEndpoint,
        // nodeadm takes the CA as bytes; Go decodes and re-encodes it, which normalizes it.
        certificateAuthority: Buffer.from(ca, 'base64').toString('base64'),
        cidr: input.clusterCIDR,
        name: input.clusterName,
      },
      containerd: {},
      instance: { localStorage: input.instanceStorePolicy === 'RAID0' ? { strategy: 'RAID0' } : {} },
      kubelet: kubeletSpec,
    },
  };
}

/** The NodeConfig as YAML the way sigs.k8s.io/yaml writes it: keys sorted, lists not indented. */
export function nodeConfigYaml(input: FamilyInput): string {
  const yaml = stringifyYaml(nodeConfig(input), { sortMapEntries: true, indentSeq: false, lineWidth: 0 });
  return `# Karpenter Generated NodeConfig\n${yaml}`;
}

function isYamlMap(text: string): boolean {
  try {
    const value: unknown = parseYaml(text);
    // Go unmarshals an empty or comment-only document into a map without error.
    return value === null || value === undefined || (typeof value === 'object' && !Array.isArray(value));
  } catch {
    return false;
  }
}

/** The user's userData as parts: MIME taken apart, a YAML map as a NodeConfig, anything else a script. */
export function al2023CustomParts(customUserData: string | undefined): MimePart[] {
  if (!customUserData) return [];
  // Like upstream's mime.Archive, only each part's Content-Type survives.
  if (looksLikeMime(customUserData)) {
    return parseMimeArchive(customUserData).map((part) => mimePart(contentTypeOf(part), part.content));
  }
  if (isYamlMap(customUserData)) return [mimePart(CONTENT_TYPE_NODE_CONFIG, customUserData)];
  return [mimePart(CONTENT_TYPE_SHELL_SCRIPT, customUserData)];
}

export function renderAL2023(input: FamilyInput): string {
  const parts = [...al2023CustomParts(input.customUserData), mimePart(CONTENT_TYPE_NODE_CONFIG, nodeConfigYaml(input))];
  return serializeMimeArchive(parts);
}
