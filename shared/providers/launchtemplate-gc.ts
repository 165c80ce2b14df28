// The launch templates of one cluster as garbage collection sees them (AWS pkg/providers/launchtemplate
// hydration + eviction): every template tagged eks:eks-cluster-name=<cluster>, and deletion by id.
// Which of them are orphaned is decided in shared/runtime/gc-decisions.ts.

import { TAG } from '../contracts';
import { errorCode, LAUNCH_TEMPLATE_NOT_FOUND_CODES } from './aws-errors';
import type { EC2Api } from './ports';

export type LaunchTemplateGcPort = Pick<
  EC2Api,
  'describeLaunchTemplates' | 'deleteLaunchTemplate' | 'describeLaunchTemplateVersions'
>;

export interface ClusterLaunchTemplate {
  id: string;
  name: string;
  tags: Record<string, string>;
  /** Epoch ms. */
  createdAt?: number;
}

/** Karpenter's hydration page size. */
const PAGE_SIZE = 200;

export class ClusterLaunchTemplates {
  constructor(
    private readonly ec2: LaunchTemplateGcPort,
    private readonly cluster: string,
  ) {}

  /** Every template carrying this cluster's eks:eks-cluster-name tag. */
  async list(): Promise<ClusterLaunchTemplate[]> {
    const out: ClusterLaunchTemplate[] = [];
    let token: string | undefined;
    do {
      const page = await this.ec2.describeLaunchTemplates({
        Filters: [{ Name: `tag:${TAG.clusterName}`, Values: [this.cluster] }],
        MaxResults: PAGE_SIZE,
        ...(token ? { NextToken: token } : {}),
      });
      for (const t of page.LaunchTemplates ?? []) {
        if (!t.LaunchTemplateId) continue;
        out.push({
          id: t.LaunchTemplateId,
          name: t.LaunchTemplateName ?? '',
          tags: Object.fromEntries((t.Tags ?? []).map((tag) => [tag.Key ?? '', tag.Value ?? ''])),
          ...(t.CreateTime ? { createdAt: new Date(t.CreateTime).getTime() } : {}),
        });
      }
      token = page.NextToken;
    } while (token);
    return out;
  }

  /** The AMI of the template's latest version; undefined when it names none or is gone. */
  async imageId(id: string): Promise<string | undefined> {
    try {
      const out = await this.ec2.describeLaunchTemplateVersions({ LaunchTemplateId: id, Versions: ['$Latest'] });
      return out.LaunchTemplateVersions?.[0]?.LaunchTemplateData?.ImageId;
    } catch (error) {
      const code = errorCode(error);
      if (code && LAUNCH_TEMPLATE_NOT_FOUND_CODES.has(code)) return undefined;
      throw error;
    }
  }

  /** Deletes the template; one already gone is not an error. */
  async delete(id: string): Promise<void> {
    try {
      await this.ec2.deleteLaunchTemplate({ LaunchTemplateId: id });
    } catch (error) {
      const code = errorCode(error);
      if (!code || !LAUNCH_TEMPLATE_NOT_FOUND_CODES.has(code)) throw error;
    }
  }
}
