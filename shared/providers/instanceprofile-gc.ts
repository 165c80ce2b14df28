// The instance profiles karpless created for one cluster, as garbage collection sees them (AWS
// pkg/controllers/nodeclass/garbagecollection): listed under the cluster's IAM path, read one by one
// for their tags and roles (ListInstanceProfiles does not return tags), deleted role first.

import { isNotFound } from './aws-errors';
import type { IAMApi } from './ports';

export type InstanceProfileGcPort = Pick<
  IAMApi,
  'listInstanceProfiles' | 'getInstanceProfile' | 'removeRoleFromInstanceProfile' | 'deleteInstanceProfile'
>;

export interface ClusterInstanceProfile {
  name: string;
  path: string;
  tags: Record<string, string>;
  roles: string[];
}

/** The IAM path prefix all of a cluster's managed profiles live under (see instanceProfilePath). */
export function clusterProfilePathPrefix(cluster: string, region: string): string {
  return `/karpenter/${region}/${cluster}/`;
}

export class ClusterInstanceProfiles {
  constructor(
    private readonly iam: InstanceProfileGcPort,
    private readonly context: { cluster: string; region: string },
  ) {}

  async list(): Promise<ClusterInstanceProfile[]> {
    const prefix = clusterProfilePathPrefix(this.context.cluster, this.context.region);
    const names: string[] = [];
    let marker: string | undefined;
    do {
      const page = await this.iam.listInstanceProfiles({ PathPrefix: prefix, ...(marker ? { Marker: marker } : {}) });
      for (const p of page.InstanceProfiles ?? []) {
        // The prefix is a string prefix: `/karpenter/r/c1/` must not match cluster `c10`'s path.
        if (p.InstanceProfileName && (p.Path ?? '').startsWith(prefix)) names.push(p.InstanceProfileName);
      }
      marker = page.IsTruncated ? page.Marker : undefined;
    } while (marker);
    const out: ClusterInstanceProfile[] = [];
    for (const name of names) {
      try {
        const { InstanceProfile: p } = await this.iam.getInstanceProfile({ InstanceProfileName: name });
        if (!p) continue;
        out.push({
          name,
          path: p.Path ?? '',
          tags: Object.fromEntries((p.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])),
          roles: (p.Roles ?? []).flatMap((r) => (r.RoleName ? [r.RoleName] : [])),
        });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    return out;
  }

  /** Removes the profile's roles, then the profile; one already gone is not an error. */
  async delete(profile: Pick<ClusterInstanceProfile, 'name' | 'roles'>): Promise<void> {
    try {
      for (const role of profile.roles) {
        await this.iam.removeRoleFromInstanceProfile({ InstanceProfileName: profile.name, RoleName: role });
      }
      await this.iam.deleteInstanceProfile({ InstanceProfileName: profile.name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
