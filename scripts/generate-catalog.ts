// Regenerates the built-in instance-type catalog (shared/instancetypes/data/us-east-1.json) from
// DescribeInstanceTypes and DescribeInstanceTypeOfferings, called through the real AWS SDK against the
// moto emulator, joined with the on-demand price snapshot.
//
//   npx tsx scripts/generate-catalog.ts [--endpoint URL] [--region us-east-1] [--out FILE] [--pricing FILE]
//
// Without --endpoint it starts moto_server on a free 127.0.0.1 port and stops it afterwards.

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
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

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const READY_TIMEOUT_MS = 30_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function startMoto(): Promise<{ endpoint: string; child: ChildProcess }> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-4000);
  });
  const spawnError = new Promise<never>((_, reject) =>
    child.on('error', (error) =>
      reject(new Error(`cannot start moto_server (${error.message}); install it with: pip install 'moto[server]'`)),
    ),
  );
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const ready = (async () => {
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}:\n${log}`);
      try {
        if ((await fetch(`${endpoint}/moto-api/`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`moto_server did not answer on ${endpoint} within ${READY_TIMEOUT_MS / 1000}s:\n${log}`);
  })();
  try {
    await Promise.race([ready, spawnError]);
  } catch (error) {
    child.kill();
    throw error;
  }
  return { endpoint, child };
}

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

  const moto = values.endpoint ? undefined : await startMoto();
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
    moto?.child.kill();
  }
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
main().catch((error: unknown) => {
  process.stderr.write(`generate-catalog: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
