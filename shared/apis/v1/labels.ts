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

export interface LabelKeyContext {
  /** NodePool keys (template labels and requirements) may not name karpenter.sh/nodepool; NodeClaim keys may. */
  nodePool: boolean;
}

/**
 * One of the CRD's label-key rules: the check and its CEL twin, written for a variable (`self` on a
 * requirement key, `x` inside `self.all(x, …)` on a labels map). Since kubernetes-sigs/karpenter
 * #2586 (Karpenter v1.9) the CRDs restrict only the karpenter.sh domain, kubernetes.io/hostname and
 * the karpenter.k8s.aws allow-list: keys under kubernetes.io and k8s.io are accepted, and the
 * kubelet-settable ones are kept apart when userData is rendered (isKubeletSettableLabel).
 */
export interface LabelRestriction {
  message: string;
  /** NodePool keys only: NodeClaims may carry karpenter.sh/nodepool. */
  nodePoolOnly?: boolean;
  restricts(key: string): boolean;
  /** Its CEL twin (test/apis/v1/crd-conformance.test.ts holds each to a case the validator refuses). */
  cel: (variable: string) => string;
}

/**
 * CEL's `key.find("^([^/]+)")`: everything before the first `/`, or the whole key without one (so a
 * bare `karpenter.sh` key is in the domain, as upstream's rule has it).
 */
function celDomain(key: string): string {
  return key.split('/')[0] ?? '';
}

const celList = (keys: readonly string[]) => `[${keys.map((k) => JSON.stringify(k)).join(', ')}]`;
const celDomainOf = (variable: string) => `${variable}.find("^([^/]+)")`;

/** The rules in upstream's order. */
export const LABEL_RESTRICTIONS: readonly LabelRestriction[] = [
  {
    message: 'label domain "karpenter.sh" is restricted',
    // CEL `endsWith("karpenter.sh")`: a suffix match without a dot, as upstream writes it.
    restricts: (key) =>
      celDomain(key).endsWith('karpenter.sh') && key !== LABEL_CAPACITY_TYPE && key !== LABEL_NODEPOOL,
    cel: (v) =>
      `${v} in ${celList([LABEL_CAPACITY_TYPE, LABEL_NODEPOOL])} || !${celDomainOf(v)}.endsWith("karpenter.sh")`,
  },
  {
    message: `label "${LABEL_NODEPOOL}" is restricted`,
    nodePoolOnly: true,
    restricts: (key) => key === LABEL_NODEPOOL,
    cel: (v) => `${v} != "${LABEL_NODEPOOL}"`,
  },
  {
    message: `label "${LABEL_HOSTNAME}" is restricted`,
    restricts: (key) => key === LABEL_HOSTNAME,
    cel: (v) => `${v} != "${LABEL_HOSTNAME}"`,
  },
  {
    message: 'label domain "karpenter.k8s.aws" is restricted',
    restricts: (key) => celDomain(key).endsWith('karpenter.k8s.aws') && !AWS_WELL_KNOWN_LABELS.has(key),
    // The AWS provider's hack/validation/{labels,requirements}.sh: its allow-list, then the same suffix match.
    cel: (v) => `${v} in ${celList([...AWS_WELL_KNOWN_LABELS])} || !${celDomainOf(v)}.endsWith("karpenter.k8s.aws")`,
  },
];

/** The restrictions that apply to NodePool (or NodeClaim) keys. */
export function labelRestrictions(context: LabelKeyContext): LabelRestriction[] {
  return LABEL_RESTRICTIONS.filter((r) => context.nodePool || !r.nodePoolOnly);
}

/** The CRD's label-key rules that fail for the key, each with its upstream message, in order. */
export function restrictedLabelMessages(key: string, context: LabelKeyContext): string[] {
  return labelRestrictions(context)
    .filter((r) => r.restricts(key))
    .map((r) => r.message);
}

// Go's k8s.io/apimachinery validation.IsQualifiedName, which Karpenter's runtime validation applies to
// label, taint and requirement keys: the CRD pattern alone lets an over-long prefix or name through.
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The messages of IsQualifiedName for a key; empty when the key is a qualified name. */
export function qualifiedNameMessages(key: string): string[] {
  const parts = key.split('/');
  let name = key;
  const messages: string[] = [];
  if (parts.length === 2) {
    const [prefix = '', rest = ''] = parts;
    name = rest;
    if (prefix.length === 0) messages.push('prefix part must be non-empty');
    else {
      if (prefix.length > 253) messages.push('prefix part must be no more than 253 bytes');
      if (!DNS1123_SUBDOMAIN.test(prefix)) {
        messages.push(
          "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        );
      }
    }
  } else if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) messages.push('name part must be non-empty');
  else if (name.length > 63) messages.push('name part must be no more than 63 bytes');
  if (name.length > 0 && !QUALIFIED_NAME_PART.test(name)) {
    messages.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    );
  }
  return messages;
}

// The kubelet's own rules for --node-labels (k8s.io/kubelet/pkg/apis well_known_labels.go and
// cmd/kubelet/app/options ValidateKubeletFlags): a key in the kubernetes.io or k8s.io namespaces is
// refused, and the kubelet does not start, unless it is one of these keys or under these namespaces.
export const KUBELET_LABELS: ReadonlySet<string> = new Set([
  LABEL_HOSTNAME,
  LABEL_ZONE,
  LABEL_REGION,
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  LABEL_INSTANCE_TYPE,
  LABEL_OS,
  LABEL_ARCH,
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];
const KUBERNETES_NAMESPACES = ['kubernetes.io', 'k8s.io'];

const inNamespace = (domain: string, namespace: string) => domain === namespace || domain.endsWith(`.${namespace}`);

/**
 * True when the kubelet accepts the key in --node-labels (and so in Bottlerocket's node-labels and
 * Windows' -KubeletExtraArgs). The other keys are applied to the Node at registration instead.
 */
export function isKubeletSettableLabel(key: string): boolean {
  const domain = labelDomain(key);
  if (!KUBERNETES_NAMESPACES.some((namespace) => inNamespace(domain, namespace))) return true;
  if (KUBELET_LABELS.has(key)) return true;
  return KUBELET_LABEL_NAMESPACES.some((namespace) => inNamespace(domain, namespace));
}
