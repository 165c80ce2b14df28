// Pods and Nodes shaped like a real cluster's, for the scale benchmark (bench/scale.ts): what an
// API server returns carries managedFields, env, probes, volume mounts and container statuses on pods,
// and images, conditions and nodeInfo on nodes. A benchmark of list memory on three-field objects
// would measure nothing a 5,000-node cluster pays. Sizes as JSON: a bound pod about 5 KB, a
// pending pod about 3.5 KB, a node about 9 KB (bench/scale.ts prints the measured averages).

import type { Node, Pod } from '../shared/apis/core/v1';

const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c'];
const CREATED = '2026-11-30T08:00:00Z';

function managedFields(manager: string, operation: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { manager, operation, apiVersion: 'v1', time: CREATED, fieldsType: 'FieldsV1', fieldsV1: fields };
}

function env(app: string): { name: string; value: string }[] {
  return Array.from({ length: 12 }, (_, i) => ({
    name: `${app.toUpperCase()}_SETTING_${i}`,
    value: `value-${i}-${app}`,
  }));
}

/** A Deployment's pod: `nodeName` set makes it bound and Running, unset leaves it pending. */
export function realisticPod(index: number, nodeName?: string): Pod {
  const app = `service-${index % 400}`;
  const name = `${app}-7d9f8c6b5-${index.toString(36).padStart(5, '0')}`;
  const pod = {
    metadata: {
      name,
      namespace: `team-${index % 40}`,
      uid: `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`,
      labels: { app, 'pod-template-hash': '7d9f8c6b5', 'app.kubernetes.io/part-of': `product-${index % 25}` },
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-7d9f8c6b5`,
          uid: `rs-${index % 400}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      creationTimestamp: CREATED,
      managedFields: [
        managedFields('kube-controller-manager', 'Update', {
          'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {} }, 'f:ownerReferences': {} },
          'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:env': {}, 'f:image': {}, 'f:ports': {} } } },
        }),
        ...(nodeName
          ? [
              managedFields('kubelet', 'Update', {
                'f:status': { 'f:conditions': {}, 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:podIP': {} },
              }),
            ]
          : []),
      ],
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: `123456789012.dkr.ecr.us-west-2.amazonaws.com/${app}:v1.${index % 50}.0`,
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: env(app),
          resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { memory: '1Gi' } },
          livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10, failureThreshold: 3 },
          readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 5 },
          volumeMounts: [
            { name: 'config', mountPath: '/etc/app' },
            { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
          ],
        },
      ],
      volumes: [
        { name: 'config', configMap: { name: `${app}-config` } },
        { name: 'kube-api-access', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
      ],
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { app } },
        },
      ],
      serviceAccountName: app,
      terminationGracePeriodSeconds: 30,
      ...(nodeName ? { nodeName } : {}),
    },
    status: nodeName
      ? {
          phase: 'Running',
          hostIP: '10.0.12.34',
          podIP: `10.1.${index % 250}.${index % 200}`,
          conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
            type,
            status: 'True',
            lastTransitionTime: CREATED,
          })),
          containerStatuses: [
            {
              name: 'app',
              ready: true,
              restartCount: 0,
              started: true,
              image: `123456789012.dkr.ecr.us-west-2.amazonaws.com/${app}:v1.${index % 50}.0`,
              imageID: `123456789012.dkr.ecr.us-west-2.amazonaws.com/${app}@sha256:${'ab'.repeat(32)}`,
              containerID: `containerd://${'cd'.repeat(32)}`,
              state: { running: { startedAt: CREATED } },
            },
          ],
        }
      : {
          phase: 'Pending',
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              reason: 'Unschedulable',
              message: '0/5000 nodes are available: 5000 Insufficient cpu.',
              lastTransitionTime: CREATED,
            },
          ],
        },
  };
  return pod as unknown as Pod;
}

