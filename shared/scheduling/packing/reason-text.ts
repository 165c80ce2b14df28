// Amounts, limits and NodePool requirements as the reasons a person reads print them.

import type { NodeSelectorRequirementWithMinValues } from '../../apis/v1/types';
import { CPU, MEMORY } from '../resources';

// Bytes read in GiB up to a pebibyte, where every instance type and real request lies; past it (a
// request of 1Ei is a typo, but it must still read as one) the number of GiB stops meaning anything.
const LARGE_UNITS = [
  { suffix: 'Ei', bytes: 2 ** 60 },
  { suffix: 'Pi', bytes: 2 ** 50 },
] as const;

/** `[number, binary suffix]` for a byte amount of at least 1 GiB. */
function bytesIn(value: number): [number, string] {
  const unit = LARGE_UNITS.find((u) => value >= u.bytes);
  return unit ? [+(value / unit.bytes).toFixed(1), unit.suffix] : [+(value / 2 ** 30).toFixed(1), 'Gi'];
}

function isBytes(resource: string): boolean {
  return resource === MEMORY || resource === 'ephemeral-storage' || resource.endsWith('memory');
}

export function formatAmount(resource: string, value: number): string {
  if (resource === CPU) return `${+(value / 1000).toFixed(3)} cpu`;
  if (isBytes(resource)) {
    if (value < 2 ** 30) return `${Math.ceil(value / 2 ** 20)} MiB ${resource}`;
    const [amount, suffix] = bytesIn(value);
    return `${amount} ${suffix}B ${resource}`;
  }
  return `${value} ${resource}`;
}

export function formatLimit(resource: string, value: number): string {
  if (resource === CPU) return `${+(value / 1000).toFixed(3)}`;
  if (resource === MEMORY) return bytesIn(value).join('');
  return `${value}`;
}

/** "r/m/c families, generation > 4", for reasons. */
export function describePool(requirements: readonly NodeSelectorRequirementWithMinValues[]): string {
  const parts: string[] = [];
  for (const r of requirements) {
    const short = r.key.replace('karpenter.k8s.aws/instance-', '');
    const values = r.values ?? [];
    if (r.key === 'karpenter.k8s.aws/instance-category' && r.operator === 'In')
      parts.push(`${values.join('/')} families`);
    else if (r.key === 'karpenter.k8s.aws/instance-family' && r.operator === 'In')
      parts.push(`${values.join('/')} families`);
    else if (r.operator === 'Gt') parts.push(`${short} > ${values[0]}`);
    else if (r.operator === 'Lt') parts.push(`${short} < ${values[0]}`);
    else if (r.operator === 'Gte') parts.push(`${short} ≥ ${values[0]}`);
    else if (r.operator === 'Lte') parts.push(`${short} ≤ ${values[0]}`);
    else if (r.operator === 'In') parts.push(`${short} ${values.join('/')}`);
    else if (r.operator === 'NotIn') parts.push(`${short} not ${values.join('/')}`);
    else parts.push(`${short} ${r.operator}`);
  }
  return parts.join(', ');
}
