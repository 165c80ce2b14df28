// Each kubelet field as each family writes it (§3 flag order, Bottlerocket settings, NodeConfig).

import { describe, expect, it } from 'vitest';
import { renderUserData } from '../../../shared/amifamily/userdata';
import type { AMIFamily, KubeletConfiguration } from '../../../shared/apis/v1/types';
import { testInput } from '../golden';

type Expectations = Record<'AL2' | 'AL2023' | 'Bottlerocket' | 'Windows2022', string | null>;

const cases: [string, KubeletConfiguration, Expectations][] = [
  [
    'maxPods',
    { maxPods: 10 },
    { AL2: '--max-pods=10', AL2023: 'maxPods: 10', Bottlerocket: 'max-pods = 10', Windows2022: '--max-pods=10' },
  ],
  [
    'podsPerCore',
    { podsPerCore: 4 },
    { AL2: '--pods-per-core=4', AL2023: 'podsPerCore: 4', Bottlerocket: null, Windows2022: '--pods-per-core=4' },
  ],
  [
    'systemReserved (keys sorted)',
    { systemReserved: { memory: '1Gi', cpu: '100m' } },
    {
      AL2: '--system-reserved="cpu=100m,memory=1Gi"',
      AL2023: 'systemReserved:\n        cpu: 100m\n        memory: 1Gi',
      Bottlerocket: "[settings.kubernetes.system-reserved]\ncpu = '100m'\nmemory = '1Gi'",
      Windows2022: '--system-reserved="cpu=100m,memory=1Gi"',
    },
  ],
  [
    'kubeReserved',
    { kubeReserved: { 'ephemeral-storage': '1Gi', cpu: '200m' } },
    {
      AL2: '--kube-reserved="cpu=200m,ephemeral-storage=1Gi"',
      AL2023: 'kubeReserved:\n        cpu: 200m\n        ephemeral-storage: 1Gi',
      Bottlerocket: "[settings.kubernetes.kube-reserved]\ncpu = '200m'\nephemeral-storage = '1Gi'",
      Windows2022: '--kube-reserved="cpu=200m,ephemeral-storage=1Gi"',
    },
  ],
  [
    'evictionHard',
    { evictionHard: { 'nodefs.available': '10%', 'memory.available': '5%' } },
    {
      AL2: '--eviction-hard="memory.available<5%,nodefs.available<10%"',
      AL2023: 'evictionHard:\n        memory.available: 5%\n        nodefs.available: 10%',
      Bottlerocket: "[settings.kubernetes.eviction-hard]\n'memory.available' = '5%'\n'nodefs.available' = '10%'",
      Windows2022: '--eviction-hard="memory.available<5%,nodefs.available<10%"',
    },
  ],
  [
    'evictionSoft',
    { evictionSoft: { 'memory.available': '10%' } },
    {
      AL2: '--eviction-soft="memory.available<10%"',
      AL2023: 'evictionSoft:\n        memory.available: 10%',
      Bottlerocket: "[settings.kubernetes.eviction-soft]\n'memory.available' = '10%'",
      Windows2022: '--eviction-soft="memory.available<10%"',
    },
  ],
  [
    'evictionSoftGracePeriod (Go durations)',
    { evictionSoftGracePeriod: { 'memory.available': '1m', 'nodefs.available': '90s' } },
    {
      AL2: '--eviction-soft-grace-period="memory.available=1m0s,nodefs.available=1m30s"',
      AL2023: 'evictionSoftGracePeriod:\n        memory.available: 1m0s\n        nodefs.available: 1m30s',
      Bottlerocket:
        "[settings.kubernetes.eviction-soft-grace-period]\n'memory.available' = '1m0s'\n'nodefs.available' = '1m30s'",
      Windows2022: '--eviction-soft-grace-period="memory.available=1m0s,nodefs.available=1m30s"',
    },
  ],
  [
    'evictionMaxPodGracePeriod',
    { evictionMaxPodGracePeriod: 10 },
    {
      AL2: '--eviction-max-pod-grace-period=10',
      AL2023: 'evictionMaxPodGracePeriod: 10',
      Bottlerocket: 'eviction-max-pod-grace-period = 10',
      Windows2022: '--eviction-max-pod-grace-period=10',
    },
  ],
  [
    'imageGCHighThresholdPercent',
    { imageGCHighThresholdPercent: 85 },
    {
      AL2: '--image-gc-high-threshold=85',
      AL2023: 'imageGCHighThresholdPercent: 85',
      Bottlerocket: "image-gc-high-threshold-percent = '85'",
      Windows2022: '--image-gc-high-threshold=85',
    },
  ],
  [
    'imageGCLowThresholdPercent',
    { imageGCLowThresholdPercent: 80 },
    {
      AL2: '--image-gc-low-threshold=80',
      AL2023: 'imageGCLowThresholdPercent: 80',
      Bottlerocket: "image-gc-low-threshold-percent = '80'",
      Windows2022: '--image-gc-low-threshold=80',
    },
  ],
  [
    'cpuCFSQuota',
    { cpuCFSQuota: false },
    {
      AL2: '--cpu-cfs-quota=false',
      AL2023: 'cpuCFSQuota: false',
      Bottlerocket: 'cpu-cfs-quota-enforced = false',
      Windows2022: '--cpu-cfs-quota=false',
    },
  ],
  [
    'clusterDNS',
    { clusterDNS: ['10.1.0.10', '10.1.0.11'] },
    {
      AL2: "--dns-cluster-ip '10.1.0.10'",
      AL2023: 'clusterDNS:\n      - 10.1.0.10\n      - 10.1.0.11',
      Bottlerocket: "cluster-dns-ip = '10.1.0.10'",
      Windows2022: "-DNSClusterIP '10.1.0.10'",
    },
  ],
];

