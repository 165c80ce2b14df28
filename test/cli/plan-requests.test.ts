// `karpless plan --requests`: the files hold exactly what the launcher sends for the same claims.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  CreateFleetCommandInput,
  CreateFleetCommandOutput,
  CreateLaunchTemplateCommandInput,
} from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceTypesByNodePool } from '../../cli/commands/plan';
import { DEFAULT_OFFLINE_CLUSTER, offlineResolvedNodeClass, parseSubnetFlags } from '../../cli/commands/plan-requests';
import { requireConfiguration } from '../../shared/apis/config';
import { readManifestFiles } from '../../shared/apis/load';
import { loadBuiltInCatalog } from '../../shared/instancetypes/catalog';
import { launchClaimFromPlan } from '../../shared/launch/claim';
import { InstanceLauncher } from '../../shared/providers/instance';
import { LaunchTemplateProvider } from '../../shared/providers/launchtemplate';
import type { EC2Api } from '../../shared/providers/ports';
import { InMemoryUnavailableOfferings } from '../../shared/providers/unavailableofferings';
import { solve } from '../../shared/scheduling';
import { collectWorkloads } from '../../shared/workloads';
import { awsError, fakeClock, recordingFake } from '../providers/fakes';
import { inProcess } from './run';

const MANIFESTS = 'examples/manifests/default.yaml';
const PINNED = `apiVersion: apps/v1
kind: Deployment
metadata: {name: pinned}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: pinned}}
    spec:
      nodeSelector: {topology.kubernetes.io/zone: us-east-1b}
      containers: [{name: c, resources: {requests: {cpu: "1", memory: 2Gi}}}]
`;
const FLAGS = [
  '--subnet',
  'us-east-1a=subnet-aaa',
  '--subnet',
  'us-east-1b=subnet-bbb',
  '--security-group',
  'sg-111',
  '--cluster-name',
  'prod',
];

function readJSON<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

