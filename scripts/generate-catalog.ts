// Regenerates the built-in instance-type catalog (shared/instancetypes/data/us-east-1.json) from
// DescribeInstanceTypes and DescribeInstanceTypeOfferings, called through the real AWS SDK against the
// moto emulator, joined with the on-demand price snapshot.
//
//   npx tsx scripts/generate-catalog.ts [--endpoint URL] [--region us-east-1] [--out FILE] [--pricing FILE]
//
// Without --endpoint it starts moto_server on a free 127.0.0.1 port and stops it afterwards.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  EC2Client,
  type InstanceTypeInfo,
  type InstanceTypeOffering,
  paginateDescribeInstanceTypeOfferings,
  paginateDescribeInstanceTypes,
} from '@aws-sdk/client-ec2';
import { parseCatalog } from '../shared/instancetypes/catalog';
import { buildCatalogSnapshot, formatCatalog } from '../shared/instancetypes/ec2';
import { startMotoServer } from './moto-server';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

async function describe(client: EC2Client): Promise<{ types: InstanceTypeInfo[]; offerings: InstanceTypeOffering[] }> {
  const types: InstanceTypeInfo[] = [];
  // Karpenter's discovery filters and page sizes (reference §5).
  for await (const page of paginateDescribeInstanceTypes(
    { client, pageSize: 100 },
    {
      Filters: [
        { Name: 'supported-virtualization-type', Values: ['hvm'] },
        { Name: 'processor-info.supported-architecture', Values: ['x86_64', 'arm64'] },
      ],
    },
  )) {
    types.push(...(page.InstanceTypes ?? []));
  }
  const offerings: InstanceTypeOffering[] = [];
  for await (const page of paginateDescribeInstanceTypeOfferings(
    { client, pageSize: 1000 },
    { LocationType: 'availability-zone' },
  )) {
    offerings.push(...(page.InstanceTypeOfferings ?? []));
  }
  return { types, offerings };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      endpoint: { type: 'string' },
      region: { type: 'string', default: 'us-east-1' },
      out: { type: 'string', default: join(ROOT, 'shared/instancetypes/data/us-east-1.json') },
      pricing: { type: 'string', default: join(ROOT, 'shared/instancetypes/data/pricing-on-demand.json') },
    },
  });
  const region = values.region;
  const pricing = JSON.parse(readFileSync(values.pricing, 'utf8')) as {
    generatedAt?: string;
    regions: Record<string, Record<string, number>>;
  };
  const prices = pricing.regions[region];
  if (!prices) throw new Error(`${values.pricing} has no prices for ${region}`);

  const moto = values.endpoint
    ? undefined
    : await startMotoServer({ command: 'moto_server', installHint: "install it with: pip install 'moto[server]'" });
  const endpoint = values.endpoint ?? moto?.endpoint ?? '';
  try {
    const client = new EC2Client({
      endpoint,
      region,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    const { types, offerings } = await describe(client);
    const catalog = buildCatalogSnapshot({
      region,
      instanceTypes: types,
      offerings,
      onDemandPrices: prices,
      generatedAt: new Date().toISOString(),
      notes: [
        `instance types and zones: EC2 DescribeInstanceTypes/DescribeInstanceTypeOfferings (moto emulator data) for ${region}`,
        `on-demand prices: AWS price list snapshot of ${pricing.generatedAt ?? 'unknown date'} (Linux, shared tenancy)`,
      ],
    });
    const text = formatCatalog(catalog);
    parseCatalog(JSON.parse(text), values.out);
    writeFileSync(values.out, text);
    const offeringCount = catalog.instanceTypes.reduce((n, t) => n + t.offerings.length, 0);
    process.stdout.write(
      `${relative(process.cwd(), values.out)}: ${catalog.instanceTypes.length} instance types (of ${types.length} described), ` +
        `${offeringCount} offerings, ${Math.round(text.length / 1024)} KiB\n`,
    );
  } finally {
    await moto?.stop();
  }
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
main().catch((error: unknown) => {
  process.stderr.write(`generate-catalog: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
