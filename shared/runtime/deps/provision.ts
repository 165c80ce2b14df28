// What the provision function needs beyond the common runtime: the launch path (./launch-path:
// subnets, security groups, instance profiles, launch templates, CreateFleet) with AMIs re-read every
// PROVISION_ALIAS_TTL_MS, live instance types offered only in the zones of each node class's subnets,
// and a Kubernetes client to read the cluster (the watcher's, over the read-only RBAC group). The launch path, shared with the drift function,
// is what pulls the userData renderers and the SSM and IAM clients into these two bundles only.

import { SQSClient } from '@aws-sdk/client-sqs';
import type { EC2NodeClass } from '../../apis/v1/types';
import { DETAIL_TYPE, ENV, requireEnv } from '../../contracts';
import { AMIProvider, PROVISION_ALIAS_TTL_MS } from '../../providers/ami';
import type { Cluster } from '../../providers/cluster';
import { SqsRetryQueue, sqsApi } from '../../providers/retryqueue';
import { clientConfig, instanceTypeSource, kubeClient, type Runtime } from '../environment';
import { AwsClaimLauncher } from '../launcher';
import type { ProvisionDeps } from '../provision';
import type { RetryQueuePort } from '../provision-retry';
import type { Telemetry } from '../telemetry';
import { launchPath } from './launch-path';

export async function provisionDeps(runtime: Runtime, telemetry: Telemetry): Promise<ProvisionDeps> {
  const { settings, clock } = runtime;
  const { ec2, ssm, clusterProvider, reservations, resolver, instanceLauncher, launchTokens } = launchPath(runtime, {
    paced: true,
  });
  const subnetZones = async (nodeClass: EC2NodeClass) => [
    ...new Set((await resolver.subnets.list(nodeClass.spec.subnetSelectorTerms)).map((s) => s.zone)),
  ];
  let cluster: Promise<Cluster> | undefined;
  return {
    ...telemetry,
    cluster: settings.cluster,
    nodePools: runtime.config.nodePools,
    instanceTypes: instanceTypeSource(runtime, telemetry, reservations, subnetZones),
    instances: runtime.instances,
    kube: await kubeClient(runtime),
    state: runtime.state,
    records: runtime.state,
    unschedulable: runtime.state,
    noticeParts: runtime.state,
    launcher: new AwsClaimLauncher({
      nodeClasses: runtime.config.nodeClasses,
      cluster: () => {
        cluster ??= clusterProvider.describe(settings.cluster).catch((error: unknown) => {
          cluster = undefined;
          throw error;
        });
        return cluster;
      },
      resolver: { ...resolver, amis: new AMIProvider(ec2, ssm, clock, PROVISION_ALIAS_TTL_MS) },
      launcher: instanceLauncher,
      records: runtime.state,
      clock,
      ...(launchTokens ? { launchTokens } : {}),
    }),
    events: {
      nodeClaimsLaunched: (detail) => runtime.events.publish([{ detailType: DETAIL_TYPE.nodeClaimsLaunched, detail }]),
    },
    clock,
    ...(settings.launchConcurrency ? { launchConcurrency: settings.launchConcurrency } : {}),
  };
}

/** The provision queue and its dead-letter queue, for a failed batch's backoff (provision-retry.ts). */
export function provisionRetryQueue(env: NodeJS.ProcessEnv = process.env, client?: SQSClient): RetryQueuePort {
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || '';
  return new SqsRetryQueue(
    sqsApi(client ?? new SQSClient(clientConfig(region))),
    requireEnv(ENV.provisionQueueUrl, env),
    requireEnv(ENV.provisionDeadLetterQueueUrl, env),
  );
}
