// Reserved launches end to end on moto: a capacity reservation the EC2NodeClass selects is
// discovered (DescribeCapacityReservations), becomes a reserved offering, the plan puts the claim
// on it, and the launch sends CreateFleet with a template targeting exactly that reservation
// (`capacity-reservations-only`); a full reservation falls back to on-demand. Placement groups
// resolve by name and reach the template.
//
// moto 5.2.1 implements neither DescribeCapacityReservations nor DescribePlacementGroups, so this
// test answers those two calls with canned EC2 responses through the harness's /_fault hook
// (test/integration/moto/launcher.py), scoped to this test's moto account. Production code makes
// the same SDK calls it makes against AWS.

import {
  type CreateFleetCommandInput,
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeLaunchTemplateVersionsCommand,
} from '@aws-sdk/client-ec2';
import { CreateRoleCommand } from '@aws-sdk/client-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import { resolveInstanceTypes } from '../../shared/instancetypes';
import type { InstanceType } from '../../shared/instancetypes/types';
import { resolveNodeClass } from '../../shared/nodeclass';
import { AMIProvider } from '../../shared/providers/ami';
import { CapacityReservationProvider, withNodeClassReservations } from '../../shared/providers/capacityreservation';
import { ClusterProvider } from '../../shared/providers/cluster';
import { InstanceLauncher } from '../../shared/providers/instance';
import { InstanceProfileProvider } from '../../shared/providers/instanceprofile';
import { InstanceTypeProvider } from '../../shared/providers/instancetype';
import { LaunchTemplateProvider } from '../../shared/providers/launchtemplate';
import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { PlacementGroupProvider } from '../../shared/providers/placementgroup';
import { ec2Api, eksApi, iamApi, ssmApi } from '../../shared/providers/ports';
import { SecurityGroupProvider } from '../../shared/providers/securitygroup';
import { SubnetProvider } from '../../shared/providers/subnet';
import { InMemoryUnavailableOfferings } from '../../shared/providers/unavailableofferings';
import { AwsClaimLauncher } from '../../shared/runtime/launcher';
import { solve } from '../../shared/scheduling';
import { pods } from '../scheduling/helpers';
import {
  clearFaults,
  createCluster,
  createFleetErrorBody,
  createNetwork,
  injectFault,
  type MotoAccount,
  motoAccount,
} from './helpers';
import { type FunctionClients, functionClients, functionIdentity } from './iam';

const CLUSTER = 'c1';
const REGION = 'us-west-2';
const RESERVATION = 'cr-0123456789abcdef0';
const PRICES: Record<string, number> = { 'm5.large': 0.096, 'c5.large': 0.085, 'm5.xlarge': 0.192 };
const EC2_NS = 'http://ec2.amazonaws.com/doc/2016-11-15/';

function nodeClass(spec: Partial<EC2NodeClass['spec']> = {}): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'reserved' },
    spec: {
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: 'KarpenterNodeRole-c1',
      capacityReservationSelectorTerms: [{ tags: { team: 'ml' } }],
      ...spec,
    },
  };
}

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'reserved' },
  spec: {
    template: {
      spec: {
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved', 'on-demand'] }],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'reserved' },
      },
    },
  },
};

function reservationsBody(available: number): string {
  return `<?xml version="1.0" encoding="UTF-8"?><DescribeCapacityReservationsResponse xmlns="${EC2_NS}"><requestId>canned</requestId><capacityReservationSet><item><capacityReservationId>${RESERVATION}</capacityReservationId><ownerId>123456789012</ownerId><instanceType>m5.large</instanceType><instancePlatform>Linux/UNIX</instancePlatform><availabilityZone>us-west-2a</availabilityZone><availabilityZoneId>usw2-az2</availabilityZoneId><tenancy>default</tenancy><totalInstanceCount>2</totalInstanceCount><availableInstanceCount>${available}</availableInstanceCount><state>active</state><instanceMatchCriteria>targeted</instanceMatchCriteria><reservationType>default</reservationType></item></capacityReservationSet></DescribeCapacityReservationsResponse>`;
}

const PLACEMENT_GROUPS_BODY = `<?xml version="1.0" encoding="UTF-8"?><DescribePlacementGroupsResponse xmlns="${EC2_NS}"><requestId>canned</requestId><placementGroupSet><item><groupName>critical</groupName><state>available</state><strategy>spread</strategy><groupId>pg-0abc123</groupId><spreadLevel>rack</spreadLevel></item></placementGroupSet></DescribePlacementGroupsResponse>`;

