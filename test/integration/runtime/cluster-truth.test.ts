// The provision function reads the cluster before it decides (issue 18), against moto and the fake
// API server: notices for pods that are bound, gone or never existed launch nothing; a pod whose
// claim is bound to a volume in zone b gets CreateFleet overrides in zone b only; zones without a
// subnet of the node class are never planned; an uninitialized node of ours with a startup taint
// and room is reused; an API server that times out while the decision reads it launches nothing
// and gets the batch back.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NodePool } from '../../../shared/apis/v1/types';
import { KUBE } from '../../../shared/contracts';
import { node, pod } from '../../support/kube/builders';
import { fleetZones, ProvisionFixture } from '../helpers';

const CLUSTER = 'truth';
const STARTUP_TAINT = { key: 'example.com/agent-not-ready', value: 'true', effect: 'NoSchedule' as const };

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      spec: {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge'] },
        ],
        startupTaints: [STARTUP_TAINT],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      },
    },
  },
};

let fixture: ProvisionFixture;

beforeAll(async () => {
  // Subnets in a and b only: us-west-2c exists in the VPC but not for this node class.
  fixture = await ProvisionFixture.start({
    cluster: CLUSTER,
    nodePools: [nodePool],
    subnets: [
      { zone: 'us-west-2a', cidr: '10.0.1.0/24' },
      { zone: 'us-west-2b', cidr: '10.0.2.0/24' },
      { zone: 'us-west-2c', cidr: '10.0.3.0/24', tagged: false },
    ],
  });
});

afterAll(async () => {
  await fixture?.stop();
});

// Each case starts without claims in flight, so its pods cannot land on an earlier case's claim.
beforeEach(async () => {
  await fixture.reset();
});

describe('the provision function reads the cluster', () => {
  it('launches nothing for a notice of bound, deleted and nonexistent pods', async () => {
    const bound = fixture.pendingPod('bound-1');
    fixture.api.bindPod('default', 'bound-1', 'ip-10-0-9-9.us-west-2.compute.internal');
    const deleted = fixture.pendingPod('deleted-1');
    fixture.api.deletePod('default', 'deleted-1');
    const never = { ...structuredClone(deleted), metadata: { ...deleted.metadata, name: 'never-1', uid: 'u-never' } };

    const response = await fixture.provision([fixture.notice([bound, deleted, never])]);

    expect(response.batchItemFailures).toEqual([]);
    expect(fixture.fleets).toEqual([]);
  });

  it('plans a pod whose claim is bound to a volume in zone b with CreateFleet overrides only in zone b', async () => {
    fixture.api.addStorageClass({
      metadata: { name: 'gp3' },
      provisioner: 'ebs.csi.aws.com',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    fixture.api.addPersistentVolume({
      metadata: { name: 'pv-data' },
      spec: {
        storageClassName: 'gp3',
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['us-west-2b'] }] },
            ],
          },
        },
      },
    });
    fixture.api.addPersistentVolumeClaim({
      metadata: { name: 'data', namespace: 'default' },
      spec: { storageClassName: 'gp3', volumeName: 'pv-data' },
    });
    const db = pod('db-0', { cpu: '500m', owner: { kind: 'StatefulSet', name: 'db' } });
    db.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }];
    db.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
    const added = fixture.api.addPod(db);

    expect((await fixture.provision([fixture.notice([added])])).batchItemFailures).toEqual([]);

    expect(fixture.fleets).toHaveLength(1);
    expect([...fleetZones(fixture.fleets[0]!)]).toEqual(['us-west-2b']);
  });

  it('plans only zones where the node class has a subnet', async () => {
    const plain = fixture.pendingPod('plain-1');
    const inC = pod('zonal-c', { cpu: '500m', owner: { kind: 'ReplicaSet', name: 'c' } });
    inC.spec.nodeSelector = { 'topology.kubernetes.io/zone': 'us-west-2c' };
    inC.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
    const zonal = fixture.api.addPod(inC);

    expect((await fixture.provision([fixture.notice([plain, zonal])])).batchItemFailures).toEqual([]);

    expect(fixture.fleets).toHaveLength(1);
    for (const zone of fleetZones(fixture.fleets[0]!)) expect(['us-west-2a', 'us-west-2b']).toContain(zone);
  });

  it('reuses an uninitialized node of ours with a startup taint and room: no second launch', async () => {
    const first = fixture.pendingPod('burst-1', '250m');
    expect((await fixture.provision([fixture.notice([first])])).batchItemFailures).toEqual([]);
    expect(fixture.fleets).toHaveLength(1);
    const instance = await fixture.instanceOf(fixture.fleets[0]!);
    // The node joined and registered; its startup taint and not-ready are still on it.
    const name = 'ip-10-0-1-77.us-west-2.compute.internal';
    fixture.api.addNode(
      node(name, {
        providerID: `aws:///${instance.Placement?.AvailabilityZone}/${instance.InstanceId}`,
        labels: { [KUBE.registeredLabel]: 'true', 'karpenter.sh/nodepool': 'general' },
        taints: [STARTUP_TAINT, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
        finalizers: [KUBE.terminationFinalizer],
      }),
    );
    fixture.api.updateNode(name, (n) => {
      n.status = { allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' } };
    });
    fixture.api.bindPod('default', 'burst-1', name);
    const second = fixture.pendingPod('burst-2', '250m');

    expect((await fixture.provision([fixture.notice([second])])).batchItemFailures).toEqual([]);

    expect(fixture.fleets).toHaveLength(1);
  });

  it('gets the batch back and launches nothing when the API server times out while the decision reads it', async () => {
    const late = fixture.pendingPod('late-1');
    fixture.api.injectFault({
      method: 'GET',
      path: '/api/v1/pods',
      status: 504,
      message: 'etcd request timed out',
      times: 4,
    });
    const body = fixture.notice([late]);

    const failed = await fixture.provision([body]);

    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
    expect(fixture.fleets).toEqual([]);
    expect((await fixture.provision([body])).batchItemFailures).toEqual([]);
    expect(fixture.fleets).toHaveLength(1);
  });
});
