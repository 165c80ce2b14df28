// Label keys and domains a NodePool may use, as the Karpenter v1 CRDs (core plus the AWS-injected
// rules of hack/validation/{labels,requirements}.sh) and the runtime validation restrict them.

// Well-known label keys, declared once for every module that reads or writes them.
export const LABEL_NODEPOOL = 'karpenter.sh/nodepool';
export const LABEL_CAPACITY_TYPE = 'karpenter.sh/capacity-type';
export const LABEL_NODECLASS = 'karpenter.k8s.aws/ec2nodeclass';
export const LABEL_INSTANCE_TENANCY = 'karpenter.k8s.aws/instance-tenancy';
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
export const LABEL_ZONE_ID = 'topology.k8s.aws/zone-id';
export const LABEL_REGION = 'topology.kubernetes.io/region';
export const LABEL_INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
export const LABEL_ARCH = 'kubernetes.io/arch';
export const LABEL_OS = 'kubernetes.io/os';
export const LABEL_WINDOWS_BUILD = 'node.kubernetes.io/windows-build';

/** kubernetes.io keys Karpenter understands and so lets a NodePool set or require. */
const ALLOWED_KUBERNETES_IO = new Set([
  'beta.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'node.kubernetes.io/windows-build',
]);

/** The only keys allowed under karpenter.k8s.aws (AWS provider v1.14.1). */
export const AWS_WELL_KNOWN_LABELS: ReadonlySet<string> = new Set(
  [
    'instance-tenancy',
    'capacity-reservation-type',
    'capacity-reservation-id',
    'capacity-reservation-interruptible',
    'ec2nodeclass',
    'instance-encryption-in-transit-supported',
    'instance-category',
    'instance-hypervisor',
    'instance-family',
    'instance-generation',
    'instance-local-nvme',
    'instance-size',
    'instance-cpu',
    'instance-cpu-manufacturer',
    'instance-cpu-sustained-clock-speed-mhz',
    'instance-memory',
    'instance-ebs-bandwidth',
    'instance-network-bandwidth',
    'instance-gpu-name',
    'instance-gpu-manufacturer',
    'instance-gpu-count',
    'instance-gpu-memory',
    'instance-accelerator-name',
    'instance-accelerator-manufacturer',
    'instance-accelerator-count',
    'instance-capability-flex',
    'placement-group-id',
    'placement-group-partition',
  ].map((key) => `karpenter.k8s.aws/${key}`),
);

/**
 * Requirement keys whose values Karpenter can only satisfy from a fixed set: an `In` requirement must
 * name at least one of them, or no node could ever match.
 */
export const WELL_KNOWN_VALUES: Readonly<Record<string, readonly string[]>> = {
  [LABEL_CAPACITY_TYPE]: ['spot', 'on-demand', 'reserved'],
  [LABEL_INSTANCE_TENANCY]: ['default', 'dedicated'],
};

/** The domain of a label key: the part before the first `/` (empty when there is none). */
export function labelDomain(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

/** The CRD's label key rules in order; each returns its upstream message or undefined. */
export function restrictedLabelMessages(key: string): string[] {
  const domain = labelDomain(key);
  const messages: string[] = [];
  if (
    domain.endsWith('kubernetes.io') &&
    !ALLOWED_KUBERNETES_IO.has(key) &&
    !domain.endsWith('node.kubernetes.io') &&
    !domain.endsWith('node-restriction.kubernetes.io')
  ) {
    messages.push('label domain "kubernetes.io" is restricted');
  }
  if (domain.endsWith('k8s.io') && !domain.endsWith('kops.k8s.io'))
    messages.push('label domain "k8s.io" is restricted');
  if (domain.endsWith('karpenter.sh') && key !== LABEL_CAPACITY_TYPE && key !== LABEL_NODEPOOL) {
    messages.push('label domain "karpenter.sh" is restricted');
  }
  if (key === LABEL_NODEPOOL) messages.push('label "karpenter.sh/nodepool" is restricted');
  if (key === LABEL_HOSTNAME) messages.push('label "kubernetes.io/hostname" is restricted');
  if (domain.endsWith('karpenter.k8s.aws') && !AWS_WELL_KNOWN_LABELS.has(key)) {
    messages.push('label domain "karpenter.k8s.aws" is restricted');
  }
  return messages;
}
