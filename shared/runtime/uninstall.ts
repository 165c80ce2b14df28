// What `cdk destroy` needs removed before CloudFormation deletes the node role: the instance
// profiles karpless created at run time still hold the role (IAM refuses to delete a role that is in
// an instance profile), and its launch templates would outlive the stack. Instances are not
// terminated here: a running node may carry workloads, and draining it needs the cluster, which an
// uninstall cannot count on. They are reported so that whoever destroys the stack knows what is left.

import { errorMessage } from '../providers/aws-errors';
import type { ClusterInstanceProfiles } from '../providers/instanceprofile-gc';
import type { ClusterLaunchTemplates } from '../providers/launchtemplate-gc';
import type { ClaimInstances } from './instances';
import type { Telemetry } from './telemetry';

export interface UninstallDeps extends Pick<Telemetry, 'log'> {
  launchTemplates: Pick<ClusterLaunchTemplates, 'list' | 'delete'>;
  instanceProfiles: Pick<ClusterInstanceProfiles, 'list' | 'delete'>;
  instances: Pick<ClaimInstances, 'live'>;
}

export interface UninstallReport {
  deleted: { resource: 'launch-template' | 'instance-profile'; id: string }[];
  failed: { resource: 'launch-template' | 'instance-profile'; id: string; error: string }[];
  /** Instances of the cluster's NodeClaims still pending or running: left to the user. */
  stillRunning: string[];
}

export async function runUninstall(deps: UninstallDeps): Promise<UninstallReport> {
  const report: UninstallReport = { deleted: [], failed: [], stillRunning: [] };
  const remove = async (resource: 'launch-template' | 'instance-profile', id: string, run: () => Promise<void>) => {
    try {
      await run();
      report.deleted.push({ resource, id });
    } catch (error) {
      report.failed.push({ resource, id, error: errorMessage(error) });
    }
  };
  for (const profile of await deps.instanceProfiles.list()) {
    await remove('instance-profile', profile.name, () => deps.instanceProfiles.delete(profile));
  }
  for (const template of await deps.launchTemplates.list()) {
    await remove('launch-template', template.id, () => deps.launchTemplates.delete(template.id));
  }
  report.stillRunning = (await deps.instances.live()).map((i) => i.instanceId).sort();
  deps.log.info('uninstall cleaned up', { ...report });
  if (report.stillRunning.length > 0) {
    deps.log.warn('instances of this cluster are still running; terminate them or delete their Nodes first', {
      instances: report.stillRunning,
    });
  }
  return report;
}

/** One line for the CloudFormation event: what went, what could not, what still runs. */
export function uninstallSummary(report: UninstallReport): string {
  const parts = [`removed ${report.deleted.length} instance profiles and launch templates`];
  if (report.failed.length > 0) {
    parts.push(`could not remove ${report.failed.map((f) => `${f.resource} ${f.id} (${f.error})`).join(', ')}`);
  }
  if (report.stillRunning.length > 0) parts.push(`still running: ${report.stillRunning.join(', ')}`);
  return parts.join('; ');
}