interface Setup {
  account: MotoAccount;
  /** The provision function's clients: discovery and launch run under its synthesized role. */
  clients: FunctionClients;
  instanceTypes: InstanceType[];
  reservations: CapacityReservationProvider;
  fleets: CreateFleetCommandInput[];
  claims: AwsClaimLauncher;
  records: InMemoryStateStore;
  nodeClass: EC2NodeClass;
}

async function setup(account: MotoAccount, spec: Partial<EC2NodeClass['spec']> = {}): Promise<Setup> {
  const nc = nodeClass(spec);
  const identity = await functionIdentity(account, 'provision', {
    clusterName: CLUSTER,
    configuration: { nodePools: [nodePool], nodeClasses: [nc] },
  });
  const clients = functionClients(account, identity);
  const ec2 = ec2Api(clients.ec2);
  const reservations = new CapacityReservationProvider(ec2);
  const resolver = {
    subnets: new SubnetProvider(ec2),
    securityGroups: new SecurityGroupProvider(ec2),
    amis: new AMIProvider(ec2, ssmApi(clients.ssm)),
    instanceProfiles: new InstanceProfileProvider(iamApi(clients.iam), { clusterName: CLUSTER, region: REGION }),
    capacityReservations: reservations,
    placementGroups: new PlacementGroupProvider(ec2),
  };
  const catalog = await new InstanceTypeProvider(ec2, {
    region: REGION,
    instanceTypes: Object.keys(PRICES),
    onDemandPrice: (t) => PRICES[t],
  }).catalog();
  const reserved = await withNodeClassReservations(resolveInstanceTypes(catalog, nc), nc, reservations);
  if (reserved.error) throw reserved.error;
  const fleets: CreateFleetCommandInput[] = [];
  const recording = {
    ...ec2,
    createFleet: (input: CreateFleetCommandInput) => {
      fleets.push(input);
      return ec2.createFleet(input);
    },
  };
  const clusters = new ClusterProvider(eksApi(clients.eks));
  const records = new InMemoryStateStore(Date.now);
  const claims = new AwsClaimLauncher({
    nodeClasses: [nc],
    cluster: () => clusters.describe(CLUSTER),
    resolver,
    launcher: new InstanceLauncher({
      ec2: recording,
      launchTemplates: new LaunchTemplateProvider(ec2),
      unavailable: new InMemoryUnavailableOfferings(Date.now),
      clusterName: CLUSTER,
      region: REGION,
      reservations,
    }),
    records,
    clock: Date.now,
  });
  return { account, clients, instanceTypes: reserved.types, reservations, fleets, claims, records, nodeClass: nc };
}

async function templateData(account: MotoAccount, name: string) {
  const described = await account.ec2.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: [name] }));
  const id = described.LaunchTemplates?.[0]?.LaunchTemplateId ?? '';
  const versions = await account.ec2.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: id }));
  return versions.LaunchTemplateVersions?.[0]?.LaunchTemplateData;
}

function templateNames(fleet: CreateFleetCommandInput | undefined): string[] {
  return (fleet?.LaunchTemplateConfigs ?? []).map((c) => c.LaunchTemplateSpecification?.LaunchTemplateName ?? '');
}

