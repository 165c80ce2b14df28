// The catalog generator's prices: the repository's snapshot holds us-east-1 only, so another region
// is refused with what to do, or priced like us-east-1 when asked to, and the catalog says so.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pricesFor } from '../../scripts/generate-catalog';

const FILE = 'shared/instancetypes/data/pricing-on-demand.json';
const snapshot = JSON.parse(readFileSync(FILE, 'utf8')) as Parameters<typeof pricesFor>[0];

describe('generate-catalog prices', () => {
  it("prices the built-in region from the snapshot's own prices", () => {
    const { prices, note } = pricesFor(snapshot, FILE, 'us-east-1', undefined);
    expect(prices['m5.large']).toBe(snapshot.regions['us-east-1']?.['m5.large']);
    expect(note).toBe(`on-demand prices: AWS price list snapshot of ${snapshot.generatedAt} (Linux, shared tenancy)`);
  });

  it('refuses a region the snapshot has no prices for, naming the two ways on', () => {
    expect(() => pricesFor(snapshot, FILE, 'eu-west-1', undefined)).toThrow(
      `${FILE} has on-demand prices for us-east-1, not eu-west-1: pass --pricing FILE with {"regions": {"eu-west-1": {"m5.large": 0.107, ...}}} (on-demand USD per hour, Linux, shared tenancy), or --prices-of us-east-1 to price eu-west-1 with that region's prices (said in the catalog's notes)`,
    );
  });

  it("prices another region with us-east-1's prices when asked, and says so in the note", () => {
    const { prices, note } = pricesFor(snapshot, FILE, 'eu-west-1', 'us-east-1');
    expect(prices).toBe(snapshot.regions['us-east-1']);
    expect(note).toMatch(/^on-demand prices: us-east-1's, standing in for eu-west-1's \(--prices-of us-east-1\)/);
  });

  it('refuses --prices-of a region the file does not hold', () => {
    expect(() => pricesFor(snapshot, FILE, 'eu-west-1', 'ap-south-1')).toThrow(
      `--prices-of ap-south-1: ${FILE} has prices for us-east-1 only`,
    );
  });
});
