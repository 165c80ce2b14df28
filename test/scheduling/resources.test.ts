import { describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/apis/core/v1';
import { podRequests } from '../../shared/scheduling/resources';

const MiB = 2 ** 20;
const c = (name: string, cpu: string, memory: string, restartPolicy?: 'Always') => ({
  name,
  resources: { requests: { cpu, memory } },
  ...(restartPolicy ? { restartPolicy } : {}),
});

describe('podRequests', () => {
  it.each<[string, Pod['spec'], Record<string, number>]>([
    [
      'sums containers',
      { containers: [c('a', '100m', '64Mi'), c('b', '250m', '64Mi')] },
      { cpu: 350, memory: 128 * MiB, pods: 1 },
    ],
    [
      'takes the larger init container',
      { containers: [c('a', '100m', '64Mi')], initContainers: [c('i', '2', '32Mi')] },
      { cpu: 2000, memory: 64 * MiB, pods: 1 },
    ],
    [
      'adds native sidecars to the containers and to later init containers',
      {
        containers: [c('a', '100m', '64Mi')],
        initContainers: [c('s', '200m', '10Mi', 'Always'), c('i', '250m', '100Mi')],
      },
      { cpu: 450, memory: 110 * MiB, pods: 1 },
    ],
    [
      'takes pod-level requests (or limits) for cpu and memory over the containers, then adds overhead',
      {
        containers: [c('a', '100m', '64Mi'), { name: 'g', resources: { limits: { 'nvidia.com/gpu': '1' } } }],
        resources: { requests: { cpu: '2' }, limits: { cpu: '4', memory: '1Gi' } },
        overhead: { cpu: '50m' },
      },
      { cpu: 2050, memory: 1024 * MiB, 'nvidia.com/gpu': 1, pods: 1 },
    ],
    [
      'adds the pod overhead',
      { containers: [c('a', '100m', '64Mi')], overhead: { cpu: '50m', memory: '16Mi' } },
      { cpu: 150, memory: 80 * MiB, pods: 1 },
    ],
    [
      'keeps extended resources and defaults requests from limits',
      { containers: [{ name: 'g', resources: { limits: { 'nvidia.com/gpu': '1', cpu: '1' } } }] },
      { cpu: 1000, 'nvidia.com/gpu': 1, pods: 1 },
    ],
  ])('%s', (_, spec, expected) => {
    expect(podRequests({ metadata: { name: 'p' }, spec })).toEqual(expected);
  });
});
