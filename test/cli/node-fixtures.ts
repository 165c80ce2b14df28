// A NodePool + EC2NodeClass pair and the cluster flags shared by the offline userdata and
// launch-template command tests (the upstream golden test environment).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Writes the pair, with the given extra EC2NodeClass spec lines, into a fresh directory. */
export function manifests(nodeClassSpec: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'karpless-node-'));
  writeFileSync(
    join(dir, 'pool.yaml'),
    `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: test
spec:
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
  securityGroupSelectorTerms: [{id: sg-0123}]
${nodeClassSpec.includes('instanceProfile:') ? '' : '  role: NodeRole\n'}${nodeClassSpec}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool
spec:
  template:
    metadata:
      labels:
        testing/cluster: unspecified
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: test}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
      taints:
        - {key: foo, value: bar, effect: NoExecute}
`,
  );
  return dir;
}

export const CLUSTER = [
  '--cluster-name',
  'test-cluster',
  '--cluster-endpoint',
  'https://test-cluster',
  '--cluster-ca',
  'Y2EtYnVuZGxlCg==',
  '--cluster-cidr',
  '10.100.0.0/16',
];

export const common = (dir: string) => [
  '--manifests',
  dir,
  '--nodepool',
  'pool',
  '--instance-type',
  'm5.large',
  ...CLUSTER,
];
