// What every family's bootstrapper shares (Karpenter's bootstrap.Options): the labels and taints a
// node registers with, and the kubelet flags in upstream's order.

import { formatGoDuration, parseDurationSeconds } from '../../apis/duration';
import { isKubeletSettableLabel, KUBELET_LABELS, LABEL_CAPACITY_TYPE, LABEL_WINDOWS_BUILD } from '../../apis/v1/labels';
import type { AMIFamily, KubeletConfiguration, Taint } from '../../apis/v1/types';
import type { CapacityType } from '../../instancetypes/types';

export const UNREGISTERED_TAINT: Taint = { key: 'karpenter.sh/unregistered', effect: 'NoExecute' };
export const DO_NOT_SYNC_TAINTS_LABEL = 'karpenter.sh/do-not-sync-taints';

/**
 * True when a label stays out of the kubelet's own labels (--node-labels, Bottlerocket's node-labels,
 * -KubeletExtraArgs) and is applied to the Node at registration instead: keys the kubelet refuses
 * (kubernetes.io and k8s.io outside its allowed set; it would not start), and the well-known keys it
 * and the cloud provider set themselves, whose values differ per instance type while one launch
 * template serves a whole fleet of types.
 */
export function isRestrictedNodeLabel(key: string): boolean {
  return !isKubeletSettableLabel(key) || KUBELET_LABELS.has(key) || key === LABEL_WINDOWS_BUILD;
}

/** The labels a node registers with: claim labels + capacity type (+ do-not-sync-taints), restricted ones dropped. */
export function nodeLabels(
  family: AMIFamily,
  labels: Record<string, string>,
  capacityType: CapacityType,
): Record<string, string> {
  const all: Record<string, string> = { ...labels, [LABEL_CAPACITY_TYPE]: capacityType };
  // Custom userData registers itself; Karpenter cannot know whether it syncs taints.
  if (family !== 'Custom') all[DO_NOT_SYNC_TAINTS_LABEL] = 'true';
  return Object.fromEntries(Object.entries(all).filter(([key]) => !isRestrictedNodeLabel(key)));
}

/** The taints a node registers with; the unregistered taint is what lets Karpenter finish initialization. */
export function nodeTaints(taints: readonly Taint[]): Taint[] {
  const present = taints.some((t) => t.key === UNREGISTERED_TAINT.key && t.effect === UNREGISTERED_TAINT.effect);
  return present ? [...taints] : [...taints, UNREGISTERED_TAINT];
}

/** Byte-order comparison, as Go's sort.Strings. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortedEntries<V>(map: Record<string, V>): [string, V][] {
  return Object.entries(map).sort(([a], [b]) => compareStrings(a, b));
}

/** Go's %q for the ASCII and UTF-8 text flags carry. */
export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

export class KubeletFieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** evictionSoftGracePeriod with each value in Go's Duration.String form (1m → 1m0s). */
export function goDurations(map: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [signal, value] of Object.entries(map)) {
    const seconds = parseDurationSeconds(value);
    if (seconds === undefined) {
      throw new KubeletFieldError(
        `spec.kubelet.evictionSoftGracePeriod[${signal}]`,
        `"${value}" is not a duration; use Go duration syntax such as 1m30s`,
      );
    }
    out[signal] = formatGoDuration(seconds);
  }
  return out;
}

function mapFlag(name: string, map: Record<string, string> | undefined, separator: string): string | undefined {
  if (!map || Object.keys(map).length === 0) return undefined;
  // Upstream iterates a Go map (random order); sorted keys keep templates stable.
  return `${name}=${goQuote(
    sortedEntries(map)
      .map(([k, v]) => `${k}${separator}${v}`)
      .join(','),
  )}`;
}

/** kubelet flags for bootstrap.sh and Start-EKSBootstrap.ps1, in upstream's order. */
export function kubeletExtraArgs(
  labels: Record<string, string>,
  taints: readonly Taint[],
  kubelet: KubeletConfiguration,
): string[] {
  const args: (string | undefined)[] = [];
  const labelText = sortedEntries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  if (labelText !== '') args.push(`--node-labels=${goQuote(labelText)}`);
  if (taints.length > 0) {
    const taintText = taints.map((t) => (t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`));
    args.push(`--register-with-taints=${goQuote(taintText.join(','))}`);
  }
  if (kubelet.maxPods !== undefined) args.push(`--max-pods=${kubelet.maxPods}`);
  if (kubelet.podsPerCore !== undefined) args.push(`--pods-per-core=${kubelet.podsPerCore}`);
  args.push(mapFlag('--system-reserved', kubelet.systemReserved, '='));
  args.push(mapFlag('--kube-reserved', kubelet.kubeReserved, '='));
  args.push(mapFlag('--eviction-hard', kubelet.evictionHard, '<'));
  args.push(mapFlag('--eviction-soft', kubelet.evictionSoft, '<'));
  args.push(
    mapFlag(
      '--eviction-soft-grace-period',
      kubelet.evictionSoftGracePeriod && goDurations(kubelet.evictionSoftGracePeriod),
      '=',
    ),
  );
  if (kubelet.evictionMaxPodGracePeriod !== undefined) {
    args.push(`--eviction-max-pod-grace-period=${kubelet.evictionMaxPodGracePeriod}`);
  }
  if (kubelet.imageGCHighThresholdPercent !== undefined) {
    args.push(`--image-gc-high-threshold=${kubelet.imageGCHighThresholdPercent}`);
  }
  if (kubelet.imageGCLowThresholdPercent !== undefined) {
    args.push(`--image-gc-low-threshold=${kubelet.imageGCLowThresholdPercent}`);
  }
  if (kubelet.cpuCFSQuota !== undefined) args.push(`--cpu-cfs-quota=${kubelet.cpuCFSQuota}`);
  return args.filter((a): a is string => a !== undefined);
}

/** True when the first cluster DNS address is IPv6 (Go: ParseIP(x).To4() == nil). */
export function isIPv6ClusterDNS(kubelet: KubeletConfiguration): boolean {
  const first = kubelet.clusterDNS?.[0] ?? '';
  return first.includes(':') && !/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(first);
}
