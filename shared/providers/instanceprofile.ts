// The instance profile an EC2NodeClass with spec.role launches with (AWS pkg/providers/instanceprofile):
// a deterministic name per cluster, region and node class, created once with Karpenter's tags so the
// published IAM conditions match, holding exactly the node role. spec.instanceProfile is used as is.

import { createHash } from 'node:crypto';
import type { EC2NodeClass } from '../apis/v1/types';
import { errorCode, isNotFound } from './aws-errors';
import type { IAMApi } from './ports';

export type InstanceProfilePort = IAMApi;

export interface InstanceProfileContext {
  clusterName: string;
  region: string;
  /** Tagged as eks:eks-cluster-arn when known. */
  clusterArn?: string;
}

/** The legacy (v1.0) deterministic form: `<cluster>_<hash(region, nodeclass)>`, stable across runs. */
export function instanceProfileName(clusterName: string, region: string, nodeClassName: string): string {
  const digest = createHash('sha256').update(`${region}\u0000${nodeClassName}`).digest();
  return `${clusterName}_${digest.readBigUInt64BE(0).toString()}`;
}

/** IAM path under which karpless's profiles live (garbage collection lists by it). */
export function instanceProfilePath(clusterName: string, region: string, nodeClass: EC2NodeClass): string {
  return `/karpenter/${region}/${clusterName}/${nodeClass.metadata.uid ?? nodeClass.metadata.name}/`;
}

export function instanceProfileTags(context: InstanceProfileContext, nodeClass: EC2NodeClass): Record<string, string> {
  return {
    ...(nodeClass.spec.tags ?? {}),
    [`kubernetes.io/cluster/${context.clusterName}`]: 'owned',
    'eks:eks-cluster-name': context.clusterName,
    'karpenter.k8s.aws/ec2nodeclass': nodeClass.metadata.name,
    'topology.kubernetes.io/region': context.region,
    ...(context.clusterArn ? { 'eks:eks-cluster-arn': context.clusterArn } : {}),
  };
}

/** "arn:aws:iam::1:role/path/Name" and "path/Name" → "Name": AddRoleToInstanceProfile takes the bare name. */
export function roleName(role: string): string {
  return role.slice(role.lastIndexOf('/') + 1);
}

export class InstanceProfileError extends Error {
  override readonly name = 'InstanceProfileError';
}

/** What inspect() finds, without changing anything. */
export interface InstanceProfileState {
  name: string;
  /** False when spec.instanceProfile, or the managed profile for spec.role, does not exist. */
  exists: boolean;
  managed: boolean;
  roles: string[];
  /** For managed profiles: whether spec.role is the profile's role. */
  hasRole: boolean;
}

export class InstanceProfileProvider {
  constructor(
    private readonly iam: InstanceProfilePort,
    private readonly context: InstanceProfileContext,
  ) {}

  /** Reads the profile the node class launches with; read-only, for `karpless status`. */
  async inspect(nodeClass: EC2NodeClass): Promise<InstanceProfileState> {
    const managed = !nodeClass.spec.instanceProfile;
    if (managed && !this.context.clusterName) {
      throw new InstanceProfileError('the managed instance profile name includes the cluster name, which is not known');
    }
    const name =
      nodeClass.spec.instanceProfile ??
      instanceProfileName(this.context.clusterName, this.context.region, nodeClass.metadata.name);
    try {
      const out = await this.iam.getInstanceProfile({ InstanceProfileName: name });
      const roles = (out.InstanceProfile?.Roles ?? []).map((r) => r.RoleName ?? '').filter(Boolean);
      const role = nodeClass.spec.role ? roleName(nodeClass.spec.role) : undefined;
      return { name, exists: true, managed, roles, hasRole: role ? roles.includes(role) : roles.length > 0 };
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return { name, exists: false, managed, roles: [], hasRole: false };
    }
  }

  /** The profile name for status.instanceProfile, creating or repairing the managed profile. */
  async ensure(nodeClass: EC2NodeClass): Promise<string> {
    const given = nodeClass.spec.instanceProfile;
    if (given) return given;
    const role = nodeClass.spec.role;
    if (!role) {
      throw new InstanceProfileError(
        `EC2NodeClass/${nodeClass.metadata.name}: spec.role or spec.instanceProfile must be set`,
      );
    }
    const { clusterName, region } = this.context;
    const name = instanceProfileName(clusterName, region, nodeClass.metadata.name);
    const wanted = roleName(role);
    let roles: string[];
    try {
      const out = await this.iam.getInstanceProfile({ InstanceProfileName: name });
      roles = (out.InstanceProfile?.Roles ?? []).map((r) => r.RoleName ?? '').filter(Boolean);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.create(name, nodeClass);
      roles = [];
    }
    try {
      for (const other of roles.filter((r) => r !== wanted)) {
        await this.iam.removeRoleFromInstanceProfile({ InstanceProfileName: name, RoleName: other });
      }
      if (!roles.includes(wanted))
        await this.iam.addRoleToInstanceProfile({ InstanceProfileName: name, RoleName: wanted });
    } catch (error) {
      throw new InstanceProfileError(
        `EC2NodeClass/${nodeClass.metadata.name}: spec.role: cannot add role ${wanted} to instance profile ${name} (${errorCode(error) ?? 'error'}: ${error instanceof Error ? error.message : String(error)}); check that the role exists`,
      );
    }
    return name;
  }

  private async create(name: string, nodeClass: EC2NodeClass): Promise<void> {
    const tags = instanceProfileTags(this.context, nodeClass);
    try {
      await this.iam.createInstanceProfile({
        InstanceProfileName: name,
        Path: instanceProfilePath(this.context.clusterName, this.context.region, nodeClass),
        Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
      });
    } catch (error) {
      // Another invocation created it between our Get and Create: that profile is ours too.
      if (errorCode(error) !== 'EntityAlreadyExists' && errorCode(error) !== 'EntityAlreadyExistsException')
        throw error;
    }
  }
}
