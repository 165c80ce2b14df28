import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CatalogError, loadBuiltInCatalog, parseCatalog, readCatalogFile } from '../../shared/instancetypes';

const VALID_TYPE = {
  name: 'm5.large',
  arch: 'amd64',
  vcpu: 2,
  memoryMiB: 8192,
  maximumNetworkInterfaces: 3,
  ipv4PerInterface: 10,
  gpus: 0,
  offerings: [{ zone: 'us-east-1a', capacityType: 'spot', price: 0.04, available: true }],
};

function catalogWith(...instanceTypes: unknown[]): Record<string, unknown> {
  return { version: 1, region: 'us-east-1', instanceTypes };
}

function problemsOf(json: unknown): string[] {
  try {
    parseCatalog(json, 'my-catalog.json');
  } catch (error) {
    if (error instanceof CatalogError)
      return error.message
        .split('\n')
        .slice(1)
        .map((l) => l.trim());
    throw error;
  }
  throw new Error('the catalog was accepted');
}

describe('parseCatalog', () => {
  it('accepts the documented minimal format', () => {
    const catalog = parseCatalog(catalogWith(VALID_TYPE), 'my-catalog.json');
    expect(catalog.instanceTypes[0]?.name).toBe('m5.large');
  });

  it.each<[string, unknown, string]>([
    ['not an object', [], 'my-catalog.json: must be a JSON object {version, region, instanceTypes}, got []'],
    ['a wrong version', { ...catalogWith(VALID_TYPE), version: 2 }, 'my-catalog.json: version: must be 1'],
    [
      'no region',
      { version: 1, instanceTypes: [VALID_TYPE] },
      'region: must be a region name such as us-east-1, got nothing',
    ],
    ['no instance types', { version: 1, region: 'r' }, 'instanceTypes: must be a list of instance types, got nothing'],
    ['an empty list', catalogWith(), 'instanceTypes: must list at least one instance type'],
    [
      'an entry that is not an object',
      catalogWith('m5.large'),
      'instanceTypes[0]: must be an object describing one instance type, got "m5.large"',
    ],
    [
      'an entry without a name',
      catalogWith({ ...VALID_TYPE, name: undefined }),
      'instanceTypes[0].name: must be a non-empty string, got nothing',
    ],
    [
      'x86_64 for an arch',
      catalogWith({ ...VALID_TYPE, arch: 'x86_64' }),
      'InstanceType/m5.large: instanceTypes[0].arch: must be amd64 or arm64, got "x86_64" (use the Kubernetes name amd64 for x86_64)',
    ],
    [
      'a missing vcpu',
      catalogWith({ ...VALID_TYPE, vcpu: undefined }),
      'InstanceType/m5.large: instanceTypes[0].vcpu: must be a whole number > 0, got nothing',
    ],
    [
      'memory as a string',
      catalogWith({ ...VALID_TYPE, memoryMiB: '8Gi' }),
      'InstanceType/m5.large: instanceTypes[0].memoryMiB: must be a whole number > 0, got "8Gi"',
    ],
    [
      'negative gpus',
      catalogWith({ ...VALID_TYPE, gpus: -1 }),
      'instanceTypes[0].gpus: must be a whole number ≥ 0, got -1',
    ],
    [
      'a bad optional field',
      catalogWith({ ...VALID_TYPE, localNvmeGB: 1.5 }),
      'instanceTypes[0].localNvmeGB: must be a whole number ≥ 0, got 1.5',
    ],
    [
      'capacity with numbers',
      catalogWith({ ...VALID_TYPE, capacity: { cpu: 2 } }),
      'instanceTypes[0].capacity: must map resource names to quantity strings',
    ],
    [
      'an unknown overhead part',
      catalogWith({ ...VALID_TYPE, overhead: { kubeReserve: {} } }),
      'instanceTypes[0].overhead.kubeReserve: unknown part; use kubeReserved, systemReserved, evictionThreshold',
    ],
    [
      'no offerings',
      catalogWith({ ...VALID_TYPE, offerings: undefined }),
      'instanceTypes[0].offerings: must be a list of {zone, capacityType, price, available}',
    ],
    [
      'an unknown capacity type',
      catalogWith({ ...VALID_TYPE, offerings: [{ zone: 'a', capacityType: 'Spot', price: 1, available: true }] }),
      'InstanceType/m5.large: instanceTypes[0].offerings[0].capacityType: must be one of spot, on-demand, reserved, got "Spot"',
    ],
    [
      'a price as a string',
      catalogWith({ ...VALID_TYPE, offerings: [{ zone: 'a', capacityType: 'spot', price: '0.1', available: true }] }),
      'instanceTypes[0].offerings[0].price: must be a number ≥ 0, got "0.1"',
    ],
    [
      'a missing available flag',
      catalogWith({ ...VALID_TYPE, offerings: [{ zone: 'a', capacityType: 'spot', price: 0.1 }] }),
      'instanceTypes[0].offerings[0].available: must be true or false, got nothing',
    ],
    [
      'the same offering twice',
      catalogWith({ ...VALID_TYPE, offerings: [VALID_TYPE.offerings[0], VALID_TYPE.offerings[0]] }),
      'instanceTypes[0].offerings[1]: duplicates the us-east-1a/spot offering',
    ],
    [
      'the same type twice',
      catalogWith(VALID_TYPE, VALID_TYPE),
      'InstanceType/m5.large: instanceTypes[1].name: duplicates instanceTypes[0]',
    ],
  ])('rejects %s', (_, json, message) => {
    expect(
      problemsOf(json).some((line) => line.includes(message)),
      problemsOf(json).join('\n'),
    ).toBe(true);
  });

  it('reports every problem at once, each on its own line with file, entry and field', () => {
    const problems = problemsOf(
      catalogWith({ ...VALID_TYPE, vcpu: 0, arch: 'arm' }, { ...VALID_TYPE, name: 'c5.large', gpus: 'one' }),
    );
    expect(problems).toEqual([
      'my-catalog.json: InstanceType/m5.large: instanceTypes[0].arch: must be amd64 or arm64, got "arm"',
      'my-catalog.json: InstanceType/m5.large: instanceTypes[0].vcpu: must be a whole number > 0, got 0',
      'my-catalog.json: InstanceType/c5.large: instanceTypes[1].gpus: must be a whole number ≥ 0, got "one"',
    ]);
  });

  it('stops listing after 50 problems and says how many more there are', () => {
    const bad = Array.from({ length: 60 }, (_, i) => ({ ...VALID_TYPE, name: `t${i}.large`, vcpu: 0 }));
    const problems = problemsOf(catalogWith(...bad));
    expect(problems).toHaveLength(51);
    expect(problems.at(-1)).toBe('my-catalog.json: … and 10 more problems');
  });
});