describe('karpless plan --requests', () => {
  let dir: string;
  let pods: string;
  let out: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'karpless-requests-'));
    pods = join(dir, 'pinned.yaml');
    writeFileSync(pods, PINNED);
    out = join(dir, 'requests');
    const result = await inProcess(['plan', '--manifests', MANIFESTS, '--pods', pods, '--requests', out, ...FLAGS]);
    expect(result.stderr).toMatch(/wrote \d+ request files to/);
    expect(result.code).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a CreateLaunchTemplate and a CreateFleet request per claim, overrides only in its zone', () => {
    const claims = readdirSync(out).sort();
    expect(claims.length).toBeGreaterThan(0);
    for (const claim of claims) {
      const files = readdirSync(join(out, claim)).sort();
      expect(files).toContain('create-fleet.json');
      expect(files.filter((f) => f.startsWith('create-launch-template-')).length).toBeGreaterThan(0);
      const fleet = readJSON<CreateFleetCommandInput>(join(out, claim, 'create-fleet.json'));
      const overrides = (fleet.LaunchTemplateConfigs ?? []).flatMap((c) => c.Overrides ?? []);
      expect(overrides.length).toBeGreaterThan(0);
      expect(new Set(overrides.map((o) => `${o.AvailabilityZone}/${o.SubnetId}`))).toEqual(
        new Set(['us-east-1b/subnet-bbb']),
      );
      // The NodePool allows spot and on-demand: spot, as Karpenter chooses.
      expect(fleet.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('spot');
      const template = readJSON<CreateLaunchTemplateCommandInput>(join(out, claim, 'create-launch-template-1.json'));
      expect(template.LaunchTemplateData?.NetworkInterfaces?.[0]?.Groups).toEqual(['sg-111']);
      expect(template.LaunchTemplateData?.ImageId).toMatch(/^resolve:ssm:\/aws\/service\/eks\/optimized-ami\/1\.33\//);
    }
  });

  it('writes byte for byte what the launcher sends for the same claim', async () => {
    const configuration = requireConfiguration([MANIFESTS]);
    const { nodePools, nodeClasses } = configuration.config;
    const catalog = loadBuiltInCatalog();
    const workloads = collectWorkloads(readManifestFiles([pods]).documents);
    const planned = solve({
      pods: workloads.pending,
      nodePools,
      instanceTypes: instanceTypesByNodePool(catalog, nodePools, nodeClasses).instanceTypes,
    });
    const claims = readdirSync(out).sort();
    expect(claims).toEqual(planned.nodeClaims.map((_, i) => `general-plan-${i + 1}`));

    for (const [i, claim] of planned.nodeClaims.entries()) {
      const name = `general-plan-${i + 1}`;
      const nodePool = nodePools.find((p) => p.metadata.name === claim.nodePool);
      const nodeClass = nodeClasses[0];
      if (!nodePool || !nodeClass) throw new Error('example manifests changed');
      const resolved = offlineResolvedNodeClass({
        nodeClass,
        catalog,
        cluster: { ...DEFAULT_OFFLINE_CLUSTER, name: 'prod', region: catalog.region },
        subnets: parseSubnetFlags(['us-east-1a=subnet-aaa', 'us-east-1b=subnet-bbb']),
        securityGroups: ['sg-111'],
      });
      const ec2 = recordingFake<EC2Api>({
        describeInstances: () => ({ Reservations: [] }),
        describeLaunchTemplates: () => {
          throw awsError('InvalidLaunchTemplateName.NotFoundException');
        },
        createLaunchTemplate: (input) => ({ LaunchTemplate: { LaunchTemplateId: `lt-${input.LaunchTemplateName}` } }),
        createFleet: (input): Omit<CreateFleetCommandOutput, '$metadata'> => {
          const first = input.LaunchTemplateConfigs?.[0]?.Overrides?.[0];
          return {
            Instances: [
              {
                InstanceIds: ['i-1'],
                InstanceType: first?.InstanceType,
                Lifecycle: 'spot',
                LaunchTemplateAndOverrides: { Overrides: first ?? {} },
              },
            ],
          };
        },
      });
      const launcher = new InstanceLauncher({
        ec2,
        launchTemplates: new LaunchTemplateProvider(ec2),
        unavailable: new InMemoryUnavailableOfferings(fakeClock()),
        clusterName: 'prod',
        region: catalog.region,
      });
      await launcher.launch(launchClaimFromPlan({ nodeClaimName: name, claim, nodePool, nodeClass }), resolved);

      const templates = readdirSync(join(out, name))
        .filter((f) => f.startsWith('create-launch-template-'))
        .sort()
        .map((f) => readJSON<CreateLaunchTemplateCommandInput>(join(out, name, f)));
      expect(JSON.parse(JSON.stringify(ec2.callsTo('createLaunchTemplate')))).toEqual(templates);
      expect(JSON.parse(JSON.stringify(ec2.callsTo('createFleet')))).toEqual([
        readJSON<CreateFleetCommandInput>(join(out, name, 'create-fleet.json')),
      ]);
    }
  });

  it('registers the node with the labels the launcher and `karpless userdata` give it, EC2NodeClass included', () => {
    for (const claim of readdirSync(out)) {
      const template = readJSON<CreateLaunchTemplateCommandInput>(join(out, claim, 'create-launch-template-1.json'));
      const userData = Buffer.from(template.LaunchTemplateData?.UserData ?? '', 'base64').toString('utf8');
      const flag = /--node-labels="([^"]*)"/.exec(userData)?.[1]?.split(',') ?? [];
      expect(flag).toEqual(
        expect.arrayContaining([
          'karpenter.k8s.aws/ec2nodeclass=default',
          'karpenter.sh/nodepool=general',
          'karpenter.sh/capacity-type=spot',
        ]),
      );
    }
  });

  it('leaves out, with a warning naming the zone, the claims planned where no --subnet is given', async () => {
    const two = join(dir, 'two-zones.yaml');
    writeFileSync(
      two,
      `${PINNED}---\n${PINNED.replace('name: pinned', 'name: east-a').replace('us-east-1b', 'us-east-1a')}`,
    );
    const partial = join(dir, 'partial');
    const result = await inProcess([
      'plan',
      '--manifests',
      MANIFESTS,
      '--pods',
      two,
      '--requests',
      partial,
      '--subnet',
      'us-east-1a=subnet-aaa',
    ]);
    expect(result.code).toBe(0);
    // The table still shows both claims: the plan is the plan; only their requests are missing.
    expect(result.stdout).toMatch(/us-east-1a/);
    expect(result.stdout).toMatch(/us-east-1b/);
    expect(result.stderr).toMatch(
      /warning: no requests written for general-plan-\d \(us-east-1b\): --subnet gives no subnet in us-east-1b, where the plan puts them; add --subnet ZONE=subnet-id for that zone/,
    );
    const written = readdirSync(partial);
    expect(written).toHaveLength(1);
    for (const claim of written) {
      const fleet = readJSON<CreateFleetCommandInput>(join(partial, claim, 'create-fleet.json'));
      const overrides = (fleet.LaunchTemplateConfigs ?? []).flatMap((c) => c.Overrides ?? []);
      expect(new Set(overrides.map((o) => o.SubnetId))).toEqual(new Set(['subnet-aaa']));
      expect(fleet.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('spot');
    }
  });

  it('refuses a malformed --subnet before planning', async () => {
    const result = await inProcess(['plan', '--manifests', MANIFESTS, '--pods', pods, '--subnet', 'subnet-1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--subnet "subnet-1": expected ZONE=subnet-id/);
  });
});
