// Bottlerocket: the user's TOML settings with Karpenter's settings.kubernetes values written over
// them. Known settings.kubernetes keys are decoded against Bottlerocket's schema (as Karpenter's
// typed struct does) and unknown ones are dropped, because Bottlerocket refuses the whole userData
// when it meets a key it does not know.

import { parse as parseToml } from 'smol-toml';
import { stringifyToml, TomlFloat, type TomlMap, type TomlValue } from '../toml';
import { compareStrings, goDurations } from './options';
import type { FamilyInput } from './types';

export class BottlerocketSettingsError extends Error {}

type FieldKind =
  | 'string'
  | 'int'
  | 'bool'
  | 'stringMap'
  | 'stringList'
  | 'taints'
  | 'credentialProviders'
  | 'staticPods';

/** settings.kubernetes keys Karpenter knows, in its struct's field order (which is the output order). */
export const BOTTLEROCKET_KUBERNETES_SETTINGS: readonly (readonly [string, FieldKind])[] = [
  ['api-server', 'string'],
  ['cloud-provider', 'string'],
  ['cluster-certificate', 'string'],
  ['cluster-name', 'string'],
  ['cluster-dns-ip', 'string'],
  ['credential-providers', 'credentialProviders'],
  ['node-labels', 'stringMap'],
  ['node-taints', 'taints'],
  ['max-pods', 'int'],
  ['static-pods', 'staticPods'],
  ['eviction-hard', 'stringMap'],
  ['eviction-soft', 'stringMap'],
  ['eviction-soft-grace-period', 'stringMap'],
  ['eviction-max-pod-grace-period', 'int'],
  ['kube-reserved', 'stringMap'],
  ['system-reserved', 'stringMap'],
  ['allowed-unsafe-sysctls', 'stringList'],
  ['server-tls-bootstrap', 'bool'],
  ['registry-qps', 'int'],
  ['registry-burst', 'int'],
  ['event-qps', 'int'],
  ['event-burst', 'int'],
  ['kube-api-qps', 'int'],
  ['kube-api-burst', 'int'],
  ['container-log-max-size', 'string'],
  ['container-log-max-files', 'int'],
  ['cpu-manager-policy', 'string'],
  ['cpu-manager-policy-options', 'stringList'],
  ['cpu-manager-reconcile-period', 'string'],
  ['topology-manager-scope', 'string'],
  ['topology-manager-policy', 'string'],
  ['image-gc-high-threshold-percent', 'string'],
  ['image-gc-low-threshold-percent', 'string'],
  ['ids-per-pod', 'int'],
  ['cpu-cfs-quota-enforced', 'bool'],
  ['shutdown-grace-period', 'string'],
  ['shutdown-grace-period-for-critical-pods', 'string'],
  ['cluster-domain', 'string'],
  ['seccomp-default', 'bool'],
  ['pod-pids-limit', 'int'],
  ['device-ownership-from-security-context', 'bool'],
  ['single-process-oom-kill', 'bool'],
  ['container-log-max-workers', 'int'],
  ['container-log-monitor-interval', 'string'],
  ['hostname-override-source', 'string'],
  ['log-level', 'int'],
];
const KNOWN = new Map(BOTTLEROCKET_KUBERNETES_SETTINGS);

type Raw = unknown;

function isPlainTable(value: Raw): value is Record<string, Raw> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function typeName(value: Raw): string {
  if (Array.isArray(value)) return 'array';
  if (value instanceof Date) return 'datetime';
  if (typeof value === 'bigint') return 'integer';
  if (typeof value === 'number') return 'float';
  if (isPlainTable(value)) return 'table';
  return typeof value;
}

function fail(path: string, expected: string, value: Raw): never {
  throw new BottlerocketSettingsError(`${path} must be ${expected}, got ${typeName(value)}`);
}

/** Untyped TOML (as smol-toml parses it) → ordered map with sorted keys, as a Go map[string]any. */
function fromRaw(value: Raw): TomlValue {
  if (typeof value === 'number') return new TomlFloat(value);
  if (typeof value === 'string' || typeof value === 'bigint' || typeof value === 'boolean') return value;
  if (value instanceof Date) return value;
  if (Array.isArray(value)) return value.map(fromRaw);
  if (isPlainTable(value)) return sortedMap(Object.entries(value).map(([k, v]) => [k, fromRaw(v)]));
  throw new BottlerocketSettingsError(`unsupported TOML value ${String(value)}`);
}

function sortedMap(entries: [string, TomlValue][]): TomlMap {
  return new Map(entries.sort(([a], [b]) => compareStrings(a, b)));
}

function asString(path: string, value: Raw): string {
  return typeof value === 'string' ? value : fail(path, 'a string', value);
}

