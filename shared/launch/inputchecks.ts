// The values a launch is built from, checked as EKS and EC2 would check them, before any of them is
// written into a bootstrap command line or a launch template: cluster name, endpoint, CA bundle, IPs,
// AMI id, the userData size, and whether the NodePool may launch the instance type at all.

import { isIP } from 'node:net';
import type { NodePool } from '../apis/v1/types';
import type { InstanceType } from '../instancetypes/types';
import { requirementsMatch } from './launchtemplate';

/** EC2 refuses userData above 16 KB in raw form, before base64 (RunInstances, launch templates). */
export const MAX_USER_DATA_BYTES = 16 * 1024;

// EKS CreateCluster: 1-100 characters, a letter or digit first, then letters, digits, '-' and '_'.
const CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const AMI_ID = /^ami-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;

export interface LaunchValues {
  clusterName?: string;
  clusterEndpoint?: string;
  caBundle?: string;
  clusterDNS?: string;
  amiId?: string;
}

/** One message per bad value, naming the flag or field and the expected form. */
export function launchValueProblems(values: LaunchValues, names: Record<keyof LaunchValues, string>): string[] {
  const problems: string[] = [];
  const { clusterName, clusterEndpoint, caBundle, clusterDNS, amiId } = values;
  if (clusterName !== undefined && !CLUSTER_NAME.test(clusterName)) {
    problems.push(
      `${names.clusterName}: ${show(clusterName)} is not an EKS cluster name (1-100 letters, digits, '-' or '_', starting with a letter or digit)`,
    );
  }
  if (clusterEndpoint !== undefined) {
    const problem = endpointProblem(clusterEndpoint);
    if (problem) problems.push(`${names.clusterEndpoint}: ${show(clusterEndpoint)} ${problem}`);
  }
  if (caBundle !== undefined && (caBundle === '' || !BASE64.test(caBundle))) {
    problems.push(`${names.caBundle}: must be the cluster CA bundle in base64 (A-Z, a-z, 0-9, '+', '/', '=' padding)`);
  }
  if (clusterDNS !== undefined && isIP(clusterDNS) === 0) {
    problems.push(`${names.clusterDNS}: ${show(clusterDNS)} is not an IPv4 or IPv6 address`);
  }
  if (amiId !== undefined && !AMI_ID.test(amiId)) {
    problems.push(`${names.amiId}: ${show(amiId)} is not an AMI id (ami- and 8 or 17 lowercase hex digits)`);
  }
  return problems;
}

function endpointProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL (expected https://HOST, as DescribeCluster returns it)';
  }
  if (url.protocol !== 'https:') return 'must be an https:// URL';
  if (url.username || url.password) return 'must not hold credentials';
  if (url.hostname === '' || /[\s'"`$\\]/.test(text)) return 'must be a plain https://HOST[:PORT][/PATH] URL';
  if (url.search || url.hash) return 'must not have a query or fragment';
  return undefined;
}

function show(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}

/** Refuses userData EC2 would refuse, with its size. */
export function userDataSizeProblem(userData: string): string | undefined {
  const bytes = Buffer.byteLength(userData, 'utf8');
  if (bytes <= MAX_USER_DATA_BYTES) return undefined;
  return `userData is ${bytes} bytes; EC2 accepts at most ${MAX_USER_DATA_BYTES} bytes (16 KB) before base64: shorten spec.userData`;
}

/**
 * Why the NodePool cannot launch this instance type with this capacity type, naming the requirement,
 * or undefined when it can. Keys the instance type does not label (zones, custom labels) are about
 * where the node runs, not about the type, and are not judged here.
 */
export function instanceTypeRequirementProblem(
  nodePool: NodePool,
  instanceType: InstanceType,
  capacityType?: string,
): string | undefined {
  const labels: Record<string, string> = { ...instanceType.labels };
  if (capacityType !== undefined) labels['karpenter.sh/capacity-type'] = capacityType;
  labels['node.kubernetes.io/instance-type'] ??= instanceType.name;
  const requirements = nodePool.spec.template.spec.requirements;
  for (const [index, requirement] of requirements.entries()) {
    const value = labels[requirement.key];
    const values = requirement.values ?? [];
    if (value === undefined && requirement.operator !== 'Exists') continue;
    if (!requirementsMatch([requirement], labels)) {
      const shown = values.length > 0 ? ` [${values.join(', ')}]` : '';
      return `NodePool/${nodePool.metadata.name} cannot launch ${capacityType ? `${capacityType} ` : ''}${instanceType.name}: spec.template.spec.requirements[${index}] ${requirement.key} ${requirement.operator}${shown} does not allow ${requirement.key}=${value ?? '<unset>'}`;
    }
  }
  return undefined;
}
