// `karpless plan --capacity-reservation ID=ZONE:TYPE[:COUNT]`: the dry run plans onto reservations
// the EC2NodeClass would select, and --requests shows the reserved launch and the fallback.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreateFleetCommandInput, CreateLaunchTemplateCommandInput } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCapacityReservationFlags, reservationsSelectedBy } from '../../cli/commands/plan-requests';
import type { EC2NodeClass } from '../../shared/apis/v1/types';
import { inProcess } from './run';

const MANIFESTS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: reserved}
spec:
  role: KarpenterNodeRole-c1
  amiSelectorTerms: [{alias: al2023@v20240807}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c1}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c1}}]
  capacityReservationSelectorTerms: [{id: cr-0abc}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: plain}
spec:
  role: KarpenterNodeRole-c1
  amiSelectorTerms: [{alias: al2023@v20240807}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c1}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c1}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: reserved}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: reserved}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [reserved, spot, on-demand]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
`;

const PODS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: train}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: train}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 1500m, memory: 1Gi}}}]
`;

function readJSON<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

describe('karpless plan --capacity-reservation', () => {
  let dir: string;
  let manifests: string;
  let pods: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'karpless-reserved-'));
    manifests = join(dir, 'manifests.yaml');
    pods = join(dir, 'pods.yaml');
    writeFileSync(manifests, MANIFESTS);
    writeFileSync(pods, PODS);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('plans onto the reservation and writes the reserved launch, then the fallback past its count', async () => {
    const out = join(dir, 'requests');
    const result = await inProcess([
      'plan',
      '--manifests',
      manifests,
      '--pods',
      pods,
      '--capacity-reservation',
      'cr-0abc=us-east-1a:m5.large:2',
      '--requests',
      out,
      '--json',
    ]);
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as {
      nodeClaims: { offering: { capacityType: string; zone: string; reservationId?: string } }[];
    };
    expect(plan.nodeClaims).toHaveLength(3);
    // Two claims fit the reservation; the third gets the NodePool's next capacity type, spot.
    expect(plan.nodeClaims.map((c) => c.offering)).toEqual([
      expect.objectContaining({ capacityType: 'reserved', zone: 'us-east-1a', reservationId: 'cr-0abc' }),
      expect.objectContaining({ capacityType: 'reserved', zone: 'us-east-1a', reservationId: 'cr-0abc' }),
      expect.objectContaining({ capacityType: 'spot' }),
    ]);
    expect(result.stderr).not.toContain('than it holds');

    const fleets = [1, 2, 3].map((n) =>
      readJSON<CreateFleetCommandInput>(join(out, `reserved-plan-${n}`, 'create-fleet.json')),
    );
    for (const n of [1, 2]) {
      const template = readJSON<CreateLaunchTemplateCommandInput>(
        join(out, `reserved-plan-${n}`, 'create-launch-template-1.json'),
      );
      expect(template.LaunchTemplateData?.CapacityReservationSpecification).toEqual({
        CapacityReservationPreference: 'capacity-reservations-only',
        CapacityReservationTarget: { CapacityReservationId: 'cr-0abc' },
      });
      const fleet = fleets[n - 1];
      expect(fleet?.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('on-demand');
      expect(
        (fleet?.LaunchTemplateConfigs ?? []).flatMap((c) =>
          (c.Overrides ?? []).map((o) => `${o.InstanceType}:${o.AvailabilityZone}`),
        ),
      ).toEqual(['m5.large:us-east-1a']);
    }
    // The third claim finds the reservation used up and launches spot, as the launcher would.
    expect(fleets[2]?.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('spot');
    const third = readJSON<CreateLaunchTemplateCommandInput>(
      join(out, 'reserved-plan-3', 'create-launch-template-1.json'),
    );
    expect(third.LaunchTemplateData?.CapacityReservationSpecification).toEqual({
      CapacityReservationPreference: 'none',
    });
  });

  it('shows the reservation in the plan table', async () => {
    const result = await inProcess([
      'plan',
      '--manifests',
      manifests,
      '--pods',
      pods,
      '--capacity-reservation',
      'cr-0abc=us-east-1a:m5.large:3',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/reserved\s+m5\.large\s+reserved \(cr-0abc\)\s+us-east-1a\s+1/);
    expect(result.stderr).not.toContain('than it holds');
  });

  it('keeps claims on a full reservation, with a note, when the NodePool allows nothing else', async () => {
    const reservedOnly = join(dir, 'reserved-only.yaml');
    writeFileSync(reservedOnly, MANIFESTS.replace('values: [reserved, spot, on-demand]', 'values: [reserved]'));
    const result = await inProcess([
      'plan',
      '--manifests',
      reservedOnly,
      '--pods',
      pods,
      '--capacity-reservation',
      'cr-0abc=us-east-1a:m5.large:2',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'note: 1 more NodeClaim planned onto cr-0abc than it holds (2), and the NodePool allows no other capacity type: its launch fails until the reservation frees up',
    );
  });

  it('notes a reservation nothing selects, or the catalog cannot offer, and plans without it', async () => {
    const result = await inProcess([
      'plan',
      '--manifests',
      manifests,
      '--pods',
      pods,
      '--capacity-reservation',
      'cr-0other=us-east-1a:m5.large',
      '--capacity-reservation',
      'cr-0abc=us-east-1a:zz9.huge',
      '--json',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'note: --capacity-reservation cr-0other: no EC2NodeClass has capacityReservationSelectorTerms that select it; ignored',
    );
    expect(result.stderr).toContain(
      'note: --capacity-reservation cr-0abc: the catalog has no instance type zz9.huge; ignored',
    );
    const plan = JSON.parse(result.stdout) as { nodeClaims: { offering: { capacityType: string } }[] };
    expect(plan.nodeClaims.map((c) => c.offering.capacityType)).not.toContain('reserved');
  });

  it.each([
    ['cr-0abc', 'expected ID=ZONE:TYPE[:COUNT]'],
    ['cr-0abc=us-east-1a', 'expected ID=ZONE:TYPE[:COUNT]'],
    ['abc=us-east-1a:m5.large', 'expected ID=ZONE:TYPE[:COUNT]'],
    ['cr-0abc=us-east-1a:m5.large:0', 'COUNT must be at least 1'],
  ])('refuses --capacity-reservation %s with exit 2', async (value, message) => {
    const result = await inProcess(['plan', '--manifests', manifests, '--pods', pods, '--capacity-reservation', value]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('parses a repeated flag and refuses the same id twice', () => {
    expect(parseCapacityReservationFlags(['cr-1=us-east-1a:p5.48xlarge:4'])).toEqual([
      {
        id: 'cr-1',
        instanceType: 'p5.48xlarge',
        availabilityZone: 'us-east-1a',
        reservationType: 'default',
        interruptible: false,
        state: 'active',
        availableInstanceCount: 4,
      },
    ]);
    expect(() => parseCapacityReservationFlags(['cr-1=us-east-1a:m5.large', 'cr-1=us-east-1b:m5.large'])).toThrow(
      'given twice',
    );
  });

  it('selects by id term exactly, by any other term everything, and nothing without terms', () => {
    const flags = parseCapacityReservationFlags(['cr-1=us-east-1a:m5.large', 'cr-2=us-east-1b:m5.large']);
    const withSpec = (spec: Partial<EC2NodeClass['spec']>) => ({ spec }) as EC2NodeClass;
    expect(reservationsSelectedBy(withSpec({ capacityReservationSelectorTerms: [{ id: 'cr-2' }] }), flags)).toEqual([
      flags[1],
    ]);
    expect(
      reservationsSelectedBy(withSpec({ capacityReservationSelectorTerms: [{ tags: { team: 'ml' } }] }), flags),
    ).toEqual(flags);
    expect(reservationsSelectedBy(withSpec({}), flags)).toEqual([]);
  });
});
