// `karpless plan --capacity-reservation ID=ZONE:TYPE[:COUNT]`: the dry run plans onto reservations
// the EC2NodeClass would select, and --requests shows the reserved launch and the fallback.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  it('plans onto the reservation up to its count and writes the reserved launches; the pod past it waits', async () => {
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
      unschedulable: { pod: string; reasons: string[]; reservedOffering?: boolean }[];
    };
    // Two claims hold the reservation's two instances; the third pod could use it too, so (Karpenter's
    // strict reserved-offering mode) it waits for the next decision instead of launching spot.
    expect(plan.nodeClaims.map((c) => c.offering)).toEqual([
      expect.objectContaining({ capacityType: 'reserved', zone: 'us-east-1a', reservationId: 'cr-0abc' }),
      expect.objectContaining({ capacityType: 'reserved', zone: 'us-east-1a', reservationId: 'cr-0abc' }),
    ]);
    expect(plan.unschedulable).toEqual([
      {
        pod: expect.stringMatching(/^default\/train-.*-2$/),
        reasons: [expect.stringContaining('could not be reserved')],
        reservedOffering: true,
      },
    ]);

    for (const n of [1, 2]) {
      const template = readJSON<CreateLaunchTemplateCommandInput>(
        join(out, `reserved-plan-${n}`, 'create-launch-template-1.json'),
      );
      expect(template.LaunchTemplateData?.CapacityReservationSpecification).toEqual({
        CapacityReservationPreference: 'capacity-reservations-only',
        CapacityReservationTarget: { CapacityReservationId: 'cr-0abc' },
      });
      const fleet = readJSON<CreateFleetCommandInput>(join(out, `reserved-plan-${n}`, 'create-fleet.json'));
      expect(fleet.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('on-demand');
      expect(
        (fleet.LaunchTemplateConfigs ?? []).flatMap((c) =>
          (c.Overrides ?? []).map((o) => `${o.InstanceType}:${o.AvailabilityZone}`),
        ),
      ).toEqual(['m5.large:us-east-1a']);
    }
    expect(existsSync(join(out, 'reserved-plan-3'))).toBe(false);
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
  });

  it('lists the pod past the reservation count as waiting for it, whatever else the NodePool allows', async () => {
    const reservedOnly = join(dir, 'reserved-only.yaml');
    writeFileSync(reservedOnly, MANIFESTS.replace('values: [reserved, spot, on-demand]', 'values: [reserved]'));
    for (const path of [reservedOnly, manifests]) {
      const result = await inProcess([
        'plan',
        '--manifests',
        path,
        '--pods',
        pods,
        '--capacity-reservation',
        'cr-0abc=us-east-1a:m5.large:2',
      ]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/Unschedulable pods \(1\):\n {2}default\/train-\S+-2\n/);
      expect(result.stdout).toContain(
        'NodePool reserved: one or more instance types with compatible reserved offerings are available, but could not be reserved (cr-0abc: every instance left is held by another claim of this plan); deferred to the next decision',
      );
      expect(result.stdout).toMatch(/Total: 2 NodeClaims for 2 pods, .*\(1 unschedulable\)/);
    }
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