function asInt(path: string, value: Raw): bigint {
  return typeof value === 'bigint' ? value : fail(path, 'an integer', value);
}

function asBool(path: string, value: Raw): boolean {
  return typeof value === 'boolean' ? value : fail(path, 'a boolean', value);
}

function asTable(path: string, value: Raw): Record<string, Raw> {
  return isPlainTable(value) ? value : fail(path, 'a table', value);
}

function asStringList(path: string, value: Raw): string[] {
  if (!Array.isArray(value)) fail(path, 'an array of strings', value);
  return value.map((v, i) => asString(`${path}[${i}]`, v));
}

function stringMap(path: string, value: Raw): TomlMap {
  const table = asTable(path, value);
  return sortedMap(Object.entries(table).map(([k, v]) => [k, asString(`${path}.${k}`, v)]));
}

function decodeField(path: string, kind: FieldKind, value: Raw): TomlValue {
  switch (kind) {
    case 'string':
      return asString(path, value);
    case 'int':
      return asInt(path, value);
    case 'bool':
      return asBool(path, value);
    case 'stringMap':
      return stringMap(path, value);
    case 'stringList':
      return asStringList(path, value);
    case 'taints':
      return sortedMap(Object.entries(asTable(path, value)).map(([k, v]) => [k, asStringList(`${path}.${k}`, v)]));
    case 'credentialProviders':
      return sortedMap(
        Object.entries(asTable(path, value)).map(([name, raw]) => {
          const p = `${path}.${name}`;
          const provider = asTable(p, raw);
          const out: TomlMap = new Map();
          if (provider.enabled !== undefined) out.set('enabled', asBool(`${p}.enabled`, provider.enabled));
          if (provider['cache-duration'] !== undefined) {
            out.set('cache-duration', asString(`${p}.cache-duration`, provider['cache-duration']));
          }
          out.set('image-patterns', asStringList(`${p}.image-patterns`, provider['image-patterns'] ?? []));
          if (provider.environment !== undefined) {
            const env = stringMap(`${p}.environment`, provider.environment);
            if (env.size > 0) out.set('environment', env);
          }
          return [name, out];
        }),
      );
    case 'staticPods':
      return sortedMap(
        Object.entries(asTable(path, value)).map(([name, raw]) => {
          const p = `${path}.${name}`;
          const pod = asTable(p, raw);
          const out: TomlMap = new Map();
          if (pod.enabled !== undefined) out.set('enabled', asBool(`${p}.enabled`, pod.enabled));
          if (pod.manifest !== undefined) out.set('manifest', asString(`${p}.manifest`, pod.manifest));
          return [name, out];
        }),
      );
  }
}

function decodeBootstrapCommands(path: string, value: Raw): TomlMap {
  return sortedMap(
    Object.entries(asTable(path, value)).map(([name, raw]) => {
      const p = `${path}.${name}`;
      const command = asTable(p, raw);
      const commands = Array.isArray(command.commands)
        ? command.commands.map((c, i) => asStringList(`${p}.commands[${i}]`, c))
        : command.commands === undefined
          ? []
          : fail(`${p}.commands`, 'an array of string arrays', command.commands);
      const entry: TomlMap = new Map<string, TomlValue>([
        ['commands', commands],
        ['mode', command.mode === undefined ? '' : asString(`${p}.mode`, command.mode)],
        ['essential', command.essential === undefined ? false : asBool(`${p}.essential`, command.essential)],
      ]);
      return [name, entry];
    }),
  );
}

/** Bottlerocket ≥ 1.46.0 binds the default directories itself; older versions need --dirs. */
export function supportsDefaultBind(version: string | undefined): boolean {
  if (version === undefined) return false;
  if (version === 'latest') return true;
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 1 || (major === 1 && minor >= 46);
}

/** settings.kubernetes keys the user gave that Bottlerocket's schema does not know (they are dropped). */
export function droppedKubernetesSettings(customUserData: string | undefined): string[] {
  if (!customUserData) return [];
  try {
    const kubernetes = (parseToml(customUserData, { integersAsBigInt: true }).settings as Record<string, Raw>)
      ?.kubernetes;
    return isPlainTable(kubernetes) ? Object.keys(kubernetes).filter((k) => !KNOWN.has(k)) : [];
  } catch {
    return [];
  }
}

