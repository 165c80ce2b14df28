// Amounts, limits and NodePool requirements as the reasons a person reads print them.

import type { NodeSelectorRequirementWithMinValues } from '../../apis/v1/types';
import { CPU, MEMORY } from '../resources';

export function formatAmount(resource: string, value: number): string {
  if (resource === CPU) return `${+(value / 1000).toFixed(3)} cpu`;
  if (resource === MEMORY || resource === 'ephemeral-storage' || resource.endsWith('memory')) {
    const gib = value / 2 ** 30;
    return gib >= 1 ? `${+gib.toFixed(1)} GiB ${resource}` : `${Math.ceil(value / 2 ** 20)} MiB ${resource}`;
  }
  return `${value} ${resource}`;
}

export function formatLimit(resource: string, value: number): string {
  if (resource === CPU) return `${+(value / 1000).toFixed(3)}`;
  if (resource === MEMORY) return `${+(value / 2 ** 30).toFixed(1)}Gi`;
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