describe('capacity reservations and placement groups on moto', () => {
  let account: MotoAccount;
  beforeAll(async () => {
    account = motoAccount();
    await createNetwork(account, {
      subnets: [
        { zone: 'us-west-2a', cidr: '10.0.1.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } },
        { zone: 'us-west-2b', cidr: '10.0.2.0/24', tags: { 'karpenter.sh/discovery': CLUSTER } },
      ],
      securityGroups: [{ name: 'nodes', tags: { 'karpenter.sh/discovery': CLUSTER } }],
    });
    await createCluster(account, CLUSTER, { serviceCIDR: '172.20.0.0/16' });
    await account.iam.send(
      new CreateRoleCommand({
        RoleName: 'KarpenterNodeRole-c1',
        AssumeRolePolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
        }),
      }),
    );
  });
  afterAll(async () => {
    await clearFaults(account);
  });

  it('discovers the reservation, plans onto it and launches into it with capacity-reservations-only', async () => {
    await clearFaults(account);
    await injectFault(account, {
      action: 'DescribeCapacityReservations',
      status: 200,
      body: reservationsBody(2),
      times: -1,
    });
    const s = await setup(account);

    // The node class reports what it found, as Karpenter's status does.
    const ec2 = ec2Api(s.clients.ec2);
    const cluster = await new ClusterProvider(eksApi(s.clients.eks)).describe(CLUSTER);
    const resolution = await resolveNodeClass(s.nodeClass, {
      subnets: new SubnetProvider(ec2),
      securityGroups: new SecurityGroupProvider(ec2),
      amis: new AMIProvider(ec2, ssmApi(s.clients.ssm)),
      instanceProfiles: new InstanceProfileProvider(iamApi(s.clients.iam), { clusterName: CLUSTER, region: REGION }),
      capacityReservations: s.reservations,
      k8sVersion: cluster.version,
    });
    expect(resolution.ready).toBe(true);
    expect(resolution.nodeClass.status?.capacityReservations).toEqual([
      {
        id: RESERVATION,
        availabilityZone: 'us-west-2a',
        instanceType: 'm5.large',
        ownerID: '123456789012',
        instanceMatchCriteria: 'targeted',
        reservationType: 'default',
        state: 'active',
      },
    ]);
    expect(resolution.nodeClass.status?.conditions?.find((c) => c.type === 'CapacityReservationsReady')?.status).toBe(
      'True',
    );

    const planned = solve({
      pods: pods('train', 2, { cpu: '500m' }),
      nodePools: [nodePool],
      instanceTypes: { reserved: s.instanceTypes },
    });
    expect(planned.unschedulable).toEqual([]);
    expect(planned.nodeClaims).toHaveLength(1);
    const [claim] = planned.nodeClaims;
    if (!claim) throw new Error('no claim planned');
    expect(claim.offering).toMatchObject({
      instanceType: 'm5.large',
      zone: 'us-west-2a',
      capacityType: 'reserved',
      reservationId: RESERVATION,
    });

    const launched = await s.claims.launch({ nodeClaimName: 'reserved-a', nodePool, claim });
    expect(launched).toMatchObject({ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'reserved' });
    const [fleet] = s.fleets;
    expect(fleet?.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('on-demand');
    const overrides = (fleet?.LaunchTemplateConfigs ?? []).flatMap((c) => c.Overrides ?? []);
    expect(overrides.map((o) => `${o.InstanceType}:${o.AvailabilityZone}`)).toEqual(['m5.large:us-west-2a']);
    const [name] = templateNames(fleet);
    const data = await templateData(account, name ?? '');
    expect(data?.CapacityReservationSpecification).toEqual({
      CapacityReservationPreference: 'capacity-reservations-only',
      CapacityReservationTarget: { CapacityReservationId: RESERVATION },
    });
    const out = await account.ec2.send(
      new DescribeInstancesCommand({ Filters: [{ Name: 'tag:karpenter.sh/nodeclaim', Values: ['reserved-a'] }] }),
    );
    expect(out.Reservations?.flatMap((r) => r.Instances ?? []).map((i) => i.InstanceId)).toEqual([launched.instanceId]);
    // The launch took one of the two reserved instances.
    expect(s.reservations.availableCount(RESERVATION)).toBe(1);
    // The claim's record: written before CreateFleet, completed from what EC2 launched.
    const record = await s.records.getNodeClaim('reserved-a');
    expect(record?.status).toMatchObject({
      providerID: `aws:///us-west-2a/${launched.instanceId}`,
      capacity: { cpu: '2000m' },
    });
    expect(record?.status.conditions.find((c) => c.type === 'Launched')?.status).toBe('True');
    expect(record?.metadata.labels).toMatchObject({
      'karpenter.sh/nodepool': nodePool.metadata.name,
      'node.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/zone': 'us-west-2a',
      'karpenter.sh/capacity-type': 'reserved',
      'karpenter.k8s.aws/capacity-reservation-id': RESERVATION,
    });
    expect(record?.spec.requirements).toContainEqual({
      key: 'node.kubernetes.io/instance-type',
      operator: 'In',
      values: claim.instanceTypes.map((t) => t.name),
    });
    // A redelivered launch finds the record and the instance: nothing launched twice.
    const again = await s.claims.launch({ nodeClaimName: 'reserved-a', nodePool, claim });
    expect(again).toMatchObject({ instanceId: launched.instanceId, existing: true });
    expect(s.fleets).toHaveLength(1);
  });

  it('falls back to on-demand when EC2 says the reservation is full, and plans on-demand once it is', async () => {
    await clearFaults(account);
    await injectFault(account, {
      action: 'DescribeCapacityReservations',
      status: 200,
      body: reservationsBody(1),
      times: -1,
    });
    await injectFault(account, {
      action: 'CreateFleet',
      status: 200,
      body: createFleetErrorBody([
        {
          instanceType: 'm5.large',
          zone: 'us-west-2a',
          code: 'ReservationCapacityExceeded',
          message: `Insufficient capacity in reservation ${RESERVATION}`,
        },
      ]),
      times: 1,
    });
    const s = await setup(account);
    const planned = solve({
      pods: pods('burst', 1, { cpu: '500m' }),
      nodePools: [nodePool],
      instanceTypes: { reserved: s.instanceTypes },
    });
    const [claim] = planned.nodeClaims;
    if (!claim) throw new Error('no claim planned');
    expect(claim.offering.capacityType).toBe('reserved');

    const launched = await s.claims.launch({ nodeClaimName: 'reserved-full', nodePool, claim });
    expect(launched.capacityType).toBe('on-demand');
    expect(s.fleets).toHaveLength(2);
    const [first, second] = s.fleets;
    const reservedTemplate = await templateData(account, templateNames(first)[0] ?? '');
    expect(reservedTemplate?.CapacityReservationSpecification?.CapacityReservationPreference).toBe(
      'capacity-reservations-only',
    );
    for (const name of templateNames(second)) {
      expect((await templateData(account, name))?.CapacityReservationSpecification).toEqual({
        CapacityReservationPreference: 'none',
      });
    }
    expect(s.reservations.availableCount(RESERVATION)).toBe(0);
    // Until EC2 is asked again, the next plan no longer offers the reservation.
    const again = solve({
      pods: pods('later', 1, { cpu: '500m' }),
      nodePools: [nodePool],
      instanceTypes: {
        reserved: (await withNodeClassReservations(s.instanceTypes, s.nodeClass, s.reservations)).types,
      },
    });
    expect(again.nodeClaims[0]?.offering.capacityType).toBe('on-demand');
  });

  it('resolves a placement group by name and launches with it in the template', async () => {
    await clearFaults(account);
    await injectFault(account, {
      action: 'DescribePlacementGroups',
      status: 200,
      body: PLACEMENT_GROUPS_BODY,
      contains: 'critical',
      times: -1,
    });
    const s = await setup(account, {
      capacityReservationSelectorTerms: [],
      placementGroupSelector: { name: 'critical' },
    });
    const planned = solve({
      pods: pods('spread', 1, { cpu: '500m' }),
      nodePools: [
        {
          ...nodePool,
          spec: {
            template: {
              spec: {
                ...nodePool.spec.template.spec,
                requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
              },
            },
          },
        },
      ],
      instanceTypes: { reserved: s.instanceTypes },
    });
    const [claim] = planned.nodeClaims;
    if (!claim) throw new Error('no claim planned');
    await s.claims.launch({ nodeClaimName: 'spread-a', nodePool, claim });
    const data = await templateData(account, templateNames(s.fleets[0])[0] ?? '');
    expect(data?.Placement?.GroupId).toBe('pg-0abc123');
  });
  it('skips a zone where the spread group is at its limit and launches in the other', async () => {
    await clearFaults(account);
    await injectFault(account, {
      action: 'DescribePlacementGroups',
      status: 200,
      body: PLACEMENT_GROUPS_BODY,
      contains: 'critical',
      times: -1,
    });
    // Worded as an unverified guess at EC2's text; the launcher matches placement group + spread + limit.
    await injectFault(account, {
      action: 'CreateFleet',
      status: 200,
      body: createFleetErrorBody(
        ['c5.large', 'm5.large', 'm5.xlarge'].map((instanceType) => ({
          instanceType,
          zone: 'us-west-2a',
          code: 'InsufficientInstanceCapacity',
          message: 'The spread placement group has reached its limit of instances per Availability Zone.',
        })),
      ),
      times: 1,
    });
    const s = await setup(account, {
      capacityReservationSelectorTerms: [],
      placementGroupSelector: { name: 'critical' },
    });
    const onDemand: NodePool = {
      ...nodePool,
      spec: {
        template: {
          spec: {
            ...nodePool.spec.template.spec,
            requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
          },
        },
      },
    };
    const planned = solve({
      pods: pods('spread-limit', 1, { cpu: '500m' }),
      nodePools: [onDemand],
      instanceTypes: { reserved: s.instanceTypes },
    });
    const [claim] = planned.nodeClaims;
    if (!claim) throw new Error('no claim planned');
    const launched = await s.claims.launch({ nodeClaimName: 'spread-limit', nodePool: onDemand, claim });
    expect(launched.zone).toBe('us-west-2b');
    const zones = s.fleets.map(
      (f) =>
        new Set((f.LaunchTemplateConfigs ?? []).flatMap((c) => (c.Overrides ?? []).map((o) => o.AvailabilityZone))),
    );
    expect(zones.map((z) => [...z].sort())).toEqual([['us-west-2a', 'us-west-2b'], ['us-west-2b']]);
  });
});