describe('docs/catalog.md', () => {
  it('shows an example that parses', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/catalog.md'), 'utf8');
    const example = /```json\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    const catalog = parseCatalog(JSON.parse(example ?? ''), 'docs/catalog.md');
    expect(catalog.instanceTypes.map((t) => t.name)).toEqual(['m5.large', 'g5.xlarge']);
  });
});

describe('readCatalogFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'karpless-catalog-'));

  it('reads a valid file', () => {
    const file = join(dir, 'ok.json');
    writeFileSync(file, JSON.stringify(catalogWith(VALID_TYPE)));
    expect(readCatalogFile(file).region).toBe('us-east-1');
  });

  it.each([
    ['a missing file', 'missing.json', undefined, /missing\.json: cannot read the catalog: ENOENT/],
    ['bad JSON', 'bad.json', '{"version": 1,', /bad\.json: not valid JSON: /],
    [
      'a bad entry',
      'entry.json',
      JSON.stringify(catalogWith({ ...VALID_TYPE, vcpu: 'two' })),
      /entry\.json: InstanceType\/m5\.large: instanceTypes\[0\]\.vcpu/,
    ],
  ])('names the file for %s', (_, name, content, message) => {
    const file = join(dir, name);
    if (content !== undefined) writeFileSync(file, content);
    expect(() => readCatalogFile(file)).toThrow(message);
  });
});

describe('the built-in us-east-1 catalog', () => {
  const catalog = loadBuiltInCatalog();

  it('is a versioned us-east-1 snapshot that says spot is priced as on-demand', () => {
    expect(catalog.version).toBe(1);
    expect(catalog.region).toBe('us-east-1');
    expect(catalog.generatedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(catalog.notes).toContain('spot prices unknown offline: priced as on-demand, as Karpenter does at start');
  });

  it('holds the current families on both architectures, each with priced offerings', () => {
    expect(catalog.instanceTypes.length).toBeGreaterThan(1000);
    const names = new Set(catalog.instanceTypes.map((t) => t.name));
    for (const name of ['m5.large', 'm6g.large', 'c7i.large', 'r7g.xlarge', 'g5.xlarge', 'p4d.24xlarge', 't3.micro'])
      expect(names).toContain(name);
    expect(catalog.instanceTypes.filter((t) => t.offerings.length === 0).map((t) => t.name)).toEqual([]);
    expect(catalog.instanceTypes.filter((t) => t.offerings.some((o) => !(o.price > 0))).map((t) => t.name)).toEqual([]);
  });

  it('carries the on-demand prices of the copied price list, for every offering', () => {
    const file = join(import.meta.dirname, '../../shared/instancetypes/data/pricing-on-demand.json');
    const prices = (JSON.parse(readFileSync(file, 'utf8')) as { regions: Record<string, Record<string, number>> })
      .regions['us-east-1'];
    const mismatched = catalog.instanceTypes.filter((t) => t.offerings.some((o) => o.price !== prices?.[t.name]));
    expect(mismatched.map((t) => t.name)).toEqual([]);
  });

  it('prices spot like on-demand in the same zone', () => {
    const m5 = catalog.instanceTypes.find((t) => t.name === 'm5.large');
    expect(m5?.offerings.filter((o) => o.zone === 'us-east-1a')).toEqual([
      { zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096, available: true },
      { zone: 'us-east-1a', capacityType: 'spot', price: 0.096, available: true },
    ]);
  });

  it('follows the catalog format, and is the same object on every call', () => {
    expect(parseCatalog(structuredClone(catalog), 'built-in')).toEqual(catalog);
    expect(loadBuiltInCatalog()).toBe(catalog);
  });
});
