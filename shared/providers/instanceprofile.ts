// The instance profile an EC2NodeClass with spec.role launches with (AWS pkg/providers/instanceprofile):
// a deterministic name per cluster, region and node class, created with Karpenter's tags so the
// published IAM conditions match. A profile's role is never swapped: running nodes hold credentials
// through it. When spec.role changes, a new profile `<cluster>_<hash(region, nodeclass, role)>` takes
// the new role and the old one stays with its nodes (garbage collection removes it once unused).
// Upstream names the new profile with a random UUID and remembers it; the role in the hash gives
// the same name on every invocation without state. spec.instanceProfile is used as is.

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

/**
 * `<cluster>_<hash(region, nodeclass)>` (upstream's legacy v1.0 form), the node class's first profile;
 * with `role`, the profile for that role once the first one holds another.
 */
export function instanceProfileName(clusterName: string, region: string, nodeClassName: string, role?: string): string {
  const source = `${region}\u0000${nodeClassName}${role === undefined ? '' : `\u0000${roleName(role)}`}`;
  const digest = createHash('sha256').update(source).digest();
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
    const given = nodeClass.spec.instanceProfile;
    if (!given && !this.context.clusterName) {
      throw new InstanceProfileError('the managed instance profile name includes the cluster name, which is not known');
    }
    const role = nodeClass.spec.role ? roleName(nodeClass.spec.role) : undefined;
    const state = (name: string, roles: string[] | undefined): InstanceProfileState => ({
      name,
      exists: roles !== undefined,
      managed: !given,
      roles: roles ?? [],
      hasRole: roles === undefined ? false : role ? roles.includes(role) : roles.length > 0,
    });
    if (given) return state(given, await this.roles(given));
    const first = instanceProfileName(this.context.clusterName, this.context.region, nodeClass.metadata.name);
    const roles = await this.roles(first);
    if (!role || roles === undefined || roles.length === 0 || roles.includes(role)) return state(first, roles);
    const next = instanceProfileName(this.context.clusterName, this.context.region, nodeClass.metadata.name, role);
    return state(next, await this.roles(next));
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
    const wanted = roleName(role);
    const first = instanceProfileName(clusterName, region, nodeClass.metadata.name);
    const firstRoles = await this.roles(first);
    // The first profile serves while it holds this role (or none yet); another role means nodes
    // launched before the change still use it, so the new role gets its own profile.
    const name =
      firstRoles === undefined || firstRoles.length === 0 || firstRoles.includes(wanted)
        ? first
        : instanceProfileName(clusterName, region, nodeClass.metadata.name, wanted);
    let roles = name === first ? firstRoles : await this.roles(name);
    if (roles === undefined) {
      await this.create(name, nodeClass);
      roles = [];
    }
    if (roles.includes(wanted)) return name;
    if (roles.length > 0) {
      throw new InstanceProfileError(
        `EC2NodeClass/${nodeClass.metadata.name}: spec.role: instance profile ${name} holds role ${roles.join(', ')} instead of ${wanted}; it was changed outside karpless, so remove that role from it (nodes using it lose their credentials) or delete the profile`,
      );
    }
    try {
      await this.iam.addRoleToInstanceProfile({ InstanceProfileName: name, RoleName: wanted });
    } catch (error) {
      throw new InstanceProfileError(
        `EC2NodeClass/${nodeClass.metadata.name}: spec.role: cannot add role ${wanted} to instance profile ${name} (${errorCode(error) ?? 'error'}: ${error instanceof Error ? error.message : String(error)}); check that the role exists`,
      );
    }
    return name;
  }

  /** The profile's roles; undefined when it does not exist. */
  private async roles(name: string): Promise<string[] | undefined> {
    try {
      const out = await this.iam.getInstanceProfile({ InstanceProfileName: name });
      return (out.InstanceProfile?.Roles ?? []).map((r) => r.RoleName ?? '').filter(Boolean);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
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
