import { describe, expect, it } from 'vitest';
import {
  type InstanceType,
  instanceTypeLabels,
  loadBuiltInCatalog,
  resolveInstanceTypes,
  WELL_KNOWN_LABELS,
} from '../../shared/instancetypes';
import { catalogType, nodeClass } from './helpers';

const AWS = 'karpenter.k8s.aws';
const builtIn = new Map(resolveInstanceTypes(loadBuiltInCatalog(), nodeClass()).map((t) => [t.name, t]));

function builtInType(name: string): InstanceType {
  const found = builtIn.get(name);
  if (!found) throw new Error(`${name} is not in the built-in catalog`);
  return found;
}

describe('labels of real types from the built-in catalog', () => {
  it.each<[string, Record<string, string>]>([
    [
      'm5.large',
      {
        'node.kubernetes.io/instance-type': 'm5.large',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'topology.kubernetes.io/region': 'us-east-1',
        [`${AWS}/instance-category`]: 'm',
        [`${AWS}/instance-family`]: 'm5',
        [`${AWS}/instance-generation`]: '5',
        [`${AWS}/instance-size`]: 'large',
        [`${AWS}/instance-cpu`]: '2',
        [`${AWS}/instance-memory`]: '8192',
        [`${AWS}/instance-cpu-manufacturer`]: 'intel',
        [`${AWS}/instance-hypervisor`]: 'nitro',
        [`${AWS}/instance-capability-flex`]: 'false',
        [`${AWS}/instance-network-bandwidth`]: '750',
        [`${AWS}/instance-encryption-in-transit-supported`]: 'false',
      },
    ],
    [
      'g5.xlarge',
      {
        [`${AWS}/instance-category`]: 'g',
        [`${AWS}/instance-generation`]: '5',
        [`${AWS}/instance-gpu-name`]: 'a10g',
        [`${AWS}/instance-gpu-manufacturer`]: 'nvidia',
        [`${AWS}/instance-gpu-count`]: '1',
        [`${AWS}/instance-gpu-memory`]: '22888',
        [`${AWS}/instance-local-nvme`]: '250',
        [`${AWS}/instance-cpu-manufacturer`]: 'amd',
        [`${AWS}/instance-encryption-in-transit-supported`]: 'true',
      },
    ],
    [
      'c7i-flex.large',
      {
        [`${AWS}/instance-category`]: 'c',
        [`${AWS}/instance-family`]: 'c7i-flex',
        [`${AWS}/instance-generation`]: '7',
        [`${AWS}/instance-size`]: 'large',
        [`${AWS}/instance-capability-flex`]: 'true',
      },
    ],
    [
      'inf2.xlarge',
      {
        [`${AWS}/instance-accelerator-name`]: 'inferentia2',
        [`${AWS}/instance-accelerator-manufacturer`]: 'aws',
        [`${AWS}/instance-accelerator-count`]: '1',
      },
    ],
    [
      'm6g.metal',
      {
        'kubernetes.io/arch': 'arm64',
        [`${AWS}/instance-size`]: 'metal',
        [`${AWS}/instance-cpu-manufacturer`]: 'aws',
        [`${AWS}/instance-hypervisor`]: '',
      },
    ],
    ['u-6tb1.112xlarge', { [`${AWS}/instance-category`]: 'u', [`${AWS}/instance-generation`]: '1' }],
  ])('%s', (name, expected) => {
    expect(builtInType(name).labels).toMatchObject(expected);
  });

  it('leaves GPU and accelerator labels off types without them', () => {
    const labels = builtInType('m5.large').labels;
    for (const key of ['gpu-name', 'gpu-count', 'accelerator-name', 'accelerator-count', 'local-nvme'])
      expect(labels).not.toHaveProperty(`${AWS}/instance-${key}`);
  });

  it('uses only well-known label keys, and never per-offering ones', () => {
    const keys = new Set([...builtIn.values()].flatMap((t) => Object.keys(t.labels)));
    expect([...keys].filter((k) => !WELL_KNOWN_LABELS.includes(k))).toEqual([]);
    expect(keys).not.toContain('topology.kubernetes.io/zone');
    expect(keys).not.toContain('karpenter.sh/capacity-type');
  });
});

describe('instanceTypeLabels', () => {
  it.each([
    ['Windows2019', '10.0.17763'],
    ['Windows2022', '10.0.20348'],
    ['Windows2025', '10.0.26100'],
  ] as const)('%s labels os windows and build %s', (family, build) => {
    const labels = instanceTypeLabels(catalogType({ name: 'm5.xlarge' }), 'us-east-1', family);
    expect(labels['kubernetes.io/os']).toBe('windows');
    expect(labels['node.kubernetes.io/windows-build']).toBe(build);
  });

  it('has no windows-build label under Linux families', () => {
    expect(instanceTypeLabels(catalogType({ name: 'm5.xlarge' }), 'us-east-1', 'AL2023')).not.toHaveProperty(
      'node.kubernetes.io/windows-build',
    );
  });

  it.each([
    ['fake-it-3', {}],
    ['m7i-flex.2xlarge', { category: 'm', generation: '7', family: 'm7i-flex', size: '2xlarge' }],
    ['x2iedn.metal', { category: 'x', generation: '2', family: 'x2iedn', size: 'metal' }],
    ['u7i-12tb.224xlarge', { category: 'u', generation: '7', family: 'u7i-12tb', size: '224xlarge' }],
  ])('splits %s into category, generation, family and size', (name, parts) => {
    const labels = instanceTypeLabels(catalogType({ name }), 'r', 'AL2023');
    const actual = {
      category: labels[`${AWS}/instance-category`],
      generation: labels[`${AWS}/instance-generation`],
      family: labels[`${AWS}/instance-family`],
      size: labels[`${AWS}/instance-size`],
    };
    expect(Object.fromEntries(Object.entries(actual).filter(([, v]) => v !== undefined))).toEqual(parts);
  });
});