export function renderBottlerocket(input: FamilyInput): string {
  let parsed: Record<string, Raw> = {};
  if (input.customUserData) {
    try {
      parsed = parseToml(input.customUserData, { integersAsBigInt: true }) as Record<string, Raw>;
    } catch (error) {
      throw new BottlerocketSettingsError(
        `is not valid TOML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      );
    }
  }
  const settingsRaw = parsed.settings === undefined ? {} : asTable('settings', parsed.settings);
  const kubernetesRaw =
    settingsRaw.kubernetes === undefined ? {} : asTable('settings.kubernetes', settingsRaw.kubernetes);

  const known = new Map<string, TomlValue>();
  for (const [key, kind] of BOTTLEROCKET_KUBERNETES_SETTINGS) {
    const value = kubernetesRaw[key];
    if (value !== undefined) known.set(key, decodeField(`settings.kubernetes.${key}`, kind, value));
  }

  const { kubelet } = input;
  const override = (key: string, value: TomlValue | undefined) => {
    if (value !== undefined) known.set(key, value);
  };
  const mapOf = (record: Record<string, string> | undefined) =>
    record && sortedMap(Object.entries(record).map(([k, v]): [string, TomlValue] => [k, v]));
  override('cluster-name', input.clusterName);
  override('api-server', input.clusterEndpoint);
  override('cluster-certificate', input.caBundle);
  const labels = new Map([...((known.get('node-labels') as TomlMap | undefined) ?? new Map())]);
  for (const [k, v] of Object.entries(input.labels)) labels.set(k, v);
  override('node-labels', sortedMap([...labels]));
  override('max-pods', kubelet.maxPods === undefined ? undefined : BigInt(kubelet.maxPods));
  override('cluster-dns-ip', kubelet.clusterDNS?.[0]);
  override('system-reserved', mapOf(kubelet.systemReserved));
  override('kube-reserved', mapOf(kubelet.kubeReserved));
  override('eviction-hard', mapOf(kubelet.evictionHard));
  override('eviction-soft', mapOf(kubelet.evictionSoft));
  override(
    'eviction-soft-grace-period',
    mapOf(kubelet.evictionSoftGracePeriod && goDurations(kubelet.evictionSoftGracePeriod)),
  );
  override(
    'eviction-max-pod-grace-period',
    kubelet.evictionMaxPodGracePeriod === undefined ? undefined : BigInt(kubelet.evictionMaxPodGracePeriod),
  );
  // Bottlerocket's API takes these integers as strings.
  override('image-gc-high-threshold-percent', kubelet.imageGCHighThresholdPercent?.toString());
  override('image-gc-low-threshold-percent', kubelet.imageGCLowThresholdPercent?.toString());
  override('cpu-cfs-quota-enforced', kubelet.cpuCFSQuota);
  // The user's taints are replaced: the node must register with exactly the claim's taints.
  const taints = new Map<string, string[]>();
  for (const taint of input.taints) {
    taints.set(taint.key, [...(taints.get(taint.key) ?? []), `${taint.value ?? ''}:${taint.effect}`]);
  }
  known.set('node-taints', sortedMap([...taints]));

  // Struct order, empty maps and lists omitted as Go's omitempty does.
  const kubernetes: TomlMap = new Map();
  for (const [key] of BOTTLEROCKET_KUBERNETES_SETTINGS) {
    const value = known.get(key);
    if (value === undefined) continue;
    if ((value instanceof Map || Array.isArray(value)) && isEmpty(value) && isOmitEmpty(key)) continue;
    kubernetes.set(key, value);
  }

  const settings = fromRaw(settingsRaw) as TomlMap;
  settings.set('kubernetes', kubernetes);
  let bootstrapCommands =
    settingsRaw['bootstrap-commands'] === undefined
      ? undefined
      : decodeBootstrapCommands('settings.bootstrap-commands', settingsRaw['bootstrap-commands']);
  if (input.instanceStorePolicy === 'RAID0') {
    bootstrapCommands ??= new Map();
    const bind = supportsDefaultBind(input.bottlerocketVersion)
      ? ['apiclient', 'ephemeral-storage', 'bind']
      : [
          'apiclient',
          'ephemeral-storage',
          'bind',
          '--dirs',
          '/var/lib/containerd',
          '/var/lib/kubelet',
          '/var/log/pods',
        ];
    bootstrapCommands.set(
      '000-mount-instance-storage',
      new Map<string, TomlValue>([
        ['commands', [['apiclient', 'ephemeral-storage', 'init'], bind]],
        ['mode', 'always'],
        ['essential', true],
      ]),
    );
    bootstrapCommands = sortedMap([...bootstrapCommands]);
  }
  if (bootstrapCommands) settings.set('bootstrap-commands', bootstrapCommands);
  return stringifyToml(new Map([['settings', sortedMap([...settings])]]));
}

const NOT_OMITEMPTY = new Set(['api-server', 'cloud-provider', 'cluster-certificate', 'cluster-name']);
function isOmitEmpty(key: string): boolean {
  return !NOT_OMITEMPTY.has(key);
}

function isEmpty(value: TomlMap | TomlValue[]): boolean {
  return value instanceof Map ? value.size === 0 : value.length === 0;
}