const rows = cases.flatMap(([field, kubelet, expected]) =>
  (Object.entries(expected) as [AMIFamily, string | null][]).map(
    ([family, text]) => [field, family, kubelet, text] as const,
  ),
);

describe('kubelet fields per family', () => {
  it.each(rows)('%s on %s', (field, family, kubelet, text) => {
    const out = renderUserData(
      testInput({ family, kubelet: { maxPods: 110, clusterDNS: ['10.0.100.10'], ...kubelet } }),
    );
    if (text === null) {
      expect(out).not.toMatch(/pods-per-core|podsPerCore/);
      expect(field).toBe('podsPerCore');
    } else {
      expect(out).toContain(text);
    }
  });

  it('writes kubelet flags in upstream order', () => {
    const out = renderUserData(
      testInput({
        family: 'AL2',
        labels: { a: 'b' },
        taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
        kubelet: {
          clusterDNS: ['10.0.100.10'],
          maxPods: 20,
          podsPerCore: 2,
          systemReserved: { cpu: '1' },
          kubeReserved: { cpu: '2' },
          evictionHard: { 'memory.available': '1%' },
          evictionSoft: { 'memory.available': '2%' },
          evictionSoftGracePeriod: { 'memory.available': '30s' },
          evictionMaxPodGracePeriod: 5,
          imageGCHighThresholdPercent: 90,
          imageGCLowThresholdPercent: 50,
          cpuCFSQuota: true,
        },
      }),
    );
    const args = /--kubelet-extra-args '([^']*)'/.exec(out)?.[1];
    expect(args?.split(' ')).toEqual([
      '--node-labels="a=b,karpenter.sh/capacity-type=on-demand,karpenter.sh/do-not-sync-taints=true"',
      '--register-with-taints="dedicated=gpu:NoSchedule,karpenter.sh/unregistered:NoExecute"',
      '--max-pods=20',
      '--pods-per-core=2',
      '--system-reserved="cpu=1"',
      '--kube-reserved="cpu=2"',
      '--eviction-hard="memory.available<1%"',
      '--eviction-soft="memory.available<2%"',
      '--eviction-soft-grace-period="memory.available=30s"',
      '--eviction-max-pod-grace-period=5',
      '--image-gc-high-threshold=90',
      '--image-gc-low-threshold=50',
      '--cpu-cfs-quota=true',
    ]);
  });

  it('orders Bottlerocket settings.kubernetes like upstream', () => {
    const out = renderUserData(
      testInput({
        family: 'Bottlerocket',
        kubelet: { maxPods: 35, clusterDNS: ['10.0.100.10'], evictionMaxPodGracePeriod: 10 },
      }),
    );
    expect(out).toContain(
      "[settings.kubernetes]\napi-server = 'https://test-cluster'\ncluster-certificate = 'Y2EtYnVuZGxlCg=='\ncluster-name = 'test-cluster'\ncluster-dns-ip = '10.0.100.10'\nmax-pods = 35\neviction-max-pod-grace-period = 10\n",
    );
  });

  it('puts taints in the AL2023 NodeConfig as objects (effect, key, value), not flags', () => {
    const out = renderUserData(
      testInput({ family: 'AL2023', taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] }),
    );
    expect(out).toContain(
      'registerWithTaints:\n      - effect: NoSchedule\n        key: gpu\n        value: "true"\n      - effect: NoExecute\n        key: karpenter.sh/unregistered\n',
    );
    expect(out).not.toContain('register-with-taints');
  });
});