/** A registered, initialized node of ours, as the kubelet and karpless left it. */
export function realisticNode(index: number): Node {
  const name = `ip-10-0-${Math.floor(index / 250)}-${index % 250}.us-west-2.compute.internal`;
  const zone = ZONES[index % ZONES.length] ?? 'us-west-2a';
  const instanceId = `i-${index.toString(16).padStart(17, '0')}`;
  const node = {
    metadata: {
      name,
      uid: `10000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/instance-type': 'm6i.4xlarge',
        'topology.kubernetes.io/region': 'us-west-2',
        'topology.kubernetes.io/zone': zone,
        'karpenter.sh/nodepool': 'default',
        'karpenter.sh/capacity-type': index % 3 === 0 ? 'spot' : 'on-demand',
        'karpenter.sh/registered': 'true',
        'karpenter.sh/initialized': 'true',
        'karpenter.k8s.aws/ec2nodeclass': 'default',
        'karpenter.k8s.aws/instance-category': 'm',
        'karpenter.k8s.aws/instance-family': 'm6i',
        'karpenter.k8s.aws/instance-generation': '6',
        'karpenter.k8s.aws/instance-size': '4xlarge',
        'karpenter.k8s.aws/instance-cpu': '16',
        'karpenter.k8s.aws/instance-memory': '65536',
      },
      annotations: {
        'alpha.kubernetes.io/provided-node-ip': '10.0.12.34',
        'karpenter.sh/nodepool-hash': '6821555240594823858',
        'karpenter.sh/nodepool-hash-version': 'v3',
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
      finalizers: ['karpenter.sh/termination'],
      creationTimestamp: CREATED,
      managedFields: [
        managedFields('kubelet', 'Update', { 'f:status': { 'f:conditions': {}, 'f:images': {}, 'f:nodeInfo': {} } }),
        managedFields('karpless', 'Update', { 'f:metadata': { 'f:labels': {}, 'f:finalizers': {} } }),
      ],
    },
    spec: { providerID: `aws:///${zone}/${instanceId}` },
    status: {
      capacity: { cpu: '16', memory: '64560Mi', pods: '234', 'ephemeral-storage': '20959212Ki' },
      allocatable: { cpu: '15890m', memory: '63028Mi', pods: '234', 'ephemeral-storage': '18242267924' },
      conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map((type) => ({
        type,
        status: type === 'Ready' ? 'True' : 'False',
        lastHeartbeatTime: CREATED,
        lastTransitionTime: CREATED,
        reason: type === 'Ready' ? 'KubeletReady' : `KubeletHasNo${type}`,
        message: type === 'Ready' ? 'kubelet is posting ready status' : `kubelet has no ${type}`,
      })),
      addresses: [
        { type: 'InternalIP', address: '10.0.12.34' },
        { type: 'InternalDNS', address: name },
        { type: 'Hostname', address: name },
      ],
      nodeInfo: {
        machineID: 'ec2'.padEnd(32, '0'),
        systemUUID: 'ec2'.padEnd(36, '1'),
        bootID: 'b'.repeat(36),
        kernelVersion: '6.1.112-124.190.amzn2023.x86_64',
        osImage: 'Amazon Linux 2023.6.20241031',
        containerRuntimeVersion: 'containerd://1.7.22',
        kubeletVersion: 'v1.31.2-eks-94953ac',
        kubeProxyVersion: 'v1.31.2-eks-94953ac',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      images: Array.from({ length: 30 }, (_, i) => ({
        names: [
          `123456789012.dkr.ecr.us-west-2.amazonaws.com/service-${(index + i) % 400}@sha256:${'ef'.repeat(32)}`,
          `123456789012.dkr.ecr.us-west-2.amazonaws.com/service-${(index + i) % 400}:v1.${i}.0`,
        ],
        sizeBytes: 50_000_000 + i * 1_000_000,
      })),
    },
  };
  return node as unknown as Node;
}

export function instanceIdOf(index: number): string {
  return `i-${index.toString(16).padStart(17, '0')}`;
}
