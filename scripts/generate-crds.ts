// Writes Karpenter's v1 CRDs (NodePool, NodeClaim, EC2NodeClass) to infra/kubernetes/crds/ from
// karpless's own schema tables (shared/apis/v1/crds.ts). test/apis/v1/crds.test.ts fails when the
// committed files and the tables disagree.
// Usage: npx tsx scripts/generate-crds.ts

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { crdFileName, crdFileText, karpenterCrds } from '../shared/apis/v1/crds';

const directory = join(import.meta.dirname, '..', 'infra', 'kubernetes', 'crds');
mkdirSync(directory, { recursive: true });
for (const crd of karpenterCrds()) {
  const path = join(directory, crdFileName(crd));
  writeFileSync(
    path,
    crdFileText(crd, (value) => stringify(value, { lineWidth: 0 })),
  );
  process.stdout.write(`wrote ${path}\n`);
}
