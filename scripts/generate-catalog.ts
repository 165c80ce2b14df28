// Regenerates the built-in instance-type catalog (shared/instancetypes/data/us-east-1.json) from
// DescribeInstanceTypes and DescribeInstanceTypeOfferings, called through the real AWS SDK against the
// moto emulator, joined with the on-demand price snapshot; or, with --region, a catalog of another
// region to pass to `karpless plan --catalog`.
//
//   npx tsx scripts/generate-catalog.ts [--endpoint URL] [--region R] [--out FILE] [--pricing FILE]
//                                       [--prices-of REGION]
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

const BUILT_IN_REGION = 'us-east-1';

interface PriceSnapshot {
  generatedAt?: string;
  regions: Record<string, Record<string, number>>;
}

/**
 * The on-demand prices for the catalog's region, and the note saying where they come from. The
 * snapshot in the repository holds us-east-1 only: another region needs its own prices (--pricing),
 * or an explicit choice to price it like a region the file has (--prices-of), said in the catalog.
 */
export function pricesFor(
  pricing: PriceSnapshot,
  file: string,
  region: string,
  pricesOf: string | undefined,
): { prices: Record<string, number>; note: string } {
  const from = pricesOf ?? region;
  const prices = pricing.regions[from];
  const held = Object.keys(pricing.regions).sort().join(', ') || 'no region';
  if (!prices) {
    if (pricesOf !== undefined) throw new Error(`--prices-of ${pricesOf}: ${file} has prices for ${held} only`);
    throw new Error(
      `${file} has on-demand prices for ${held}, not ${region}: pass --pricing FILE with ` +
        `{"regions": {"${region}": {"m5.large": 0.107, ...}}} (on-demand USD per hour, Linux, shared tenancy), ` +
        `or --prices-of ${Object.keys(pricing.regions)[0] ?? BUILT_IN_REGION} to price ${region} with that region's prices (said in the catalog's notes)`,
    );
  }
  const snapshot = `AWS price list snapshot of ${pricing.generatedAt ?? 'unknown date'} (Linux, shared tenancy)`;
  return {
    prices,
    note:
      from === region
        ? `on-demand prices: ${snapshot}`
        : `on-demand prices: ${from}'s, standing in for ${region}'s (--prices-of ${from}), from the ${snapshot}`,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      endpoint: { type: 'string' },
      region: { type: 'string', default: BUILT_IN_REGION },
      out: { type: 'string' },
      pricing: { type: 'string', default: join(ROOT, 'shared/instancetypes/data/pricing-on-demand.json') },
      'prices-of': { type: 'string' },
    },
  });
  const region = values.region;
  // Only the built-in region's file is embedded; another region's catalog is a file for --catalog,
  // written where the command runs rather than over the built-in one.
  const out =
    values.out ??
    (region === BUILT_IN_REGION ? join(ROOT, 'shared/instancetypes/data/us-east-1.json') : `catalog-${region}.json`);
  const pricing = JSON.parse(readFileSync(values.pricing, 'utf8')) as PriceSnapshot;
  const { prices, note } = pricesFor(pricing, values.pricing, region, values['prices-of']);

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
        note,
      ],
    });
    if (catalog.instanceTypes.length === 0) {
      throw new Error(`no instance type of ${region} has both a zone and a price: nothing to write to ${out}`);
    }
    const text = formatCatalog(catalog);
    parseCatalog(JSON.parse(text), out);
    writeFileSync(out, text);
    const offeringCount = catalog.instanceTypes.reduce((n, t) => n + t.offerings.length, 0);
    process.stdout.write(
      `${relative(process.cwd(), out)}: ${catalog.instanceTypes.length} instance types (of ${types.length} described), ` +
        `${offeringCount} offerings, ${Math.round(text.length / 1024)} KiB\n`,
    );
    if (region !== BUILT_IN_REGION) process.stdout.write(`plan with it: npx karpless plan --catalog ${out} …\n`);
  } finally {
    await moto?.stop();
  }
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
if (process.argv[1] === fileURLToPath(import.meta.url)) runMain();

function runMain(): void {
  main().catch((error: unknown) => {
    process.stderr.write(`generate-catalog: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
