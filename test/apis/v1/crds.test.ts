// The committed CRDs in infra/kubernetes/crds/ are what shared/apis/v1/crds.ts generates from the
// schema tables (regenerate with `npx tsx scripts/generate-crds.ts`), and they name Karpenter's own
// groups, kinds, versions and printer columns, so a cluster with Karpenter's CRDs needs none of ours.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { crdFileName, crdFileText, karpenterCrds } from '../../../shared/apis/v1/crds';

const directory = join(import.meta.dirname, '..', '..', '..', 'infra', 'kubernetes', 'crds');
const crds = karpenterCrds();

describe('infra/kubernetes/crds', () => {
  it.each(crds.map((crd) => [crdFileName(crd), crd] as const))('%s is current', (file, crd) => {
    const committed = readFileSync(join(directory, file), 'utf8');
    expect(committed, 'run: npx tsx scripts/generate-crds.ts').toBe(
      crdFileText(crd, (value) => stringify(value, { lineWidth: 0 })),
    );
    const [doc] = parseAllDocuments(committed).map((d) => d.toJS());
    expect(doc).toEqual(crd);
  });

  it("uses Karpenter's groups, kinds, versions, scope and status subresource", () => {
    expect(
      crds.map((c) => [
        c.metadata.name,
        c.spec.group,
        c.spec.names.kind,
        c.spec.scope,
        c.spec.versions.map((v) => v.name),
      ]),
    ).toEqual([
      ['nodepools.karpenter.sh', 'karpenter.sh', 'NodePool', 'Cluster', ['v1']],
      ['nodeclaims.karpenter.sh', 'karpenter.sh', 'NodeClaim', 'Cluster', ['v1']],
      ['ec2nodeclasses.karpenter.k8s.aws', 'karpenter.k8s.aws', 'EC2NodeClass', 'Cluster', ['v1']],
    ]);
    for (const crd of crds) expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
  });

  it("prints upstream's columns: kubectl get shows the priority-0 ones, -o wide all", () => {
    const columns = (kind: string, wide: boolean) =>
      crds
        .find((c) => c.spec.names.kind === kind)
        ?.spec.versions[0]?.additionalPrinterColumns.filter((c) => wide || !c.priority)
        .map((c) => c.name);
    expect(columns('NodeClaim', false)).toEqual(['Type', 'Capacity', 'Zone', 'Node', 'Ready', 'Age']);
    expect(columns('NodeClaim', true)).toEqual([
      'Type',
      'Capacity',
      'Zone',
      'Node',
      'Ready',
      'Age',
      'ImageID',
      'ID',
      'NodePool',
      'NodeClass',
      'Drifted',
    ]);
    expect(columns('NodePool', false)).toEqual(['NodeClass', 'Nodes', 'Ready', 'Age']);
    expect(columns('EC2NodeClass', true)).toEqual(['Ready', 'Age', 'Role']);
  });

  it('carries the CRD defaults of defaults.ts', () => {
    const schemaAt = (kind: string, ...path: string[]): unknown =>
      path.reduce<unknown>(
        (node, field) => (node as Record<string, Record<string, unknown>> | undefined)?.properties?.[field],
        crds.find((c) => c.spec.names.kind === kind)?.spec.versions[0]?.schema.openAPIV3Schema,
      );
    const defaultOf = (kind: string, ...path: string[]) => (schemaAt(kind, ...path) as { default?: unknown }).default;
    expect(defaultOf('NodeClaim', 'spec', 'expireAfter')).toBe('720h');
    expect(defaultOf('NodePool', 'spec', 'disruption', 'budgets')).toEqual([{ nodes: '10%' }]);
    expect(defaultOf('EC2NodeClass', 'spec', 'metadataOptions')).toMatchObject({
      httpPutResponseHopLimit: 1,
      httpTokens: 'required',
    });
  });
});
