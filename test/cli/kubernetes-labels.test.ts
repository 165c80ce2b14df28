// Issue 12's "done when": a NodePool whose template carries kubernetes.io / k8s.io labels (accepted by
// Karpenter's CRDs since v1.9) validates, plans, and renders userData the kubelet accepts for every
// AMI family; the labels the kubelet refuses are left to registration.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PlanJSON } from '../../cli/commands/plan';
import { CLUSTER } from './node-fixtures';
import { inProcess } from './run';

const FAMILIES: [string, string][] = [
  ['AL2', 'amiSelectorTerms: [{alias: al2@latest}]'],
  ['AL2023', 'amiSelectorTerms: [{alias: al2023@latest}]'],
  ['Bottlerocket', 'amiSelectorTerms: [{alias: bottlerocket@latest}]'],
  ['Windows2022', 'amiSelectorTerms: [{alias: windows2022@latest}]'],
  ['Custom', 'amiFamily: Custom\n  amiSelectorTerms: [{id: ami-0123}]\n  userData: "#!/bin/bash\\necho custom"'],
];

function manifests(nodeClassSpec: string, os: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'karpless-k8s-labels-'));
  writeFileSync(
    join(dir, 'pool.yaml'),
    `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: test}
spec:
  role: NodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
  securityGroupSelectorTerms: [{id: sg-0123}]
  ${nodeClassSpec}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: pool}
spec:
  template:
    metadata:
      labels:
        kubernetes.io/team: web
        subdomain.k8s.io/key: value
        node.kubernetes.io/role: frontend
        team: web
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: test}
      requirements:
        - {key: kubernetes.io/os, operator: In, values: [${os}]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`,
  );
  const pods = join(dir, 'pods');
  writeFileSync(
    `${pods}.yaml`,
    `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  nodeSelector: {kubernetes.io/team: web, kubernetes.io/os: ${os}}
  containers: [{name: web, image: web, resources: {requests: {cpu: "1", memory: 1Gi}}}]
`,
  );
  return dir;
}

// The first in-process run loads the instance-type catalog; on a loaded machine that takes seconds.
const SLOW = 30_000;

describe.each(FAMILIES)('a NodePool with kubernetes.io template labels on %s', (family, spec) => {
  const dir = manifests(spec, family.startsWith('Windows') ? 'windows' : 'linux');

  it(
    'validates',
    async () => {
      const { code, stderr } = await inProcess(['validate', '--strict-references', join(dir, 'pool.yaml')]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
    },
    SLOW,
  );

  it(
    'plans a claim for a pod selecting the kubernetes.io label',
    async () => {
      const { code, stdout } = await inProcess([
        'plan',
        '--manifests',
        join(dir, 'pool.yaml'),
        '--pods',
        join(dir, 'pods.yaml'),
        '--json',
      ]);
      expect(code).toBe(0);
      const plan = JSON.parse(stdout) as PlanJSON;
      expect(plan.unschedulable).toEqual([]);
      expect(plan.nodeClaims).toHaveLength(1);
    },
    SLOW,
  );

  it(
    'renders userData without the labels the kubelet refuses',
    async () => {
      const { code, stdout, stderr } = await inProcess([
        'userdata',
        '--manifests',
        join(dir, 'pool.yaml'),
        '--nodepool',
        'pool',
        '--instance-type',
        'm5.large',
        '--capacity-type',
        'on-demand',
        ...CLUSTER,
      ]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).not.toContain('kubernetes.io/team');
      expect(stdout).not.toContain('subdomain.k8s.io/key');
      if (family === 'Custom') expect(stdout.trim()).toBe('#!/bin/bash\necho custom');
      else {
        expect(stdout).toContain('team');
        expect(stdout).toMatch(/node\.kubernetes\.io\/role'? ?=? ?'?frontend/);
      }
    },
    SLOW,
  );
});
