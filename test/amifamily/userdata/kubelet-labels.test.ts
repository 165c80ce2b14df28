import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { renderUserData } from '../../../shared/amifamily/userdata';
import { isKubeletSettableLabel } from '../../../shared/apis/v1/labels';
import type { AMIFamily } from '../../../shared/apis/v1/types';
import { testInput } from '../golden';

// What the kubelet itself decides for --node-labels (ValidateKubeletFlags): keys in the kubernetes.io
// and k8s.io namespaces must be in its allowed set or under kubelet.kubernetes.io / node.kubernetes.io.
describe('isKubeletSettableLabel', () => {
  it.each([
    ['team', true],
    ['example.com/team', true],
    ['kops.k8s.io/instancegroup', false],
    ['notkubernetes.io/team', true],
    ['kubernetes.io/hostname', true],
    ['kubernetes.io/arch', true],
    ['kubernetes.io/os', true],
    ['beta.kubernetes.io/arch', true],
    ['beta.kubernetes.io/os', true],
    ['beta.kubernetes.io/instance-type', true],
    ['node.kubernetes.io/instance-type', true],
    ['topology.kubernetes.io/zone', true],
    ['topology.kubernetes.io/region', true],
    ['failure-domain.beta.kubernetes.io/zone', true],
    ['failure-domain.beta.kubernetes.io/region', true],
    ['node.kubernetes.io/role', true],
    ['sub.node.kubernetes.io/role', true],
    ['kubelet.kubernetes.io/anything', true],
    ['node.kubernetes.io/windows-build', true],
    ['kubernetes.io/team', false],
    ['kubernetes.io/role', false],
    ['app.kubernetes.io/name', false],
    ['node-restriction.kubernetes.io/team', false],
    ['topology.kubernetes.io/rack', false],
    ['k8s.io/team', false],
    ['subdomain.k8s.io/key', false],
  ])('%s → %s', (key, settable) => {
    expect(isKubeletSettableLabel(key)).toBe(settable);
  });
});

const LABELS = {
  team: 'web',
  'example.com/owner': 'a',
  'kubernetes.io/team': 'b',
  'app.kubernetes.io/name': 'c',
  'k8s.io/x': 'd',
  'subdomain.k8s.io/key': 'e',
  'kops.k8s.io/instancegroup': 'f',
  'node-restriction.kubernetes.io/team': 'g',
  'node.kubernetes.io/role': 'h',
  'kubelet.kubernetes.io/extra': 'i',
  'node.kubernetes.io/instance-type': 'm5.large',
  'kubernetes.io/arch': 'amd64',
  'topology.kubernetes.io/zone': 'test-zone-1a',
};

/** The labels a kubelet receives from the rendered userData, per family. */
function kubeletLabels(family: AMIFamily, userData: string): string[] {
  if (family === 'Bottlerocket') {
    const settings = parseToml(userData) as { settings: { kubernetes: { 'node-labels': Record<string, string> } } };
    return Object.keys(settings.settings.kubernetes['node-labels']);
  }
  const flags = [...userData.matchAll(/--node-labels=\\?"([^"\\]*)\\?"/g)];
  expect(flags).toHaveLength(1);
  return (flags[0]?.[1] ?? '').split(',').map((pair) => pair.split('=')[0] ?? '');
}

describe.each<AMIFamily>(['AL2', 'AL2023', 'Bottlerocket', 'Windows2022'])(
  '%s userData carries only labels the kubelet accepts',
  (family) => {
    const userData = renderUserData(testInput({ family, labels: LABELS }));
    const keys = kubeletLabels(family, userData);

    it('keeps custom labels and the kubelet-settable node.kubernetes.io / kubelet.kubernetes.io ones', () => {
      expect(keys).toEqual(
        expect.arrayContaining([
          'team',
          'example.com/owner',
          'node.kubernetes.io/role',
          'kubelet.kubernetes.io/extra',
          'karpenter.sh/capacity-type',
        ]),
      );
    });

    it('leaves out kubernetes.io and k8s.io keys the kubelet refuses, and those it sets itself', () => {
      for (const key of [
        'kubernetes.io/team',
        'app.kubernetes.io/name',
        'k8s.io/x',
        'subdomain.k8s.io/key',
        'kops.k8s.io/instancegroup',
        'node-restriction.kubernetes.io/team',
        'node.kubernetes.io/instance-type',
        'kubernetes.io/arch',
        'topology.kubernetes.io/zone',
      ]) {
        expect(keys).not.toContain(key);
        expect(userData).not.toContain(`${key}=`);
      }
    });
  },
);

it('Custom userData is the user’s own: no labels are added', () => {
  expect(renderUserData(testInput({ family: 'Custom', labels: LABELS, customUserData: '#!/bin/bash\n' }))).toBe(
    '#!/bin/bash\n',
  );
});
